#include "fabric/rdma_loopback.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/env.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/version.hpp"

namespace railkit::fabric {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

// ---------------------------------------------------------------------------- parsing

namespace {

std::vector<std::string> split_ws(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::optional<double> to_double(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  if (!std::isfinite(v) || v < 0) return std::nullopt;  // perftest prints no negative, inf or nan column
  return v;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

/// The first line that says what went wrong, or "".
std::string error_line(std::string_view text) {
  static const char* const kWords[] = {"couldn't", "could not", "unable", "error", "failed", "not found",
                                       "no such", "invalid", "usage"};
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    const std::string l = lower(line);
    for (const char* w : kWords)
      if (l.find(w) != std::string::npos) return trim(line);
  }
  return "";
}

}  // namespace

std::optional<PerftestBw> parse_perftest_bw(std::string_view text, std::string* why) {
  std::vector<std::string> lines;
  {
    std::istringstream in{std::string(text)};
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  const auto fail = [&](const std::string& reason) -> std::optional<PerftestBw> {
    if (why) {
      const std::string e = error_line(text);
      *why = e.empty() ? reason : e;
    }
    return std::nullopt;
  };
  for (size_t h = 0; h < lines.size(); ++h) {
    if (lines[h].find("#bytes") == std::string::npos || lines[h].find("BW average[") == std::string::npos) continue;
    // Column names hold one space ("BW peak[Gb/sec]"): join them before splitting.
    std::string header = lines[h];
    for (const char* name : {"BW peak[", "BW average["}) {
      const auto at = header.find(name);
      if (at != std::string::npos) header[at + 2] = '_';
    }
    const std::vector<std::string> cols = split_ws(header);
    int i_bytes = -1, i_iters = -1, i_peak = -1, i_avg = -1, i_rate = -1;
    double scale = 1;  // to Gb/s
    for (size_t c = 0; c < cols.size(); ++c) {
      const std::string& n = cols[c];
      const int ci = static_cast<int>(c);
      if (n == "#bytes") i_bytes = ci;
      else if (n == "#iterations") i_iters = ci;
      else if (n.starts_with("BW_peak[")) i_peak = ci;
      else if (n.starts_with("BW_average[")) {
        i_avg = ci;
        if (n.find("MB/sec") != std::string::npos) scale = 1048576.0 * 8 / 1e9;  // perftest's MB is MiB
        else if (n.find("Gb/sec") == std::string::npos) return fail("unknown bandwidth unit in '" + n + "'");
      } else if (n.starts_with("MsgRate[")) i_rate = ci;
    }
    // The data line: the last line of numbers after the header, before the next separator.
    std::optional<std::vector<std::string>> data;
    for (size_t k = h + 1; k < lines.size(); ++k) {
      const std::string t = trim(lines[k]);
      if (t.empty()) continue;
      if (t.starts_with("---")) break;
      const std::vector<std::string> v = split_ws(t);
      if (static_cast<int>(v.size()) > i_avg && std::all_of(v.begin(), v.end(), [](const std::string& s) {
            return to_double(s).has_value();
          }))
        data = v;
    }
    if (!data) return fail("ib_write_bw printed its result header but no result line");
    const auto num = [&](int i) { return i >= 0 && i < static_cast<int>(data->size()) ? to_double((*data)[static_cast<size_t>(i)]) : std::nullopt; };
    PerftestBw r;
    // A count above 2^63 is no perftest output (and would not convert).
    const auto count = [&](int i) -> std::optional<std::uint64_t> {
      const auto v = num(i);
      if (!v || *v >= 9.2e18) return std::nullopt;
      return static_cast<std::uint64_t>(*v);
    };
    if (i_bytes >= 0 && !count(i_bytes)) return fail("ib_write_bw's #bytes column is not a byte count");
    if (const auto v = count(i_bytes)) r.bytes = *v;
    if (const auto v = count(i_iters)) r.iterations = *v;
    if (const auto v = num(i_peak)) r.peak_Gbps = *v * scale;
    r.average_Gbps = *num(i_avg) * scale;
    r.msg_rate_Mpps = num(i_rate);
    return r;
  }
  return fail("no result table in ib_write_bw's output");
}

// ---------------------------------------------------------------------------- plan

std::optional<double> NicLoopback::ratio() const {
  if (!measured_Gbps || !line_rate_Gbps || *line_rate_Gbps <= 0) return std::nullopt;
  return *measured_Gbps / *line_rate_Gbps;
}

NicLoopback plan_nic(const topo::Topology& t, std::size_t i, const LoopbackOptions& o, int tcp_port) {
  const topo::Nic& nic = t.nics[i];
  NicLoopback n;
  n.name = nic.name;
  n.numa = nic.numa;
  n.tcp_port = tcp_port;
  const topo::Port* p = nic.main_port();
  if (p) {
    n.port = p->num;
    n.line_rate_Gbps = p->rate_Gbps;
  }
  if (o.cuda && !nic.gpus.empty())
    if (const topo::Gpu* g = t.gpu(nic.gpus.front())) n.gpu = g->index;
  if (!p || p->state != "ACTIVE") {
    n.error = p ? fmt::format("port {} is {}, not ACTIVE", p->num, p->state.empty() ? "in an unknown state" : p->state)
                : "no port";
    return n;
  }
  if (p->is_roce()) {
    if (!p->recommended_gid) {
      n.error = fmt::format("port {}: no RoCE v2 GID (what NCCL would use); see `railkit topo --lint`", p->num);
      return n;
    }
    n.gid_index = p->recommended_gid;
  }
  std::vector<std::string> argv;
  if (!o.numactl.empty() && n.numa)
    argv = {o.numactl, fmt::format("--cpunodebind={}", *n.numa), fmt::format("--membind={}", *n.numa)};
  argv.insert(argv.end(), {o.ib_write_bw, "-d", nic.name, "-i", std::to_string(n.port), "-F", "--report_gbits", "-D",
                           std::to_string(o.duration_s), "-s", std::to_string(o.size_bytes), "-p",
                           std::to_string(tcp_port)});
  if (n.gid_index) argv.insert(argv.end(), {"-x", std::to_string(*n.gid_index)});
  if (n.gpu) argv.push_back(fmt::format("--use_cuda={}", *n.gpu));
  n.server = argv;
  n.client = argv;
  n.client.push_back(o.server_address);
  n.status = "planned";
  return n;
}

std::vector<NicLoopback> plan_loopback(const topo::Topology& t, const LoopbackOptions& o) {
  std::vector<NicLoopback> out;
  for (size_t i = 0; i < t.nics.size(); ++i) out.push_back(plan_nic(t, i, o, o.base_port + static_cast<int>(i)));
  return out;
}

void check_peer_address(std::string_view peer) {
  if (peer.empty()) throw UsageError("--peer: give the address of the server's node");
  if (peer.front() == '-')
    throw UsageError(fmt::format("--peer {}: starts with '-', so ib_write_bw would read it as an option; give the "
                                 "server's host name or address",
                                 printable(peer)));
  if (has_control_chars(peer) ||
      std::any_of(peer.begin(), peer.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }))
    throw UsageError(fmt::format("--peer {}: holds white space or a control character; give the server's host name or "
                                 "address",
                                 printable(peer)));
}

std::vector<NicLoopback> plan_pair(const topo::Topology& t, const LoopbackOptions& o, const std::vector<std::string>& nics) {
  if (!o.server_address.empty()) check_peer_address(o.server_address);  // the client's argv ends with it
  std::vector<NicLoopback> out;
  for (size_t k = 0; k < nics.size(); ++k) {
    const auto it = std::find_if(t.nics.begin(), t.nics.end(), [&](const topo::Nic& n) { return n.name == nics[k]; });
    if (it == t.nics.end()) {
      std::string have;
      for (const topo::Nic& n : t.nics) have += (have.empty() ? "" : ", ") + n.name;
      throw UsageError(fmt::format("--nic {}: no such RDMA device under {} (it has: {})", nics[k],
                                   (o.root / "sys/class/infiniband").string(), have.empty() ? "none" : have));
    }
    out.push_back(plan_nic(t, static_cast<size_t>(it - t.nics.begin()), o, o.base_port + static_cast<int>(k)));
  }
  return out;
}

// ---------------------------------------------------------------------------- running

namespace {

/// Holds SIGINT, SIGTERM and SIGHUP in the calling thread (and the threads it starts) while
/// alive: run_process in those threads receives them; what is still pending at the end is dropped.
class HeldSignals {
 public:
  HeldSignals() {
    sigemptyset(&set_);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set_, s);
    ::pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~HeldSignals() {
    timespec zero{0, 0};
    while (::sigtimedwait(&set_, nullptr, &zero) > 0) {
    }
    ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  HeldSignals(const HeldSignals&) = delete;
  HeldSignals& operator=(const HeldSignals&) = delete;

 private:
  sigset_t set_{}, old_{};
};

/// A run ended by a signal passes it on, so that every other run in flight ends too.
void pass_on(const LaunchResult& lr, std::atomic<int>& stop) {
  if (lr.end != LaunchResult::End::Interrupted) return;
  stop = lr.signal;
  ::kill(::getpid(), lr.signal);
}

std::string read_text(const fs::path& p) {
  try {
    return read_file(p);
  } catch (const std::exception&) {
    return "";
  }
}

/// Opens and closes a TCP connection to a server still waiting for its client: perftest's
/// handshake fails and the server exits instead of waiting for its time limit.
void poke(const std::string& address, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, address.c_str(), &a.sin_addr) == 1)
    (void)::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
  ::close(fd);
}

bool connect_failure(const std::string& text) {
  const std::string l = lower(text);
  return l.find("couldn't connect") != std::string::npos || l.find("unable to init the socket") != std::string::npos ||
         l.find("connection refused") != std::string::npos;
}

std::string join_argv(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? " " : "") + v[i];
  return out;
}

}  // namespace

