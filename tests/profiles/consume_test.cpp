// profiles/consume.hpp: quoting, env lines, exports and the summary.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

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

TEST(Export, AnEmptyExportSaysWhy) {
  // Each format carries something for sample(): settings.env has NCCL_* keys, decisions tuner rules.
  for (const auto f : {ExportFormat::K8sConfigMap, ExportFormat::K8sEnv, ExportFormat::Slurm, ExportFormat::NcclConf,
                       ExportFormat::NcclTunerCsv})
    EXPECT_EQ(export_profile(sample(), f).empty, "") << static_cast<int>(f);
  // No decision chooses an Open MPI algorithm: the rules would change nothing.
  EXPECT_EQ(export_profile(sample(), ExportFormat::OmpiRules).empty,
            "no decision chooses an Open MPI algorithm (OMPI_MCA_coll_tuned_<coll>_algorithm other than 0); every rule "
            "would keep Open MPI's own choice");
  ProfileDocument p = sample();
  p.decisions[0].env = {{"OMPI_MCA_coll_tuned_allreduce_algorithm", "0"}};
  EXPECT_NE(export_profile(p, ExportFormat::OmpiRules).empty, "");
  p.decisions[0].env = {{"OMPI_MCA_coll_tuned_allreduce_algorithm", "4"}};
  EXPECT_EQ(export_profile(p, ExportFormat::OmpiRules).empty, "");

  p = sample();
  p.env = {{"OMPI_MCA_coll_tuned_use_dynamic_rules", "1"}};
  EXPECT_EQ(export_profile(p, ExportFormat::NcclConf).empty, "settings.env has no NCCL_* variable; nccl.conf would hold none");
  EXPECT_EQ(export_profile(p, ExportFormat::Slurm).empty, "");
  p.env.clear();
  EXPECT_EQ(export_profile(p, ExportFormat::NcclConf).empty, "settings.env is empty; nccl.conf would hold no variable");
  for (const auto f : {ExportFormat::K8sConfigMap, ExportFormat::K8sEnv, ExportFormat::Slurm})
    EXPECT_EQ(export_profile(p, f).empty,
              "settings.env is empty (the profile's settings are per-size decisions: export them with --format "
              "nccl-tuner-csv or ompi-rules)")
        << static_cast<int>(f);
  p.decisions.clear();
  EXPECT_EQ(export_profile(p, ExportFormat::Slurm).empty, "settings.env is empty");
  EXPECT_EQ(export_profile(p, ExportFormat::NcclTunerCsv).empty,
            "no decision sets NCCL_ALGO or NCCL_PROTO in a way the tuner can use (one algorithm and one protocol for "
            "broadcast, reduce, all_gather, reduce_scatter or all_reduce); the file would hold no rule");
  EXPECT_TRUE(export_profile(p, ExportFormat::NcclTunerCsv).warnings.empty());
}

/// The cells of the table line of `text` that starts with `first` after the line `section`
/// (columns are two or more spaces apart).
std::vector<std::string> cells(const std::string& text, const std::string& section, const std::string& first) {
  std::size_t at = text.find("\n" + section + "\n");
  if (at == std::string::npos) return {"(no section " + section + ")"};
  at = text.find("\n  " + first, at);
  if (at == std::string::npos) return {"(no line " + first + ")"};
  const std::string line = text.substr(at + 3, text.find('\n', at + 1) - at - 3);
  std::vector<std::string> r;
  std::size_t i = 0;
  while (i < line.size()) {
    std::size_t end = line.find("  ", i);
    if (end == std::string::npos) end = line.size();
    r.push_back(line.substr(i, end - i));
    i = line.find_first_not_of(' ', end);
    if (i == std::string::npos) break;
  }
  return r;
}

using Cells = std::vector<std::string>;

