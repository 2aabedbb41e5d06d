// NVIDIA's example tuner CSV (NCCL_TUNER_CONFIG_FILE), read by the tuner plugin at init inside
// the training process: it logs and skips what it cannot use, and never throws.
#include "profiles/plugin/rules.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace railkit;
  tuner_plugin::Loaded direct;
  tuner_plugin::rules_from_csv(fuzz::text(data, size), "fuzz.conf", direct);
  for (const auto& r : direct.rules) {
    (void)tuner_plugin::find_rule(direct.rules, r.coll, r.min_bytes, 2, 16, 1, 0);
  }
  tuner_plugin::PluginEnv env;
  env.config_file = fuzz::write_scratch("tuner.conf", fuzz::text(data, size)).string();
  (void)tuner_plugin::load(env, 16, 2);
  return 0;
}
