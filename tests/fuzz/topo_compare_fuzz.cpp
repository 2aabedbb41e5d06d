// Node documents compared by `railkit topo --compare A.json B.json` and accept's topology stage,
// and captured `nvidia-smi topo -m` text (`--nvidia-smi-topo`).
#include "tests/fuzz/fuzz_util.hpp"
#include "topology/compare.hpp"
#include "topology/parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace railkit;
  const std::string text(fuzz::text(data, size));
  fuzz::refuse_only_with_railkit_errors([&] {
    std::vector<topo::NodeFacts> nodes{topo::node_facts_from_json(text, "a.json"),
                                       topo::node_facts_from_json(text, "b.json")};
    topo::name_nodes(nodes, {"a.json", "b.json"});
    (void)topo::compare_nodes(nodes);
  });
  fuzz::refuse_only_with_railkit_errors([&] { (void)topo::parse_nvsmi_topo(text); });
  return 0;
}
