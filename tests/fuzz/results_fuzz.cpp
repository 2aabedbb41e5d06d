// Results documents (railkit.results/1): what `railkit report`, `sweep` and `accept` read back.
#include "core/results.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace railkit;
  const auto path = fuzz::write_scratch("results.json", fuzz::text(data, size));
  fuzz::refuse_only_with_railkit_errors([&] {
    ResultsDocument doc = load_results(path.string());
    update_summary(doc);
    (void)dump_results(doc);
  });
  return 0;
}
