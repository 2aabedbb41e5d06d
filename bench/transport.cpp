#include "bench/transport.hpp"

#include <sched.h>

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/strings.hpp"

namespace railkit::bench {
namespace {

std::string joined(const std::set<std::string>& names, const char* sep = ",") {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : sep) + n;
  return out;
}

bool is_shared_memory_btl(const std::string& name) { return name == "vader" || name == "sm" || name == "smcuda"; }

std::string ranks_text(const std::vector<int>& ranks) {
  return fmt::format("rank{} {}", ranks.size() == 1 ? "" : "s", format_cpu_list(ranks));
}

std::string value_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

std::string format_cpu_list(std::span<const int> ids) {
  std::vector<int> v(ids.begin(), ids.end());
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::string out;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? std::to_string(v[i]) : fmt::format("{}-{}", v[i], v[j]);
    i = j + 1;
  }
  return out;
}

std::optional<std::vector<int>> parse_cpu_list(std::string_view text) {
  std::vector<int> out;
  if (trim(text).empty()) return out;
  for (const std::string& part : split(std::string(trim(text)), ',')) {
    const auto dash = part.find('-');
    const auto lo = to_int(dash == std::string::npos ? part : part.substr(0, dash));
    const auto hi = dash == std::string::npos ? lo : to_int(part.substr(dash + 1));
    if (!lo || !hi || *lo < 0 || *hi < *lo || *hi > (1 << 20)) return std::nullopt;
    for (long long c = *lo; c <= *hi; ++c) out.push_back(static_cast<int>(c));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<int> cpu_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

LauncherGuess infer_launcher(const std::map<std::string, std::string>& env) {
  const auto has = [&](const char* name) { return env.count(name) > 0; };
  const auto get = [&](const char* name) {
    const auto it = env.find(name);
    return it == env.end() ? std::string() : it->second;
  };
  LauncherGuess g;
  g.pmix_version = get("PMIX_VERSION");
  g.pmi2 = has("PMI_FD") || has("PMI_PORT");
  // Open MPI's orted (and PRRTE) set OMPI_COMM_WORLD_*; MPICH's hydra MPI_LOCALNRANKS. Checked
  // first: an mpirun inside a Slurm allocation inherits SLURM_* too.
  if (has("OMPI_COMM_WORLD_SIZE") || has("OMPI_MCA_orte_hnp_uri") || has("MPI_LOCALNRANKS")) {
    g.launcher = "mpirun";
  } else if (has("SLURM_STEP_NUM_TASKS") || (has("SLURM_STEP_ID") && has("SLURM_PROCID"))) {
    g.launcher = "srun";  // a step; a batch script alone has no SLURM_STEP_NUM_TASKS
    g.slurm_mpi_type = get("SLURM_MPI_TYPE");
  } else {
    g.launcher = "none";
  }
  return g;
}

std::string pmi_text(const LauncherGuess& guess, const std::string& ompi_pmix) {
  std::string flavour;
  if (guess.launcher == "none") {
    flavour = "singleton";
  } else if (const auto at = ompi_pmix.find("OpenPMIx "); at != std::string::npos) {
    std::string version = ompi_pmix.substr(at + 9);
    version = version.substr(0, version.find(' '));
    flavour = "pmix " + version;
  } else if (ompi_pmix.rfind("isolated", 0) == 0) {
    flavour = "none (isolated)";
  } else if (ompi_pmix.rfind("flux", 0) == 0) {
    flavour = "flux";
  } else if (!guess.pmix_version.empty()) {
    flavour = "pmix " + guess.pmix_version;
  } else if (!ompi_pmix.empty()) {
    flavour = ompi_pmix.substr(0, ompi_pmix.find(' '));
  } else if (guess.pmi2) {
    flavour = "pmi2";
  } else {
    flavour = "unknown";
  }
  if (guess.launcher == "srun")
    flavour += fmt::format(" (SLURM_MPI_TYPE={})", guess.slurm_mpi_type.empty() ? "unset" : guess.slurm_mpi_type);
  return flavour;
}

nlohmann::json to_json(const RankTransport& t) {
  nlohmann::json peers = nlohmann::json::object();
  for (const auto& [btl, ranks] : t.btl_peers) peers[btl] = format_cpu_list(ranks);
  return {{"pml", t.pml},
          {"mtl", t.mtl.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.mtl)},
          {"btl_peers", peers},
          {"seen_remote", format_cpu_list(t.seen_remote)},
          {"pmi", t.pmi},
          {"launcher", t.launcher},
          {"source", t.source}};
}

RankTransport rank_transport_from_json(const nlohmann::json& j) {
  RankTransport t;
  t.pml = j.at("pml").get<std::string>();
  t.mtl = j.at("mtl").is_null() ? std::string() : j.at("mtl").get<std::string>();
  for (const auto& [btl, ranks] : j.at("btl_peers").items())
    t.btl_peers[btl] = parse_cpu_list(ranks.get<std::string>()).value_or(std::vector<int>{});
  t.seen_remote = parse_cpu_list(j.at("seen_remote").get<std::string>()).value_or(std::vector<int>{});
  t.pmi = j.at("pmi").get<std::string>();
  t.launcher = j.at("launcher").get<std::string>();
  t.source = j.at("source").get<std::string>();
  return t;
}

std::vector<int> peers_to_probe(int rank, const std::vector<std::string>& host_of_rank) {
  std::vector<int> out;
  std::set<std::string> seen;
  const std::string& mine = host_of_rank.at(static_cast<size_t>(rank));
  for (size_t r = 0; r < host_of_rank.size(); ++r) {
    const std::string& h = host_of_rank[r];
    if (h == mine) {
      out.push_back(static_cast<int>(r));  // itself too: the self BTL
    } else if (seen.insert(h).second) {
      out.push_back(static_cast<int>(r));
    }
  }
  return out;
}

nlohmann::json peer_class_transport(const RankTransport& t, int rank, const std::vector<std::string>& host_of_rank,
                                    bool same_host) {
  const std::string& mine = host_of_rank.at(static_cast<size_t>(rank));
  const auto in_class = [&](int peer) {
    if (peer == rank || peer < 0 || static_cast<size_t>(peer) >= host_of_rank.size()) return false;
    return (host_of_rank[static_cast<size_t>(peer)] == mine) == same_host;
  };
  bool any = false;
  for (size_t r = 0; r < host_of_rank.size(); ++r) any = any || in_class(static_cast<int>(r));
  if (!any) return nullptr;
  if (t.pml == "ucx") return "ucx";
  if (t.pml == "cm") return t.mtl.empty() ? std::string("unknown") : "mtl:" + t.mtl;
  if (t.pml != "ob1") return t.pml;  // "unknown", or a PML that moves data itself
  std::set<std::string> btls;
  for (const auto& [list, peers] : t.btl_peers)
    if (std::any_of(peers.begin(), peers.end(), in_class))
      for (const std::string& b : split(list, ',')) btls.insert(b);
  return btls.empty() ? std::string("unknown") : joined(btls);
}

std::vector<std::string> transport_warnings(const std::vector<ProcessFacts>& procs) {
  std::vector<std::string> out;
  std::map<int, std::string> host_of;
  std::vector<std::string> hosts;  // in order of first appearance
  for (const ProcessFacts& p : procs) {
    host_of[p.rank] = p.host;
    if (std::find(hosts.begin(), hosts.end(), p.host) == hosts.end()) hosts.push_back(p.host);
  }
  for (const std::string& host : hosts) {
    std::vector<const ProcessFacts*> here;
    for (const ProcessFacts& p : procs)
      if (p.host == host) here.push_back(&p);
    if (here.size() < 2) continue;

    // Shared memory between the ranks of this host (ob1 names its BTLs; ucx and cm choose inside).
    std::map<std::string, std::set<int>> not_shm;  // BTL list -> ranks on either end
    bool unseen = false;
    for (const ProcessFacts* p : here) {
      if (!p->transport || p->transport->pml != "ob1") continue;
      for (const auto& [list, peers] : p->transport->btl_peers) {
        bool shm = false;
        for (const std::string& b : split(list, ',')) shm = shm || is_shared_memory_btl(b);
        if (shm) continue;
        for (int q : peers) {
          const auto it = host_of.find(q);
          if (q == p->rank || it == host_of.end() || it->second != host) continue;
          not_shm[list].insert({p->rank, q});
        }
      }
      unseen = unseen || !p->transport->seen_remote.empty();
    }
    for (const auto& [list, ranks] : not_shm)
      out.push_back(fmt::format("host {}: {} reach each other over {}, not shared memory{}", host,
                                ranks_text(std::vector<int>(ranks.begin(), ranks.end())), list,
                                unseen ? " (Open MPI holds them for ranks of other nodes: the launcher did not tell "
                                         "it they share this node)"
                                       : ""));

    // CPUs: ranks that may run on the same core wait for each other's time slices.
    std::vector<const ProcessFacts*> known;
    for (const ProcessFacts* p : here)
      if (!p->cpus.empty()) known.push_back(p);
    std::set<int> involved, shared;
    bool identical = true;
    for (size_t i = 0; i < known.size(); ++i) {
      identical = identical && known[i]->cpus == known.front()->cpus;
      for (size_t j = i + 1; j < known.size(); ++j) {
        std::vector<int> both;
        std::set_intersection(known[i]->cpus.begin(), known[i]->cpus.end(), known[j]->cpus.begin(),
                              known[j]->cpus.end(), std::back_inserter(both));
        if (both.empty()) continue;
        involved.insert({known[i]->rank, known[j]->rank});
        shared.insert(both.begin(), both.end());
      }
    }
    if (involved.empty()) continue;
    const std::vector<int> ranks(involved.begin(), involved.end());
    const std::vector<int> cpus(shared.begin(), shared.end());
    if (identical && known.size() == here.size() && cpus.size() == 1) {
      out.push_back(fmt::format("host {}: {} are all bound to CPU {}: they take turns on one core, timings are not "
                                "the transport's", host, ranks_text(ranks), cpus.front()));
    } else if (identical && known.size() == here.size()) {
      out.push_back(fmt::format("host {}: {} are not bound to separate cores (each may run on CPUs {}{}): they share "
                                "cores and timings may be noisy; bind them (mpirun --bind-to core, srun "
                                "--cpu-bind=cores)", host, ranks_text(ranks), format_cpu_list(cpus),
                                ranks.size() > cpus.size() ? fmt::format(", {} ranks on {} CPUs", ranks.size(), cpus.size())
                                                           : std::string()));
    } else {
      out.push_back(fmt::format("host {}: {} share CPUs {} (overlapping affinity): timings may be noisy", host,
                                ranks_text(ranks), format_cpu_list(cpus)));
    }
  }
  return out;
}

TransportSummary transport_summary(const std::vector<ProcessFacts>& procs, const std::vector<std::string>& host_of_rank) {
  static constexpr const char* kKeys[] = {"pml", "intra_node", "inter_node", "mtl", "pmi", "launcher"};
  std::map<std::string, std::map<std::string, std::vector<int>>> votes;  // key -> value text -> ranks
  std::map<std::string, nlohmann::json> value_of;                        // key -> a voted value
  bool any = false;
  for (const ProcessFacts& p : procs) {
    if (!p.transport) continue;
    any = true;
    const RankTransport& t = *p.transport;
    const nlohmann::json values[] = {t.pml,
                                     peer_class_transport(t, p.rank, host_of_rank, true),
                                     peer_class_transport(t, p.rank, host_of_rank, false),
                                     t.mtl.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.mtl),
                                     t.pmi,
                                     t.launcher};
    for (size_t k = 0; k < std::size(kKeys); ++k) {
      const bool peer_class = k == 1 || k == 2;
      if (peer_class && values[k].is_null()) continue;  // no peers of the class: no vote
      votes[kKeys[k]][values[k].dump()].push_back(p.rank);
      value_of[kKeys[k]] = values[k];
    }
  }
  TransportSummary out;
  if (!any) return out;
  std::vector<std::string> differ;
  for (const char* key : kKeys) {
    const auto& by_value = votes[key];
    if (by_value.size() <= 1) continue;
    std::string parts;
    for (const auto& [text, ranks] : by_value)
      parts += (parts.empty() ? "" : ", ") + value_text(nlohmann::json::parse(text)) + ": " + ranks_text(ranks);
    differ.push_back(fmt::format("{} ({})", key, parts));
  }
  if (!differ.empty()) {
    std::string keys;
    for (const std::string& d : differ) keys += (keys.empty() ? "" : " and ") + d;
    out.summary = nullptr;
    out.note = "ranks differ in " + keys + ": see observed.ranks[].transport";
    return out;
  }
  out.summary = nlohmann::json::object();
  for (const char* key : kKeys) out.summary[key] = value_of.count(key) ? value_of[key] : nlohmann::json(nullptr);
  return out;
}

}  // namespace railkit::bench
