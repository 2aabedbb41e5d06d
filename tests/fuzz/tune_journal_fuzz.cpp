// Tuning journals (railkit.tune-journal/1), read back by `railkit tune --resume`.
#include "tests/fuzz/fuzz_util.hpp"
#include "tuner/journal.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace railkit;
  const auto path = fuzz::write_scratch("tune/journal.jsonl", fuzz::text(data, size));
  fuzz::refuse_only_with_railkit_errors([&] {
    const auto lines = tuner::read_journal(path);  // may truncate a cut last line, as on resume
    (void)tuner::parse_journal(lines, path.parent_path());
  });
  return 0;
}
