// Tuning spaces (`railkit tune --space FILE.yaml|json`): libyaml through core/yaml, then the space
// reader; also Open MPI's `ompi_info --parsable` counts that size ompi-coll's algorithm ids.
#include "core/json_text.hpp"
#include "core/yaml.hpp"
#include "tests/fuzz/fuzz_util.hpp"
#include "tuner/space.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace railkit;
  const std::string_view text = fuzz::text(data, size);
  fuzz::refuse_only_with_railkit_errors([&] {
    const nlohmann::json doc = parse_yaml(text, "fuzz.yaml");
    (void)tuner::parse_space(doc, "fuzz.yaml");
  });
  fuzz::refuse_only_with_railkit_errors([&] {
    const auto path = fuzz::write_scratch("space.json", text);
    (void)tuner::load_space(path);
  });
  fuzz::refuse_only_with_railkit_errors([&] { (void)tuner::parse_ompi_info_counts(std::string(text)); });
  return 0;
}
