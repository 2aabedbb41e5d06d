// The suite file, the nodes under test and the bench arguments every stage starts from.
#include <gtest/gtest.h>

#include <algorithm>

#include "accept/suite.hpp"
#include "core/error.hpp"
#include "test_util.hpp"

using namespace railkit::accept;
using railkit::test::usage_error_of;

namespace {

AcceptSuite parse(const char* text) { return suite_from_json(nlohmann::json::parse(text), "s.json"); }

}  // namespace

TEST(AcceptSuite, FieldsAndDefaults) {
  const AcceptSuite s = parse(R"({"schema":"railkit.accept-suite/1",
      "peer_fraction":0.5,"skip":["rail"],"statistic":"avg","colls":["all_gather"],
      "thresholds":[{"stage":"node","coll":"all_reduce","bytes":"1M","busbw_GBps":20},
                    {"coll":"all_gather","bytes":1024,"busbw_GBps":1}],
      "topo_roots":{"h:1":"/fixtures/broken"}})");
  EXPECT_FALSE(s.runs("rail"));
  EXPECT_TRUE(s.runs("pair"));
  EXPECT_EQ(s.peer_fraction, 0.5);
  EXPECT_TRUE(s.peer_fraction_set);
  EXPECT_EQ(s.statistic, "avg");
  EXPECT_EQ(s.colls, (std::vector<std::string>{"all_gather"}));
  ASSERT_EQ(s.thresholds.size(), 2u);
  EXPECT_EQ(s.thresholds[0].bytes, 1u << 20);
  EXPECT_EQ(s.thresholds[1].stage, "");
  EXPECT_EQ(s.topo_roots.at("h:1"), "/fixtures/broken");
  const AcceptSuite d = parse(R"({"schema":"railkit.accept-suite/1"})");
  EXPECT_FALSE(d.peer_fraction_set);
  EXPECT_EQ(d.peer_fraction, 0.9);
  EXPECT_EQ(d.oversubscribed_peer_fraction, 0.25);
  EXPECT_EQ(d.colls, (std::vector<std::string>{"all_reduce", "all_gather"}));
}

TEST(AcceptSuite, ErrorsNameTheField) {
  const auto bad = [](const char* text) { return usage_error_of([&] { parse(text); }); };
  EXPECT_NE(bad(R"({"schema":"x"})").find("schema"), std::string::npos);
  EXPECT_NE(bad(R"({"schema":"railkit.accept-suite/1","skip":["nope"]})").find("unknown stage 'nope'"), std::string::npos);
  EXPECT_NE(bad(R"({"schema":"railkit.accept-suite/1","peer_fraction":2})").find("peer_fraction"), std::string::npos);
  EXPECT_NE(bad(R"({"schema":"railkit.accept-suite/1","thresholds":[{"coll":"all_reduce"}]})").find("thresholds[0]"),
            std::string::npos);
  EXPECT_NE(bad(R"({"schema":"railkit.accept-suite/1","thresholds":[{"coll":"x","bytes":1,"busbw_GBps":1,"stage":"topo"}]})")
                .find("thresholds[0].stage: expected node, rail, pair or all, got 'topo'"),
            std::string::npos);
  EXPECT_NE(bad(R"({"schema":"railkit.accept-suite/1","extra":1})").find("extra: unknown field"), std::string::npos);
  EXPECT_NE(bad(R"({"schema":"railkit.accept-suite/1","rdma_fraction":0})").find("rdma_fraction"), std::string::npos);
  EXPECT_NE(bad(R"({"schema":"railkit.accept-suite/1","oversubscribed_peer_fraction":1.5})")
                .find("oversubscribed_peer_fraction: expected a number, 0 < value <= 1"),
            std::string::npos);
  EXPECT_NE(bad(R"({"schema":"railkit.accept-suite/1","rdma_duration_s":1.5})").find("rdma_duration_s"), std::string::npos);
  EXPECT_NE(bad(R"({"schema":"railkit.accept-suite/1","ib_write_bw":""})").find("ib_write_bw"), std::string::npos);
  EXPECT_NE(bad(R"({"schema":"railkit.accept-suite/1","statistic":"p99"})").find("statistic"), std::string::npos);
  EXPECT_NE(bad(R"({"schema":"railkit.accept-suite/1","colls":[]})").find("colls"), std::string::npos);
  // The first bad field in document order is the one named.
  EXPECT_NE(bad(R"({"schema":"railkit.accept-suite/1","skip":["nope"],"peer_fraction":2})").find("skip"),
            std::string::npos);
}