TEST(Show, ValidFixture) {
  const ProfileDocument p = load_profile(RAILKIT_PROFILE_FIXTURES "/valid.json");
  const Rendered r = show_profile(p);
  const std::string& s = r.text;
  for (const char* part : {"profile fixture-two-nodes", "fingerprint  fixture-fingerprint (4 facts recorded)",
                           "settings.env (3)", "priority 3: roce_rp.rpg_time_reset=100", "decisions (2)",
                           "allreduce_algorithm=4", "expectations (1)", "validated     yes, at 2000-01-01T00:00:00Z",
                           "A/B pairs     3 (max regression 2%)", "evidence rows (1)", "baseline GB/s (geo. mean)"})
    EXPECT_NE(s.find(part), std::string::npos) << part << "\n" << s;
  EXPECT_EQ(cells(s, "evidence rows (1)", "all_reduce"), (Cells{"all_reduce", "64 KiB", "3", "1.00", "2.00", "2.000 [1.500, 2.500]"}));
  // decisions[1] (64 KiB..1 MiB) has the row; decisions[0] (0..<64 KiB) has none and shows its own numbers.
  EXPECT_EQ(cells(s, "decisions (2)", "all_reduce  64 KiB"),
            (Cells{"all_reduce", "64 KiB..1 MiB", "allreduce_algorithm=4", "1.00", "2.00", "2.000 [1.500, 2.500]", "yes",
                   "OMPI_MCA_coll_tuned_allreduce_algorithm=4"}));
  EXPECT_EQ(cells(s, "decisions (2)", "all_reduce  0 B"),
            (Cells{"all_reduce", "0 B..<64 KiB", "baseline", "1.00", "1.00", "1.000 [0.900, 1.100]", "no", "(defaults)"}));
  EXPECT_EQ(cells(s, "expectations (1)", "all_reduce"), (Cells{"all_reduce", "1 MiB", "2.00", "10%", ">= 1.80", "settings.env"}));
  EXPECT_TRUE(r.warnings.empty()) << ::testing::PrintToString(r.warnings);
}

/// A profile like the one `railkit profile show` printed "baseline 0.89 / 0.89" beside "ratio 1.445"
/// for: a decision that kept the baseline, with its own busbw, and the A/B row of the candidate.
ProfileDocument kept_baseline() {
  ProfileDocument p = sample();
  p.decisions.clear();
  p.expectations.clear();
  ProfileDecision d;
  d.coll = "all_gather";
  d.min_bytes = 4096;
  d.max_bytes = 16383;
  d.config = "baseline";
  d.busbw_GBps = d.baseline_busbw_GBps = 0.89;
  d.ratio = 1.445;
  d.ratio_lo = 0.9;
  d.ratio_hi = 2.1;
  p.decisions.push_back(d);
  // Pair ratios 2 and 1: geometric mean sqrt(2); baseline geo. mean 1, tuned sqrt(2).
  p.evidence.rows.push_back({"all_gather", 4096, {0.5, 2.0}, {1.0, 2.0}, std::sqrt(2.0), 0.9, 2.1});
  p.expectations.push_back({"all_gather", 4096, 0.89, 0.19233557030909432});
  return p;
}

TEST(Show, BaselineTunedAndRatioComeFromTheSameEvidenceRow) {
  const Rendered r = show_profile(kept_baseline());
  EXPECT_EQ(cells(r.text, "decisions (1)", "all_gather"),
            (Cells{"all_gather", "4 KiB..<16 KiB", "baseline", "1.00", "1.41", "1.414 [0.900, 2.100]", "no", "(defaults)"}))
      << r.text;
  EXPECT_EQ(cells(r.text, "evidence rows (1)", "all_gather"),
            (Cells{"all_gather", "4 KiB", "2", "1.00", "1.41", "1.414 [0.900, 2.100]"}));
  EXPECT_EQ(r.text.find("0.890  0.890"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("its tuned column is the candidate measured against it, not taken"), std::string::npos);
  EXPECT_EQ(r.warnings, (std::vector<std::string>{"decisions[0] (all_gather 4 KiB..<16 KiB): its ratio 1.445 is not its "
                                                  "evidence row's (1.414); show prints the row's"}));
  // Tolerances rounded, sizes in binary units.
  EXPECT_EQ(cells(r.text, "expectations (1)", "all_gather"), (Cells{"all_gather", "4 KiB", "0.890", "19.2%", ">= 0.719", "settings.env"}));
}

TEST(Show, ARatioItsNumbersDoNotGiveIsWarnedAndNotPrinted) {
  ProfileDocument p = kept_baseline();
  p.decisions[0].ratio = std::sqrt(2.0);
  p.evidence.rows[0].ratio = 1.8;
  p.evidence.rows[0].ratio_hi = 2.1;
  Rendered r = show_profile(p);
  EXPECT_EQ(cells(r.text, "evidence rows (1)", "all_gather"),
            (Cells{"all_gather", "4 KiB", "2", "1.00", "1.41", "1.414 [0.900, 2.100]"}));
  EXPECT_EQ(r.warnings, (std::vector<std::string>{
                            "decisions[0] (all_gather 4 KiB..<16 KiB): its ratio 1.414 is not its evidence row's "
                            "(1.800); show prints the row's",
                            "evidence.rows[0] (all_gather 4 KiB): the stored ratio 1.800 is not what its pairs give "
                            "(1.414); show prints 1.414"}));
  // Without a row, a decision's ratio must be its busbw / baseline_busbw.
  p.evidence.rows.clear();
  r = show_profile(p);
  EXPECT_EQ(cells(r.text, "decisions (1)", "all_gather"),
            (Cells{"all_gather", "4 KiB..<16 KiB", "baseline", "0.890", "0.890", "1.000 (no interval)", "no", "(defaults)"}));
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("decisions[0] (all_gather 4 KiB..<16 KiB): its ratio 1.414 is not busbw / baseline_busbw (1.000)"),
            std::string::npos)
      << r.warnings[0];
}

