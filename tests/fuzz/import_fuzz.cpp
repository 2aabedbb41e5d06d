// railkit import's parsers (ingest/import*.cpp): nccl-tests text and -J JSON, IMB-MPI1 and OSU
// output from outside. Each input goes through detection and all three parsers; what they make
// must dump and read back as a results document.
#include "core/results.hpp"
#include "core/json_text.hpp"
#include "ingest/import.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace railkit;
  const std::string text(fuzz::text(data, size));
  ingest::ImportOptions o;
  o.nranks = size % 3 == 0 ? 4 : 0;
  fuzz::refuse_only_with_railkit_errors([&] { (void)ingest::detect_import_source(text, "fuzz.log"); });
  for (const auto src : {ingest::ImportSource::NcclTests, ingest::ImportSource::Imb, ingest::ImportSource::Osu}) {
    fuzz::refuse_only_with_railkit_errors([&] {
      const ingest::ImportResult r = ingest::import_log(src, text, "fuzz.log", o);
      for (const auto& d : r.docs) {
        ResultsDocument back;
        from_json(parse_json(dump_results(d.doc)), back);
        (void)dump_results(back);
      }
    });
  }
  return 0;
}
