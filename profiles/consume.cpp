#include "profiles/consume.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/collectives.hpp"
#include "core/error.hpp"
#include "profiles/ompi_rules.hpp"

namespace railkit::profiles {
namespace {

constexpr std::array<std::pair<std::string_view, Shell>, 4> kShells = {{
    {"bash", Shell::Bash}, {"zsh", Shell::Zsh}, {"fish", Shell::Fish}, {"dotenv", Shell::Dotenv}}};

constexpr std::array<std::pair<std::string_view, ExportFormat>, 6> kFormats = {{
    {"k8s-configmap", ExportFormat::K8sConfigMap},
    {"k8s-env", ExportFormat::K8sEnv},
    {"slurm", ExportFormat::Slurm},
    {"nccl-conf", ExportFormat::NcclConf},
    {"nccl-tuner-csv", ExportFormat::NcclTunerCsv},
    {"ompi-rules", ExportFormat::OmpiRules},
}};

/// NCCL's setEnvFile (src/misc/param.cc) copies at most 1023 bytes of a value.
constexpr std::size_t kNcclConfMaxValue = 1023;
/// The example tuner plugin reads lines into a 256-byte buffer; header lines stay well below.
constexpr std::size_t kCommentMax = 100;


/// NCCL_ALGO / NCCL_PROTO names (the tunables table's spelling, compared case-insensitively) ->
/// the example tuner plugin's.
constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kTunerAlgos = {{
    {"ring", "ring"}, {"tree", "tree"}, {"collnetdirect", "collnet_direct"}, {"collnetchain", "collnet_chain"},
    {"nvls", "nvls"}, {"nvlstree", "nvls_tree"}, {"pat", "pat"}}};
constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kTunerProtos = {{
    {"ll", "ll"}, {"ll128", "ll128"}, {"simple", "simple"}}};

std::string lower(std::string_view s) {
  std::string r(s);
  std::transform(r.begin(), r.end(), r.begin(), [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; });
  return r;
}

template <class Table>
auto lookup(const Table& t, std::string_view key) -> std::optional<typename Table::value_type::second_type> {
  for (const auto& [k, v] : t)
    if (k == key) return v;
  return std::nullopt;
}

/// display(s), cut to `max` characters, for a comment line.
std::string comment_text(std::string_view s, std::size_t max = kCommentMax) {
  std::string d = display(s);
  if (d.size() > max) d = d.substr(0, max) + "...";
  return d;
}

std::string header_comment(const ProfileDocument& p, std::string_view what) {
  return fmt::format("# railkit profile {}: {}\n", comment_text(p.name), what);
}

/// The warning for decisions whose settings an environment cannot carry (per size range).
void warn_decisions(const ProfileDocument& p, std::vector<std::string>& warnings) {
  const auto n = std::count_if(p.decisions.begin(), p.decisions.end(), [](const ProfileDecision& d) { return !d.env.empty(); });
  if (n > 0)
    warnings.push_back(fmt::format(
        "{} decision(s) set per-size settings (decisions[].env) that one environment cannot carry; only settings.env "
        "is exported here (use `railkit profile export --format nccl-tuner-csv` or `ompi-rules` for the decisions)",
        n));
}

/// Why an export of settings.env carries nothing ("" when settings.env has a variable).
std::string empty_env(const ProfileDocument& p) {
  if (!p.env.empty()) return {};
  const bool per_size = std::any_of(p.decisions.begin(), p.decisions.end(), [](const ProfileDecision& d) { return !d.env.empty(); });
  return per_size ? "settings.env is empty (the profile's settings are per-size decisions: export them with --format "
                    "nccl-tuner-csv or ompi-rules)"
                  : "settings.env is empty";
}

std::string shell_line(Shell shell, const std::string& name, const std::string& value) {
  switch (shell) {
    case Shell::Bash:
    case Shell::Zsh: return "export " + name + "=" + posix_quote(value) + "\n";
    case Shell::Fish: return "set -gx " + name + " " + fish_quote(value) + "\n";
    case Shell::Dotenv: return name + "=" + posix_quote(value) + "\n";
  }
  return {};
}

Rendered slurm(const ProfileDocument& p) {
  Rendered r;
  r.text = header_comment(p, "settings.env for a Slurm job");
  r.text += "# In the batch script: `source` this file before srun (srun passes the environment on: --export=ALL).\n";
  for (const auto& [k, v] : p.env) r.text += shell_line(Shell::Bash, k, v);
  r.empty = empty_env(p);
  warn_decisions(p, r.warnings);
  return r;
}

Rendered k8s_env(const ProfileDocument& p) {
  Rendered r;
  r.text = header_comment(p, "settings.env as the env list of a container spec");
  if (p.env.empty()) {
    r.text += "env: []\n";
  } else {
    r.text += "env:\n";
    for (const auto& [k, v] : p.env)
      r.text += fmt::format("  - name: {}\n    value: {}\n", k, yaml_quote(v, "settings.env." + k));
  }
  r.empty = empty_env(p);
  warn_decisions(p, r.warnings);
  return r;
}

Rendered k8s_configmap(const ProfileDocument& p, const ExportOptions& o) {
  const std::string name = o.configmap_name.empty() ? configmap_name_for(p.name) : o.configmap_name;
  const bool valid_name = !name.empty() && name.size() <= 63 && name.front() != '-' && name.back() != '-' &&
                          std::all_of(name.begin(), name.end(), [](char c) {
                            return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
                          });
  if (!valid_name)
    throw UsageError(fmt::format("--name {}: not a Kubernetes name (lowercase letters, digits and '-', at most 63, "
                                 "starting and ending with a letter or digit)",
                                 display(name)));
  Rendered r;
  r.text = header_comment(p, "settings.env as a Kubernetes ConfigMap");
  r.text += fmt::format(
      "# Use it in a container spec (kubectl apply -f this file first):\n"
      "#   envFrom:\n"
      "#     - configMapRef:\n"
      "#         name: {}\n",
      name);
  r.text += fmt::format(
      "apiVersion: v1\n"
      "kind: ConfigMap\n"
      "metadata:\n"
      "  name: {}\n"
      "  labels:\n"
      "    app.kubernetes.io/managed-by: railkit\n",
      name);
  if (p.env.empty()) {
    r.text += "data: {}\n";
  } else {
    r.text += "data:\n";
    for (const auto& [k, v] : p.env) r.text += fmt::format("  {}: {}\n", k, yaml_quote(v, "settings.env." + k));
  }
  r.empty = empty_env(p);
  warn_decisions(p, r.warnings);
  return r;
}

Rendered nccl_conf(const ProfileDocument& p) {
  Rendered r;
  r.text = header_comment(p, "settings.env for nccl.conf");
  r.text +=
      "# NCCL reads NAME=value lines verbatim (no quoting) from $NCCL_CONF_FILE or ~/.nccl.conf, then /etc/nccl.conf;\n"
      "# a variable already in the environment wins.\n";
  int lines = 0;
  for (const auto& [k, v] : p.env) {
    if (k.rfind("NCCL_", 0) != 0) {
      r.warnings.push_back(fmt::format("settings.env.{}: not an NCCL variable; left out of nccl.conf", k));
      continue;
    }
    if (v.find_first_of("\r\n") != std::string::npos)
      throw UsageError(fmt::format("settings.env.{}: the value {} holds a line break, which nccl.conf cannot carry "
                                   "(NCCL reads one NAME=value per line, unquoted)",
                                   k, display(v)));
    if (v.size() > kNcclConfMaxValue)
      throw UsageError(fmt::format("settings.env.{}: the value is {} bytes; NCCL reads at most {} from nccl.conf", k,
                                   v.size(), kNcclConfMaxValue));
    r.text += k + "=" + v + "\n";
    ++lines;
  }
  if (lines == 0)
    r.empty = p.env.empty() ? "settings.env is empty; nccl.conf would hold no variable"
                            : "settings.env has no NCCL_* variable; nccl.conf would hold none";
  warn_decisions(p, r.warnings);
  return r;
}

/// The single algorithm or protocol `value` selects for `coll` (tuner name), in the example
/// plugin's spelling; nullopt when it is a list, an exclusion or unknown.
std::optional<std::string> single_choice(std::string_view value, std::string_view coll, bool algo) {
  std::string v = lower(value);
  if (v.find(':') != std::string::npos) {  // per collective: "allreduce:ring;broadcast:tree"
    std::optional<std::string> mine;
    std::size_t start = 0;
    while (start <= v.size()) {
      const std::size_t end = std::min(v.find(';', start), v.size());
      const std::string part = v.substr(start, end - start);
      const std::size_t colon = part.find(':');
      if (colon != std::string::npos && part.substr(0, colon) == coll) mine = part.substr(colon + 1);
      start = end + 1;
    }
    if (!mine) return std::nullopt;
    v = *mine;
  }
  const auto found = algo ? lookup(kTunerAlgos, v) : lookup(kTunerProtos, v);
  if (!found) return std::nullopt;
  return std::string(*found);
}

/// The collectives NVIDIA's example tuner has rules for, in ncclFunc_t order, by railkit-bench's
/// names: "broadcast, reduce, all_gather, reduce_scatter or all_reduce".
std::string tuner_collective_names() {
  std::vector<std::string_view> names;
  for (int f = 0; const Collective* c = collective_of_nccl_func(f); ++f)
    if (!c->tuner_csv.empty()) names.push_back(c->name);
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += fmt::format("{}{}", i == 0 ? "" : i + 1 == names.size() ? " or " : ", ", names[i]);
  return out;
}

Rendered nccl_tuner_csv(const ProfileDocument& p) {
  Rendered r;
  r.text = header_comment(p, "decisions for NCCL's example tuner plugin");
  r.text +=
      "# Format: collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks\n"
      "# Load with NCCL_TUNER_PLUGIN=<libnccl-tuner-example.so> NCCL_TUNER_CONFIG_FILE=<this file>\n";
  const int nodes = p.cluster.nodes > 0 ? p.cluster.nodes : -1;
  const int ranks = p.cluster.ranks > 0 ? p.cluster.ranks : -1;
  int lines = 0;
  for (std::size_t i = 0; i < p.decisions.size(); ++i) {
    const ProfileDecision& d = p.decisions[i];
    if (!d.env.count("NCCL_ALGO") && !d.env.count("NCCL_PROTO")) continue;
    const std::string where = fmt::format("decisions[{}] ({} {}..{})", i, d.coll, d.min_bytes, d.max_bytes);
    const Collective* c = find_collective(d.coll);
    const std::optional<std::string_view> coll =
        c && !c->tuner_csv.empty() ? std::optional<std::string_view>(c->tuner_csv) : std::nullopt;
    if (!coll) {
      r.warnings.push_back(where + ": the example tuner plugin has no rules for this collective; left out");
      continue;
    }
    std::map<std::string, std::string> env = p.env;
    for (const auto& [k, v] : d.env) env[k] = v;
    const auto algo = env.count("NCCL_ALGO") ? single_choice(env["NCCL_ALGO"], *coll, true) : std::nullopt;
    const auto proto = env.count("NCCL_PROTO") ? single_choice(env["NCCL_PROTO"], *coll, false) : std::nullopt;
    if (!algo || !proto) {
      r.warnings.push_back(where + ": a tuner rule needs exactly one algorithm (NCCL_ALGO) and one protocol "
                                   "(NCCL_PROTO) for the collective; left out");
      continue;
    }
    const std::string channels = env.count("NCCL_MAX_NCHANNELS") ? env["NCCL_MAX_NCHANNELS"] : "-1";
    r.text += fmt::format("{},{},{},{},{},{},{},{}\n", *coll, d.min_bytes, d.max_bytes, *algo, *proto, channels, nodes, ranks);
    ++lines;
  }
  if (lines == 0)
    r.empty = "no decision sets NCCL_ALGO or NCCL_PROTO in a way the tuner can use (one algorithm and one protocol for " +
              tuner_collective_names() + "); the file would hold no rule";
  return r;
}

Rendered ompi_rules(const ProfileDocument& p) {
  std::vector<ProfileDecision> ds = p.decisions;
  for (auto& d : ds) d.config = comment_text(d.config);  // the rules file puts it in a comment
  Rendered r;
  r.text = header_comment(p, "decisions as Open MPI coll/tuned dynamic rules");
  r.text += profiles::ompi_rules(ds, p.cluster.ranks);
  if (ompi_rules_choosing(p.decisions) == 0)
    r.empty = "no decision chooses an Open MPI algorithm (OMPI_MCA_coll_tuned_<coll>_algorithm other than 0); every "
              "rule would keep Open MPI's own choice";
  return r;
}

}  // namespace

Shell parse_shell(std::string_view name) {
  if (const auto s = lookup(kShells, name)) return *s;
  std::string valid;
  for (const auto& n : shell_names()) valid += (valid.empty() ? "" : ", ") + n;
  throw UsageError(fmt::format("--shell {}: unknown (one of {})", display(name), valid));
}

ExportFormat parse_export_format(std::string_view name) {
  if (const auto f = lookup(kFormats, name)) return *f;
  std::string valid;
  for (const auto& n : export_format_names()) valid += (valid.empty() ? "" : ", ") + n;
  throw UsageError(fmt::format("--format {}: unknown (one of {})", display(name), valid));
}

std::vector<std::string> shell_names() {
  std::vector<std::string> r;
  for (const auto& [n, _] : kShells) r.emplace_back(n);
  return r;
}

std::vector<std::string> export_format_names() {
  std::vector<std::string> r;
  for (const auto& [n, _] : kFormats) r.emplace_back(n);
  return r;
}

std::string fish_quote(std::string_view value) {
  std::string r = "'";
  for (char c : value) {
    if (c == '\\' || c == '\'') r += '\\';
    r += c;
  }
  return r + "'";
}

std::string display(std::string_view s) {
  const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
    return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f;
  });
  if (plain) return std::string(s);
  const nlohmann::json q = std::string(s);
  return q.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

