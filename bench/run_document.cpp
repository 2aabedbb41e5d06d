#include "bench/run_document.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "bench/app.hpp"
#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/env.hpp"
#include "core/nccl_log.hpp"
#include "core/strings.hpp"
#include "core/version.hpp"

namespace railkit::bench {

nlohmann::json options_json(const BenchOptions& o) {
  nlohmann::json colls = nlohmann::json::array();
  for (Coll c : o.colls) colls.push_back(info(c).name);
  return {{"minbytes", o.min_bytes},
          {"maxbytes", o.max_bytes},
          {"stepfactor", o.step_factor},
          {"stepbytes", o.step_bytes},
          {"iters", o.iters},
          {"warmup_iters", o.warmup_iters},
          {"check", o.check_passes},
          {"datatype", info(o.dtype).name},
          {"op", info(o.redop).name},
          {"root", o.root},
          {"average", static_cast<int>(o.average)},
          {"run_cycles", o.run_cycles},
          {"timeout_s", o.timeout_s},
          {"colls", colls},
          {"placement", placement_name(o.placement)},
          {"split", split_name(o.split)},
          {"ranks_per_node", o.ranks_per_node},
          {"ngpus", o.gpus_per_process},
          {"cudagraph", o.graph_launches},
          {"nonblocking", o.nonblocking}};
}

/// --observe on the nccl backend: NCCL logs INIT,BOOTSTRAP,NET,GRAPH at INFO into a file of this rank's,
/// unless the user chose NCCL_DEBUG* themselves. Returns the file NCCL will write. Must run
/// before NCCL reads its environment (communicator creation).
std::string arrange_nccl_log(char** envp) {
  std::string file = env_value(envp, "NCCL_DEBUG_FILE");
  if (env_value(envp, "NCCL_DEBUG").empty()) ::setenv("NCCL_DEBUG", "INFO", 1);
  if (env_value(envp, "NCCL_DEBUG_SUBSYS").empty()) ::setenv("NCCL_DEBUG_SUBSYS", "INIT,BOOTSTRAP,NET,GRAPH", 1);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  if (file.empty()) {
    file = (std::filesystem::temp_directory_path() / fmt::format("railkit-nccl.{}.{}.log", host, ::getpid())).string();
    ::setenv("NCCL_DEBUG_FILE", file.c_str(), 1);
  }
  return expand_nccl_debug_file(file, host, ::getpid());
}

/// What NCCL did, from every rank's log (gathered to rank 0), with contradictions against
/// the environment as warnings. Collective; returns null JSON on ranks other than 0.
nlohmann::json observe_nccl(Bootstrap& boot, const std::string& log_file, const std::map<std::string, std::string>& env,
                            bool several_gpus) {
  std::string text;
  if (!log_file.empty()) {
    try {
      text = read_file(log_file);
    } catch (const Error&) {
      text.clear();  // no log: reported below as no lines
    }
  }
  const std::vector<std::string> texts = boot.gather_text_to_root(text);
  if (boot.rank() != 0) return nullptr;
  NcclLogSummary all;
  bool first = true;
  for (size_t r = 0; r < texts.size(); ++r) {
    std::istringstream in(texts[r]);
    // With -g N a process's log holds its N ranks' lines.
    const std::string source = several_gpus ? fmt::format("process {}", r) : fmt::format("rank {}", r);
    const NcclLogSummary one = parse_nccl_log(in, source);
    if (first) all = one;
    else merge_nccl_log(all, one);
    first = false;
  }
  nlohmann::json j = to_json(all);
  for (const std::string& w : nccl_log_contradictions(all, env)) j["warnings"].push_back(w);
  return j;
}

/// The run's description for the results document, known before any communicator exists.
RunInfo make_run_info(const BenchOptions& o, const Bootstrap& boot, const std::string& backend,
                      const std::string& backend_version, int data_ranks, const std::vector<Group>& groups) {
  RunInfo run;
  run.label = o.label;
  run.backend = backend;
  run.backend_version = backend_version;
  run.railkit_version = kVersion;
  run.nranks = data_ranks;
  for (const std::string& h : boot.hosts())
    if (std::find(run.hosts.begin(), run.hosts.end(), h) == run.hosts.end()) run.hosts.push_back(h);
  run.nnodes = static_cast<int>(run.hosts.size());
  run.command = shell_join(o.argv);
  run.env = capture_env(environ, kRecordedEnvPrefixes);  // after --observe's NCCL_DEBUG settings
  run.start_time = utc_now_iso();
  run.average = std::string(average_name(o.average));
  run.timing_method = o.sync ? "barrier_separated" : "back_to_back";
  run.options = options_json(o);
  if (o.split.mode != SplitMode::None) {
    nlohmann::json gs = nlohmann::json::array();
    for (const Group& g : groups) {
      nlohmann::json hosts = nlohmann::json::array();
      for (int r : g.ranks) hosts.push_back(boot.hosts()[static_cast<size_t>(r)]);
      gs.push_back({{"name", g.name}, {"ranks", g.ranks}, {"hosts", hosts}});
    }
    run.split = {{"mode", split_name(o.split)},
                 {"ranks_per_node", o.ranks_per_node > 0 ? nlohmann::json(o.ranks_per_node) : nlohmann::json(nullptr)},
                 {"groups", gs}};
  }
  return run;
}

/// The error record of a watchdog timeout.
ErrorRecord timeout_record(const TimeoutReport& rep) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankState& s : rep.ranks)
    ranks.push_back({{"rank", s.rank}, {"host", s.host}, {"state", s.state}, {"ops_entered", s.seq},
                     {"phase", s.at.phase}, {"bytes", s.at.bytes}, {"iteration", s.at.iteration},
                     {"in_place", s.at.in_place}, {"waited_s", s.waited_s}});
  return ErrorRecord{std::string(error_code_name(ErrorCode::Timeout)), exit_code(ErrorCode::Timeout), rep.message,
                     {{"timeout_s", rep.timeout_s},
                      {"phase", rep.at.phase},
                      {"bytes", rep.at.bytes},
                      {"iteration", rep.at.iteration},
                      {"in_place", rep.at.in_place},
                      {"not_arrived", rep.not_arrived},
                      {"ranks", ranks}}};
}

