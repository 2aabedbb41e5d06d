#pragma once
// Internals shared by fabric/dcqcn.cpp (detection, attribute files, show), dcqcn_state.cpp (state
// files) and dcqcn_apply.cpp (apply and restore); not an interface of railkit::fabric.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/sysinfo.hpp"
#include "core/tunables.hpp"
#include "fabric/dcqcn.hpp"

namespace railkit::fabric::detail {

inline constexpr std::string_view kSides[] = {"roce_rp", "roce_np"};
inline constexpr int kPriorities = 8;
inline constexpr std::size_t kMaxValueBytes = 4096;

/// Whether `t` is a tunable of the DCQCN scope.
bool is_dcqcn_tunable(const Tunable* t);

/// Whether `name` is a per-priority enable entry ("roce_rp.enable.3").
bool is_enable_name(std::string_view name);

/// Whether a read-back value means the same as the value written ("0100" reads as 100).
bool same_value(std::string_view a, std::string_view b);

/// The trimmed content of an attribute file, or the reason it could not be read.
struct ReadResult {
  std::optional<std::string> value;
  std::string reason;
};

/// Reads the attribute file `rel` under `root` (topo::read_under_root: no symlink followed).
ReadResult read_value(const std::filesystem::path& root, const std::filesystem::path& rel);

/// Writes "value\n" in place (topo::write_under_root) and reads it back; "" on success, else the reason.
std::string write_verified(const std::filesystem::path& root, const std::filesystem::path& rel,
                           const std::string& value);

/// The value to write: integers in canonical decimal ("+5" -> "5", "true" -> "1").
std::string canonical_value(const std::string& name, const std::string& value);

/// `text` for a one-line message: at most 40 characters.
std::string shown(std::string_view text);

/// Whether `nd` can be a netdev name (and a state file name): no '/', not "." or "..".
bool netdev_name_ok(const std::string& nd);

/// Throws the error of category `code` (its own type, so callers can catch it by type).
[[noreturn]] void throw_error(ErrorCode code, const std::string& m);

/// `e` again, its message prefixed, with the same type (so the exit code stays).
[[noreturn]] void rethrow_prefixed(const Error& e, const std::string& prefix);

// ---- state files (dcqcn_state.cpp)

/// One saved original: the entry name, its file and the value before the first apply.
struct StateEntry {
  std::string name;
  std::filesystem::path path;  ///< relative to the root
  std::string old;
};

/// A state file (`railkit.dcqcn-state/1`): the originals of one netdev under one root.
struct State {
  std::filesystem::path root;  ///< absolute
  std::string netdev;
  std::string layout;
  std::string created;
  std::vector<StateEntry> entries;
};

/// The root as a state file records it: absolute, symlinks resolved where they exist.
std::filesystem::path absolute_root(const SysRoot& root);

/// Reads a state file (UsageError naming it when it is not one); entries are checked by check_state.
State load_state(const std::filesystem::path& file);

/// Throws UsageError when state `s`, read from `file`, is not the state of netdev `d` under
/// `root_abs` (another netdev, layout or root: "<file> holds the originals of ...<hint>"), or when an
/// entry cannot be restored ("<file>: entries[i] (<name>): <why>; ... (and N more)"). One rule for
/// apply (an existing state file it adds to) and restore.
void check_state(const std::filesystem::path& file, const State& s, const std::filesystem::path& root_abs,
                 const DcqcnDevice& d, std::string_view hint);

/// One planned write.
struct Planned {
  std::size_t target;
  std::string name;
  std::filesystem::path file;  ///< relative to the root
  std::string value;
  std::string before;
};

/// Saves the values of `plan` for target `t` into its state file, keeping an existing one's entries.
void save_state(const SysRoot& root, const DcqcnTarget& t, const std::vector<Planned>& plan, std::size_t ti);

}  // namespace railkit::fabric::detail
