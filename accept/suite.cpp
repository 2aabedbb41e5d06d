#include "accept/suite.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "accept/stages.hpp"
#include "core/atomic_file.hpp"
#include "core/bench_flags.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "launch/bench_run.hpp"

namespace railkit::accept {
namespace fs = std::filesystem;
using nlohmann::json;

// ---------------------------------------------------------------------------- nodes

std::vector<AcceptNode> emulated_nodes(const std::string& hostname, int np, int k) {
  if (k < 1) throw UsageError(fmt::format("--ranks-per-node {}: must be >= 1", k));
  if (np < k || np % k != 0)
    throw UsageError(fmt::format("--np {} with --ranks-per-node {}: the ranks must fill whole nodes (np a multiple of K)",
                                 np, k));
  std::vector<AcceptNode> out;
  for (int i = 0; i < np / k; ++i) {
    AcceptNode n;
    n.name = fmt::format("{}:{}", hostname, i);
    n.host = hostname;
    for (int r = i * k; r < (i + 1) * k; ++r) n.ranks.push_back(r);
    out.push_back(std::move(n));
  }
  return out;
}

std::vector<AcceptNode> hostfile_nodes(const std::string& text, int ppn) {
  if (ppn < 1) throw UsageError(fmt::format("--ppn {}: must be >= 1", ppn));
  std::vector<AcceptNode> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (const auto h = line.find('#'); h != std::string::npos) line.erase(h);
    const std::vector<std::string> words = split_ws(line);
    if (words.empty()) continue;
    const std::string& host = words.front();
    if (std::any_of(out.begin(), out.end(), [&](const AcceptNode& n) { return n.host == host; })) continue;
    AcceptNode n;
    n.name = host;
    n.host = host;
    const int i = static_cast<int>(out.size());
    for (int r = i * ppn; r < (i + 1) * ppn; ++r) n.ranks.push_back(r);
    out.push_back(std::move(n));
  }
  if (out.empty()) throw UsageError("--hostfile: no host in the file");
  return out;
}

std::vector<std::string> node_names(const std::vector<AcceptNode>& nodes) {
  std::vector<std::string> names;
  for (const AcceptNode& n : nodes) names.push_back(n.name);
  return names;
}

// ---------------------------------------------------------------------------- suite

namespace {

/// Reads the suite's fields one group at a time; every error names the source and the field.
struct SuiteReader {
  const json& j;
  const std::string& source;

  UsageError bad(const std::string& where, const std::string& why) const {
    return UsageError(fmt::format("{}: {}: {}", source, printable(where), printable(why, 400)));  // may quote the file
  }

  void header() const {
    if (!j.is_object()) throw bad("(document)", "expected a JSON object");
    if (!j.contains("schema") || j["schema"] != kAcceptSuiteSchema)
      throw bad("schema", std::string("expected \"") + kAcceptSuiteSchema + "\"");
    static const std::set<std::string> known{"schema",     "skip",       "peer_fraction", "oversubscribed_peer_fraction",
                                             "statistic",  "thresholds", "topo_roots",    "colls",
                                             "rdma_fraction", "rdma_duration_s", "ib_write_bw",
                                             "rdma_addresses"};
    for (const auto& [k, v] : j.items())
      if (!known.count(k)) throw bad(k, "unknown field");
  }

  void skip(AcceptSuite& s) const {
    if (!j.contains("skip")) return;
    if (!j["skip"].is_array()) throw bad("skip", "expected an array of stage names");
    for (const auto& v : j["skip"]) {
      if (!v.is_string()) throw bad("skip", "expected stage names");
      const std::string st = v.get<std::string>();
      if (std::find(std::begin(kAcceptStages), std::end(kAcceptStages), st) == std::end(kAcceptStages))
        throw bad("skip", "unknown stage '" + st + "' (" + join(kAcceptStages, ", ") + ")");
      s.skip.insert(st);
    }
  }

  /// A number in (0, 1] at `key`, when present.
  void fraction(const char* key, double& to) const {
    if (!j.contains(key)) return;
    const json& v = j[key];
    if (!v.is_number() || !(v.get<double>() > 0 && v.get<double>() <= 1))
      throw bad(key, "expected a number, 0 < value <= 1");
    to = v.get<double>();
  }

