#pragma once
// `railkit rdma-loopback`: RDMA write bandwidth of every NIC of one node against its line rate,
// perftest's ib_write_bw server and client on the same NIC, all NICs at once (as Azure's NHC
// does). Documented in fabric/README.md (`railkit rdma-loopback`); JSON `railkit.rdma-loopback/1`.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/launch.hpp"
#include "topology/model.hpp"

namespace railkit::fabric {

inline constexpr const char* kRdmaLoopbackSchema = "railkit.rdma-loopback/1";

/// The result table of one perftest bandwidth run.
struct PerftestBw {
  std::uint64_t bytes = 0;
  std::uint64_t iterations = 0;
  double peak_Gbps = 0;
  double average_Gbps = 0;
  std::optional<double> msg_rate_Mpps;
};

/// Parses ib_write_bw's output: the header line holding "#bytes" and "BW average[Gb/sec]" (or
/// [MB/sec], perftest's MiB/s, converted), then the data line; columns are found by name, so the
/// #iterations and MsgRate columns may be present or not. nullopt when there is no result
/// table; then `why` gets the line that says what went wrong ("Couldn't connect to ...").
std::optional<PerftestBw> parse_perftest_bw(std::string_view text, std::string* why = nullptr);

/// What `railkit rdma-loopback` runs.
struct LoopbackOptions {
  std::filesystem::path root{"/"};  ///< the node's root (sys/ under it)
  int duration_s = 5;               ///< ib_write_bw -D (seconds)
  std::uint64_t size_bytes = 1 << 20;  ///< ib_write_bw -s
  std::string ib_write_bw;          ///< resolved path of ib_write_bw
  std::string numactl;              ///< resolved path of numactl; "" = no pinning
  bool cuda = true;                 ///< --use_cuda with the NIC's GPU where there is one
  int base_port = 18515;            ///< TCP port of the first NIC; the next NICs count up
  std::string server_address = "127.0.0.1";
  int connect_attempts = 6;         ///< client tries while the server is not listening yet
  double retry_delay_s = 0.5;
  /// How long a server waits for its client before it is stopped (s); 0: connect_attempts x
  /// (retry_delay_s + 2).
  double server_wait_s = 0;
};

/// One NIC's loopback: its argv and, after the run, its figures.
struct NicLoopback {
  std::string name;
  int port = 1;
  std::optional<int> numa;
  std::optional<int> gpu;            ///< GPU index (PCI order) whose memory is used
  std::optional<int> gid_index;      ///< -x (RoCE v2 GID) on Ethernet
  std::optional<double> line_rate_Gbps;
  std::optional<double> measured_Gbps;
  std::string status = "skipped";    ///< planned (before the run) | ok | failed | skipped
  std::string error;                 ///< why it failed or was skipped
  std::vector<std::string> server, client;  ///< argv (the client's ends with the server address)
  int tcp_port = 18515;              ///< -p: perftest's TCP port for this NIC's handshake
  std::optional<double> ratio() const;
};

/// The plan of NIC `t.nics[i]`: skipped with the reason when its port is not ACTIVE or a RoCE
/// port has no RoCE v2 GID; else "planned", with the server argv and the client argv (the
/// server's plus o.server_address), TCP port `tcp_port`. See plan_loopback for the options used.
NicLoopback plan_nic(const topo::Topology& t, std::size_t i, const LoopbackOptions& o, int tcp_port);

/// The plan for every RDMA NIC of the topology, in NIC order: NICs without an ACTIVE port, and
/// RoCE ports without a RoCE v2 GID, are skipped with the reason; the others get server and
/// client argv (numactl pinning when o.numactl is set and the NIC has a NUMA node; --use_cuda
/// of the first GPU whose rail NIC it is, when o.cuda).
std::vector<NicLoopback> plan_loopback(const topo::Topology& t, const LoopbackOptions& o);

/// Throws UsageError (one line naming --peer) for an address ib_write_bw would not take as its
/// server's: empty, starting with '-' (it would read it as an option), or holding white space or a
/// control character.
void check_peer_address(std::string_view peer);

/// The node-pair test (`railkit rdma-pair`, the `rdma-pair` stage of `railkit accept`): this
/// node's side of ib_write_bw between two nodes, for the NICs named in `nics` in that order, the
/// k-th on TCP port o.base_port + k (the partner's k-th NIC uses the same port); the client's
/// argv ends with o.server_address (the partner). Throws UsageError naming a NIC this node does
/// not have (and the ones it has), or a server address check_peer_address refuses.
std::vector<NicLoopback> plan_pair(const topo::Topology& t, const LoopbackOptions& o, const std::vector<std::string>& nics);

inline constexpr const char* kRdmaPairSchema = "railkit.rdma-pair/1";

/// The `railkit.rdma-pair/1` document: the fields of loopback_json plus `role` (server|client)
/// and `peer` (the server's address; null on the server). `command` is the argv this side ran.
nlohmann::ordered_json pair_json(const std::string& host, const std::vector<NicLoopback>& nics, const LoopbackOptions& o,
                                 bool server);

/// Runs the planned NICs all at once: servers first, then each client (retried while the
/// server is not listening yet); fills measured_Gbps, status and error. Logs of each run land in
/// `log_dir` when it is not empty. Returns the signal when interrupted (SIGINT, SIGTERM, SIGHUP), else 0.
int run_loopback(std::vector<NicLoopback>& nics, const LoopbackOptions& o, char* const* envp,
                 const std::filesystem::path& log_dir);

/// Which sides of the planned NICs run_perftest runs on this node.
enum class PerftestSides { Both, Server, Client };

/// run_loopback for one side: Both is run_loopback; Server runs only the servers (ok when the
/// server exits 0, stopped after o.server_wait_s + duration + 10 s); Client only the clients
/// (retried while nobody listens, up to o.connect_attempts), fills measured_Gbps.
int run_perftest(std::vector<NicLoopback>& nics, const LoopbackOptions& o, char* const* envp,
                 const std::filesystem::path& log_dir, PerftestSides sides);

/// The `railkit.rdma-loopback/1` document.
nlohmann::ordered_json loopback_json(const std::string& host, const std::vector<NicLoopback>& nics,
                                     const LoopbackOptions& o);

/// The console table: nic | port | numa | gpu | line rate | measured | ratio | status.
std::string render_loopback_table(const std::vector<NicLoopback>& nics);

/// `name` when it holds a '/', else its first executable match in the PATH of `envp`; "" when none.
std::string find_program(const std::string& name, char* const* envp);

/// Runs the specs at once (a thread each, run_process) and returns their results in order. A
/// signal that interrupts one interrupts the others too.
std::vector<LaunchResult> run_concurrently(const std::vector<LaunchSpec>& specs, char* const* envp);

}  // namespace railkit::fabric
