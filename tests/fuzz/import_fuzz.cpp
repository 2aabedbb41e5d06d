// railkit import's parsers (ingest/import*.cpp): nccl-tests text and -J JSON, IMB-MPI1 and OSU
// output from outside, through import_input, the path `railkit import` takes from a file's text to
// the documents it writes (detection, prefixes, each run dumped as it ends, the size and
// finiteness refusals). Each input goes through detection and all three parsers; every text it
// would write must read back as a results document (a refusal there aborts: a bug).
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "core/results.hpp"
#include "core/json_text.hpp"
#include "ingest/import.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace railkit;
  const std::string text(fuzz::text(data, size));
  ingest::ImportOptions o;
  o.nranks = size % 3 == 0 ? 4 : 0;
  const std::optional<ingest::ImportSource> sources[] = {std::nullopt, ingest::ImportSource::NcclTests,
                                                         ingest::ImportSource::Imb, ingest::ImportSource::Osu};
  const std::string file = fuzz::write_scratch("import/fuzz.log", text).string();
  for (const auto& src : sources) {
    std::optional<ingest::ImportResult> r;
    // detected: as `railkit import FILE` reads it; --from: the text as given
    fuzz::refuse_only_with_railkit_errors(
        [&] { r = src ? ingest::import_input(text, "fuzz.log", src, o) : ingest::import_file(file, src, o); });
    if (!r) continue;
    // What import would write must read back, whatever it is: a refusal here is a bug (an IMB time
    // of 1e-320 us gave algbw null, which the reader refuses), so it aborts.
    for (const auto& d : r->docs) {
      if (d.text.size() > ingest::kMaxImportedDocumentBytes) std::abort();
      try {
        ResultsDocument back;
        from_json(parse_json(d.text), back);
        (void)dump_results(back);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "import wrote what does not read back: %s\n", e.what());
        std::abort();
      }
    }
  }
  return 0;
}
