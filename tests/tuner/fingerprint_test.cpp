// The fingerprint of the measured nodes (tuner/fingerprint): what the facts give a profile, a
// node's facts from its topology document, and the probe run through the launcher (--launcher
// local: here) against a stand-in railkit that prints a document, fails or prints garbage.
#include "tuner/fingerprint.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "test_util.hpp"

namespace railkit::tuner {
namespace {

namespace fs = std::filesystem;
using railkit::test::TempDir;
using railkit::test::usage_error_of;

/// The parts of a `railkit topo --format json` document the tuner reads.
std::string topo_doc(const std::string& host, const std::string& hash, const std::vector<std::string>& nic_models) {
  nlohmann::json nics = nlohmann::json::array();
  for (const auto& m : nic_models) nics.push_back({{"name", "mlx5_x"}, {"model", m}});
  return nlohmann::json{{"schema", "railkit.topology/1"},
                        {"host", host},
                        {"nics", nics},
                        {"fingerprint", {{"hash", hash}, {"facts", {{"nic.count", std::to_string(nic_models.size())}}}}}}
      .dump(2);
}

TEST(Fingerprint, JudgeAgreeingNodes) {
  FingerprintFacts f;
  f.source = "nodes";
  f.nodes = {{"n1", "abcd", {"ConnectX-7"}, "", ""}, {"n2", "abcd", {"BlueField-3", "ConnectX-7"}, "", ""}};
  const FingerprintVerdict v = judge(f);
  EXPECT_EQ(v.hash, "abcd");
  EXPECT_EQ(v.problem, "");
  EXPECT_EQ(v.nic_models, (std::vector<std::string>{"BlueField-3", "ConnectX-7"}));
}

TEST(Fingerprint, JudgeProblems) {
  FingerprintFacts f;
  f.source = "nodes";
  EXPECT_EQ(judge(f).problem, "no node was probed");
  f.nodes = {{"n1", "abcd", {}, "", ""}, {"n2", "ef01", {}, "", ""}, {"n3", "abcd", {}, "", ""}};
  FingerprintVerdict v = judge(f);
  EXPECT_EQ(v.hash, "");
  EXPECT_NE(v.problem.find("abcd on n1, n3; ef01 on n2"), std::string::npos) << v.problem;
  f.nodes = {{"n1", "abcd", {}, "", ""}, {"n2", "", {}, "", "timed out (limit 120 s)"}};
  v = judge(f);
  EXPECT_EQ(v.hash, "");
  EXPECT_NE(v.problem.find("n2: timed out"), std::string::npos) << v.problem;
}

TEST(Fingerprint, NodeFactsFromTopologyDocument) {
  const NodeFingerprint n =
      node_fingerprint_from_json(topo_doc("gpu-07", "0123456789abcdef", {"ConnectX-7", "ConnectX-7", "BlueField-3"}), "doc");
  EXPECT_EQ(n.host, "gpu-07");
  EXPECT_EQ(n.hash, "0123456789abcdef");
  EXPECT_EQ(n.nic_models, (std::vector<std::string>{"BlueField-3", "ConnectX-7"}));
  EXPECT_NE(usage_error_of([] { node_fingerprint_from_json("{\"host\": \"h\"}", "gpu-07.json"); }).find("gpu-07.json"),
            std::string::npos);
  EXPECT_NE(usage_error_of([] { node_fingerprint_from_json("not json", "gpu-07.json"); }).find("gpu-07.json"),
            std::string::npos);
}

/// A stand-in for railkit: checks it was asked for `topo --format json`, then runs `body`.
std::string fake_railkit(const TempDir& d, const std::string& body) {
  const fs::path p = d.write("railkit",
                             "#!/bin/sh\n"
                             "[ \"$*\" = \"topo --format json\" ] || { echo \"railkit: error: asked for: $*\" >&2; exit 6; }\n" +
                                 body);
  ::chmod(p.c_str(), 0755);
  return p.string();
}

NodeProbe local_probe(const TempDir& d, const std::string& railkit) {
  NodeProbe p;
  p.launcher.kind = launch::LauncherKind::Local;
  p.railkit = railkit;
  p.dir = d.path / "session";
  p.timeout_s = 20;
  return p;
}

TEST(Fingerprint, ProbeNodesRunsTopoOnEachHost) {
  TempDir d;
  d.write("doc.json", topo_doc("vm", "feedfacecafebeef", {"ConnectX-7"}));
  const NodeProbe p = local_probe(d, fake_railkit(d, "cat " + (d.path / "doc.json").string() + "\n"));
  const FingerprintFacts f = probe_nodes(p, {"vm"}, environ);
  EXPECT_EQ(f.source, "nodes");
  EXPECT_EQ(f.root, "");
  EXPECT_FALSE(f.probed.empty());
  ASSERT_EQ(f.nodes.size(), 1u);
  const NodeFingerprint& n = f.nodes[0];
  EXPECT_EQ(n.host, "vm");
  EXPECT_EQ(n.hash, "feedfacecafebeef");
  EXPECT_EQ(n.nic_models, (std::vector<std::string>{"ConnectX-7"}));
  EXPECT_EQ(n.error, "");
  EXPECT_EQ(n.document, "topology/vm.json");
  EXPECT_TRUE(fs::exists(p.dir / n.document));
  EXPECT_EQ(judge(f).hash, "feedfacecafebeef");
  // No host known (no results document): one probe wherever the launcher puts it.
  const FingerprintFacts any = probe_nodes(p, {}, environ);
  ASSERT_EQ(any.nodes.size(), 1u);
  EXPECT_EQ(any.nodes[0].host, "");
  EXPECT_EQ(any.nodes[0].document, "topology/node.json");
  EXPECT_EQ(any.nodes[0].hash, "feedfacecafebeef");
}

TEST(Fingerprint, ProbeFailuresAreRecordedInTheNode) {
  TempDir d;
  NodeProbe p = local_probe(d, fake_railkit(d, "echo 'railkit: error: --root /: not a directory' >&2\nexit 6\n"));
  FingerprintFacts f = probe_nodes(p, {"vm"}, environ);
  ASSERT_EQ(f.nodes.size(), 1u);
  EXPECT_EQ(f.nodes[0].hash, "");
  EXPECT_NE(f.nodes[0].error.find("exit code 6"), std::string::npos) << f.nodes[0].error;
  EXPECT_NE(f.nodes[0].error.find("not a directory"), std::string::npos) << f.nodes[0].error;
  EXPECT_NE(judge(f).problem.find("vm: railkit topo"), std::string::npos);

  p = local_probe(d, fake_railkit(d, "echo '{\"half\": '\n"));
  f = probe_nodes(p, {"vm"}, environ);
  EXPECT_EQ(f.nodes[0].hash, "");
  EXPECT_NE(f.nodes[0].error.find("vm.json"), std::string::npos) << f.nodes[0].error;

  p = local_probe(d, (d.path / "no-such-railkit").string());
  f = probe_nodes(p, {"vm"}, environ);
  EXPECT_EQ(f.nodes[0].hash, "");
  EXPECT_NE(f.nodes[0].error.find("could not start"), std::string::npos) << f.nodes[0].error;
}

TEST(Fingerprint, TopoRootThatCannotBeProbedIsRecorded) {
  TempDir d;
  const FingerprintFacts f = probe_topo_root((d.path / "missing").string());
  EXPECT_EQ(f.source, "topo-root");
  EXPECT_EQ(f.root, (d.path / "missing").string());
  ASSERT_EQ(f.nodes.size(), 1u);
  EXPECT_EQ(f.nodes[0].hash, "");
  EXPECT_NE(f.nodes[0].error.find("missing"), std::string::npos) << f.nodes[0].error;
}

}  // namespace
}  // namespace railkit::tuner