std::vector<LaunchResult> run_concurrently(const std::vector<LaunchSpec>& specs, char* const* envp) {
  std::vector<LaunchResult> results(specs.size());
  std::atomic<int> stop{0};
  {
    HeldSignals held;
    std::vector<std::thread> threads;
    for (size_t i = 0; i < specs.size(); ++i)
      threads.emplace_back([&, i] {
        results[i] = run_process(specs[i], envp);
        pass_on(results[i], stop);
      });
    for (auto& t : threads) t.join();
  }
  return results;
}

namespace {

/// The processes of one NIC's perftest run, and where their output went.
struct PerftestState {
  std::atomic<bool> server_done{false};
  LaunchResult server, client;
  fs::path server_out, server_err, client_out, client_err;
};

/// What one NIC's run came to: ok with the client's average, or failed with what each end said.
/// A server alone (`!clients`, the server of a pair) ran when it exited 0: the client measures.
void judge_perftest(NicLoopback& n, const PerftestState& s, bool servers, bool clients) {
  if (!clients) {  // the server of a pair: it ran when it exited 0 (the client measures)
    n.status = s.server.ok() ? "ok" : "failed";
    if (!s.server.ok()) {
      const std::string line = error_line(read_text(s.server_out) + "\n" + read_text(s.server_err));
      n.error = fmt::format("server: {}{}", s.server.describe(), line.empty() ? "" : ": " + line);
    }
    return;
  }
  std::string why;
  const auto r = parse_perftest_bw(read_text(s.client_out) + "\n" + read_text(s.client_err), &why);
  if (s.client.ok() && r) {
    n.status = "ok";
    n.measured_Gbps = r->average_Gbps;
    return;
  }
  n.status = "failed";
  std::string server_why;
  if (servers && !s.server.ok()) {
    server_why = error_line(read_text(s.server_out) + "\n" + read_text(s.server_err));
    server_why = fmt::format("; server: {}{}", s.server.describe(), server_why.empty() ? "" : ": " + server_why);
  }
  n.error = s.client.ok() ? fmt::format("client: {}{}", why, server_why)
                          : fmt::format("client: {}: {}{}", s.client.describe(), why, server_why);
}

}  // namespace