TEST(AcceptSuite, RdmaKeys) {
  AcceptSuite d;
  EXPECT_EQ(d.rdma_fraction, 0.9);
  EXPECT_EQ(d.rdma_duration_s, 5);
  EXPECT_TRUE(d.ib_write_bw.empty());
  const AcceptSuite s = parse(R"({"schema":"railkit.accept-suite/1",
      "rdma_fraction":0.8,"rdma_duration_s":3,"ib_write_bw":"/opt/perftest/bin/ib_write_bw"})");
  EXPECT_EQ(s.rdma_fraction, 0.8);
  EXPECT_EQ(s.rdma_duration_s, 3);
  EXPECT_EQ(s.ib_write_bw, "/opt/perftest/bin/ib_write_bw");
  EXPECT_TRUE(s.rdma_addresses.empty());
  const AcceptSuite a = parse(R"({"schema":"railkit.accept-suite/1","skip":["rdma-pair"],
      "rdma_addresses":{"gpu-node-01":"10.0.0.1","gpu-node-02":"gpu-node-02.mgmt"}})");
  EXPECT_EQ(a.rdma_addresses.at("gpu-node-01"), "10.0.0.1");
  EXPECT_EQ(a.rdma_addresses.at("gpu-node-02"), "gpu-node-02.mgmt");
  EXPECT_FALSE(a.runs("rdma-pair"));
  for (const char* bad : {R"("rdma_addresses":["10.0.0.1"])", R"("rdma_addresses":{"n":""})",
                          R"("rdma_addresses":{"n":"-x"})", R"("rdma_addresses":{"n":"a b"})",
                          R"("rdma_addresses":{"n":1})"}) {
    try {
      parse((std::string(R"({"schema":"railkit.accept-suite/1",)") + bad + "}").c_str());
      ADD_FAILURE() << bad << " was accepted";
    } catch (const railkit::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("rdma_addresses"), std::string::npos) << e.what();
    }
  }
}

TEST(AcceptSuite, LoadNamesTheFile) {
  railkit::test::TempDir dir("railkit-accept");
  EXPECT_NE(usage_error_of([&] { load_suite(dir.write("bad.json", "{")); }).find("not JSON"), std::string::npos);
  EXPECT_NE(usage_error_of([&] { load_suite(dir.path / "missing.json"); }).find("cannot read the file"),
            std::string::npos);
  EXPECT_FALSE(load_suite(dir.write("ok.json", R"({"schema":"railkit.accept-suite/1","skip":["topo"]})")).runs("topo"));
}

TEST(AcceptSuite, PairCollIsAllReduceWhenMeasured) {
  AcceptSuite s;
  EXPECT_EQ(pair_coll(s), "all_reduce");
  s.colls = {"all_gather", "broadcast"};
  EXPECT_EQ(pair_coll(s), "all_gather");
}

