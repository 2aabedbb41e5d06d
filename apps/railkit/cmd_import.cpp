// `railkit import FILE... --out OUT [--from nccl-tests|imb|osu]`: other tools' logs as
// railkit.results/1 documents (ingest/import.hpp), one per imported run, for report and compare.
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/railkit/subcommands.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "ingest/import.hpp"

namespace railkit::app {
namespace {

namespace fs = std::filesystem;

struct ImportCliOptions {
  std::vector<std::string> inputs;
  std::string out;
  std::string from;  ///< empty: detected per file
  ingest::ImportOptions import;
};

/// Refuses a target that is one of the inputs (--out naming a log, or a directory where a
/// document's name is an input's): it would replace the log being imported, as profile export
/// refuses its own profile.
void refuse_input_as_target(const fs::path& target, const std::vector<std::string>& inputs, const std::string& out) {
  std::error_code ec;
  const fs::path written = write_target(target);
  for (const auto& in : inputs)
    if (fs::equivalent(written, in, ec))
      throw UsageError("--out " + out + ": " + target.string() + " is the input " + in +
                       ": importing would replace the log; write to another file or directory");
}

/// Where each document goes: --out X.json with one document, else DIR/NAME.json. Checked whole
/// before anything is written (a target that is an input, a directory, a device).
std::vector<fs::path> targets_of(const ImportCliOptions& o, bool one_file, const std::vector<ingest::ImportedDocument>& docs,
                                 const std::vector<std::string>& sources) {
  const fs::path out = o.out;
  std::vector<fs::path> targets;
  if (one_file) {
    if (docs.size() != 1)
      throw UsageError("--out " + o.out + ": " + std::to_string(docs.size()) +
                       " documents to write; a file takes one, give a directory");
    targets.push_back(out);
  } else {
    std::error_code ec;
    for (const auto& in : o.inputs)  // --out LOG (no .json) would be a directory over the log
      if (fs::equivalent(out, in, ec))
        throw UsageError("--out " + o.out + ": that is the input " + in + "; write to another directory");
    std::map<std::string, std::string> seen;
    for (std::size_t i = 0; i < docs.size(); ++i) {
      const std::string file = docs[i].name + ".json";
      if (auto [it, fresh] = seen.emplace(file, sources[i]); !fresh)
        throw UsageError("--out " + o.out + ": " + sources[i] + " and " + it->second + " would both write " + file +
                         ": rename one input or import them into different directories");
      targets.push_back(out / file);
    }
  }
  for (const auto& t : targets) refuse_input_as_target(t, o.inputs, o.out);
  return targets;
}

void print_imported(const ingest::ImportedDocument& doc, const std::string& source, const fs::path& target) {
  const ResultsDocument& d = doc.doc;
  std::cout << "imported " << printable(source) << " -> " << printable(target.string()) << ": " << d.run.backend;
  if (d.run.imported.contains("tool_version")) std::cout << " " << d.run.imported["tool_version"].get<std::string>();
  std::cout << ", " << doc.op << ", " << doc.records << " records";
  if (!d.run.absent.count("nranks")) std::cout << ", " << d.run.nranks << " ranks";
  if (d.run.imported.contains("derived")) std::cout << " (algbw/busbw derived from bytes and time)";
  if (d.run.imported.contains("line_prefix"))
    std::cout << " (line prefix stripped: " << join(d.run.imported["line_prefix"].get<std::vector<std::string>>(), ", ") << ")";
  if (!d.summary.complete) std::cout << " INCOMPLETE";
  std::cout << "\n";
}

/// Every input is read and turned into its documents' texts first; only when all of them were
/// (one refused input: nothing written) and every target was checked are the files written.
int run_import(const ImportCliOptions& o) {
  std::vector<ingest::ImportedDocument> docs;
  std::vector<std::string> sources;  // the input of each document
  const std::optional<ingest::ImportSource> from =
      o.from.empty() ? std::nullopt : std::optional(ingest::parse_import_source(o.from));
  for (const auto& in : o.inputs) {
    ingest::ImportResult r = ingest::import_file(in, from, o.import);
    for (const auto& n : r.notes) std::cerr << "railkit import: note: " << printable(n, 400) << "\n";
    for (auto& d : r.docs) {
      sources.push_back(in);
      docs.push_back(std::move(d));
    }
  }
  if (docs.empty()) throw UsageError("railkit import: nothing to import (every section was skipped)");
  std::error_code ec;
  const bool one_file = fs::path(o.out).extension() == ".json" && !fs::is_directory(o.out, ec);
  const std::vector<fs::path> targets = targets_of(o, one_file, docs, sources);
  if (!one_file) {
    fs::create_directories(o.out, ec);
    if (ec || !fs::is_directory(o.out)) throw IoError("--out " + o.out + ": cannot create the directory (" + ec.message() + ")");
  }
  for (std::size_t i = 0; i < docs.size(); ++i) {
    write_file_atomic(targets[i], docs[i].text);
    print_imported(docs[i], sources[i], targets[i]);
  }
  return 0;
}

}  // namespace

std::function<int()> setup_import(CLI::App& app) {
  auto o = std::make_shared<ImportCliOptions>();
  app.add_option("files", o->inputs, "nccl-tests output (text, or its -J JSON), IMB-MPI1 output or OSU output, one run per file")
      ->required();
  app.add_option("--out", o->out,
                 "directory that receives one railkit.results/1 document per imported run (NAME.json, NAME the input's "
                 "stem; IMB: STEM.BENCHMARK.npN); a FILE.json when there is exactly one")
      ->required();
  app.add_option("--from", o->from, "the tool that wrote the files (default: detected per file)")
      ->check(CLI::IsMember(ingest::import_source_names()));
  app.add_option("--coll,--op", o->import.op,
                 "the collective of nccl-tests logs that do not name it (before nccl-tests 2.16 the text names no program) "
                 "when neither a command line before a run nor the file's name does; refused when the log names another");
  app.add_option("--nranks", o->import.nranks, "ranks of an OSU collective run (OSU prints no rank count)")
      ->check(CLI::Range(1, 1 << 24));
  app.add_option("--label", o->import.label, "run.label of every document (default: the input's stem)");
  return [o] { return run_import(*o); };
}

}  // namespace railkit::app