int run_loopback(std::vector<NicLoopback>& nics, const LoopbackOptions& o, char* const* envp, const fs::path& log_dir) {
  return run_perftest(nics, o, envp, log_dir, PerftestSides::Both);
}

int run_perftest(std::vector<NicLoopback>& nics, const LoopbackOptions& o, char* const* envp, const fs::path& log_dir,
                 PerftestSides sides) {
  const bool servers = sides != PerftestSides::Client, clients = sides != PerftestSides::Server;
  std::error_code ec;
  fs::create_directories(log_dir, ec);
  std::atomic<int> stop{0};
  std::vector<size_t> todo;
  for (size_t i = 0; i < nics.size(); ++i)
    if (nics[i].status == "planned") todo.push_back(i);
  const double connect_window_s =
      o.server_wait_s > 0 ? o.server_wait_s : o.connect_attempts * (o.retry_delay_s + 2.0);
  std::vector<PerftestState> st(nics.size());
  {
    HeldSignals held;
    std::vector<std::thread> threads;
    for (size_t i : todo) {
      PerftestState& s = st[i];
      const NicLoopback& n = nics[i];
      s.server_out = log_dir / (n.name + ".server.out");
      s.server_err = log_dir / (n.name + ".server.err");
      s.client_out = log_dir / (n.name + ".client.out");
      s.client_err = log_dir / (n.name + ".client.err");
      LaunchSpec base;
      // --use_cuda counts GPUs in CUDA's order: make that the PCI order the probe numbers them in.
      if (n.gpu) base.env_add["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
      base.kill_grace_s = 2;
      LaunchSpec server = base;
      server.argv = n.server;
      server.stdout_path = s.server_out;
      server.stderr_path = s.server_err;
      server.timeout_s = connect_window_s + o.duration_s + (clients ? 30 : 10);
      if (servers)
        threads.emplace_back([&s, &stop, server, envp] {
          s.server = run_process(server, envp);
          s.server_done = true;
          pass_on(s.server, stop);
        });
      if (!clients) continue;
      LaunchSpec client = base;
      client.argv = n.client;
      client.stdout_path = s.client_out;
      client.stderr_path = s.client_err;
      client.timeout_s = o.duration_s + 30;
      const int port = n.tcp_port;
      threads.emplace_back([&s, &stop, &o, client, envp, port, servers] {
        const auto pause = [](double sec) { std::this_thread::sleep_for(std::chrono::duration<double>(sec)); };
        pause(o.retry_delay_s);  // the servers start listening first
        for (int attempt = 1; attempt <= o.connect_attempts && stop == 0; ++attempt) {
          s.client = run_process(client, envp);
          pass_on(s.client, stop);
          if (s.client.ok() || s.client.end != LaunchResult::End::Exited || s.server_done) break;
          if (!connect_failure(read_text(s.client_out) + read_text(s.client_err))) break;
          pause(o.retry_delay_s);
        }
        if (servers && !s.client.ok() && !s.server_done) poke(o.server_address, port);
      });
    }
    for (auto& t : threads) t.join();
  }
  for (size_t i : todo) judge_perftest(nics[i], st[i], servers, clients);
  return stop.load();
}

// ---------------------------------------------------------------------------- reports

ojson loopback_json(const std::string& host, const std::vector<NicLoopback>& nics, const LoopbackOptions& o) {
  const auto opt = [](const auto& v) { return v ? ojson(*v) : ojson(nullptr); };
  ojson j;
  j["schema"] = kRdmaLoopbackSchema;
  j["railkit_version"] = kVersion;
  j["created"] = utc_now_iso();
  j["host"] = host;
  j["root"] = o.root.string();
  j["duration_s"] = o.duration_s;
  j["size_bytes"] = o.size_bytes;
  j["ib_write_bw"] = o.ib_write_bw;
  j["numactl"] = o.numactl.empty() ? ojson(nullptr) : ojson(o.numactl);
  j["cuda"] = o.cuda;
  ojson arr = ojson::array();
  for (const NicLoopback& n : nics) {
    ojson x;
    x["name"] = n.name;
    x["port"] = n.port;
    x["numa"] = opt(n.numa);
    x["gpu"] = opt(n.gpu);
    x["gid_index"] = opt(n.gid_index);
    x["line_rate_Gbps"] = opt(n.line_rate_Gbps);
    x["measured_Gbps"] = opt(n.measured_Gbps);
    x["ratio"] = opt(n.ratio());
    x["command"] = n.client.empty() ? ojson(nullptr) : ojson(join_argv(n.client));
    x["server_command"] = n.server.empty() ? ojson(nullptr) : ojson(join_argv(n.server));
    x["status"] = n.status;
    x["error"] = n.error;
    arr.push_back(x);
  }
  j["nics"] = arr;
  return j;
}

ojson pair_json(const std::string& host, const std::vector<NicLoopback>& nics, const LoopbackOptions& o, bool server) {
  std::vector<NicLoopback> sides = nics;
  for (NicLoopback& n : sides) (server ? n.client : n.server).clear();  // `command` is this side's
  for (NicLoopback& n : sides)
    if (server) std::swap(n.client, n.server);
  ojson j = loopback_json(host, sides, o);
  j["schema"] = kRdmaPairSchema;
  j["role"] = server ? "server" : "client";
  j["peer"] = server ? ojson(nullptr) : ojson(o.server_address);
  for (auto& x : j["nics"]) {
    x.erase("server_command");
    x["tcp_port"] = nullptr;
  }
  for (size_t i = 0; i < sides.size() && i < j["nics"].size(); ++i) j["nics"][i]["tcp_port"] = sides[i].tcp_port;
  return j;
}

std::string render_loopback_table(const std::vector<NicLoopback>& nics) {
  const auto num = [](const std::optional<double>& v, const char* f) {
    return v ? fmt::format(fmt::runtime(f), *v) : std::string("-");
  };
  std::string out = fmt::format("{:<10} {:>4} {:>4} {:>4} {:>10} {:>10} {:>6}  {}\n", "nic", "port", "numa", "gpu",
                                "line Gb/s", "Gb/s", "ratio", "status");
  for (const NicLoopback& n : nics)
    out += fmt::format("{:<10} {:>4} {:>4} {:>4} {:>10} {:>10} {:>6}  {}{}\n", n.name, n.port,
                       n.numa ? std::to_string(*n.numa) : "-", n.gpu ? std::to_string(*n.gpu) : "-",
                       num(n.line_rate_Gbps, "{:.0f}"), num(n.measured_Gbps, "{:.2f}"), num(n.ratio(), "{:.2f}"),
                       n.status, n.error.empty() ? "" : ": " + n.error);
  return out;
}

std::string find_program(const std::string& name, char* const* envp) {
  const auto runnable = [](const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) return runnable(name) ? name : "";
  std::istringstream path(env_value(envp, "PATH"));
  for (std::string dir; std::getline(path, dir, ':');) {
    if (dir.empty()) continue;
    const fs::path p = fs::path(dir) / name;
    if (runnable(p)) return p.string();
  }
  return "";
}

}  // namespace railkit::fabric
