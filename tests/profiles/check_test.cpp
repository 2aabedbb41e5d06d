// profiles/check.hpp: versions, GPU families, NCCL discovery under a root, the comparison.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "profiles/check.hpp"
#include "test_util.hpp"

namespace railkit::profiles {
namespace {
namespace fs = std::filesystem;
using Status = CheckItem::Status;

using test::TempDir;

void touch(const fs::path& p) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << "x";
}

TEST(Check, MajorMinor) {
  EXPECT_EQ(major_minor("NCCL 2.28.9 (built 2.28.9), CUDA runtime 13.0"), "2.28");
  EXPECT_EQ(major_minor("2.27.3+cuda12.9"), "2.27");
  EXPECT_EQ(major_minor("libnccl.so.2.21.5"), "2.21");
  EXPECT_EQ(major_minor("none"), std::nullopt);
}

TEST(Check, GpuFamily) {
  EXPECT_EQ(gpu_family("NVIDIA H100 80GB HBM3"), "h100");
  EXPECT_EQ(gpu_family("H100 SXM5 80GB"), "h100");
  EXPECT_EQ(gpu_family("NVIDIA A100-SXM4-80GB"), "a100");
  EXPECT_EQ(gpu_family("Tesla V100-SXM2-32GB"), "v100");
  EXPECT_EQ(gpu_family("10de:1234"), "10de:1234");
}

TEST(Check, ProfileNcclVersion) {
  ProfileDocument p;
  p.cluster.backend = "mpi";
  p.cluster.backend_version = "Open MPI v4.1.4";
  EXPECT_EQ(profile_nccl_version(p), std::nullopt);
  p.cluster.extra["nccl_version"] = "2.27.3+cuda12.9";
  EXPECT_EQ(profile_nccl_version(p), "2.27");
  p.cluster.extra = nlohmann::json::object();
  p.cluster.backend = "nccl";
  p.cluster.backend_version = "NCCL 2.28.9 (built 2.28.9), CUDA runtime 13.0, driver 13.0";
  EXPECT_EQ(profile_nccl_version(p), "2.28");
}

TEST(Check, FindNcclVersionUnderRoot) {
  TempDir t;
  EXPECT_EQ(find_nccl_version(t.path), std::nullopt);
  touch(t.path / "usr/local/cuda/lib64/libnccl.so.2");  // no version in the name
  EXPECT_EQ(find_nccl_version(t.path), std::nullopt);
  touch(t.path / "usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5");
  fs::create_symlink("libnccl.so.2.21.5", t.path / "usr/lib/x86_64-linux-gnu/libnccl.so.2");
  auto v = find_nccl_version(t.path);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->first, "2.21");
  // an absolute link of a capture resolves inside the root
  touch(t.path / "opt/nccl-2.19/libnccl.so.2.19.3");
  fs::remove(t.path / "usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5");
  fs::remove(t.path / "usr/lib/x86_64-linux-gnu/libnccl.so.2");
  fs::create_symlink("/opt/nccl-2.19/libnccl.so.2.19.3", t.path / "usr/lib/x86_64-linux-gnu/libnccl.so.2");
  v = find_nccl_version(t.path);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->first, "2.19");
}

ProfileDocument profile() {
  ProfileDocument p;
  p.cluster.fingerprint = "0123456789abcdef";
  p.cluster.backend = "nccl";
  p.cluster.backend_version = "NCCL 2.28.9 (built 2.28.9)";
  p.cluster.gpu_models = {"NVIDIA H100 80GB HBM3"};
  p.cluster.nic_models = {"ConnectX-7"};
  return p;
}

NodeFacts node() {
  NodeFacts n;
  n.fingerprint = "0123456789abcdef";
  n.gpu_models = {"H100 SXM5 80GB"};
  n.nic_models = {"ConnectX-7"};
  n.nccl_version = "2.28";
  n.nccl_source = "--nccl-version";
  return n;
}

