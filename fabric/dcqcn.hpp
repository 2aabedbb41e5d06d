#pragma once
// DCQCN attributes of a node's RDMA netdevs: find them, read them, apply a setting safely and
// restore the originals. Two layouts (../shared/reference/roce.md):
//   mlnx-sysfs  MLNX_OFED/DOCA: sys/class/net/<if>/ecn/roce_rp|roce_np/<attr> (or .../params/<attr>),
//               per-priority enables .../roce_rp|roce_np/enable/<0..7>
//   debugfs     upstream mlx5: sys/kernel/debug/mlx5/<pci-bdf>/cc_params/rp_<x>|np_<x>, where <pci-bdf>
//               is the PCI function of sys/class/net/<if>/device; no per-priority enable
// Everything is read and written through a root (a live "/" or a fixture tree); symlinks are
// resolved inside the root. Attributes are named as in the tunables table (core/tunables.hpp):
// `roce_rp.rpg_time_reset`, `roce_np.cnp_dscp`; per-priority enables are `roce_rp.enable.3`.
//
// Safety contract of apply: every value is validated (name, range, presence) before anything is
// written; the previous values are saved to a state file before the first write (an existing
// state file is kept, so it always holds the values from before the first apply); each write is
// read back; when one fails, everything this call wrote is written back and IoError is thrown.
// restore trusts nothing in a state file: its netdev, layout and root, and each entry's name, value
// and path are checked against the device before anything of it is written (restore_dcqcn).
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/sysinfo.hpp"