Rendered env_lines(const ProfileDocument& p, Shell shell) {
  Rendered r;
  r.text = header_comment(p, "settings.env");
  for (const auto& [k, v] : p.env) {
    r.text += shell_line(shell, k, v);
    if (shell == Shell::Dotenv && v.find_first_of("'\\\r\n") != std::string::npos)
      r.warnings.push_back(fmt::format(
          "settings.env.{}: the value holds a quote, backslash or line break; a POSIX shell (set -a; . FILE) reads it "
          "exactly, other dotenv readers may not",
          k));
  }
  warn_decisions(p, r.warnings);
  return r;
}

Rendered export_profile(const ProfileDocument& p, ExportFormat format, const ExportOptions& opts) {
  switch (format) {
    case ExportFormat::K8sConfigMap: return k8s_configmap(p, opts);
    case ExportFormat::K8sEnv: return k8s_env(p);
    case ExportFormat::Slurm: return slurm(p);
    case ExportFormat::NcclConf: return nccl_conf(p);
    case ExportFormat::NcclTunerCsv: return nccl_tuner_csv(p);
    case ExportFormat::OmpiRules: return ompi_rules(p);
  }
  throw Error(ErrorCode::Internal, "export_profile: unknown format");
}

std::string configmap_name_for(std::string_view profile_name) {
  std::string s;
  for (char c : lower(profile_name)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (ok)
      s += c;
    else if (!s.empty() && s.back() != '-')
      s += '-';
  }
  constexpr std::size_t kMax = 63 - 8;  // "railkit-"
  if (s.size() > kMax) s.resize(kMax);
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s.empty() ? "railkit-profile" : "railkit-" + s;
}

}  // namespace railkit::profiles
