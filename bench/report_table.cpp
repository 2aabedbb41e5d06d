#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/report.hpp"
#include "core/strings.hpp"

namespace railkit::bench {
namespace {

std::string placement_cols(const std::optional<ResultRecord>& r) {
  if (!r) return fmt::format("  {:>7}  {:>6}  {:>6}  {:>6}", "-", "-", "-", "-");
  const std::string wrong = r->wrong ? fmt::format("{:>6}", *r->wrong) : std::string("   N/A");
  return fmt::format("  {:>7}  {:>6}  {:>6}  {}", format_column(r->time_us.avg, 7), format_column(r->algbw_GBps, 6),
                     format_column(r->busbw_GBps, 6), wrong);
}

/// For a simulated record whose algorithm the cost model chose: "#   sim: Tree/Simple chosen,
/// predicted 4268.1 us; Ring/Simple 5265.5, ..." (every candidate, fastest first; "not allowed"
/// for those NCCL_ALGO / NCCL_PROTO exclude). Empty otherwise.
std::string sim_choice_line(const nlohmann::json& observed) {
  if (!observed.is_object() || !observed.contains("candidates") || !observed["candidates"].is_array() ||
      observed["candidates"].empty())
    return {};
  std::vector<nlohmann::json> ks(observed["candidates"].begin(), observed["candidates"].end());
  std::stable_sort(ks.begin(), ks.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a.value("predicted_us", 0.0) < b.value("predicted_us", 0.0);
  });
  const std::string algo = observed.value("algo", "?"), proto = observed.value("proto", "?");
  std::string chosen, others;
  for (const nlohmann::json& k : ks) {
    const std::string name = k.value("algo", "?") + "/" + k.value("proto", "?");
    const std::string t = fmt::format("{:.1f}", k.value("predicted_us", 0.0));
    if (name == algo + "/" + proto && chosen.empty()) chosen = t;
    else others += fmt::format("{}{} {}{}", others.empty() ? "" : ", ", name, t, k.value("allowed", true) ? "" : " (not allowed)");
  }
  return fmt::format("#   sim: {}/{} chosen by the cost model, predicted {} us; {}", algo, proto, chosen.empty() ? "?" : chosen, others);
}

}  // namespace

std::string timing_line(const RunInfo& run) {
  if (run.timing == "simulated")
    return "simulated: each iteration's simulated completion time, every iteration its own simulation";
  if (run.timing_method == "barrier_separated")
    return "barrier-separated (--sync): a barrier before each iteration, only the operation timed, as IMB-MPI1 and "
           "OSU; time = mean of the iterations";
  return "back-to-back: iterations issued one after another, the loop timed whole, as nccl-tests (--sync: "
         "barrier-separated, as IMB-MPI1 and OSU)";
}

std::string simulated_banner(const RunInfo& run) {
  if (run.timing != "simulated") return {};
  const nlohmann::json& sim = run.sim.is_object() ? run.sim : nlohmann::json::object();
  const nlohmann::json c = sim.value("cluster", nlohmann::json::object());
  const auto text = [](const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::string("?");
    return it->is_string() ? printable(it->get<std::string>()) : it->dump();
  };
  const auto number = [](const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? fmt::format("{:g}", it->get<double>()) : std::string("?");
  };
  const bool flow = sim.value("fidelity", "") == "flow";
  return fmt::format("SIMULATED: cluster {} ({}): {} nodes x {} GPUs, {} Gb/s NICs, {} spines, oversubscription {}:1, "
                     "NVLink {} Gb/s; fidelity {}, seed {}{}; every figure below is simulated, not measured",
                     text(c, "name"), text(c, "file"), number(c, "nodes"), number(c, "gpus_per_node"),
                     number(c, "link_rate_Gbps"), number(c, "spines"), number(c, "oversubscription"),
                     number(c, "nvlink_rate_Gbps"), text(sim, "fidelity"), text(sim, "seed"),
                     flow ? " (flow level is deterministic: one simulation per size, its time repeated)"
                          : " (iteration i simulated with seed + i)");
}

