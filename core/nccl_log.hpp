#pragma once
// Reader of NCCL's debug log (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,NET,GRAPH, plus BOOTSTRAP
// for the bootstrap interface): what NCCL actually did (network and its transport, NICs,
// bootstrap interface, PXN relays, GDR, graph patterns, tuner plugin), summarised for the
// results document's `observed` block and for `railkit nccl-log`. Pure: lines in, summary out;
// lines it does not recognise are counted and ignored, never an error.
#include <cstdint>
#include <filesystem>
#include <istream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace railkit {

/// One `Pattern %d, crossNic %d, nChannels %d, bw %f/%f, type %s/%s, sameChannels %d` line
/// (a topology graph NCCL searched: ring, tree, NVLS ...). Identical lines of several ranks
/// and communicators are kept once.
struct NcclGraphPattern {
  int pattern = 0;          ///< NCCL_TOPO_PATTERN_*: 1 balanced tree, 2 split tree, 3 tree, 4 ring, 5 NVLS, 6 CollNet direct
  int cross_nic = 0;        ///< 1 when the graph may enter and leave a node on different NICs
  int n_channels = 0;
  double bw_intra_GBps = 0;  ///< per-channel bandwidth inside a node
  double bw_inter_GBps = 0;  ///< per-channel bandwidth between nodes
  std::string type_intra;   ///< path type inside the node: NVL, PIX, PXB, PHB, SYS ...
  std::string type_inter;   ///< path type GPU->NIC: PIX, PXB, PXN (the graph uses PXN), PHB, SYS ...
  int same_channels = 0;
  auto operator<=>(const NcclGraphPattern&) const = default;
};

/// A network device NCCL listed in its `NET/<net> : Using [i]name:port/link ...` line.
struct NcclNic {
  std::string name;          ///< mlx5_0, eth0, ...
  std::optional<int> port;   ///< IB port; nullopt for sockets
  std::string link;          ///< NET/IB's link layer as printed: "IB", "RoCE" (or "UNSPECIFIED"); empty otherwise
  auto operator<=>(const NcclNic&) const = default;
};

/// What one or several NCCL logs show. Counts are of connection lines ("Channel c/i : a -> b
/// [send] via NET/..."), one per channel, connection index and direction on the printing rank.
struct NcclLogSummary {
  /// NCCL's network, i.e. its net plugin as in `via NET/<net>/` and `Using network <net>` (the
  /// name NCCL_NET takes): "IB" (InfiniBand and RoCE NICs alike), "Socket" or an external
  /// plugin's name; nullopt when no line says.
  std::optional<std::string> net;
  /// What the network ran over, as NCCL printed it: for NET/IB the link layer of the NICs that
  /// carried connections ("RoCE" or "IB", from `NET/IB : Using [0]mlx5_0:1/RoCE`), "Socket" for
  /// NET/Socket; nullopt for other net plugins or when no NIC line says.
  std::optional<std::string> transport;
  /// Interfaces of `Bootstrap: Using eth0:10.0.0.1<0>` lines (`Bootstrap : Using` before NCCL
  /// 2.24; `Bootstrap: Using mlx5_0:1` with NCCL_OOB_NET_ENABLE=1). From NCCL 2.23 the line is
  /// in the BOOTSTRAP subsystem (on by default, off under NCCL_DEBUG_SUBSYS=INIT,NET,GRAPH).
  std::set<std::string> bootstrap_interfaces;
  /// Out-of-band interfaces of NET/IB (`NET/IB : Using ... ; OOB eth0:10.0.0.1<0>`), chosen by the
  /// same NCCL_SOCKET_IFNAME rule as the bootstrap's; printed under INIT or NET.
  std::set<std::string> ib_oob_interfaces;
  std::optional<std::string> net_plugin;    ///< external net plugin that loaded ("NET/Plugin: Loaded net plugin X")
  std::optional<std::string> nccl_version;  ///< "2.28.9+cuda13.0" (the first seen; differing ones are a warning)
  std::optional<std::string> tuner_plugin;  ///< name from `TUNER/Plugin: Using <name> (vN)`
  std::optional<std::string> tuner_plugin_abi;  ///< "v5" from the same line
  std::optional<bool> ring_pxn;  ///< any `Connected all rings, use ring PXN 1 ...`; nullopt without such a line
  std::optional<bool> ring_gdr;  ///< any `Connected all rings, ... GDR 1`; nullopt without such a line
  std::optional<int> nranks;     ///< largest nRanks of a `comm ... nRanks %d nNodes %d` line
  std::optional<int> nnodes;     ///< largest nNodes of the same lines

