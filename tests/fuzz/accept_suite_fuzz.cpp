// Acceptance suites (`railkit accept --suite FILE.yaml|json`) and hostfiles (`--hostfile`).
#include "accept/suite.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace railkit;
  const std::string_view text = fuzz::text(data, size);
  for (const char* name : {"suite.yaml", "suite.json"}) {
    const auto path = fuzz::write_scratch(name, text);
    fuzz::refuse_only_with_railkit_errors([&] {
      const accept::AcceptSuite suite = accept::load_suite(path);
      (void)accept::pair_coll(suite);
    });
  }
  fuzz::refuse_only_with_railkit_errors([&] {
    const auto nodes = accept::hostfile_nodes(std::string(text), 8);
    (void)accept::node_names(nodes);
  });
  return 0;
}