TEST(AcceptNodes, EmulatedAndHostfile) {
  const auto n = emulated_nodes("h", 8, 2);
  ASSERT_EQ(n.size(), 4u);
  EXPECT_EQ(n[2].name, "h:2");
  EXPECT_EQ(n[2].ranks, (std::vector<int>{4, 5}));
  EXPECT_EQ(node_names(n), (std::vector<std::string>{"h:0", "h:1", "h:2", "h:3"}));
  EXPECT_THROW(emulated_nodes("h", 7, 2), railkit::UsageError);
  const auto hf = hostfile_nodes("# rack 1\nnode-a slots=8\n\nnode-b\t# b\nnode-a\n", 4);
  ASSERT_EQ(hf.size(), 2u);
  EXPECT_EQ(hf[1].name, "node-b");
  EXPECT_EQ(hf[1].ranks, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_THROW(hostfile_nodes("# nothing\n", 1), railkit::UsageError);
  EXPECT_THROW(hostfile_nodes("a\n", 0), railkit::UsageError);
}

TEST(AcceptBenchArgs, UserOverridesDefaultsAndCannotSetWhatAcceptSets) {
  const auto a = merge_bench_args({"-b", "64K", "-n5", "--inject-delay-us", "5:3000"}, false);
  const auto has = [&](const std::string& s) { return std::find(a.begin(), a.end(), s) != a.end(); };
  EXPECT_TRUE(has("64K"));
  EXPECT_FALSE(has("16M"));  // default -b dropped
  EXPECT_TRUE(has("-e"));    // default -e kept
  EXPECT_FALSE(has("-n"));   // -n5 overrides -n
  EXPECT_EQ(merge_bench_args({}, true),
            (std::vector<std::string>{"-b", "4K", "-e", "16K", "-f", "4", "-n", "10", "-w", "3", "--placement", "out"}));
  EXPECT_EQ(merge_bench_args({"--iters=7", "--placement=in"}, true),
            (std::vector<std::string>{"-b", "4K", "-e", "16K", "-f", "4", "-w", "3", "--iters=7", "--placement=in"}));
  EXPECT_NE(usage_error_of([] { merge_bench_args({"--split", "rail"}, true); })
                .find("--bench-args: --split is set by railkit accept (each stage sets its own split)"),
            std::string::npos);
  EXPECT_NE(usage_error_of([] { merge_bench_args({"-Jx.json"}, true); }).find("--output_file"), std::string::npos);
  EXPECT_NE(usage_error_of([] { merge_bench_args({"--ranks-per-node", "2"}, false); }).find("--ranks-per-node"),
            std::string::npos);
  EXPECT_NE(usage_error_of([] { merge_bench_args({"-N", "2"}, false); }).find("--run_cycles"), std::string::npos);
  EXPECT_NE(usage_error_of([] { merge_bench_args({"--label=x"}, false); }).find("--label"), std::string::npos);
}

TEST(AcceptBenchArgs, StageArgsStartWithTheSuitesCollectives) {
  const auto a = stage_bench_args({"-n", "3"}, true, {"all_reduce", "all_gather"});
  ASSERT_GE(a.size(), 2u);
  EXPECT_EQ(a[0], "--coll");
  EXPECT_EQ(a[1], "all_reduce,all_gather");
  EXPECT_EQ(a.back(), "3");
  // The user's --coll wins: no second one.
  const auto u = stage_bench_args({"--coll", "broadcast"}, true, {"all_reduce"});
  EXPECT_EQ(std::count(u.begin(), u.end(), "--coll"), 1);
  EXPECT_EQ(u.back(), "broadcast");
}

TEST(AcceptSuite, MistypedFieldsAreUsageErrorsNamingTheKey) {
  // Issue 14: exit 6 naming s.json and the key, never a raw type_error or a silent wrap.
  EXPECT_NE(usage_error_of([] { parse(R"({"schema":"railkit.accept-suite/1","ib_write_bw":5})"); }).find("ib_write_bw"),
            std::string::npos);
  const std::string wrap = usage_error_of([] { parse(R"({"schema":"railkit.accept-suite/1","rdma_duration_s":4294967297})"); });
  EXPECT_EQ(wrap.rfind("s.json", 0), 0u) << wrap;
  EXPECT_NE(wrap.find("rdma_duration_s"), std::string::npos) << wrap;
  EXPECT_NE(usage_error_of([] { parse(R"({"schema":"railkit.accept-suite/1","statistic":["p50"]})"); }).find("statistic"),
            std::string::npos);
}
