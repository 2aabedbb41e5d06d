// Sweep matrix files (`railkit sweep --matrix FILE`) and `--axis` values.
#include "core/json_text.hpp"
#include "sweep/sweep.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace railkit;
  const std::string_view text = fuzz::text(data, size);
  fuzz::refuse_only_with_railkit_errors([&] {
    const auto path = fuzz::write_scratch("matrix.json", text);
    (void)sweep::load_matrix(path);
  });
  fuzz::refuse_only_with_railkit_errors([&] { (void)sweep::parse_axis(text); });
  return 0;
}
