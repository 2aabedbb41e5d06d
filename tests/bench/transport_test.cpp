// The pure parts of observed.ranks[].cpus / .transport: CPU lists, who launched, the PMI text,
// which BTL reaches which class of peer, the warnings and the summary (bench/transport.hpp).
#include <gtest/gtest.h>

#include "bench/transport.hpp"

using namespace railkit::bench;

namespace {

RankTransport ob1(std::map<std::string, std::vector<int>> peers, std::vector<int> seen_remote = {}) {
  RankTransport t;
  t.pml = "ob1";
  t.btl_peers = std::move(peers);
  t.seen_remote = std::move(seen_remote);
  t.pmi = "pmix 4.2.2";
  t.launcher = "mpirun";
  t.source = "Open MPI 4.1.4 internals";
  return t;
}

ProcessFacts proc(int rank, const std::string& host, std::vector<int> cpus, std::optional<RankTransport> t = std::nullopt) {
  ProcessFacts p;
  p.rank = rank;
  p.host = host;
  p.cpus = std::move(cpus);
  p.transport = std::move(t);
  return p;
}

}  // namespace

TEST(CpuList, FormatsRangesSortedWithoutDuplicates) {
  EXPECT_EQ(format_cpu_list(std::vector<int>{}), "");
  EXPECT_EQ(format_cpu_list(std::vector<int>{0}), "0");
  EXPECT_EQ(format_cpu_list(std::vector<int>{0, 1}), "0-1");
  EXPECT_EQ(format_cpu_list(std::vector<int>{11, 10, 3, 2, 1, 0, 8, 8}), "0-3,8,10-11");
  EXPECT_EQ(format_cpu_list(std::vector<int>{0, 2, 4}), "0,2,4");
}

TEST(CpuList, ParsesWhatItFormatsAndRefusesTheRest) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list(""), std::vector<int>{});
  EXPECT_EQ(parse_cpu_list("5\n"), std::vector<int>{5});
  EXPECT_FALSE(parse_cpu_list("3-1"));
  EXPECT_FALSE(parse_cpu_list("a"));
  EXPECT_FALSE(parse_cpu_list("1,,2"));
  EXPECT_FALSE(parse_cpu_list("-1"));
}

TEST(CpuList, AffinityOfThisThreadIsNotEmpty) { EXPECT_FALSE(cpu_affinity().empty()); }