TEST(Check, AllSame) {
  const auto items = check_profile(profile(), node());
  ASSERT_EQ(items.size(), 4u);
  for (const auto& i : items) EXPECT_EQ(i.status, Status::Same) << i.what;
  EXPECT_FALSE(has_mismatch(items));
}

TEST(Check, Differences) {
  NodeFacts n = node();
  n.fingerprint = "fedcba9876543210";
  n.nccl_version = "2.27";
  n.gpu_models = {"A100 SXM4 80GB"};
  n.nic_models = {"ConnectX-6 Dx", "ConnectX-7"};
  const auto items = check_profile(profile(), n);
  for (const auto& i : items) EXPECT_EQ(i.status, Status::Differs) << i.what;
  EXPECT_TRUE(has_mismatch(items));
  const auto lines = check_lines(items);
  // This profile stores only the hash: the line says that the differing facts cannot be named.
  EXPECT_EQ(lines[0], "fingerprint: differs: profile 0123456789abcdef, this node fedcba9876543210 [the profile stores "
                      "only the fingerprint's hash (no cluster.fingerprint_facts), so the facts that differ cannot be "
                      "named; compare `railkit topo` of a profiled node with this one]");
  EXPECT_TRUE(items[0].facts.empty());
  EXPECT_EQ(lines[1], "NCCL: differs: profile 2.28, this node 2.27");
}

TEST(Check, FactDifferencesPointAtTheCauseFirst) {
  const std::map<std::string, std::string> profile = {
      {"GPU0.nic_paths", "mlx5_0:PIX,mlx5_1:SYS"}, {"GPU0.model", "H100"}, {"mlx5_1.model", "ConnectX-7"},
      {"nic.count", "2"}, {"nic.models", "2x ConnectX-7@400Gbps"}, {"numa.count", "2"}};
  const std::map<std::string, std::string> node = {
      {"GPU0.nic_paths", "mlx5_0:PIX"}, {"GPU0.model", "H100"}, {"nic.count", "1"},
      {"nic.models", "1x ConnectX-7@400Gbps"}, {"numa.count", "2"}, {"mlx5_2.model", "ConnectX-6"}};
  EXPECT_EQ(fact_differences(profile, node),
            (std::vector<FactDifference>{{"mlx5_1.model", "ConnectX-7", std::nullopt},
                                         {"mlx5_2.model", std::nullopt, "ConnectX-6"},
                                         {"nic.count", "2", "1"},
                                         {"nic.models", "2x ConnectX-7@400Gbps", "1x ConnectX-7@400Gbps"},
                                         {"GPU0.nic_paths", "mlx5_0:PIX,mlx5_1:SYS", "mlx5_0:PIX"}}));
  EXPECT_TRUE(fact_differences(profile, profile).empty());
}

TEST(Check, NamesEveryFactThatDiffers) {
  ProfileDocument p = profile();
  p.cluster.fingerprint_facts = {{"gpu.count", "8"}, {"mlx5_9.rate_Gbps", "400"}, {"mlx5_9.model", "ConnectX-7"}};
  NodeFacts n = node();
  n.fingerprint = "fedcba9876543210";
  n.fingerprint_facts = {{"gpu.count", "8"}, {"mlx5_9.rate_Gbps", "200"}, {"mlx5_9.model", "ConnectX-7"}};
  const auto items = check_profile(p, n);
  EXPECT_EQ(items[0].status, Status::Differs);
  EXPECT_EQ(items[0].facts, (std::vector<FactDifference>{{"mlx5_9.rate_Gbps", "400", "200"}}));
  const auto lines = check_lines(items);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0], "fingerprint: differs: profile 0123456789abcdef, this node fedcba9876543210 [1 fact(s) differ]");
  EXPECT_EQ(lines[1], "  mlx5_9.rate_Gbps: profile 400, this node 200");
  EXPECT_EQ(lines[2].rfind("NCCL: same", 0), 0u) << lines[2];
  // The same hash: nothing is listed.
  n.fingerprint = p.cluster.fingerprint;
  EXPECT_TRUE(check_profile(p, n)[0].facts.empty());
  EXPECT_EQ(check_profile(p, n)[0].status, Status::Same);
  // Equal facts under different hashes: still a difference, and said to be one of the hash only.
  n.fingerprint = "fedcba9876543210";
  n.fingerprint_facts = p.cluster.fingerprint_facts;
  const CheckItem only_hash = check_profile(p, n)[0];
  EXPECT_EQ(only_hash.status, Status::Differs);
  EXPECT_NE(only_hash.note.find("no recorded fact differs"), std::string::npos) << only_hash.note;
}