TEST(Show, ByteRanges) {
  ProfileDocument p = sample();
  p.decisions[2].max_bytes = std::numeric_limits<std::uint64_t>::max();
  p.decisions[3].min_bytes = p.decisions[3].max_bytes = 8;
  const std::string s = show_profile(p).text;
  EXPECT_EQ(cells(s, "decisions (4)", "all_reduce  0 B")[1], "0 B..<64 KiB") << s;
  EXPECT_EQ(cells(s, "decisions (4)", "all_reduce  64 KiB")[1], "64 KiB..<1 MiB");
  EXPECT_EQ(cells(s, "decisions (4)", "all_reduce  >= 1 MiB")[1], ">= 1 MiB");
  EXPECT_EQ(cells(s, "decisions (4)", "alltoall")[1], "8 B");
}

TEST(Show, ASimulatedProfileSaysSoAndShowsItsSwitchAdvice) {
  ProfileDocument p = sample();
  EXPECT_EQ(show_profile(p).text.find("SIMULATED"), std::string::npos);
  EXPECT_EQ(show_profile(p).text.find("settings.switch_ecn"), std::string::npos);
  p.cluster.backend = "sim";
  p.switch_ecn = {{"switch.ecn.kmin_bytes", "400000"}, {"switch.ecn.kmax_bytes", "1600000"}, {"switch.ecn.pmax", "0.2"}};
  const std::string s = show_profile(p).text;
  EXPECT_NE(s.find("\nSIMULATED: every figure of this profile comes from railkit-bench --backend sim"), std::string::npos) << s;
  EXPECT_NE(s.find("settings.switch_ecn (3): advice for the switches' RoCE queues; railkit never applies it\n"
                   "  switch.ecn.kmax_bytes=1600000\n  switch.ecn.kmin_bytes=400000\n  switch.ecn.pmax=0.2\n"),
            std::string::npos)
      << s;
  // Exports carry the environment only: switch settings are not a job's to set.
  for (const auto f : {ExportFormat::Slurm, ExportFormat::NcclConf})
    EXPECT_EQ(export_profile(p, f).text.find("switch.ecn"), std::string::npos);
}

TEST(Show, SaysWhetherCheckCanNameFacts) {
  ProfileDocument p = sample();
  p.cluster.fingerprint = "0123456789abcdef";
  EXPECT_NE(show_profile(p).text.find("fingerprint  0123456789abcdef (hash only: `profile check` cannot name the facts "
                                      "that differ)"),
            std::string::npos);
  p.cluster.fingerprint_facts = {{"gpu.count", "8"}, {"nic.count", "8"}};
  EXPECT_NE(show_profile(p).text.find("fingerprint  0123456789abcdef (2 facts recorded)"), std::string::npos);
}

}  // namespace
}  // namespace railkit::profiles
