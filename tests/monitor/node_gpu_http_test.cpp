// monitor/node: NVML through the stand-in library (tests/monitor/fake_nvml_node.c), the --listen
// parser and HTTP server (a request over a real socket, a busy port), and the sampling loop on the
// fixture node writing its textfile.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "monitor/node/gpu_nvml.hpp"
#include "monitor/node/http_server.hpp"
#include "monitor/node/node_monitor.hpp"

namespace railkit::monitor {
namespace {
namespace fs = std::filesystem;

const std::uint64_t* gpu_value(const NodeSample& s, std::string_view metric, const Labels& labels) {
  for (const auto& c : s.counters)
    if (c.metric == metric && c.labels == labels) return &c.raw;
  return nullptr;
}

TEST(Nvml, FakeLibraryCounters) {
  NvmlSource nvml(RAILKIT_MON_FAKE_NVML);
  ASSERT_TRUE(nvml.available()) << nvml.why();
  NodeSample s;
  nvml.read(s);
  ASSERT_TRUE(gpu_value(s, kGpuEcc, {{"gpu", "0"}, {"type", "corrected"}}));
  EXPECT_EQ(*gpu_value(s, kGpuEcc, {{"gpu", "0"}, {"type", "corrected"}}), 5u);
  EXPECT_EQ(*gpu_value(s, kGpuEcc, {{"gpu", "0"}, {"type", "uncorrected"}}), 1u);
  EXPECT_FALSE(gpu_value(s, kGpuEcc, {{"gpu", "1"}, {"type", "corrected"}}));  // not supported: absent
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("GPU 1: ECC"), std::string::npos);
  const auto* crc = gpu_value(s, kGpuNvlink, {{"gpu", "1"}, {"link", "1"}, {"counter", "crc_flit"}});
  ASSERT_TRUE(crc);
  EXPECT_EQ(*crc, 112u);
  EXPECT_FALSE(gpu_value(s, kGpuNvlink, {{"gpu", "0"}, {"link", "2"}, {"counter", "replay"}}));  // inactive link
  ASSERT_EQ(s.gauges.size(), 2u);
  EXPECT_EQ(s.gauges[1].value, 0x40);
  EXPECT_EQ(*gpu_value(s, kGpuXid, {{"gpu", "1"}, {"xid", "79"}}), 2u);
  EXPECT_EQ(*gpu_value(s, kGpuXid, {{"gpu", "0"}, {"xid", "48"}}), 1u);
  NodeSample again;
  nvml.read(again);  // no new events: the counts stay
  EXPECT_EQ(*gpu_value(again, kGpuXid, {{"gpu", "1"}, {"xid", "79"}}), 2u);
}

TEST(Nvml, AbsentLibraryIsNotAnError) {
  NvmlSource nvml("/nonexistent/libnvidia-ml.so.1");
  EXPECT_FALSE(nvml.available());
  EXPECT_NE(nvml.why().find("NVML not loaded"), std::string::npos) << nvml.why();
  NodeSample s;
  nvml.read(s);
  EXPECT_TRUE(s.counters.empty());
}

TEST(Listen, Parse) {
  EXPECT_EQ(parse_listen("127.0.0.1:9100").host, "127.0.0.1");
  EXPECT_EQ(parse_listen(":9100").port, 9100);
  EXPECT_EQ(parse_listen(":9100").host, "");
  EXPECT_EQ(parse_listen("[::1]:0").host, "::1");
  for (const char* bad : {"9100", "host:", "host:99999", "::1:9100", "h:-1", "h:x"})
    EXPECT_THROW(parse_listen(bad), UsageError) << bad;
}

// GET `path` from 127.0.0.1:port; the whole response (headers and body).
std::string http_get(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return "connect failed";
  }
  const std::string req = "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  (void)!write(fd, req.data(), req.size());
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

TEST(Http, ServesTheLatestExpositionAndRefusesABusyPort) {
  MetricsServer server(ListenAddress{"127.0.0.1", 0});
  ASSERT_GT(server.port(), 0);
  EXPECT_NE(http_get(server.port(), "/metrics").find("503"), std::string::npos);
  server.publish("railkit_node_sample_timestamp_seconds 1\n");
  const std::string r = http_get(server.port(), "/metrics");
  EXPECT_NE(r.find("200 OK"), std::string::npos) << r;
  EXPECT_NE(r.find("text/plain; version=0.0.4"), std::string::npos) << r;
  EXPECT_NE(r.find("\r\n\r\nrailkit_node_sample_timestamp_seconds 1\n"), std::string::npos) << r;
  EXPECT_NE(http_get(server.port(), "/other").find("404"), std::string::npos);
  try {
    MetricsServer second(ListenAddress{"127.0.0.1", server.port()});
    FAIL() << "bound a busy port";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--listen 127.0.0.1:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("in use"), std::string::npos) << e.what();
  }
  EXPECT_THROW(MetricsServer(ListenAddress{"192.0.2.1", 0}), UsageError);  // not an address of this host
}

TEST(Loop, TwoSamplesOfTheFixtureWithTheFakeNvml) {
  const fs::path dir = fs::temp_directory_path() / ("railkit-mon-loop-" + std::to_string(getpid()));
  fs::create_directories(dir);
  NodeMonitorOptions o;
  o.root = RAILKIT_MON_FIXTURE;
  o.interval_s = 0.05;
  o.count = 2;
  o.textfile = dir / "railkit-node.prom";
  o.nvml = RAILKIT_MON_FAKE_NVML;
  std::ostringstream out, err;
  EXPECT_EQ(run_node_monitor(o, out, err), 0);
  const std::string text = read_file(*o.textfile);
  EXPECT_NE(text.find("railkit_node_rdma_rate_per_second{device=\"mlx5_0\",port=\"1\",counter=\"np_cnp_sent\"} 0\n"),
            std::string::npos);
  EXPECT_NE(text.find("railkit_node_signal{signal=\"pcie_downtrained\",subject=\"0000:00:0a.0\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("railkit_node_signal{signal=\"rail_rate_outlier\",subject=\"mlx5_3/1\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("railkit_node_gpu_xid_errors_total{gpu=\"1\",xid=\"79\"} 2\n"), std::string::npos);
  EXPECT_NE(out.str().find("sample 2 (interval"), std::string::npos) << out.str();
  EXPECT_EQ(err.str().find("note"), err.str().rfind("note")) << err.str();  // one note: GPU 1 ECC
  o.interval_s = 0;
  EXPECT_THROW(run_node_monitor(o, out, err), UsageError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace railkit::monitor