  void fractions(AcceptSuite& s) const {
    if (j.contains("peer_fraction")) {
      if (!j["peer_fraction"].is_number()) throw bad("peer_fraction", "expected a number");
      s.peer_fraction = j["peer_fraction"].get<double>();
      s.peer_fraction_set = true;
      if (!(s.peer_fraction > 0 && s.peer_fraction <= 1)) throw bad("peer_fraction", "expected 0 < value <= 1");
    }
    fraction("oversubscribed_peer_fraction", s.oversubscribed_peer_fraction);
    fraction("rdma_fraction", s.rdma_fraction);
  }

  void rdma(AcceptSuite& s) const {
    if (j.contains("rdma_duration_s")) {
      const json& v = j["rdma_duration_s"];
      if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > 3600)
        throw bad("rdma_duration_s", "expected whole seconds, 1 to 3600");
      s.rdma_duration_s = v.get<int>();
    }
    if (j.contains("ib_write_bw")) {
      if (!j["ib_write_bw"].is_string() || j["ib_write_bw"].get<std::string>().empty())
        throw bad("ib_write_bw", "expected the path of ib_write_bw on the nodes");
      s.ib_write_bw = j["ib_write_bw"].get<std::string>();
    }
  }

  void measurement(AcceptSuite& s) const {
    if (j.contains("statistic")) {
      if (!j["statistic"].is_string() || (j["statistic"] != "p50" && j["statistic"] != "avg"))
        throw bad("statistic", "expected \"p50\" or \"avg\"");
      s.statistic = j["statistic"].get<std::string>();
    }
    if (j.contains("colls")) {
      if (!j["colls"].is_array() || j["colls"].empty()) throw bad("colls", "expected a non-empty array of collectives");
      s.colls.clear();
      for (const auto& v : j["colls"]) {
        if (!v.is_string()) throw bad("colls", "expected collective names");
        s.colls.push_back(v.get<std::string>());
      }
    }
  }

  SuiteThreshold threshold(const json& t, const std::string& where) const {
    if (!t.is_object() || !t.contains("coll") || !t["coll"].is_string() || !t.contains("bytes") ||
        !t.contains("busbw_GBps") || !t["busbw_GBps"].is_number())
      throw bad(where, "expected {\"stage\"?, \"coll\", \"bytes\", \"busbw_GBps\"}");
    SuiteThreshold th;
    th.coll = t["coll"].get<std::string>();
    if (t.contains("stage")) {
      if (!t["stage"].is_string()) throw bad(where + ".stage", "expected node, rail, pair or all");
      th.stage = t["stage"].get<std::string>();
      if (th.stage != "node" && th.stage != "rail" && th.stage != "pair" && th.stage != "all")
        throw bad(where + ".stage", "expected node, rail, pair or all, got '" + th.stage + "'");
    }
    if (t["bytes"].is_number_unsigned()) {
      th.bytes = t["bytes"].get<std::uint64_t>();
    } else if (t["bytes"].is_string()) {
      th.bytes = parse_size_bytes(t["bytes"].get<std::string>(), source + ": " + where + ".bytes");
    } else {
      throw bad(where + ".bytes", "expected a size (1048576, \"1M\")");
    }
    th.busbw_GBps = t["busbw_GBps"].get<double>();
    if (!(th.busbw_GBps > 0)) throw bad(where + ".busbw_GBps", "expected a positive number");
    return th;
  }

  void thresholds(AcceptSuite& s) const {
    if (!j.contains("thresholds")) return;
    if (!j["thresholds"].is_array()) throw bad("thresholds", "expected an array");
    for (size_t i = 0; i < j["thresholds"].size(); ++i)
      s.thresholds.push_back(threshold(j["thresholds"][i], fmt::format("thresholds[{}]", i)));
  }

  void topo_roots(AcceptSuite& s) const {
    if (!j.contains("topo_roots")) return;
    if (!j["topo_roots"].is_object()) throw bad("topo_roots", "expected an object: node name -> directory");
    for (const auto& [k, v] : j["topo_roots"].items()) {
      if (!v.is_string()) throw bad("topo_roots." + k, "expected a directory");
      s.topo_roots[k] = v.get<std::string>();
    }
  }

  void rdma_addresses(AcceptSuite& s) const {
    if (!j.contains("rdma_addresses")) return;
    if (!j["rdma_addresses"].is_object()) throw bad("rdma_addresses", "expected an object: node name -> address");
    for (const auto& [k, v] : j["rdma_addresses"].items()) {
      if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>().starts_with("-") ||
          v.get<std::string>().find_first_of(" \t\r\n") != std::string::npos)
        throw bad("rdma_addresses." + k, "expected a host name or IP address");
      s.rdma_addresses[k] = v.get<std::string>();
    }
  }
};

}  // namespace

