// What a comparison reads of sweep directories: their configurations, rounds and notes, and the
// results documents of the launches that finished ok.
#include "sweep/inputs.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/results.hpp"
#include "core/strings.hpp"

namespace railkit::sweep {
namespace fs = std::filesystem;
namespace {

/// True when `p` (canonical) is `root` (canonical) or below it.
bool within(const fs::path& root, const fs::path& p) {
  auto r = root.begin(), q = p.begin();
  for (; r != root.end(); ++r, ++q)
    if (q == p.end() || *r != *q) return false;
  return true;
}

/// Refuses a launch whose results path leaves the sweep directory: absolute, `..` above it, or
/// through a symlink that points out of it. A sweep writes them relative to its directory.
void check_results_paths(const fs::path& dir, const SweepDocument& doc) {
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(fs::absolute(dir), ec);
  if (ec) throw IoError(fmt::format("{}: cannot resolve the directory: {}", dir.string(), ec.message()));
  for (std::size_t i = 0; i < doc.launches.size(); ++i) {
    const auto& l = doc.launches[i];
    if (l.run.results.empty()) continue;
    const fs::path rel{l.run.results};
    bool inside = !rel.is_absolute() && !rel.has_root_name() && !rel.has_root_directory();
    if (inside) {
      const fs::path resolved = fs::weakly_canonical(root / rel, ec);
      inside = !ec && within(root, resolved) && resolved != root;
    }
    if (!inside)
      throw UsageError(fmt::format("{}: launches[{}] ({} round {}): results path '{}' is outside the sweep directory "
                                   "(a sweep writes its results documents inside it)",
                                   (dir / "sweep.json").string(), i, l.run.name, l.round, l.run.results));
  }
}

}  // namespace

std::vector<CompareInput> sweep_inputs(const fs::path& dir, const SweepDocument& doc) {
  check_results_paths(dir, doc);
  std::vector<CompareInput> out;
  const std::string series = fs::absolute(dir).lexically_normal().string();
  auto add = [&](const std::string& config, const std::map<std::string, std::string>& env) {
    CompareInput in;
    in.name = config;
    in.series = series;
    in.env = env;
    const auto launches = doc.of(config);
    if (launches.empty()) {
      in.status = "not run";
      out.push_back(std::move(in));
      return;
    }
    std::vector<std::string> problems;
    TrialStatus last = TrialStatus::Ok;
    for (const LaunchRecord* l : launches) {
      for (const auto& k : l->inert)
        if (std::find(in.inert.begin(), in.inert.end(), k) == in.inert.end()) in.inert.push_back(k);
      if (!l->run.results.empty() && in.source.empty()) in.source = (dir / l->run.results).string();
      if (l->run.status != TrialStatus::Ok) {
        last = l->run.status;
        problems.push_back(fmt::format("round {} {}{}", l->round, name(l->run.status),
                                       l->run.error.empty() ? "" : ": " + l->run.error));
        continue;
      }
      try {
        in.rounds.push_back(RoundDoc{l->round, load_results((dir / l->run.results).string())});
      } catch (const Error& e) {
        problems.push_back(fmt::format("round {} unreadable: {}", l->round, e.what()));
      }
    }
    if (!in.rounds.empty()) {
      in.status = "ok";
      in.doc = in.rounds.front().doc;
      if (launches.size() > 1 || doc.rounds > 1) in.source.clear();  // one document per round: the sweep is the source
    } else {
      in.status = problems.size() == launches.size() && last != TrialStatus::Ok ? std::string(name(last)) : "unreadable";
    }
    int not_run = 0;
    for (int r = 1; r <= doc.rounds; ++r)
      if (!doc.find(config, r)) ++not_run;
    if (not_run > 0) problems.push_back(fmt::format("{} of {} rounds not run", not_run, doc.rounds));
    if (in.rounds.size() == 1 && launches.size() == 1 && doc.rounds == 1) {  // one launch: its error as it was
      in.note = launches.front()->run.error;
    } else {
      in.note = join(problems, "; ");
    }
    out.push_back(std::move(in));
  };
  for (const auto& p : doc.planned) add(p.name, p.env);
  std::vector<std::string> extra;  // launches of configurations no longer planned
  for (const auto& l : doc.launches) {
    const bool planned = std::any_of(doc.planned.begin(), doc.planned.end(), [&](const BenchConfig& c) { return c.name == l.run.name; });
    if (!planned && std::find(extra.begin(), extra.end(), l.run.name) == extra.end()) {
      extra.push_back(l.run.name);
      add(l.run.name, l.run.env);
    }
  }
  return out;
}

std::vector<std::string> sweep_notes(const SweepDocument& doc) {
  std::vector<std::string> notes;
  if (doc.rounds > 1)
    notes.push_back(fmt::format("{} rounds: every configuration, the baseline included, once per round, in an order "
                                "shuffled per round (seed {})",
                                doc.rounds, doc.seed));
  if (!doc.inert.empty()) {
    std::vector<std::string> knobs;
    for (const auto& k : doc.inert) knobs.push_back(k.name + (k.source.empty() ? "" : " (" + k.source + ")"));
    notes.push_back(fmt::format("INERT: {} cannot reach the {} backend that ran{}: the differences they show are noise, "
                                "and no configuration that only changes them is a winner",
                                join(knobs, ", "), doc.inert_backend, doc.allow_inert ? " (--allow-inert)" : ""));
  }
  if (doc.sim.is_object()) {  // sweep_from_json checked it is an object with a cluster
    std::vector<std::string> seeds;
    if (doc.sim.contains("round_seeds") && doc.sim["round_seeds"].is_array())
      for (const auto& x : doc.sim["round_seeds"]) seeds.push_back(x.dump());
    const nlohmann::json fid = doc.sim.value("fidelity", nlohmann::json(nullptr));
    notes.push_back(fmt::format("SIMULATED sweep: railkit-bench --backend sim simulated cluster {} ({}), fidelity {}; "
                                "round seeds {}: the rounds are replicas with other seeds, their spread the model's "
                                "seed-to-seed variation, not a measurement's noise",
                                doc.sim.value("cluster", std::string("?")), doc.sim.value("cluster_hash", std::string("?")),
                                fid.is_string() ? fid.get<std::string>() : std::string("railkit-bench's default"),
                                seeds.empty() ? std::string("?") : join(seeds, ", ")));
  }
  // sweep_from_json checked the types of both
  if (doc.topology.is_object() && !field_or(doc.topology, "measured_node", true, "sweep.json: topology"))
    notes.push_back(field_or(doc.topology, "note", "the rails were not probed on the measured node", "sweep.json: topology"));
  return notes;
}

std::vector<CompareInput> load_report_inputs(const std::vector<std::string>& inputs, std::string* sweep_baseline,
                                             std::vector<std::string>* notes) {
  if (inputs.empty()) throw UsageError("report: give results documents or sweep directories");
  std::vector<CompareInput> all;
  std::vector<std::string> qualified;  // the name to use when the plain one collides
  int sweeps = 0;
  for (const auto& path : inputs) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      if (!fs::exists(fs::path(path) / "sweep.json"))
        throw UsageError(path + ": a directory without sweep.json (not a sweep output directory)");
      const SweepDocument doc = load_sweep(path);
      if (++sweeps == 1 && sweep_baseline) *sweep_baseline = doc.baseline;
      const std::string dir_name = fs::path(path).lexically_normal().filename().string();
      if (notes)
        for (auto& x : sweep_notes(doc)) notes->push_back(inputs.size() > 1 ? (dir_name.empty() ? path : dir_name) + ": " + x : x);
      for (auto& in : sweep_inputs(path, doc)) {
        qualified.push_back((dir_name.empty() ? path : dir_name) + ":" + in.name);
        all.push_back(std::move(in));
      }
    } else {
      if (!fs::exists(path, ec)) throw UsageError(path + ": no such file or directory");
      CompareInput in;
      in.source = path;
      in.doc = load_results(path);
      in.name = in.doc->run.label.empty() ? fs::path(path).stem().string() : in.doc->run.label;
      if (!in.doc->summary.complete) in.note = "incomplete run";
      qualified.push_back(path);
      all.push_back(std::move(in));
    }
  }
  if (sweeps != 1 && sweep_baseline) sweep_baseline->clear();  // several sources: default to the first
  std::map<std::string, int> count;
  for (const auto& in : all) ++count[in.name];
  for (size_t i = 0; i < all.size(); ++i)
    if (count[all[i].name] > 1) all[i].name = qualified[i];
  return all;
}

std::vector<fs::path> ok_results_documents(const fs::path& dir) {
  const SweepDocument sd = load_sweep(dir);
  check_results_paths(dir, sd);
  const fs::path root = fs::weakly_canonical(fs::absolute(dir));
  std::vector<fs::path> out;
  for (const LaunchRecord& l : sd.launches)
    if (l.run.status == TrialStatus::Ok && !l.run.results.empty()) out.push_back(fs::weakly_canonical(root / l.run.results));
  return out;
}

}  // namespace railkit::sweep