std::string format_column(double value, int width) {
  for (int decimals : {2, 1, 0}) {
    std::string s = fmt::format("{:.{}f}", value, decimals);
    if (static_cast<int>(s.size()) <= width) return s;
  }
  return fmt::format("{:.0e}", value);
}

void TableReporter::run_start(const RunHeader& h) {
  const BenchOptions& o = h.options;
  multi_cycle_ = o.run_cycles > 1;
  split_ = o.split.mode != SplitMode::None;
  const std::string per_process =
      o.gpus_per_process > 1
          ? fmt::format(" ({} process{} x {} GPUs)", h.run.nranks / o.gpus_per_process,
                        h.run.nranks / o.gpus_per_process == 1 ? "" : "es", o.gpus_per_process)
          : std::string();
  os_ << fmt::format("# railkit-bench {}: backend {} ({}), {} ranks{} on {} node{}\n", h.run.railkit_version,
                     h.run.backend, h.run.backend_version, h.run.nranks, per_process, h.run.nnodes,
                     h.run.nnodes == 1 ? "" : "s");
  if (const std::string banner = simulated_banner(h.run); !banner.empty()) os_ << "# " << banner << "\n";
  for (const std::string& line : h.lines) os_ << "# " << line << "\n";
  std::string colls;
  for (Coll c : o.colls) colls += (colls.empty() ? "" : ",") + std::string(info(c).name);
  const std::string step = o.step_factor > 1 ? fmt::format("{}(factor)", o.step_factor) : fmt::format("{}(bytes)", o.step_bytes);
  os_ << fmt::format("# minBytes {} maxBytes {} step: {} warmup iters: {} iters: {} validation: {} placement: {} "
                     "average: {} cycles: {} timeout: {}{}\n",
                     o.min_bytes, o.max_bytes, step, o.warmup_iters, o.iters, o.check_passes, placement_name(o.placement),
                     average_name(o.average), o.run_cycles,
                     o.timeout_s > 0 ? fmt::format("{:.0f}s", o.timeout_s) : std::string("off"),
                     o.graph_launches > 0 ? fmt::format(" graph: {}", o.graph_launches) : std::string());
  os_ << "# Timing: " << timing_line(h.run) << "\n";
  os_ << fmt::format("# collectives: {}  datatype: {}  redop: {}  root: {}", colls, info(o.dtype).name,
                     info(o.redop).name, o.root);
  if (!h.run.label.empty()) os_ << "  label: " << printable(h.run.label, h.run.label.size());
  if (split_) {
    const nlohmann::json groups = h.run.split.value("groups", nlohmann::json::array());
    os_ << "\n# split: " << split_name(o.split) << " (" << groups.size() << " concurrent groups of "
        << h.run.nranks / std::max<std::size_t>(1, groups.size()) << " ranks, each its own communicator)";
    for (const auto& g : groups) {
      std::string ranks;
      for (const auto& r : g.at("ranks")) ranks += (ranks.empty() ? "" : ",") + std::to_string(r.get<int>());
      os_ << "\n#   " << g.at("name").get<std::string>() << ": ranks " << ranks;
    }
  }
  os_ << "\n#\n# Using ranks\n";
  for (const RankLine& r : h.ranks) {
    os_ << fmt::format("#  Rank {:>2} Pid {:>6} on {:>10}", r.rank, r.pid, r.host);
    if (!r.device.empty() && r.device != "host") os_ << " " << r.device;
    os_ << "\n";
  }
  for (const std::string& w : summarize_warnings(h.warnings)) os_ << "# warning: " << w << "\n";
  for (const std::string& n : h.notes) os_ << "# note: " << n << "\n";
  for (const InjectDelay& d : o.inject_delays)
    os_ << fmt::format("# fire drill: rank {} sleeps {} us before each timed collective\n", d.rank, d.delay_us);
  if (o.inject_stall_rank)
    os_ << fmt::format("# fire drill: rank {} stalls at its first timed collective\n", *o.inject_stall_rank);
  os_.flush();
}

