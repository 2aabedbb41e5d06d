// profiles/consume.hpp: quoting, env lines, exports and the summary.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/profile.hpp"
#include "profiles/consume.hpp"

namespace railkit::profiles {
namespace {

ProfileDocument sample() {
  ProfileDocument p;
  p.name = "Two Nodes / H100";
  p.created = "2000-01-01T00:00:00Z";
  p.cluster.nodes = 2;
  p.cluster.ranks = 16;
  p.cluster.backend = "nccl";
  p.env = {{"NCCL_IB_TC", "106"}, {"NCCL_SOCKET_IFNAME", "eth0"}, {"OMPI_MCA_coll_tuned_use_dynamic_rules", "1"}};
  ProfileDecision d;
  d.coll = "all_reduce";
  d.min_bytes = 0;
  d.max_bytes = 65535;
  d.env = {{"NCCL_ALGO", "Tree"}, {"NCCL_PROTO", "LL"}};
  d.config = "algo=Tree\nproto=LL";
  p.decisions.push_back(d);
  d.min_bytes = 65536;
  d.max_bytes = 1048575;
  d.env = {{"NCCL_ALGO", "allreduce:ring;broadcast:tree"}, {"NCCL_PROTO", "Simple"}, {"NCCL_MAX_NCHANNELS", "16"}};
  d.config = "ring";
  p.decisions.push_back(d);
  d.min_bytes = 1048576;
  d.max_bytes = 1 << 30;
  d.env = {{"NCCL_ALGO", "Ring,Tree"}};
  p.decisions.push_back(d);
  d.coll = "alltoall";
  d.env = {{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "Simple"}};
  p.decisions.push_back(d);
  return p;
}

TEST(Quote, Posix) {
  EXPECT_EQ(posix_quote("eth0"), "'eth0'");
  EXPECT_EQ(posix_quote(""), "''");
  EXPECT_EQ(posix_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(posix_quote("$(touch x)`y`\\\n"), "'$(touch x)`y`\\\n'");
}

TEST(Quote, Fish) {
  EXPECT_EQ(fish_quote("eth0"), "'eth0'");
  EXPECT_EQ(fish_quote("it's"), "'it\\'s'");
  EXPECT_EQ(fish_quote("a\\"), "'a\\\\'");
  EXPECT_EQ(fish_quote("$(x)\n"), "'$(x)\n'");
}

TEST(Quote, Yaml) {
  EXPECT_EQ(yaml_quote("106", "k"), "\"106\"");
  EXPECT_EQ(yaml_quote("a\"b\\c\nd\te\x01\x7f", "k"), "\"a\\\"b\\\\c\\nd\\te\\x01\\x7f\"");
  EXPECT_EQ(yaml_quote("\xc3\xa9\xe2\x80\xa8\xf0\x9f\x98\x80", "k"), "\"\\u00e9\\u2028\\U0001f600\"");
  EXPECT_THROW(yaml_quote("\xff", "settings.env.NCCL_X"), UsageError);
  EXPECT_THROW(yaml_quote("\xc3", "k"), UsageError);          // truncated
  EXPECT_THROW(yaml_quote("\xed\xa0\x80", "k"), UsageError);  // a surrogate
  EXPECT_THROW(yaml_quote("\xc0\xaf", "k"), UsageError);      // overlong
}

TEST(Quote, Display) {
  EXPECT_EQ(display("eth0"), "eth0");
  EXPECT_EQ(display("a\nb"), "\"a\\nb\"");
}

TEST(Names, ParseAndList) {
  EXPECT_EQ(parse_shell("fish"), Shell::Fish);
  EXPECT_THROW(parse_shell("csh"), UsageError);
  EXPECT_EQ(parse_export_format("ompi-rules"), ExportFormat::OmpiRules);
  EXPECT_THROW(parse_export_format("yaml"), UsageError);
  EXPECT_EQ(shell_names().size(), 4u);
  EXPECT_EQ(export_format_names().size(), 6u);
  EXPECT_EQ(configmap_name_for("Two Nodes / H100"), "railkit-two-nodes-h100");
  EXPECT_EQ(configmap_name_for("///"), "railkit-profile");
  EXPECT_LE(configmap_name_for(std::string(200, 'a')).size(), 63u);
}

TEST(Env, BashFishDotenv) {
  const ProfileDocument p = sample();
  const Rendered b = env_lines(p, Shell::Bash);
  EXPECT_NE(b.text.find("export NCCL_IB_TC='106'\nexport NCCL_SOCKET_IFNAME='eth0'\n"), std::string::npos) << b.text;
  ASSERT_EQ(b.warnings.size(), 1u);  // the decisions
  EXPECT_NE(b.warnings[0].find("4 decision(s)"), std::string::npos);
  EXPECT_NE(env_lines(p, Shell::Fish).text.find("set -gx NCCL_IB_TC '106'\n"), std::string::npos);
  EXPECT_NE(env_lines(p, Shell::Dotenv).text.find("\nNCCL_IB_TC='106'\n"), std::string::npos);
  ProfileDocument q = sample();
  q.env["NCCL_SOCKET_IFNAME"] = "it's";
  const Rendered d = env_lines(q, Shell::Dotenv);
  ASSERT_EQ(d.warnings.size(), 2u);
  EXPECT_NE(d.warnings[0].find("settings.env.NCCL_SOCKET_IFNAME"), std::string::npos);
}

TEST(Env, HeaderCommentIsOneLine) {
  ProfileDocument p = sample();
  p.name = "x\nexport LD_PRELOAD=/evil.so";
  const Rendered b = env_lines(p, Shell::Bash);
  EXPECT_EQ(b.text.find("\nexport LD_PRELOAD"), std::string::npos) << b.text;
}

TEST(Export, NcclConf) {
  ProfileDocument p = sample();
  const Rendered r = export_profile(p, ExportFormat::NcclConf);
  EXPECT_NE(r.text.find("\nNCCL_IB_TC=106\nNCCL_SOCKET_IFNAME=eth0\n"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("OMPI_MCA"), std::string::npos);
  ASSERT_GE(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("OMPI_MCA_coll_tuned_use_dynamic_rules"), std::string::npos);
  p.env["NCCL_SOCKET_IFNAME"] = "eth0\nNCCL_DEBUG=TRACE";
  try {
    export_profile(p, ExportFormat::NcclConf);
    FAIL() << "a line break was exported";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("settings.env.NCCL_SOCKET_IFNAME"), std::string::npos) << e.what();
  }
  p.env["NCCL_SOCKET_IFNAME"] = std::string(1024, 'a');
  EXPECT_THROW(export_profile(p, ExportFormat::NcclConf), UsageError);
  p.env["NCCL_SOCKET_IFNAME"] = std::string(1023, 'a');
  EXPECT_NO_THROW(export_profile(p, ExportFormat::NcclConf));
}

TEST(Export, TunerCsv) {
  const Rendered r = export_profile(sample(), ExportFormat::NcclTunerCsv);
  EXPECT_NE(r.text.find("\nallreduce,0,65535,tree,ll,-1,2,16\nallreduce,65536,1048575,ring,simple,16,2,16\n"),
            std::string::npos)
      << r.text;
  EXPECT_EQ(r.text.find("1073741824"), std::string::npos);  // "Ring,Tree" is not one algorithm
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_NE(r.warnings[0].find("decisions[2]"), std::string::npos);
  EXPECT_NE(r.warnings[1].find("alltoall"), std::string::npos);
  ProfileDocument p = sample();
  p.cluster.nodes = 0;
  p.cluster.ranks = 0;
  EXPECT_NE(export_profile(p, ExportFormat::NcclTunerCsv).text.find("\nallreduce,0,65535,tree,ll,-1,-1,-1\n"), std::string::npos);
}

TEST(Export, OmpiRulesKeepsConfigOnOneLine) {
  const Rendered r = export_profile(sample(), ExportFormat::OmpiRules);
  EXPECT_EQ(r.text.find("\nproto=LL"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("# number of collectives"), std::string::npos);
}

TEST(Export, Kubernetes) {
  ProfileDocument p = sample();
  p.env["NCCL_SOCKET_IFNAME"] = "a\"b\nc";
  const Rendered cm = export_profile(p, ExportFormat::K8sConfigMap);
  EXPECT_NE(cm.text.find("kind: ConfigMap\n"), std::string::npos);
  EXPECT_NE(cm.text.find("  name: railkit-two-nodes-h100\n"), std::string::npos);
  EXPECT_NE(cm.text.find("#   envFrom:\n#     - configMapRef:\n#         name: railkit-two-nodes-h100\n"), std::string::npos);
  EXPECT_NE(cm.text.find("  NCCL_SOCKET_IFNAME: \"a\\\"b\\nc\"\n"), std::string::npos) << cm.text;
  EXPECT_THROW(export_profile(p, ExportFormat::K8sConfigMap, {"Bad_Name"}), UsageError);
  EXPECT_NE(export_profile(p, ExportFormat::K8sConfigMap, {"my-env"}).text.find("  name: my-env\n"), std::string::npos);
  const Rendered env = export_profile(p, ExportFormat::K8sEnv);
  EXPECT_NE(env.text.find("env:\n  - name: NCCL_IB_TC\n    value: \"106\"\n"), std::string::npos) << env.text;
  p.env.clear();
  EXPECT_NE(export_profile(p, ExportFormat::K8sConfigMap).text.find("data: {}\n"), std::string::npos);
}

TEST(Export, Slurm) {
  const Rendered r = export_profile(sample(), ExportFormat::Slurm);
  EXPECT_EQ(r.text.rfind("# railkit profile", 0), 0u);
  EXPECT_NE(r.text.find("export NCCL_IB_TC='106'\n"), std::string::npos);
}

TEST(Show, ValidFixture) {
  const ProfileDocument p = load_profile(RAILKIT_PROFILE_FIXTURES "/valid.json");
  const std::string s = show_profile(p);
  for (const char* part : {"profile fixture-two-nodes", "fingerprint  fixture-fingerprint", "settings.env (3)",
                           "priority 3: roce_rp.rpg_time_reset=100", "decisions (2)", "allreduce_algorithm=4",
                           "expectations (1)", "validated     yes, at 2000-01-01T00:00:00Z", "evidence rows (1)",
                           "baseline GB/s (median)", "all_reduce  65536  3      1.00                    2.00"})
    EXPECT_NE(s.find(part), std::string::npos) << part << "\n" << s;
}

}  // namespace
}  // namespace railkit::profiles
