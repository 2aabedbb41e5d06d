// The node probe over a sysfs tree (`railkit topo --root`, `profile check --root`, accept's
// topology stage, `dcqcn show`): the dgx-h100 tree of tests/fixtures/sysfs/gen_sysfs.py, whose
// files each input rewrites before the probe runs in every output format with lint and the DCQCN
// reader reads the tree.
//
// Input: one byte choosing the output (table, JSON, NCCL XML, or the DCQCN reader), then records of
// [file index: 2 bytes][length: 2 bytes][that many bytes of new content]; the index picks among
// the tree's regular files (sorted), modulo their count.
#include <array>
#include <sstream>

#include "fabric/dcqcn.hpp"
#include "tests/fuzz/fuzz_util.hpp"
#include "topology/command.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace railkit;
  static const fuzz::FixtureTree tree;
  const auto& files = tree.files();
  if (size == 0) return 0;
  const int output = data[0] % 4;
  std::vector<std::size_t> touched;
  std::size_t at = 1;
  while (at + 4 <= size) {
    const std::size_t index = (std::size_t{data[at]} << 8 | data[at + 1]) % files.size();
    const std::size_t length = std::min<std::size_t>(std::size_t{data[at + 2]} << 8 | data[at + 3], size - at - 4);
    fuzz::FixtureTree::write(files[index], fuzz::text(data + at + 4, length));
    touched.push_back(index);
    at += 4 + length;
  }
  if (output < 3) {
    fuzz::refuse_only_with_railkit_errors([&] {
      topo::TopoOptions o;
      o.root = tree.root();
      o.format = std::array{"table", "json", "nccl-xml"}[static_cast<std::size_t>(output)];
      o.lint = true;
      std::ostringstream out;
      (void)topo::run_topo(o, out);
    });
  } else {
    fuzz::refuse_only_with_railkit_errors([&] {
      const SysRoot root{tree.root()};
      const auto devices = fabric::find_dcqcn_devices(root, {});
      (void)fabric::dcqcn_show_json(root, devices).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
      (void)fabric::dcqcn_show_table(root, devices);
    });
  }
  for (const std::size_t i : touched) tree.reset(i);
  return 0;
}
