// ib_write_bw output, read by `railkit rdma-loopback` and accept's RDMA stage.
#include "fabric/rdma_loopback.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace railkit;
  fuzz::refuse_only_with_railkit_errors([&] {
    std::string why;
    (void)fabric::parse_perftest_bw(fuzz::text(data, size), &why);
  });
  return 0;
}
