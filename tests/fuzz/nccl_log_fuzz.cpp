// NCCL_DEBUG=INFO logs: `railkit nccl-log`, and sweep/accept reading what NCCL did.
#include <sstream>

#include "core/nccl_log.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace railkit;
  fuzz::refuse_only_with_railkit_errors([&] {
    std::istringstream in{std::string(fuzz::text(data, size))};
    const NcclLogSummary s = parse_nccl_log(in, "fuzz.log");
    (void)to_json(s).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    (void)to_text(s, {});
    (void)s.nics_used();
    (void)s.nics_listed();
    (void)s.channels();
  });
  return 0;
}