RankFacts gather_rank_facts(Bootstrap& boot, const Communicator& comm, int slots, bool record_cpus,
                            const std::optional<RankTransport>& transport) {
  RankFacts f;
  f.pids = boot.gather_to_root(std::vector<double>{static_cast<double>(::getpid())});
  // Per slot: its device, and its host when the backend places it (else the process's).
  std::string devices, hosts;
  for (int k = 0; k < slots; ++k) {
    devices += comm.device(k) + '\n';  // device and host names hold no newline
    hosts += comm.host(k) + '\n';
  }
  const std::vector<std::string> all_devices = boot.gather_text_to_root(devices);
  const std::vector<std::string> all_hosts = boot.gather_text_to_root(hosts);
  for (size_t p = 0; p < all_devices.size(); ++p) {
    std::vector<std::string> lines = split(all_devices[p], '\n');
    lines.resize(static_cast<size_t>(slots));
    f.devices.insert(f.devices.end(), lines.begin(), lines.end());
    std::vector<std::string> own = p < all_hosts.size() ? split(all_hosts[p], '\n') : std::vector<std::string>{};
    own.resize(static_cast<size_t>(slots));
    for (const std::string& h : own) f.hosts.push_back(h.empty() ? boot.hosts()[p] : h);
  }
  if (!record_cpus) return f;
  f.cpus = boot.gather_text_to_root(format_cpu_list(cpu_affinity()));
  const std::vector<std::string> texts = boot.gather_text_to_root(transport ? to_json(*transport).dump() : std::string());
  if (boot.rank() != 0) return f;
  std::vector<ProcessFacts> procs;
  for (size_t p = 0; p < f.cpus.size(); ++p) {
    ProcessFacts pf;
    pf.rank = static_cast<int>(p) * slots;
    pf.host = boot.hosts()[p];
    pf.cpus = parse_cpu_list(f.cpus[p]).value_or(std::vector<int>{});
    if (p < texts.size() && !texts[p].empty()) pf.transport = rank_transport_from_json(nlohmann::json::parse(texts[p]));
    f.transports.push_back(pf.transport);
    procs.push_back(std::move(pf));
  }
  f.warnings = transport_warnings(procs);
  if (slots == 1) f.transport = transport_summary(procs, boot.hosts());  // the mpi backend's: a rank per process
  return f;
}

/// The run's end on rank 0: observed facts, the footer and the final document.
void finish_document(ResultsSink& sink, Reporter& reporter, const Bootstrap& boot, const RankFacts& facts,
                     const std::vector<double>& rss, int slots, const Plan& plan, const nlohmann::json& backend_facts,
                     const nlohmann::json& observed_nccl) {
  ResultsDocument d = sink.snapshot();
  // Transport and affinity warnings went to the header; every one goes to the document.
  for (const std::string& w : facts.warnings) d.observed["warnings"].push_back(w);
  if (!observed_nccl.is_null()) {
    d.observed["nccl"] = observed_nccl;
    std::vector<std::string> warnings;  // every one in the document; repeats of a kind as one line on screen
    for (const auto& w : observed_nccl.value("warnings", nlohmann::json::array())) {
      d.observed["warnings"].push_back(w);
      warnings.push_back(w.get<std::string>());
    }
    for (const std::string& line : summarize_warnings(warnings)) std::cout << "# warning: " << line << "\n";
  }
  nlohmann::json ranks = nlohmann::json::array();
  for (size_t r = 0; r < facts.devices.size(); ++r) {
    const size_t p = r / static_cast<size_t>(slots);
    nlohmann::json one = {{"rank", r},
                          {"host", r < facts.hosts.size() ? facts.hosts[r] : boot.hosts()[p]},
                          {"pid", static_cast<std::int64_t>(facts.pids[p])},
                          {"peak_rss_bytes", static_cast<std::uint64_t>(rss[p])},
                          {"device", facts.devices[r]}};
    if (p < facts.cpus.size()) one["cpus"] = facts.cpus[p];
    if (p < facts.transports.size() && facts.transports[p]) {
      nlohmann::json t = to_json(*facts.transports[p]);
      t["intra_node"] = peer_class_transport(*facts.transports[p], static_cast<int>(p), boot.hosts(), true);
      t["inter_node"] = peer_class_transport(*facts.transports[p], static_cast<int>(p), boot.hosts(), false);
      one["transport"] = t;
    }
    ranks.push_back(one);
  }
  d.observed["ranks"] = ranks;
  if (!facts.transports.empty() && std::any_of(facts.transports.begin(), facts.transports.end(),
                                               [](const auto& t) { return t.has_value(); })) {
    d.observed["transport"] = facts.transport.summary;
    if (!facts.transport.note.empty()) d.observed["transport_note"] = facts.transport.note;
  }
  d.observed["buffer_bytes"] = plan.buffer_bytes;
  d.observed["backend"] = backend_facts;
  reporter.run_end(d);
  sink.write(d);
}

}  // namespace railkit::bench
