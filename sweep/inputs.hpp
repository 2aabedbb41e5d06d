#pragma once
// What a comparison reads of sweep directories (sweep.json): each configuration's rounds, the
// notes above the tables, and the results documents of the launches that finished ok.
#include <filesystem>
#include <string>
#include <vector>

#include "sweep/compare.hpp"
#include "sweep/sweep.hpp"

namespace railkit::sweep {

/// The configurations of a sweep directory, in planned order, each with the documents of the
/// rounds that finished ok (paired by round: `series` is the directory) and its status: "ok"
/// when a round is, else the last launch's ("failed", "timeout"); "not run" when none ran. The
/// note names failed rounds and rounds not run yet. Throws UsageError naming sweep.json, the
/// launch and the path when a launch's results path leaves `dir` (absolute, `..`, a symlink out).
std::vector<CompareInput> sweep_inputs(const std::filesystem::path& dir, const SweepDocument& doc);

/// What a comparison of a sweep says above its tables: the rounds and their seed, knobs that
/// cannot reach the backend (inert), rails taken from a tree that is not the measured node, and
/// for a simulated sweep the cluster file, fidelity and each round's seed.
std::vector<std::string> sweep_notes(const SweepDocument& doc);

/// Loads every input (a results document, or a directory holding sweep.json). Names: a
/// sweep's configuration names, else the document's run.label, else the file name; names that
/// collide are qualified with their source. `notes` receives the sweeps' notes (sweep_notes).
/// Throws UsageError naming a bad input.
std::vector<CompareInput> load_report_inputs(const std::vector<std::string>& inputs, std::string* sweep_baseline,
                                             std::vector<std::string>* notes = nullptr);

/// The results documents of the launches of sweep directory `dir` that finished ok, in the order
/// of sweep.json. Throws UsageError naming sweep.json, the launch and the path when a launch's
/// results path leaves `dir` (the check sweep_inputs makes).
std::vector<std::filesystem::path> ok_results_documents(const std::filesystem::path& dir);

}  // namespace railkit::sweep