TEST(Launcher, MpirunSrunOrNoneFromTheEnvironment) {
  EXPECT_EQ(infer_launcher({{"OMPI_COMM_WORLD_SIZE", "2"}, {"PMIX_VERSION", "4.2.2"}}).launcher, "mpirun");
  // mpirun inside an allocation inherits SLURM_*: still mpirun
  EXPECT_EQ(infer_launcher({{"OMPI_COMM_WORLD_SIZE", "2"}, {"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "0"}}).launcher,
            "mpirun");
  EXPECT_EQ(infer_launcher({{"MPI_LOCALNRANKS", "2"}, {"PMI_FD", "5"}}).launcher, "mpirun");
  const LauncherGuess s = infer_launcher({{"SLURM_STEP_NUM_TASKS", "2"}, {"SLURM_MPI_TYPE", "pmix"}, {"PMIX_VERSION", "4.2.2"}});
  EXPECT_EQ(s.launcher, "srun");
  EXPECT_EQ(s.slurm_mpi_type, "pmix");
  // a batch script alone is no step
  EXPECT_EQ(infer_launcher({{"SLURM_JOB_ID", "7"}, {"SLURM_PROCID", "0"}}).launcher, "none");
  EXPECT_EQ(infer_launcher({}).launcher, "none");
}

TEST(Launcher, PmiTextFromOpenMpiOrTheEnvironment) {
  const LauncherGuess mpirun = infer_launcher({{"OMPI_COMM_WORLD_SIZE", "2"}, {"PMIX_VERSION", "4.2.1"}});
  EXPECT_EQ(pmi_text(mpirun, "ext3x OpenPMIx 4.2.2rc2 (PMIx Standard: 4.2, Stable ABI: 0.0)"), "pmix 4.2.2rc2");
  EXPECT_EQ(pmi_text(mpirun, ""), "pmix 4.2.1");  // the server's version when Open MPI does not say
  EXPECT_EQ(pmi_text(mpirun, "isolated"), "none (isolated)");
  const LauncherGuess srun = infer_launcher({{"SLURM_STEP_NUM_TASKS", "2"}, {"SLURM_MPI_TYPE", "pmix"}});
  EXPECT_EQ(pmi_text(srun, "ext3x OpenPMIx 4.2.2rc2 (x)"), "pmix 4.2.2rc2 (SLURM_MPI_TYPE=pmix)");
  const LauncherGuess pmi2 = infer_launcher({{"SLURM_STEP_NUM_TASKS", "2"}, {"PMI_FD", "4"}});
  EXPECT_EQ(pmi_text(pmi2, ""), "pmi2 (SLURM_MPI_TYPE=unset)");
  EXPECT_EQ(pmi_text(infer_launcher({}), "ext3x OpenPMIx 4.2.2rc2 (x)"), "singleton");
  EXPECT_EQ(pmi_text(infer_launcher({{"OMPI_COMM_WORLD_SIZE", "2"}}), ""), "unknown");
}

TEST(Transport, JsonRoundTrip) {
  RankTransport t = ob1({{"self", {0}}, {"vader", {1, 2, 3}}, {"tcp", {4}}}, {5});
  t.mtl = "";
  const RankTransport back = rank_transport_from_json(to_json(t));
  EXPECT_EQ(back.btl_peers, t.btl_peers);
  EXPECT_EQ(back.seen_remote, t.seen_remote);
  EXPECT_EQ(back.pml, "ob1");
  EXPECT_EQ(to_json(t)["btl_peers"]["vader"], "1-3");
  EXPECT_TRUE(to_json(t)["mtl"].is_null());
}

TEST(Transport, ProbesEveryPeerOfTheNodeAndOnePerOtherNode) {
  const std::vector<std::string> hosts = {"a", "a", "b", "b", "c", "a"};
  EXPECT_EQ(peers_to_probe(1, hosts), (std::vector<int>{0, 1, 2, 4, 5}));
  EXPECT_EQ(peers_to_probe(3, hosts), (std::vector<int>{0, 2, 3, 4}));
}

TEST(Transport, PeerClassesNameTheBtlsPerClass) {
  const std::vector<std::string> hosts = {"a", "a", "b"};
  const RankTransport t = ob1({{"self", {0}}, {"vader", {1}}, {"tcp", {2}}});
  EXPECT_EQ(peer_class_transport(t, 0, hosts, true), "vader");
  EXPECT_EQ(peer_class_transport(t, 0, hosts, false), "tcp");
  EXPECT_TRUE(peer_class_transport(t, 0, {"a"}, true).is_null());  // no peer of the class
  EXPECT_EQ(peer_class_transport(ob1({{"self", {0}}, {"vader", {1}}, {"tcp", {3}}}), 0, {"a", "a", "a", "a"}, true),
            "tcp,vader");
  EXPECT_EQ(peer_class_transport(ob1({{"self", {0}}}), 0, hosts, true), "unknown");  // peer not probed
  RankTransport cm;
  cm.pml = "cm";
  cm.mtl = "ofi";
  EXPECT_EQ(peer_class_transport(cm, 0, hosts, false), "mtl:ofi");
  RankTransport ucx;
  ucx.pml = "ucx";
  EXPECT_EQ(peer_class_transport(ucx, 0, hosts, true), "ucx");
  EXPECT_EQ(peer_class_transport(RankTransport{}, 0, hosts, true), "unknown");
}

TEST(TransportWarnings, NoneForSharedMemoryAndSeparateCores) {
  const std::vector<ProcessFacts> procs = {proc(0, "a", {0}, ob1({{"self", {0}}, {"vader", {1}}, {"tcp", {2}}})),
                                           proc(1, "a", {1}, ob1({{"self", {1}}, {"vader", {0}}, {"tcp", {2}}})),
                                           proc(2, "b", {0}, ob1({{"self", {2}}, {"tcp", {0}}}))};
  EXPECT_TRUE(transport_warnings(procs).empty());
}

TEST(TransportWarnings, RanksOfANodeOverTcpAreNamedWithTheirBtl) {
  const std::vector<ProcessFacts> procs = {proc(0, "a", {0}, ob1({{"self", {0}}, {"tcp", {1, 2}}})),
                                           proc(1, "a", {1}, ob1({{"self", {1}}, {"tcp", {0, 2}}})),
                                           proc(2, "b", {0}, ob1({{"self", {2}}, {"tcp", {0}}}))};
  const std::vector<std::string> w = transport_warnings(procs);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], "host a: ranks 0-1 reach each other over tcp, not shared memory");
}

TEST(TransportWarnings, SaysWhenOpenMpiDidNotKnowTheyShareTheNode) {
  const std::vector<ProcessFacts> procs = {proc(0, "a", {0}, ob1({{"self", {0}}, {"tcp", {1}}}, {1})),
                                           proc(1, "a", {1}, ob1({{"self", {1}}, {"tcp", {0}}}, {0}))};
  const std::vector<std::string> w = transport_warnings(procs);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("the launcher did not tell it they share this node"), std::string::npos) << w[0];
}