namespace railkit::fabric {

/// Where a netdev's DCQCN attributes live.
enum class DcqcnLayout {
  Mlnx,     ///< MLNX_OFED sysfs, sys/class/net/<if>/ecn/
  Debugfs,  ///< upstream mlx5 debugfs, sys/kernel/debug/mlx5/<bdf>/cc_params/
};

/// "mlnx-sysfs" | "debugfs".
std::string_view layout_name(DcqcnLayout l) noexcept;

/// The debugfs cc_params file name of a DCQCN tunable ("roce_rp.rpg_time_reset" -> "rp_time_reset");
/// "" when the upstream driver has no such file.
std::string_view debugfs_name(std::string_view tunable) noexcept;

/// Entry name of a per-priority enable file: side "roce_rp" | "roce_np", prio 0..7 -> "roce_rp.enable.3".
std::string dcqcn_enable_name(std::string_view side, int prio);

/// A netdev with DCQCN attributes and the files present for it.
struct DcqcnDevice {
  std::string netdev;
  DcqcnLayout layout = DcqcnLayout::Mlnx;
  std::string pci_bdf;        ///< PCI function of the netdev ("" when sys/class/net/<if>/device is missing)
  std::filesystem::path dir;  ///< relative to the root, symlinks resolved: .../ecn or .../cc_params
  /// entry name (tunable name or enable name) -> file relative to the root, symlinks resolved;
  /// only the files that exist.
  std::map<std::string, std::filesystem::path> files;
};

/// The DCQCN devices under `root`. With `netdevs` empty: every netdev in sys/class/net that has
/// either layout (mlnx-sysfs preferred when both exist), sorted; possibly none. Otherwise those
/// netdevs in the given order: throws UsageError for a netdev that does not exist and
/// UnavailableError for one with neither layout.
std::vector<DcqcnDevice> find_dcqcn_devices(const SysRoot& root, const std::vector<std::string>& netdevs);

/// Current values of every present file of `d` (entry name -> trimmed content).
/// Throws IoError naming the file when a present file cannot be read.
std::map<std::string, std::string> read_dcqcn(const SysRoot& root, const DcqcnDevice& d);

/// `railkit dcqcn show` as JSON (`railkit.dcqcn/1`): per netdev its layout, every DCQCN tunable's
/// value (null when absent) and the per-priority enables (null for debugfs). Reads through read_dcqcn.
nlohmann::ordered_json dcqcn_show_json(const SysRoot& root, const std::vector<DcqcnDevice>& devs);

/// The same as a table for people: one block per netdev, one row per tunable with its default,
/// unit and range, then the enables; "absent" where the file is missing.
std::string dcqcn_show_table(const SysRoot& root, const std::vector<DcqcnDevice>& devs);

/// What to apply to a netdev.
struct DcqcnSettings {
  std::map<std::string, std::string> values;  ///< DCQCN tunable name -> value (validated by the table)
  std::vector<int> enable_priorities;         ///< set roce_rp and roce_np enable/<p> to 1 (mlnx-sysfs only)
};

/// One netdev to apply to and the state file that keeps its original values.
struct DcqcnTarget {
  DcqcnDevice device;
  std::filesystem::path state_file;
};

/// One entry written by apply: the value before this call and the value written.
struct DcqcnChange {
  std::string netdev;
  std::string name;
  std::filesystem::path file;  ///< relative to the root
  std::string before;
  std::string after;
};

/// <root>/run/railkit/dcqcn/<netdev>.json: the default state file of a netdev. /run is emptied at
/// boot, as are the runtime DCQCN values it holds the originals of.
std::filesystem::path default_state_file(const SysRoot& root, const std::string& netdev);

/// Every problem of `s` for `d`, one readable line each ("roce_rp.rpg_gd=99: above the maximum 15");
/// empty when `s` can be applied: names are DCQCN tunables, values in range, files present.
std::vector<std::string> dcqcn_problems(const DcqcnDevice& d, const DcqcnSettings& s);

/// Throws UsageError "nothing written: <problem>; <problem> (and N more)" when dcqcn_problems finds
/// any for one of `devs` (each problem listed once).
void check_dcqcn(const std::vector<DcqcnDevice>& devs, const DcqcnSettings& s);

/// Applies `s` to every target (see the safety contract above): validates all targets first
/// (UsageError listing the problems; nothing written), reads the current values (IoError; nothing
/// written), saves them into each state file not already holding them (IoError; nothing written),
/// then writes and reads back entry by entry. When a write or read-back fails, every entry this
/// call wrote (on every target) is written back to its value from before the call and IoError is
/// thrown naming the file; the state files stay. `inject_write_failure` (a fire drill for the
/// rollback) makes the write of that entry fail as if the driver refused it.
/// Returns what was written, in order.
std::vector<DcqcnChange> apply_dcqcn(const SysRoot& root, const std::vector<DcqcnTarget>& targets,
                                     const DcqcnSettings& s, const std::string& inject_write_failure = {});

/// apply_dcqcn for one netdev; `state_file` empty = default_state_file(root, netdev).
std::vector<DcqcnChange> apply_dcqcn(const SysRoot& root, const std::string& netdev, const DcqcnSettings& s,
                                     const std::filesystem::path& state_file = {});

/// What restore did.
struct DcqcnRestore {
  std::string netdev;
  std::size_t restored = 0;  ///< entries written back and verified
};

/// Writes back every value saved in `state_file`, the originals of `netdev` under `root`, verifies
/// each, then removes the file. Returns nullopt when the file does not exist (nothing to restore).
/// Before anything is written the file is checked as a whole (UsageError "nothing restored: ..."
/// naming the file, and each bad entry with why): a state file of railkit.dcqcn-state/1, of
/// `netdev`, its layout and `root` (the mismatches apply refuses too); every entry a DCQCN attribute
/// of the tunables table or a per-priority enable, its value in the range apply validates (enables
/// 0 or 1), its path resolving inside the root without a symlink leading out of it to the very file
/// of that attribute on `netdev`. Writes follow no symlink. A netdev that is gone throws as
/// find_dcqcn_devices does. IoError naming the first file that could not be restored (every entry
/// is tried; the state file stays).
std::optional<DcqcnRestore> restore_dcqcn(const SysRoot& root, const std::string& netdev,
                                          const std::filesystem::path& state_file);

/// The --state/--netdev rule of both `apply` and `restore`: every --netdev a netdev name, none given
/// twice; --state FILE with exactly one --netdev (a state file holds the originals of one netdev).
/// Throws UsageError naming the flag.
void check_state_flags(const std::string& state, const std::vector<std::string>& netdevs);

/// What restore_dcqcn_all did with one state file.
struct DcqcnRestoreOutcome {
  std::string netdev;
  std::filesystem::path state_file;
  std::optional<DcqcnRestore> restored;  ///< nullopt: no state file (nothing to restore) or it failed
  std::optional<ErrorCode> error_code;   ///< set when it failed; the state file stays
  std::string error;                     ///< one line: why it failed
};

/// `railkit dcqcn restore`: check_state_flags, then restore_dcqcn for `state` (of the one netdev),
/// else the default state file of each of `netdevs`, else every file of dcqcn_state_files (the
/// netdev named by the file name). Every one is tried whatever happens to the others; a failure is
/// recorded in its outcome, never thrown.
std::vector<DcqcnRestoreOutcome> restore_dcqcn_all(const SysRoot& root, const std::vector<std::string>& netdevs,
                                                   const std::filesystem::path& state);

/// Throws when any of `outcomes` failed: the one error as it was when a single state file was
/// tried, else "N of M netdevs not restored (their state files kept): <netdev>: <why>; ...". The
/// error's category is the failures' own when they all share it (6 a refused state file, 9 a write
/// that failed, 5 a netdev without DCQCN attributes), else Io (9).
void check_restored(const std::vector<DcqcnRestoreOutcome>& outcomes);

/// The state files under <root>/run/railkit/dcqcn/, sorted; empty when none.
std::vector<std::filesystem::path> dcqcn_state_files(const SysRoot& root);

}  // namespace railkit::fabric
