// `railkit rdma-loopback`: parses the flags into RdmaLoopbackCli and runs tuner/rdma_loopback.hpp.
#include <unistd.h>

#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "apps/railkit/subcommands.hpp"
#include "core/atomic_file.hpp"
#include "core/env.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/units.hpp"
#include "topology/analyze.hpp"
#include "topology/probe.hpp"
#include "fabric/rdma_loopback.hpp"

extern char** environ;

namespace railkit::app {
namespace {
namespace fs = std::filesystem;

/// Flags of `railkit rdma-loopback`, as given.
struct RdmaLoopbackCli {
  std::string root = "/";
  std::string out;
  int duration_s = 5;
  std::string size = "1M";
  std::string ib_write_bw;
  std::string numactl;
  bool no_cuda = false;
  int base_port = 18515;
};

/// Writes the document (to stdout when no --out) and, with --out, prints the table.
void emit(const RdmaLoopbackCli& cli, const nlohmann::ordered_json& doc, const std::string& table) {
  if (cli.out.empty()) {
    std::cout << json_dump(doc, 2) << "\n";
    return;
  }
  write_file_atomic(cli.out, json_dump(doc, 2) + "\n");
  if (!table.empty()) std::cout << table << std::flush;
}

int run(const RdmaLoopbackCli& cli) {
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

  topo::Topology t = topo::probe_node(topo::ProbeOptions{o.root, std::nullopt, false});
  topo::compute_paths(t);
  topo::assign_rails(t);  // which GPU each NIC serves
  const auto unavailable = [&](const std::string& reason) {
    nlohmann::ordered_json doc = fabric::loopback_json(t.host, {}, o);
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

  std::vector<fabric::NicLoopback> nics = fabric::plan_loopback(t, o);
  const fs::path logs = cli.out.empty() ? fs::temp_directory_path() / fmt::format("railkit-rdma-loopback-{}", ::getpid())
                                        : fs::path(cli.out).replace_extension(".logs");
  const int sig = fabric::run_loopback(nics, o, environ, logs);
  if (cli.out.empty()) {
    std::error_code ec;
    fs::remove_all(logs, ec);
  }
  if (sig != 0) {
    std::cerr << fmt::format("railkit rdma-loopback: interrupted by signal {}\n", sig);
    return 128 + sig;
  }
  nlohmann::ordered_json doc = fabric::loopback_json(t.host, nics, o);
  doc["status"] = "ran";
  emit(cli, doc, fabric::render_loopback_table(nics));
  return 0;
}

}  // namespace

std::function<int()> setup_rdma_loopback(CLI::App& app) {
  auto cli = std::make_shared<RdmaLoopbackCli>();
  app.add_option("--root", cli->root, "directory holding the node's sys/ (a capture or fixture)")->capture_default_str();
  app.add_option("--out", cli->out, "write the JSON document here (railkit.rdma-loopback/1) and print a table; default: JSON on stdout");
  app.add_option("--duration-s", cli->duration_s, "seconds each ib_write_bw runs (-D)")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  app.add_option("--size", cli->size, "message size (-s): bytes, or with K/M/G")->capture_default_str();
  app.add_option("--ib-write-bw", cli->ib_write_bw,
                 "ib_write_bw to run (default: $RAILKIT_IB_WRITE_BW, else ib_write_bw from PATH)");
  app.add_option("--numactl", cli->numactl, "numactl to pin with (default: numactl from PATH; none: no pinning)");
  app.add_flag("--no-cuda", cli->no_cuda, "host memory even where the NIC serves a GPU (no --use_cuda)");
  app.add_option("--base-port", cli->base_port, "TCP port of the first NIC's server (-p); the others count up")
      ->check(CLI::Range(1024, 65000))
      ->capture_default_str();
  return [cli] { return run(*cli); };
}

}  // namespace railkit::app