void TableReporter::coll_start(Coll c, int cycle) {
  os_ << "#\n# Collective: " << info(c).name;
  if (multi_cycle_) os_ << "  (cycle " << cycle << ")";
  os_ << "\n#\n";
  os_ << fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place                       in-place          \n",
                     "", "", "", "", "");
  os_ << fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>7}  {:>7}",
                     "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
                     "busbw", "#wrong", "o_p99", "i_p99", "slowest")
      << (split_ ? fmt::format("  {:>8}", "group") : std::string()) << "\n";
  os_ << fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>7}  {:>7}",
                     "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "",
                     "(us)", "(us)", "rank")
      << (split_ ? fmt::format("  {:>8}", "") : std::string()) << "\n";
  os_.flush();
}

void TableReporter::row(const Row& r) {
  const ResultRecord& any = r.out ? *r.out : *r.in;
  const auto p99 = [](const std::optional<ResultRecord>& x) {
    return x ? format_column(x->time_us.p99, 7) : std::string("-");
  };
  const ResultRecord* worst = &any;
  if (r.out && r.in && r.in->ranks.time_us_max > r.out->ranks.time_us_max) worst = &*r.in;
  // Every rank equally slow (a simulated run, where all ranks share one clock): no slowest rank.
  const std::string slowest = worst->ranks.time_us_min == worst->ranks.time_us_max
                                  ? std::string("-")
                                  : std::to_string(worst->ranks.slowest_rank);
  os_ << fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", any.bytes, any.count, any.dtype, any.redop, any.root)
      << placement_cols(r.out) << placement_cols(r.in)
      << fmt::format("  {:>7}  {:>7}  {:>7}", p99(r.out), p99(r.in), slowest)
      << (split_ ? fmt::format("  {:>8}", r.group) : std::string()) << "\n";
  if (const std::string choice = sim_choice_line(any.observed); !choice.empty()) os_ << printable(choice, choice.size()) << "\n";
  os_.flush();
}

void TableReporter::run_end(const ResultsDocument& doc) {
  if (doc.error) os_ << "# ERROR: " << doc.error->message << "\n";
  // Per group of a split: mean busbw, and the slowest group against the best.
  std::vector<std::pair<std::string, std::pair<double, int>>> groups;
  for (const auto& r : doc.results) {
    if (!r.group) continue;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == *r.group; });
    if (it == groups.end()) it = groups.insert(groups.end(), {*r.group, {0.0, 0}});
    it->second.first += r.busbw_GBps;
    it->second.second += 1;
  }
  if (!groups.empty()) {
    double best = 0, worst = 1e300;
    std::string worst_name;
    for (const auto& [name, acc] : groups) {
      const double mean = acc.first / acc.second;
      os_ << fmt::format("# {:<20} : avg bus bandwidth {:g}\n", "Group " + name, mean);
      best = std::max(best, mean);
      if (mean < worst) {
        worst = mean;
        worst_name = name;
      }
    }
    os_ << fmt::format("# {:<20} : {} ({:g}, {:.1f}% below the best group)\n", "Slowest group", worst_name, worst,
                       best > 0 ? 100.0 * (best - worst) / best : 0.0);
  }
  const char* partial = doc.summary.complete ? "" : " (incomplete: the run ended early)";
  if (doc.simulated) {
    // Nothing moved, so nothing was checked: never "OK".
    os_ << fmt::format("# {:<20} : N/A (simulated: no data moved, nothing checked){}\n", "Out of bounds values", partial);
    os_ << fmt::format("# {:<20} : {:g} (simulated){}\n", "Avg bus bandwidth", doc.summary.avg_busbw_GBps, partial);
  } else {
    os_ << fmt::format("# {:<20} : {} {}{}\n", "Out of bounds values", doc.summary.errors,
                       doc.summary.errors ? "FAILED" : "OK", partial);
    os_ << fmt::format("# {:<20} : {:g} {}\n", "Avg bus bandwidth", doc.summary.avg_busbw_GBps, partial);
  }
  os_ << "#\n# Collective test concluded: railkit-bench\n";
  os_.flush();
}

}  // namespace railkit::bench
