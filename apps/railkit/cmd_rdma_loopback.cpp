// `railkit rdma-loopback` and `railkit rdma-pair`: ib_write_bw per RDMA NIC of this node
// (fabric/rdma_loopback.hpp), either server and client on the same NIC (loopback) or one node's
// side of a run between two nodes (pair: the `rdma-pair` stage of `railkit accept` runs the server
// on one node and the client on the other). Both share their flags, the probe, the ib_write_bw
// lookup and the output. Documented in fabric/README.md.
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/railkit/subcommands.hpp"
#include "core/atomic_file.hpp"
#include "core/env.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "fabric/rdma_loopback.hpp"
#include "topology/analyze.hpp"
#include "topology/probe.hpp"

extern char** environ;

namespace railkit::app {
namespace {
namespace fs = std::filesystem;

/// The flags both subcommands take, as given.
struct RdmaCli {
  std::string root = "/";
  std::string out;
  int duration_s = 5;
  std::string size = "1M";
  std::string ib_write_bw;
  std::string numactl;
  bool no_cuda = false;
  int base_port = 18515;
};

/// `railkit rdma-pair`'s own flags.
struct RdmaPairCli {
  RdmaCli common;
  std::string role;
  std::string peer;
  std::vector<std::string> nics;
  int wait_s = 30;
};

/// Registers the shared flags; `schema` names the document --out holds, `port_help` what --base-port is.
void add_rdma_flags(CLI::App& app, RdmaCli& cli, const char* schema, const char* port_help) {
  app.add_option("--root", cli.root, "directory holding the node's sys/ (a capture or fixture)")->capture_default_str();
  app.add_option("--out", cli.out,
                 fmt::format("write the JSON document here ({}) and print a table; default: JSON on stdout", schema));
  app.add_option("--duration-s", cli.duration_s, "seconds each ib_write_bw runs (-D)")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  app.add_option("--size", cli.size, "message size (-s): bytes, or with K/M/G")->capture_default_str();
  app.add_option("--ib-write-bw", cli.ib_write_bw,
                 "ib_write_bw to run (default: $RAILKIT_IB_WRITE_BW, else ib_write_bw from PATH)");
  app.add_option("--numactl", cli.numactl, "numactl to pin with (default: numactl from PATH; none: no pinning)");
  app.add_flag("--no-cuda", cli.no_cuda, "host memory even where the NIC serves a GPU (no --use_cuda)");
  app.add_option("--base-port", cli.base_port, port_help)->check(CLI::Range(1024, 65000))->capture_default_str();
}

/// Writes the document (to stdout when no --out) and, with --out, prints the table.
void emit(const RdmaCli& cli, const nlohmann::ordered_json& doc, const std::string& table) {
  if (cli.out.empty()) {
    std::cout << json_dump(doc, 2) << "\n";
    return;
  }
  write_file_atomic(cli.out, json_dump(doc, 2) + "\n");
  if (!table.empty()) std::cout << table << std::flush;
}

/// The options the shared flags set (numactl looked up; --out checked writable).
fabric::LoopbackOptions rdma_options(const RdmaCli& cli) {
  fabric::LoopbackOptions o;
  o.root = cli.root;
  o.duration_s = cli.duration_s;
  o.size_bytes = parse_size_bytes(cli.size, "--size");
  o.cuda = !cli.no_cuda;
  o.base_port = cli.base_port;
  if (!cli.out.empty()) check_writable(cli.out, "--out");
  if (!cli.numactl.empty()) {
    o.numactl = fabric::find_program(cli.numactl, environ);
    if (o.numactl.empty()) throw UsageError("--numactl " + cli.numactl + ": not an executable file");
  } else {
    o.numactl = fabric::find_program("numactl", environ);  // optional: without it nothing is pinned
  }
  return o;
}

/// One run of either kind: probes the node, finds ib_write_bw (an `unavailable` document and
/// exit 5 when there is no RDMA NIC or no ib_write_bw), plans the NICs, runs them and writes the
/// document. `name` is the subcommand, `to_json(host, nics)` its document.
template <class Plan, class Run, class ToJson>
int run_rdma(const RdmaCli& cli, fabric::LoopbackOptions& o, const char* name, Plan plan, Run run, ToJson to_json) {
  topo::Topology t = topo::probe_node(topo::ProbeOptions{o.root, std::nullopt, false});
  topo::compute_paths(t);
  topo::assign_rails(t);  // which GPU each NIC serves
  const auto unavailable = [&](const std::string& reason) {
    nlohmann::ordered_json doc = to_json(t.host, std::vector<fabric::NicLoopback>{});
    doc["status"] = "unavailable";
    doc["reason"] = reason;
    emit(cli, doc, "");
    return UnavailableError(reason);
  };
  if (t.nics.empty())
    throw unavailable(fmt::format("no RDMA device under {}", (o.root / "sys/class/infiniband").string()));
  const std::string want = !cli.ib_write_bw.empty() ? cli.ib_write_bw : env_value(environ, "RAILKIT_IB_WRITE_BW");
  o.ib_write_bw = fabric::find_program(want.empty() ? "ib_write_bw" : want, environ);
  if (o.ib_write_bw.empty())
    throw unavailable(want.empty() ? "ib_write_bw not found in PATH: install perftest (Debian package perftest)"
                                   : fmt::format("ib_write_bw {}: not an executable file: install perftest (Debian "
                                                 "package perftest) or fix the path", want));

  std::vector<fabric::NicLoopback> nics = plan(t);
  const fs::path logs = cli.out.empty() ? fs::temp_directory_path() / fmt::format("railkit-{}-{}", name, ::getpid())
                                        : fs::path(cli.out).replace_extension(".logs");
  const int sig = run(nics, logs);
  if (cli.out.empty()) {
    std::error_code ec;
    fs::remove_all(logs, ec);
  }
  if (sig != 0) {
    std::cerr << fmt::format("railkit {}: interrupted by signal {}\n", name, sig);
    return 128 + sig;
  }
  nlohmann::ordered_json doc = to_json(t.host, nics);
  doc["status"] = "ran";
  emit(cli, doc, fabric::render_loopback_table(nics));
  return 0;
}

int loopback_main(const RdmaCli& cli) {
  fabric::LoopbackOptions o = rdma_options(cli);
  return run_rdma(
      cli, o, "rdma-loopback", [&](const topo::Topology& t) { return fabric::plan_loopback(t, o); },
      [&](std::vector<fabric::NicLoopback>& nics, const fs::path& logs) {
        return fabric::run_loopback(nics, o, environ, logs);
      },
      [&](const std::string& host, const std::vector<fabric::NicLoopback>& nics) {
        return fabric::loopback_json(host, nics, o);
      });
}

int pair_main(const RdmaPairCli& cli) {
  const bool server = cli.role == "server";
  if (server && !cli.peer.empty())
    throw UsageError("--peer " + printable(cli.peer) + ": the server listens; --peer is the client's (the server's address)");
  if (!server && cli.peer.empty()) throw UsageError("--role client needs --peer (the address of the server's node)");
  if (!server) fabric::check_peer_address(cli.peer);  // before anything is probed
  fabric::LoopbackOptions o = rdma_options(cli.common);
  o.server_address = server ? "" : cli.peer;
  o.server_wait_s = cli.wait_s;
  o.retry_delay_s = 0.5;
  o.connect_attempts = std::max(1, static_cast<int>(cli.wait_s / o.retry_delay_s));
  return run_rdma(
      cli.common, o, "rdma-pair", [&](const topo::Topology& t) { return fabric::plan_pair(t, o, cli.nics); },
      [&](std::vector<fabric::NicLoopback>& nics, const fs::path& logs) {
        return fabric::run_perftest(nics, o, environ, logs,
                                    server ? fabric::PerftestSides::Server : fabric::PerftestSides::Client);
      },
      [&](const std::string& host, const std::vector<fabric::NicLoopback>& nics) {
        return fabric::pair_json(host, nics, o, server);
      });
}

}  // namespace

std::function<int()> setup_rdma_loopback(CLI::App& app) {
  auto cli = std::make_shared<RdmaCli>();
  add_rdma_flags(app, *cli, "railkit.rdma-loopback/1", "TCP port of the first NIC's server (-p); the others count up");
  return [cli] { return loopback_main(*cli); };
}

std::function<int()> setup_rdma_pair(CLI::App& app) {
  auto cli = std::make_shared<RdmaPairCli>();
  app.add_option("--role", cli->role, "server (listens) or client (connects to --peer and measures)")
      ->required()
      ->check(CLI::IsMember({"server", "client"}));
  app.add_option("--peer", cli->peer, "client: the address of the server's node (perftest's TCP handshake)");
  app.add_option("--nic", cli->nics, "RDMA device of this node, in order; the k-th talks to the partner's k-th "
                                     "on TCP port --base-port + k (repeat)")
      ->required();
  add_rdma_flags(app, cli->common, "railkit.rdma-pair/1", "TCP port of the first --nic (-p); the others count up");
  app.add_option("--wait-s", cli->wait_s, "server: how long it waits for its client; client: how long it retries "
                                          "while nobody listens")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  return [cli] { return pair_main(*cli); };
}

}  // namespace railkit::app