  std::int64_t send_net_connections = 0;    ///< [send] via NET lines
  std::int64_t recv_net_connections = 0;    ///< [receive] via NET lines
  std::int64_t pxn_relays = 0;              ///< send lines with a relay rank: `via NET/IB/3(11)`
  std::int64_t p2p_pxn_relays = 0;          ///< of those, send/recv (connection index > 0) ones
  std::int64_t direct_net_connections = 0;  ///< send lines without a relay rank
  std::int64_t gdr_connections = 0;         ///< NET lines (either direction) with /GDRDMA
  std::set<int> relay_ranks;                ///< the ranks that relayed PXN sends
  std::map<std::string, std::int64_t> nic_connections;  ///< NIC name -> NET connection lines on it
  /// NICs listed by `NET/... : Using` lines: complete `[i]name:port/link` entries only
  /// (`[i]name:address<port>` for NET/Socket); a truncated or malformed entry is a warning.
  std::set<NcclNic> nics_available;
  /// Connection lines per NCCL transport ("NET", "P2P", "SHM" ...); not what `transport` means.
  std::map<std::string, std::int64_t> transports;
  int graph_channels = 0;     ///< largest nChannels of a Pattern line
  int ring_channels = 0;      ///< channel count of the `Channel 00/24 : 0 1 ...` ring lines (rank 0 prints them)
  std::vector<NcclGraphPattern> patterns;
  std::map<std::string, std::string> env_from_log;  ///< `NCCL_X set by environment to V` lines
  std::set<std::string> hosts;                      ///< host names from the line prefixes
  std::vector<std::string> nccl_warnings;           ///< `NCCL WARN` messages (the first kMaxNcclWarnings)
  std::vector<std::string> files;                   ///< sources read, in order
  std::int64_t lines = 0;       ///< lines read
  std::int64_t nccl_lines = 0;  ///< of those, lines NCCL wrote (INFO, WARN or the version line)
  std::vector<std::string> warnings;  ///< reader's own findings: unmapped NIC indices, mixed versions, contradictions

  static constexpr std::size_t kMaxNcclWarnings = 50;

  /// PXN in use: a relayed send, `use ring PXN 1`, or a graph whose GPU->NIC path type is PXN.
  bool pxn() const;
  /// GPUDirect RDMA in use: a /GDRDMA connection or `use ring ... GDR 1`.
  bool gdr() const;
  /// Names of the NICs that carried NET connections, in natural order (mlx5_2 before mlx5_10),
  /// as `railkit topo` orders them.
  std::vector<std::string> nics_used() const;
  /// Names of the NICs `NET/... : Using` lines listed, each once, in natural order.
  std::vector<std::string> nics_listed() const;
  /// The channel count NCCL ran collectives with: ring_channels when known, else graph_channels.
  int channels() const;
};

/// Parses one log (one file, or one stream holding several processes' lines): `source` names it
/// in `files` and warnings. NIC indices are mapped to names per process (host:pid of the line
/// prefix), so interleaved logs of several ranks map correctly.
NcclLogSummary parse_nccl_log(std::istream& in, std::string_view source);

/// Same over lines already in memory.
NcclLogSummary parse_nccl_log_lines(const std::vector<std::string>& lines, std::string_view source);

/// Adds `from` (another file, e.g. another rank's) into `into`: counts add, sets unite,
/// optional fields keep the first value seen (a different net, transport or NCCL version is a
/// warning).
void merge_nccl_log(NcclLogSummary& into, const NcclLogSummary& from);

/// Parses and merges the files (one per rank, as NCCL_DEBUG_FILE=...%h.%p writes them).
/// Throws UsageError naming a file that is missing or cannot be read.
NcclLogSummary read_nccl_logs(const std::vector<std::filesystem::path>& files);

/// The summary as JSON. Keys: pxn, pxn_relays, p2p_pxn_relays, relay_ranks, direct_net_connections,
/// send_net_connections, recv_net_connections, gdr, gdr_connections, net, transport, net_plugin,
/// nics_used, nic_connections, nics_available, bootstrap_interfaces, ib_oob_interfaces (name
/// lists in natural order), transports, channels, graph_channels, ring_channels, patterns
/// [{pattern, name, crossNic, nChannels, bw_intra_GBps, bw_inter_GBps, type, type_intra,
/// type_inter, sameChannels}], ring_pxn, ring_gdr, tuner_plugin, tuner_plugin_abi, nccl_version,
/// nranks, nnodes, hosts, env_from_log, nccl_warnings, files, lines, nccl_lines, warnings.
/// Unknown values are null.
nlohmann::json to_json(const NcclLogSummary& s);

/// A short human summary, one `label  value` line per fact (network and transport, NICs,
/// bootstrap, PXN, GDR, channels and patterns, tuner, NCCL version and ranks), then the
/// contradictions and warnings; ends with a newline.
std::string to_text(const NcclLogSummary& s, const std::vector<std::string>& contradictions);

/// Name of an NCCL_TOPO_PATTERN_* value: "balanced_tree", "split_tree", "tree", "ring", "nvls",
/// "collnet_direct", or "pattern<N>".
std::string nccl_pattern_name(int pattern);

/// True when NIC `name` (on IB `port`, nullopt if unknown) is allowed by an NCCL_IB_HCA value:
/// a comma list of `name[:port]`, `^` first excludes the list, `=` (after any `^`) makes names
/// exact instead of prefixes. An empty spec allows everything.
bool nccl_ib_hca_allows(std::string_view spec, std::string_view name, std::optional<int> port);

/// What the log shows against what `env` (NAME -> value of the run's environment) asked for:
/// PXN disabled but relays seen; NCCL_P2P_PXN_LEVEL=0 but send/recv relayed; NCCL_IB_HCA
/// excluding a listed NIC that carried traffic (an unmapped device, "IB/3", is not judged); NCCL_NET_GDR_LEVEL=LOC but GDR used; NCCL_IB_DISABLE
/// or NCCL_NET naming another network than the one used; a tuner plugin asked for but not
/// loaded, or loaded though disabled. One line per contradiction; none when env asks nothing.
std::vector<std::string> nccl_log_contradictions(const NcclLogSummary& s,
                                                 const std::map<std::string, std::string>& env);

}  // namespace railkit
