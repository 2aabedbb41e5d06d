// Profiles (railkit.profile/1): `railkit profile show|check|env|exec|export`, `accept --profile`,
// and the NCCL tuner plugin's init, which must never throw (it runs inside the training job).
#include "core/profile.hpp"
#include "profiles/plugin/rules.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace railkit;
  const auto path = fuzz::write_scratch("profile.json", fuzz::text(data, size));
  fuzz::refuse_only_with_railkit_errors([&] {
    const ProfileDocument p = load_profile(path);
    (void)to_json(p).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  });
  tuner_plugin::PluginEnv env;
  env.profile = path.string();
  (void)tuner_plugin::load(env, 16, 2);  // noexcept: an escaping exception terminates, a crash
  return 0;
}
