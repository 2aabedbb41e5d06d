// DCQCN state files (`railkit dcqcn restore`), restored into the tree of
// tests/fixtures/dcqcn/gen_dcqcn.py: the input is written as the state file of eth0, eth1 and
// eth2 ("@ROOT@" in it stands for the tree's root, so seeds from real runs match), then every
// netdev is restored as `railkit dcqcn restore --root` does. Whatever the file says, nothing
// outside the tree may be written: a canary file beside the tree must keep its bytes.
#include <cstdio>

#include "fabric/dcqcn.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace railkit;
  static const fuzz::FixtureTree tree;
  static const std::filesystem::path canary = fuzz::write_scratch("canary", "canary\n");
  std::string state(fuzz::text(data, size));
  for (std::size_t at = state.find("@ROOT@"); at != std::string::npos; at = state.find("@ROOT@", at)) {
    state.replace(at, 6, tree.root().string());
    at += tree.root().string().size();
  }
  const std::filesystem::path dir = tree.root() / "run/railkit/dcqcn";
  std::filesystem::create_directories(dir);
  for (const char* netdev : {"eth0", "eth1", "eth2"}) fuzz::FixtureTree::write(dir / (std::string(netdev) + ".json"), state);
  fuzz::refuse_only_with_railkit_errors([&] {
    const SysRoot root{tree.root()};
    const auto outcomes = fabric::restore_dcqcn_all(root, {}, {});
    (void)outcomes;
  });
  if (fuzz::FixtureTree::read(canary) != "canary\n") {
    std::fputs("dcqcn_state_fuzz: a state file wrote outside the root\n", stderr);
    std::abort();
  }
  std::filesystem::remove_all(dir);
  tree.reset();
  return 0;
}
