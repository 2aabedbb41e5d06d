#include "topology/command.hpp"

#include <fstream>
#include <ostream>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "topology/analyze.hpp"
#include "topology/compare.hpp"
#include "topology/probe.hpp"
#include "topology/render.hpp"

namespace railkit::topo {
namespace fs = std::filesystem;

namespace {

/// A topology document of `railkit topo --format json` is tens of KiB.
constexpr std::uint64_t kMaxTopologyDocBytes = std::uint64_t{16} << 20;

int run_compare(const TopoOptions& o, std::ostream& out) {
  if (o.compare.size() < 2) throw UsageError("--compare needs at least two JSON documents");
  std::vector<NodeFacts> nodes;
  std::vector<std::string> sources;
  for (const auto& p : o.compare) {
    std::string text;
    try {
      text = read_file(p, kMaxTopologyDocBytes);
    } catch (const IoError& e) {
      throw UsageError("--compare " + p.string() + ": cannot read the file (" + e.what() + ")");
    } catch (const UsageError& e) {
      throw UsageError(std::string("--compare ") + e.what());
    }
    sources.push_back(p.string());
    nodes.push_back(node_facts_from_json(text, p.string()));
  }
  name_nodes(nodes, sources);  // by host, or all by file when two documents share a host
  const CompareReport rep = compare_nodes(nodes);
  if (o.format == "json") out << json_dump(compare_to_json(rep), 2) << "\n";
  else out << render_compare_table(rep);
  return rep.all_equal() ? 0 : exit_code(ErrorCode::CheckFailed);
}

}  // namespace

int run_topo(const TopoOptions& o, std::ostream& out) {
  if (o.format != "table" && o.format != "json" && o.format != "nccl-xml")
    throw UsageError("--format " + o.format + ": expected table, json or nccl-xml");
  if (o.priority < 0 || o.priority > 7) throw UsageError("--priority " + std::to_string(o.priority) + ": expected 0-7");
  if (!o.compare.empty()) return run_compare(o, out);

  ProbeOptions po;
  po.root = o.root;
  po.nvidia_smi_topo = o.nvidia_smi_topo;
  std::error_code ec;
  po.live_queries = fs::equivalent(o.root, "/", ec);
  Topology topo = probe_node(po);
  analyze(topo, LintOptions{o.priority});

  if (o.format == "json") {
    out << json_dump(to_json(topo), 2) << "\n";
  } else if (o.format == "nccl-xml") {
    out << render_nccl_xml(topo);
  } else {
    out << render_table(topo, TableOptions{o.priority, o.lint});
  }
  if (o.lint && has_errors(topo.findings)) return exit_code(ErrorCode::CheckFailed);
  return 0;
}

}  // namespace railkit::topo