TEST(Check, NamesTheDifferingFactOfAProbedNode) {
  // A profile made on dgx-h100 (hash and facts, as `railkit tune` records them), checked on the
  // same machine whose mlx5_9 links at 200 Gb/s instead of 400.
  const NodeFacts made_on = probe_node_facts(RAILKIT_TOPO_FIXTURES "/dgx-h100", std::string("2.28"));
  ASSERT_FALSE(made_on.fingerprint_facts.empty()) << made_on.fingerprint_error;
  ProfileDocument p = profile();
  p.cluster.fingerprint = made_on.fingerprint;
  p.cluster.fingerprint_facts = made_on.fingerprint_facts;
  p.cluster.gpu_models.clear();
  EXPECT_FALSE(has_mismatch(check_profile(p, made_on)));
  const NodeFacts here = probe_node_facts(RAILKIT_TOPO_FIXTURES "/dgx-rate-mismatch", std::string("2.28"));
  const auto items = check_profile(p, here);
  EXPECT_EQ(items[0].status, Status::Differs);
  const auto lines = check_lines(items);
  EXPECT_NE(std::find(lines.begin(), lines.end(), "  mlx5_9.rate_Gbps: profile 400, this node 200"), lines.end())
      << ::testing::PrintToString(lines);
}

TEST(Check, NotRecordedAndUnknownAreNotMismatches) {
  ProfileDocument p = profile();
  p.cluster.fingerprint = "";
  p.cluster.gpu_models.clear();
  p.cluster.nic_models.clear();
  NodeFacts n = node();
  n.nccl_version.reset();
  const auto items = check_profile(p, n);
  EXPECT_EQ(items[0].status, Status::NotRecorded);
  EXPECT_EQ(items[1].status, Status::Unknown);
  EXPECT_EQ(items[2].status, Status::NotRecorded);
  EXPECT_EQ(items[3].status, Status::NotRecorded);
  EXPECT_FALSE(has_mismatch(items));
  EXPECT_NE(check_lines(items)[0].find("not recorded"), std::string::npos);
}

TEST(Check, ProbesAFixtureRoot) {
  const NodeFacts n = probe_node_facts(RAILKIT_TOPO_FIXTURES "/dgx-h100", std::string("2.28"));
  EXPECT_EQ(n.fingerprint.size(), 16u) << n.fingerprint_error;
  EXPECT_EQ(n.nic_models, std::vector<std::string>{"ConnectX-7"});
  EXPECT_FALSE(n.gpu_models.empty());
  EXPECT_EQ(n.nccl_version, "2.28");
  EXPECT_THROW(probe_node_facts(RAILKIT_TOPO_FIXTURES "/dgx-h100", std::string("two")), UsageError);
  const NodeFacts other = probe_node_facts(RAILKIT_TOPO_FIXTURES "/pcie-2socket", std::nullopt);
  EXPECT_NE(other.fingerprint, n.fingerprint);
  const NodeFacts missing = probe_node_facts(RAILKIT_TOPO_FIXTURES "/does-not-exist", std::nullopt);
  EXPECT_TRUE(missing.fingerprint.empty());
  EXPECT_FALSE(missing.fingerprint_error.empty());
}

}  // namespace
}  // namespace railkit::profiles