TEST(TransportWarnings, UcxAndCmAreNotJudged) {
  RankTransport ucx;
  ucx.pml = "ucx";
  EXPECT_TRUE(transport_warnings({proc(0, "a", {0}, ucx), proc(1, "a", {1}, ucx)}).empty());
}

TEST(TransportWarnings, UnboundRanksOnceForTheirHost) {
  const std::vector<std::string> w =
      transport_warnings({proc(0, "a", {0, 1}), proc(1, "a", {0, 1}), proc(2, "a", {0, 1}), proc(3, "b", {0, 1})});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], "host a: ranks 0-2 are not bound to separate cores (each may run on CPUs 0-1, 3 ranks on 2 CPUs): "
                  "they share cores and timings may be noisy; bind them (mpirun --bind-to core, srun --cpu-bind=cores)");
}

TEST(TransportWarnings, OverlappingAndSameCoreBindings) {
  const std::vector<std::string> partial =
      transport_warnings({proc(0, "a", {0, 1}), proc(1, "a", {1, 2}), proc(2, "a", {3})});
  ASSERT_EQ(partial.size(), 1u);
  EXPECT_EQ(partial[0], "host a: ranks 0-1 share CPUs 1 (overlapping affinity): timings may be noisy");
  const std::vector<std::string> one = transport_warnings({proc(0, "a", {2}), proc(1, "a", {2})});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_NE(one[0].find("ranks 0-1 are all bound to CPU 2"), std::string::npos) << one[0];
  // a rank alone on its node, or an unknown affinity, shares nothing
  EXPECT_TRUE(transport_warnings({proc(0, "a", {0, 1}), proc(1, "b", {0, 1}), proc(2, "b", {})}).empty());
}

TEST(TransportSummary, AgreeingRanksGiveOneObject) {
  const std::vector<std::string> hosts = {"a", "a", "b"};
  const std::vector<ProcessFacts> procs = {proc(0, "a", {0}, ob1({{"self", {0}}, {"vader", {1}}, {"tcp", {2}}})),
                                           proc(1, "a", {1}, ob1({{"self", {1}}, {"vader", {0}}, {"tcp", {2}}})),
                                           proc(2, "b", {0}, ob1({{"self", {2}}, {"tcp", {0}}}))};
  const TransportSummary s = transport_summary(procs, hosts);
  EXPECT_TRUE(s.note.empty()) << s.note;
  EXPECT_EQ(s.summary, (nlohmann::json{{"pml", "ob1"}, {"intra_node", "vader"}, {"inter_node", "tcp"}, {"mtl", nullptr},
                                       {"pmi", "pmix 4.2.2"}, {"launcher", "mpirun"}}));
}

TEST(TransportSummary, DifferingRanksGiveANoteAndNoObject) {
  const std::vector<std::string> hosts = {"a", "a", "b", "b"};
  const std::vector<ProcessFacts> procs = {proc(0, "a", {0}, ob1({{"self", {0}}, {"vader", {1}}, {"tcp", {2}}})),
                                           proc(1, "a", {1}, ob1({{"self", {1}}, {"vader", {0}}, {"tcp", {2}}})),
                                           proc(2, "b", {0}, ob1({{"self", {2}}, {"tcp", {0, 3}}})),
                                           proc(3, "b", {1}, ob1({{"self", {3}}, {"tcp", {0, 2}}}))};
  const TransportSummary s = transport_summary(procs, hosts);
  EXPECT_TRUE(s.summary.is_null());
  EXPECT_EQ(s.note, "ranks differ in intra_node (tcp: ranks 2-3, vader: ranks 0-1): see observed.ranks[].transport");
  EXPECT_TRUE(transport_summary({proc(0, "a", {0})}, {"a"}).summary.is_null());  // nothing recorded
}
