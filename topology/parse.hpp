#pragma once
// Pure parsers for the text and binary formats found in sysfs and in `nvidia-smi topo -m`.
// None of them throws: malformed input gives nullopt (or an empty result).
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/strings.hpp"
#include "topology/model.hpp"

namespace railkit::topo {

/// Strips leading/trailing whitespace (including the newline sysfs files end with).
std::string trim(std::string_view s);

/// "0x10de" or "10de" -> 0x10de; nullopt for anything else.
std::optional<std::uint32_t> parse_hex(std::string_view s);

/// A decimal integer (optionally negative) filling the whole string.
std::optional<long long> parse_int(std::string_view s);

/// "16.0 GT/s PCIe", "8 GT/s", "2.5 GT/s" -> GT/s; "Unknown" or junk -> nullopt.
std::optional<double> parse_link_speed_GTps(std::string_view s);

/// IB port rate "400 Gb/sec (4X NDR)" -> 400.0 Gb/s.
std::optional<double> parse_rate_Gbps(std::string_view s);

/// "4: ACTIVE" -> "ACTIVE", "5: LinkUp" -> "LinkUp"; text without a number is returned trimmed.
std::string parse_port_state(std::string_view s);

/// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; nullopt when malformed.
std::optional<std::vector<int>> parse_cpulist(std::string_view s);

/// CPUs -> NCCL's cpumap text: 32-bit hex words, most significant first, comma separated.
std::string cpus_to_cpumap(const std::vector<int>& cpus);

/// True when a GID is IPv4-mapped (::ffff:a.b.c.d).
bool gid_is_ipv4_mapped(std::string_view gid);

/// True when a GID is all zeros (an unused table entry).
bool gid_is_zero(std::string_view gid);

/// ACS capability and control registers from a PCI config-space image (the sysfs `config` file).
/// Walks the extended capability list from offset 0x100; an image shorter than 4 KiB sets
/// config_complete = false (non-root readers see only 64 bytes).
AcsState parse_acs(std::span<const std::uint8_t> config);

/// Names of the set ACS Control bits: "SrcValid", "TransBlk", "ReqRedir", "CmpltRedir",
/// "UpstreamFwd", "EgressCtrl", "DirectTrans".
std::vector<std::string> acs_control_bits(std::uint16_t control);

/// The 8 per-priority PFC flags from MLNX_OFED's qos/pfc file, tolerant of its layouts
/// ("0 0 0 1 0 0 0 0", "0,0,0,1,0,0,0,0", or a line "enabled ... 0 0 0 1 0 0 0 0").
std::optional<std::array<bool, 8>> parse_pfc(std::string_view s);

/// "dscp" / "pcp" from MLNX_OFED's qos/trust file ("Priority trust state: dscp"); "" otherwise.
std::string parse_trust(std::string_view s);

/// One `nvidia-smi topo -m` capture: device names in column order and the cell for each pair.
struct NvsmiTopo {
  std::vector<std::string> columns;                                    ///< "GPU0", "NIC0", ...
  std::map<std::pair<std::string, std::string>, std::string> cells;   ///< (row, col) -> "NV18"
};

/// Parses the matrix of `nvidia-smi topo -m` (ANSI escapes and tabs tolerated).
/// nullopt when no header with GPU columns is found.
std::optional<NvsmiTopo> parse_nvsmi_topo(std::string_view text);

/// "NV18" -> 18; nullopt for anything else.
std::optional<int> parse_nv_cell(std::string_view cell);

/// Natural order for device names ("mlx5_2" < "mlx5_10"): core's, shared with every report.
using railkit::natural_less;

/// FNV-1a 64-bit of `s` as 16 lowercase hex digits: core's.
using railkit::fnv1a64_hex;

}  // namespace railkit::topo
