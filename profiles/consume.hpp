#pragma once
// Consumers of a profile document: its summary (`railkit profile show`), its environment as shell
// lines (`railkit profile env`) and its exports for other tools (`railkit profile export`).
// Every function takes a ProfileDocument that core/profile.hpp's loader has validated (allowed
// env names, values without NUL); the quoting here is what makes any value safe to source.
// Documented in profiles/README.md ("Consuming a profile").
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/profile.hpp"
#include "core/quote.hpp"

namespace railkit::profiles {

/// Formats of `railkit profile env --shell`.
enum class Shell {
  Bash,    ///< export NAME='value' (POSIX single quotes; also sh, dash, ksh)
  Zsh,     ///< same as Bash
  Fish,    ///< set -gx NAME 'value' (fish single quotes: \\ and \' escaped)
  Dotenv,  ///< NAME='value' (POSIX single quotes; `set -a; . file` in a POSIX shell)
};

/// Formats of `railkit profile export --format`.
enum class ExportFormat {
  K8sConfigMap,  ///< a Kubernetes ConfigMap holding settings.env, with the envFrom snippet as a comment
  K8sEnv,        ///< the `env:` list of a container spec
  Slurm,         ///< a file batch scripts `source` (bash export lines)
  NcclConf,      ///< /etc/nccl.conf lines NAME=value (NCCL_* keys only)
  NcclTunerCsv,  ///< the CSV of NCCL's example tuner plugin, from the decisions
  OmpiRules,     ///< an Open MPI coll/tuned dynamic rules file, from the decisions
};

/// Parses a --shell / --format name; throws UsageError listing the valid names.
Shell parse_shell(std::string_view name);
ExportFormat parse_export_format(std::string_view name);
/// The valid names, in documented order.
std::vector<std::string> shell_names();
std::vector<std::string> export_format_names();

/// Text and the warnings produced while making it (one line each, without a prefix).
struct Rendered {
  std::string text;
  std::vector<std::string> warnings;
  /// Exports only: why the export carries nothing for the tool (no variable, no rule); "" when it
  /// carries something. `railkit profile export` then prints it and exits 10, writing nothing.
  std::string empty;
};

/// posix_quote and yaml_quote (core/quote.hpp), as the exports use them.
using railkit::posix_quote;
using railkit::yaml_quote;
/// `value` in fish single quotes: \ becomes \\ and ' becomes \'.
std::string fish_quote(std::string_view value);
/// `s` for one line of human-readable output or a comment: as is when printable ASCII, else
/// JSON-quoted with escapes (never contains a line break).
std::string display(std::string_view s);

/// settings.env as lines for `shell`. Warnings: values a dotenv reader other than a POSIX shell
/// may read differently (dotenv only), decisions whose per-size settings an environment cannot
/// carry.
Rendered env_lines(const ProfileDocument& p, Shell shell);

/// Options of an export.
struct ExportOptions {
  std::string configmap_name;  ///< k8s-configmap: metadata.name; "" = derived from the profile's name
};

/// The profile in `format`. Throws UsageError naming the key when a value cannot be carried by
/// the format (nccl-conf: a line break or a value longer than NCCL reads; YAML: invalid UTF-8).
/// Sets Rendered::empty when the result would carry nothing: k8s-*, slurm with an empty
/// settings.env; nccl-conf without an NCCL_* variable; nccl-tuner-csv without a rule;
/// ompi-rules without a decision choosing an algorithm.
Rendered export_profile(const ProfileDocument& p, ExportFormat format, const ExportOptions& opts = {});

/// A Kubernetes object name (DNS-1123 label) from a profile name: "railkit-" + lowercase letters,
/// digits and '-'; "railkit-profile" when nothing is left.
std::string configmap_name_for(std::string_view profile_name);

/// The human-readable summary (profiles/show.cpp): cluster, settings, decisions, expectations,
/// evidence and its A/B table. Sizes in B/KiB/MiB/GiB, bandwidths in GB/s, tolerances rounded to
/// 0.1%. A decision's baseline, tuned, ratio and interval all come from its evidence row (the row
/// of its collective at its min_bytes, else the first inside its range): baseline and tuned are
/// the geometric means of the row's pairs, so tuned / baseline is the paired ratio. Without a row
/// they are the decision's own. A stored ratio that its numbers do not give is a warning, and
/// the ratio they give is shown. Every string from the document is passed through display().
Rendered show_profile(const ProfileDocument& p);

}  // namespace railkit::profiles
