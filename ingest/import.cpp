#include "ingest/import.hpp"

#include <cmath>
#include <filesystem>

#include "core/collectives.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/version.hpp"

namespace railkit::ingest {
using nlohmann::json;

namespace {

/// One tool railkit import reads: its --from name, how a line of its output is recognised (and
/// what the refusal names when none is), and its parser. Detection tries the rows in order.
struct Source {
  ImportSource source;
  std::string_view name;
  bool (*line_is_its)(std::string_view line);
  std::string_view sign;  ///< what the "cannot tell" refusal says is missing
  ImportResult (*parse)(std::string_view text, const std::string& file, const ImportOptions& o);
};
constexpr Source kSources[] = {
    {ImportSource::NcclTests, "nccl-tests",
     [](std::string_view line) {
       return line.rfind("# nccl-tests version ", 0) == 0 || line.rfind("# nThread ", 0) == 0 ||
              (line.rfind("#  Rank ", 0) == 0 && line.find(" Pid ") != std::string_view::npos);
     },
     "nccl-tests '# nThread' header or JSON", import_nccl_tests},
    {ImportSource::Imb, "imb",
     [](std::string_view line) {
       return line.find("Intel(R) MPI Benchmarks") != std::string_view::npos || line.rfind("# Benchmarking ", 0) == 0;
     },
     "IMB-MPI1 '# Benchmarking' section", import_imb},
    {ImportSource::Osu, "osu", [](std::string_view line) { return line.rfind("# OSU MPI", 0) == 0; },
     "'# OSU MPI' header", import_osu},
};

}  // namespace

std::string_view import_source_name(ImportSource s) noexcept {
  for (const auto& x : kSources)
    if (x.source == s) return x.name;
  return "?";
}

std::vector<std::string> import_source_names() {
  std::vector<std::string> out;
  for (const auto& x : kSources) out.emplace_back(x.name);
  return out;
}

ImportSource parse_import_source(std::string_view name) {
  for (const auto& x : kSources)
    if (x.name == name) return x.source;
  const auto names = import_source_names();
  throw UsageError("--from '" + std::string(name) + "': expected " +
                   join(std::vector<std::string>(names.begin(), names.end() - 1), ", ") + " or " + names.back());
}

ImportSource detect_import_source(std::string_view text, const std::string& file) {
  const std::string_view head = trim(text.substr(0, 4096));
  if (!head.empty() && head.front() == '{' && text.find("\"nccl_version\"") != std::string_view::npos)
    return ImportSource::NcclTests;
  for (const auto line : import_detail::lines_of(text.substr(0, 1 << 20)))
    for (const auto& x : kSources)
      if (x.line_is_its(line)) return x.source;
  std::vector<std::string> signs;
  for (const auto& x : kSources) signs.push_back("no " + std::string(x.sign));
  import_detail::fail(file, 1, "cannot tell which tool wrote this (" + join(signs, ", ") + "): pass --from " +
                                   join(import_source_names(), "|"));
}

ImportResult import_log(ImportSource source, std::string_view text, const std::string& file, const ImportOptions& o) {
  for (const auto& x : kSources)
    if (x.source == source) return x.parse(text, file, o);
  throw UsageError("unknown import source");
}

}  // namespace railkit::ingest
