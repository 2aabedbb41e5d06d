// Sweep documents (sweep.json, railkit.sweep/2), read by `railkit report` and `sweep --resume`.
#include "sweep/inputs.hpp"
#include "sweep/sweep.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace railkit;
  const auto path = fuzz::write_scratch("sweep/sweep.json", fuzz::text(data, size));
  fuzz::refuse_only_with_railkit_errors([&] {
    const sweep::SweepDocument doc = sweep::load_sweep(path.parent_path());
    (void)sweep::sweep_notes(doc);
  });
  fuzz::refuse_only_with_railkit_errors([&] {
    std::string baseline;
    std::vector<std::string> notes;
    (void)sweep::load_report_inputs({path.parent_path().string()}, &baseline, &notes);
  });
  return 0;
}