AcceptSuite suite_from_json(const json& j, const std::string& source) {
  return with_json_errors(source, [&] {
    const SuiteReader r{j, source};
    r.header();
    AcceptSuite s;
    r.skip(s);
    r.fractions(s);
    r.rdma(s);
    r.measurement(s);
    r.thresholds(s);
    r.topo_roots(s);
    r.rdma_addresses(s);
    return s;
  });
}

AcceptSuite load_suite(const fs::path& path) {
  std::string text;
  try {
    text = read_input_file(path, "--suite");  // a FIFO is refused, never waited on
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError("--suite " + path.string() + ": cannot read the file: " + e.what());
  }
  json j;
  try {
    j = parse_json(text);
  } catch (const json::exception& e) {
    throw UsageError("--suite " + path.string() + ": not JSON: " + json_error_text(e));
  }
  return suite_from_json(j, path.string());
}

std::string pair_coll(const AcceptSuite& suite) {
  return std::find(suite.colls.begin(), suite.colls.end(), "all_reduce") != suite.colls.end() ? "all_reduce"
                                                                                              : suite.colls.front();
}

// ---------------------------------------------------------------------------- bench arguments

namespace {

struct DefaultArg {
  BenchFlag flag;
  std::string_view value;
};

/// Real nodes: bandwidth-bound sizes. Emulated nodes share one machine, usually oversubscribed,
/// where scheduling noise reaches milliseconds at 256 KiB: sizes whose operations take about
/// 0.1 ms, so that a rank slowed by milliseconds stands out.
const std::vector<DefaultArg>& default_args(bool emulated) {
  using F = BenchFlag;
  static const std::vector<DefaultArg> real{
      {F::MinBytes, "16M"}, {F::MaxBytes, "256M"},   {F::StepFactor, "4"},
      {F::Iters, "20"},     {F::WarmupIters, "5"},   {F::Placement, "out"},
  };
  static const std::vector<DefaultArg> emulated_nodes{
      {F::MinBytes, "4K"},  {F::MaxBytes, "16K"},    {F::StepFactor, "4"},
      {F::Iters, "10"},     {F::WarmupIters, "3"},   {F::Placement, "out"},
  };
  return emulated ? emulated_nodes : real;
}

}  // namespace

std::vector<std::string> merge_bench_args(const std::vector<std::string>& user, bool emulated) {
  static const std::vector<std::pair<BenchFlag, const char*>> reserved{
      {BenchFlag::Split, "each stage sets its own split"},
      {BenchFlag::RanksPerNode, "use railkit accept's --ranks-per-node"},
      {BenchFlag::OutputFile, "each stage writes its results document in --out"},
      {BenchFlag::Label, "each stage labels its results"},
      {BenchFlag::RunCycles, "acceptance judges one cycle"},
  };
  for (const auto& [flag, why] : reserved)
    if (sets_bench_flag(user, flag))
      throw UsageError(fmt::format("--bench-args: {} is set by railkit accept ({})", bench_flag(flag).long_name, why));
  std::vector<std::string> out;
  for (const DefaultArg& d : default_args(emulated)) {
    if (sets_bench_flag(user, d.flag)) continue;
    const auto arg = bench_flag_args(d.flag, std::string(d.value));
    out.insert(out.end(), arg.begin(), arg.end());
  }
  out.insert(out.end(), user.begin(), user.end());
  return out;
}

std::vector<std::string> stage_bench_args(const std::vector<std::string>& user, bool emulated,
                                          const std::vector<std::string>& colls) {
  std::vector<std::string> args = merge_bench_args(user, emulated);
  if (!sets_bench_flag(user, BenchFlag::Coll)) {
    const auto coll = bench_flag_args(BenchFlag::Coll, join(colls, ","));
    args.insert(args.begin(), coll.begin(), coll.end());
  }
  return args;
}

namespace {

/// Flags that a launch's own arguments may override.
constexpr std::array<BenchFlag, 5> kOverridable{BenchFlag::MinBytes, BenchFlag::MaxBytes, BenchFlag::StepFactor,
                                                BenchFlag::StepBytes, BenchFlag::Coll};

}  // namespace

std::vector<std::string> without_overridden(const std::vector<std::string>& common, const std::vector<std::string>& own) {
  std::vector<BenchFlag> drop;
  for (const BenchFlag f : kOverridable)
    if (sets_bench_flag(own, f)) drop.push_back(f);
  return without_bench_flags(common, drop);
}

}  // namespace railkit::accept
