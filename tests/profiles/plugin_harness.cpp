// Loads libnccl-tuner-railkit.so with dlopen and calls it as NCCL 2.28.9 does (src/init.cc,
// src/enqueue.cc getAlgoInfo): init once per communicator, then getCollInfo with a contiguous
// float[7][3] cost table cast to float** in which NCCL marked disabled choices -1 and nChannels 0,
// then finalize. The v4 symbol is driven the way NCCL 2.28's v4 adapter drives it.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "profiles/plugin/nccl_tuner_abi.h"

namespace {

namespace abi = railkit::nccl_abi;

const std::string kFixtures = RAILKIT_PLUGIN_FIXTURES;

struct Logged {
  abi::LogLevel level;
  unsigned long flags;
  std::string text;
};
std::vector<Logged> g_log;  // what the plugin logged through the logger NCCL passes

extern "C" void record_log(abi::LogLevel level, unsigned long flags, const char* /*file*/, int /*line*/,
                           const char* fmt, ...) {
  char buf[8192];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  g_log.push_back({level, flags, buf});
}

std::vector<std::string> lines_at(abi::LogLevel level) {
  std::vector<std::string> out;
  for (const auto& l : g_log)
    if (l.level == level) out.push_back(l.text);
  return out;
}

/// The INFO lines NCCL_DEBUG=INFO shows by default (flags include NCCL_INIT).
std::vector<std::string> summary_lines() {
  std::vector<std::string> out;
  for (const auto& l : g_log)
    if (l.level == abi::kLogInfo && (l.flags & abi::kSubsysInit)) out.push_back(l.text);
  return out;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// The library, opened once for all tests (NCCL keeps it open while communicators live).
struct Library {
  void* handle = nullptr;
  const abi::TunerV5* v5 = nullptr;
  const abi::TunerV4* v4 = nullptr;
  Library() {
    handle = dlopen(RAILKIT_TUNER_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!handle) return;
    v5 = static_cast<const abi::TunerV5*>(dlsym(handle, "ncclTunerPlugin_v5"));
    v4 = static_cast<const abi::TunerV4*>(dlsym(handle, "ncclTunerPlugin_v4"));
  }
};
const Library& lib() {
  static const Library l;
  return l;
}

/// A cost table as NCCL builds it: every entry a positive time, except the disabled ones (-1).
struct CostTable {
  float t[abi::kNumAlgorithms][abi::kNumProtocols];
  CostTable() {
    for (int a = 0; a < abi::kNumAlgorithms; ++a)
      for (int p = 0; p < abi::kNumProtocols; ++p) t[a][p] = 100.0f + 10.0f * static_cast<float>(a) + static_cast<float>(p);
    // No CollNet here; NVLS only with Simple; PAT disabled.
    for (int p = 0; p < abi::kNumProtocols; ++p) t[abi::kAlgoCollNetDirect][p] = t[abi::kAlgoCollNetChain][p] = -1.0f;
    t[abi::kAlgoNvls][abi::kProtoLL] = t[abi::kAlgoNvls][abi::kProtoLL128] = -1.0f;
    t[abi::kAlgoNvlsTree][abi::kProtoLL] = t[abi::kAlgoNvlsTree][abi::kProtoLL128] = -1.0f;
    for (int p = 0; p < abi::kNumProtocols; ++p) t[abi::kAlgoPat][p] = -1.0f;
  }
  float** nccl() { return reinterpret_cast<float**>(t); }
  /// The entries set to 0.0, as (algo, proto) pairs.
  std::vector<std::pair<int, int>> zeros() const {
    std::vector<std::pair<int, int>> z;
    for (int a = 0; a < abi::kNumAlgorithms; ++a)
      for (int p = 0; p < abi::kNumProtocols; ++p)
        if (t[a][p] == 0.0f) z.emplace_back(a, p);
    return z;
  }
  /// Every entry other than (a, p) as a fresh table has it.
  bool untouched_except(int a0, int p0) const {
    const CostTable fresh;
    for (int a = 0; a < abi::kNumAlgorithms; ++a)
      for (int p = 0; p < abi::kNumProtocols; ++p)
        if ((a != a0 || p != p0) && t[a][p] != fresh.t[a][p]) return false;
    return true;
  }
};

using Pick = std::pair<int, int>;
const std::vector<Pick> kNone{};

/// One communicator's tuner, through the v5 or the v4 symbol.
class Comm {
 public:
  Comm(bool v4, std::size_t nRanks, std::size_t nNodes, abi::Logger log = record_log) : v4_(v4) {
    abi::NvlDomainInfoV5 nvl{static_cast<int>(nNodes), 8, 8};
    abi::TunerConstantsV5 constants{};
    rc_ = v4_ ? lib().v4->init(nRanks, nNodes, log, &ctx_)
              : lib().v5->init(&ctx_, 0x1234abcdULL, nRanks, nNodes, log, &nvl, &constants);
  }
  ~Comm() { EXPECT_EQ(v4_ ? lib().v4->destroy(ctx_) : lib().v5->finalize(ctx_), abi::kSuccess); }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  abi::Result init_rc() const { return rc_; }
  /// Calls getCollInfo as getAlgoInfo does; returns the channel count written (0 = NCCL's).
  int call(abi::Func coll, std::size_t bytes, CostTable& table, int pipeOps = 1, int regBuff = 0) {
    int nChannels = 0;
    const auto get = v4_ ? lib().v4->getCollInfo : lib().v5->getCollInfo;
    EXPECT_EQ(get(ctx_, coll, bytes, pipeOps, table.nccl(), abi::kNumAlgorithms, abi::kNumProtocols, regBuff, &nChannels),
              abi::kSuccess);
    return nChannels;
  }
  /// getCollInfo with any table shape; `with_channels` false passes a null nChannels.
  int call_raw(abi::Func coll, std::size_t bytes, float** table, int numAlgo, int numProto, bool with_channels) {
    int nChannels = 0;
    const auto get = v4_ ? lib().v4->getCollInfo : lib().v5->getCollInfo;
    EXPECT_EQ(get(ctx_, coll, bytes, 1, table, numAlgo, numProto, 0, with_channels ? &nChannels : nullptr),
              abi::kSuccess);
    return nChannels;
  }

 private:
  bool v4_;
  void* ctx_ = nullptr;
  abi::Result rc_ = abi::kInternalError;
};

class PluginHarness : public ::testing::TestWithParam<bool> {  // param: through ncclTunerPlugin_v4
 protected:
  void SetUp() override {
    ASSERT_NE(lib().handle, nullptr) << dlerror();
    ASSERT_NE(lib().v5, nullptr);
    ASSERT_NE(lib().v4, nullptr);
    unsetenv("RAILKIT_PROFILE");
    unsetenv("NCCL_TUNER_CONFIG_FILE");
    g_log.clear();
  }
  void TearDown() override {
    unsetenv("RAILKIT_PROFILE");
    unsetenv("NCCL_TUNER_CONFIG_FILE");
  }
  bool v4() const { return GetParam(); }
  /// Expects one WARN line containing `part` and a plugin that changes nothing.
  void expect_noop_with_warning(const std::string& part, std::size_t nRanks = 16, std::size_t nNodes = 2) {
    g_log.clear();
    Comm comm(v4(), nRanks, nNodes);
    EXPECT_EQ(comm.init_rc(), abi::kSuccess);
    const auto warns = lines_at(abi::kLogWarn);
    ASSERT_EQ(warns.size(), 1u);
    EXPECT_TRUE(contains(warns[0], part)) << warns[0];
    EXPECT_TRUE(contains(warns[0], "TUNER/railkit: ")) << warns[0];
    EXPECT_TRUE(summary_lines().empty());
    for (const auto coll : {abi::kFuncAllReduce, abi::kFuncAllGather, abi::kFuncBroadcast}) {
      CostTable t;
      EXPECT_EQ(comm.call(coll, 1024, t), 0);
      EXPECT_TRUE(t.zeros().empty());
      EXPECT_TRUE(t.untouched_except(-1, -1));
    }
  }
};

TEST_P(PluginHarness, ExportsOnlyTheTwoTunerSymbolsNamedRailkit) {
  EXPECT_STREQ(lib().v5->name, "railkit");
  EXPECT_STREQ(lib().v4->name, "railkit");
  EXPECT_NE(lib().v5->init, nullptr);
  EXPECT_NE(lib().v5->getCollInfo, nullptr);
  EXPECT_NE(lib().v5->finalize, nullptr);
  EXPECT_NE(lib().v4->init, nullptr);
  EXPECT_NE(lib().v4->destroy, nullptr);
  // railkit::core is linked in statically and stays hidden.
  EXPECT_EQ(dlsym(lib().handle, "_ZN7railkit12load_profileERKNSt10filesystem7__cxx114pathE"), nullptr);
  EXPECT_EQ(dlsym(lib().handle, "ncclTunerPlugin_v3"), nullptr);
}

TEST_P(PluginHarness, ProfileDecisionsSelectTheirEntry) {
  setenv("RAILKIT_PROFILE", (kFixtures + "/profile-2x16.json").c_str(), 1);
  Comm comm(v4(), 16, 2);
  ASSERT_EQ(comm.init_rc(), abi::kSuccess);
  const auto infos = summary_lines();
  ASSERT_EQ(infos.size(), 1u) << "logs once what it loaded";
  EXPECT_TRUE(contains(infos[0], "TUNER/railkit: loaded profile 'plugin-fixture-2x16'")) << infos[0];
  EXPECT_TRUE(contains(infos[0], "7 rules, 6 choosing an algorithm or protocol, for 2 nodes, 16 ranks")) << infos[0];
  for (const auto& l : g_log) {
    if (l.level == abi::kLogInfo) {
      EXPECT_TRUE(l.flags == 0x41ul || l.flags == 0x40ul) << "NCCL_INIT|NCCL_TUNING, or NCCL_TUNING for details";
    }
  }
  EXPECT_TRUE(lines_at(abi::kLogWarn).empty());
  const auto details = lines_at(abi::kLogInfo);
  ASSERT_EQ(details.size(), 7u) << "the summary and a line per choosing rule";
  EXPECT_EQ(details[1], "TUNER/railkit: decisions[0]: allreduce [0-65535] tree/ll channels=nccl nodes=any ranks=any");
  EXPECT_EQ(details[6], "TUNER/railkit: decisions[6]: reduce [0-1073741824] tree,collnet_direct,collnet_chain,nvls,"
                        "nvls_tree,pat/simple channels=nccl nodes=any ranks=any");

  {  // all_reduce 0-65535: Tree/LL, NCCL's channels
    CostTable t;
    EXPECT_EQ(comm.call(abi::kFuncAllReduce, 1024, t), 0);
    EXPECT_EQ(t.zeros(), (std::vector<Pick>{{abi::kAlgoTree, abi::kProtoLL}}));
    EXPECT_TRUE(t.untouched_except(abi::kAlgoTree, abi::kProtoLL));
  }
  {  // all_reduce 65536-1048575: Ring/LL128, NCCL_MAX_NCHANNELS=8; both edges
    for (const std::size_t bytes : {65536ul, 1048575ul}) {
      CostTable t;
      EXPECT_EQ(comm.call(abi::kFuncAllReduce, bytes, t), 8);
      EXPECT_EQ(t.zeros(), (std::vector<Pick>{{abi::kAlgoRing, abi::kProtoLL128}}));
      EXPECT_TRUE(t.untouched_except(abi::kAlgoRing, abi::kProtoLL128));
    }
  }
  {  // all_reduce from 1 MiB: Ring, any protocol: the cheapest Ring protocol NCCL left enabled
    CostTable t;
    t.t[abi::kAlgoRing][abi::kProtoLL] = -1.0f;
    t.t[abi::kAlgoRing][abi::kProtoLL128] = 50.0f;
    t.t[abi::kAlgoRing][abi::kProtoSimple] = 40.0f;
    EXPECT_EQ(comm.call(abi::kFuncAllReduce, 1 << 20, t), 0);
    EXPECT_EQ(t.zeros(), (std::vector<Pick>{{abi::kAlgoRing, abi::kProtoSimple}}));
    EXPECT_EQ(t.t[abi::kAlgoRing][abi::kProtoLL], -1.0f) << "a disabled entry stays disabled";
    EXPECT_EQ(t.t[abi::kAlgoRing][abi::kProtoLL128], 50.0f);
  }
  {  // all_reduce above every range: NCCL's choice
    CostTable t;
    EXPECT_EQ(comm.call(abi::kFuncAllReduce, 2ul << 30, t), 0);
    EXPECT_TRUE(t.untouched_except(-1, -1));
  }
  {  // all_gather: Simple with any algorithm (cheapest enabled: Tree), NCCL_MIN_NCHANNELS=4
    CostTable t;
    EXPECT_EQ(comm.call(abi::kFuncAllGather, 4096, t), 4);
    EXPECT_EQ(t.zeros(), (std::vector<Pick>{{abi::kAlgoTree, abi::kProtoSimple}}));
  }
  {  // reduce_scatter: the baseline decision ({}), NCCL's choice
    CostTable t;
    EXPECT_EQ(comm.call(abi::kFuncReduceScatter, 4096, t), 0);
    EXPECT_TRUE(t.untouched_except(-1, -1));
  }
  {  // broadcast: NVLS/Simple, enabled here
    CostTable t;
    EXPECT_EQ(comm.call(abi::kFuncBroadcast, 4096, t), 0);
    EXPECT_EQ(t.zeros(), (std::vector<Pick>{{abi::kAlgoNvls, abi::kProtoSimple}}));
  }
  {  // broadcast with NVLS/Simple disabled by NCCL: nothing changes, NCCL's choice stands
    CostTable t;
    t.t[abi::kAlgoNvls][abi::kProtoSimple] = -1.0f;
    const CostTable before = t;
    EXPECT_EQ(comm.call(abi::kFuncBroadcast, 4096, t), 0);
    EXPECT_EQ(std::memcmp(&before, &t, sizeof t), 0);
  }
  {  // reduce: "Ring;Reduce:^Ring" with Simple = every algorithm but Ring; cheapest enabled is Tree
    CostTable t;
    t.t[abi::kAlgoTree][abi::kProtoSimple] = 500.0f;  // now NVLS/Simple (140) is the cheapest non-Ring
    EXPECT_EQ(comm.call(abi::kFuncReduce, 4096, t), 0);
    EXPECT_EQ(t.zeros(), (std::vector<Pick>{{abi::kAlgoNvls, abi::kProtoSimple}}));
  }
  {  // collectives NCCL never asks a tuner about change nothing
    CostTable t;
    EXPECT_EQ(comm.call(abi::kFuncAlltoAll, 4096, t), 0);
    EXPECT_TRUE(t.untouched_except(-1, -1));
  }
}

TEST_P(PluginHarness, ProfileFromAnotherScaleIsANoopWithOneWarning) {
  setenv("RAILKIT_PROFILE", (kFixtures + "/profile-2x16.json").c_str(), 1);
  expect_noop_with_warning("measured on 2 nodes, 16 ranks; this communicator has 1 nodes, 8 ranks", 8, 1);
  expect_noop_with_warning("measured on 2 nodes, 16 ranks; this communicator has 2 nodes, 8 ranks", 8, 2);
}

TEST_P(PluginHarness, MissingOrBrokenProfileIsANoopWithAWarning) {
  setenv("RAILKIT_PROFILE", (kFixtures + "/no-such-profile.json").c_str(), 1);
  expect_noop_with_warning("no-such-profile.json");
  setenv("RAILKIT_PROFILE", (kFixtures + "/profile-not-json.json").c_str(), 1);
  expect_noop_with_warning("not valid JSON");
  setenv("RAILKIT_PROFILE", (kFixtures + "/profile-wrong-schema.json").c_str(), 1);
  expect_noop_with_warning("unsupported schema 'railkit.profile/2'");
  setenv("RAILKIT_PROFILE", kFixtures.c_str(), 1);  // a directory
  expect_noop_with_warning("the plugin does nothing");
  // 200 000 levels of nesting once took the training process down in init: now a warning.
  char tmpl[] = "/tmp/railkit-deep-profile-XXXXXX";
  const int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  const std::string deep = "{\"schema\": " + std::string(200000, '[') + std::string(200000, ']') + "}";
  ASSERT_EQ(write(fd, deep.data(), deep.size()), static_cast<ssize_t>(deep.size()));
  close(fd);
  setenv("RAILKIT_PROFILE", tmpl, 1);
  expect_noop_with_warning("nested deeper than 128 levels");
  unlink(tmpl);
}

TEST_P(PluginHarness, NothingConfiguredIsANoopWithAWarning) {
  expect_noop_with_warning("neither RAILKIT_PROFILE nor NCCL_TUNER_CONFIG_FILE is set");
  setenv("RAILKIT_PROFILE", "", 1);  // empty = unset
  expect_noop_with_warning("neither RAILKIT_PROFILE nor NCCL_TUNER_CONFIG_FILE is set");
}

TEST_P(PluginHarness, ProfileWinsOverConfigFile) {
  setenv("RAILKIT_PROFILE", (kFixtures + "/profile-2x16.json").c_str(), 1);
  setenv("NCCL_TUNER_CONFIG_FILE", (kFixtures + "/example.conf").c_str(), 1);
  Comm comm(v4(), 16, 2);
  ASSERT_EQ(summary_lines().size(), 1u);
  EXPECT_TRUE(contains(summary_lines()[0], "loaded profile"));
  EXPECT_TRUE(lines_at(abi::kLogWarn).empty());
  CostTable t;
  comm.call(abi::kFuncAllReduce, 1024, t);
  EXPECT_EQ(t.zeros(), (std::vector<Pick>{{abi::kAlgoTree, abi::kProtoLL}}));
}

TEST_P(PluginHarness, ExampleCsvAsNvidiasPluginReadsIt) {
  setenv("NCCL_TUNER_CONFIG_FILE", (kFixtures + "/example.conf").c_str(), 1);
  Comm comm(v4(), 16, 2);
  ASSERT_EQ(comm.init_rc(), abi::kSuccess);
  const auto warns = lines_at(abi::kLogWarn);
  const std::vector<std::string> want = {
      "example.conf:14: skipped: unknown algorithm 'rign'",
      "example.conf:15: skipped: 3 fields, want 8 to 10",
      "example.conf:16: skipped: unknown collective_type 'alltoall'",
      "example.conf:17: skipped: max_bytes '1k' is not an integer",
      "example.conf:18: skipped: min_bytes 100 is above max_bytes 10",
      "example.conf:19: skipped: regBuff 2 is not 0, 1 or -1",
      "example.conf:20: skipped: 11 fields, want 8 to 10",
  };
  ASSERT_EQ(warns.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(contains(warns[i], want[i])) << warns[i];
  ASSERT_EQ(summary_lines().size(), 1u);
  EXPECT_TRUE(contains(summary_lines()[0], "example.conf: 7 rules, 7 choosing")) << summary_lines()[0];

  {  // line 5 wants 1 node; line 7: ring/ll, channels -1 = NCCL's
    CostTable t;
    EXPECT_EQ(comm.call(abi::kFuncAllReduce, 1000, t, 1, 1), 0);
    EXPECT_EQ(t.zeros(), (std::vector<Pick>{{abi::kAlgoRing, abi::kProtoLL}}));
    EXPECT_TRUE(t.untouched_except(abi::kAlgoRing, abi::kProtoLL));
  }
  {  // line 8 (spaces trimmed): 2 nodes, 16 ranks, 1 pipe op, regBuff 0: ring/ll128, 4 channels
    CostTable t;
    EXPECT_EQ(comm.call(abi::kFuncAllReduce, 65537, t, 1, 0), 4);
    EXPECT_EQ(t.zeros(), (std::vector<Pick>{{abi::kAlgoRing, abi::kProtoLL128}}));
  }
  {  // the same with 2 pipe ops or a registered buffer matches no line
    CostTable t;
    EXPECT_EQ(comm.call(abi::kFuncAllReduce, 65537, t, 2, 0), 0);
    EXPECT_EQ(comm.call(abi::kFuncAllReduce, 65537, t, 1, 1), 0);
    EXPECT_TRUE(t.untouched_except(-1, -1));
  }
  {  // line 9: ring, protocol -1, max_bytes -1 (unbounded); the first matching line wins over line 10
    CostTable t;
    t.t[abi::kAlgoRing][abi::kProtoLL] = 300.0f;
    EXPECT_EQ(comm.call(abi::kFuncAllReduce, 8ul << 30, t), 0);
    EXPECT_EQ(t.zeros(), (std::vector<Pick>{{abi::kAlgoRing, abi::kProtoLL128}}));
  }
  {  // line 11: nvls/simple, disabled here: NCCL's choice stands (no fall-through to later lines)
    CostTable t;
    t.t[abi::kAlgoNvls][abi::kProtoSimple] = -1.0f;
    const CostTable before = t;
    EXPECT_EQ(comm.call(abi::kFuncBroadcast, 100, t), 0);
    EXPECT_EQ(std::memcmp(&before, &t, sizeof t), 0);
  }
  {  // line 21: pat/simple, 8 channels; PAT disabled in this table, so neither is applied
    CostTable t;
    EXPECT_EQ(comm.call(abi::kFuncAllGather, 100, t), 0);
    EXPECT_TRUE(t.untouched_except(-1, -1));
    t.t[abi::kAlgoPat][abi::kProtoSimple] = 7.0f;
    EXPECT_EQ(comm.call(abi::kFuncAllGather, 100, t), 8);
    EXPECT_EQ(t.zeros(), (std::vector<Pick>{{abi::kAlgoPat, abi::kProtoSimple}}));
  }
}

TEST_P(PluginHarness, ExampleCsvOneNodeLine) {
  setenv("NCCL_TUNER_CONFIG_FILE", (kFixtures + "/example.conf").c_str(), 1);
  Comm comm(v4(), 8, 1);
  CostTable t;
  EXPECT_EQ(comm.call(abi::kFuncAllReduce, 65536, t, 1, 1), 2);  // line 5: tree/simple, 2 channels
  EXPECT_EQ(t.zeros(), (std::vector<Pick>{{abi::kAlgoTree, abi::kProtoSimple}}));
}

TEST_P(PluginHarness, MissingConfigFileIsANoopWithAWarning) {
  setenv("NCCL_TUNER_CONFIG_FILE", (kFixtures + "/no-such.conf").c_str(), 1);
  expect_noop_with_warning("no-such.conf: cannot open");
}

TEST_P(PluginHarness, NeverWritesOutsideTheTableNcclPasses) {
  setenv("NCCL_TUNER_CONFIG_FILE", (kFixtures + "/example.conf").c_str(), 1);
  Comm comm(v4(), 16, 2);
  // A table of 7 x 2 (no Simple column) followed by guard values: line 8's ring/ll128 fits, line
  // 11's nvls/simple lies outside it and must not be written.
  constexpr int kProtos = 2;
  float buf[abi::kNumAlgorithms * kProtos + 8];
  for (auto& x : buf) x = 123.0f;
  auto* table = reinterpret_cast<float**>(buf);
  int nChannels = comm.call_raw(abi::kFuncAllReduce, 65537, table, abi::kNumAlgorithms, kProtos, true);
  EXPECT_EQ(buf[abi::kAlgoRing * kProtos + abi::kProtoLL128], 0.0f);
  EXPECT_EQ(nChannels, 4);
  buf[abi::kAlgoRing * kProtos + abi::kProtoLL128] = 123.0f;
  EXPECT_EQ(comm.call_raw(abi::kFuncBroadcast, 100, table, abi::kNumAlgorithms, kProtos, true), 0);
  for (const float x : buf) EXPECT_EQ(x, 123.0f);
  // Degenerate arguments change nothing and still answer success.
  EXPECT_EQ(comm.call_raw(abi::kFuncAllReduce, 65537, nullptr, abi::kNumAlgorithms, kProtos, true), 0);
  EXPECT_EQ(comm.call_raw(abi::kFuncAllReduce, 65537, table, 0, 0, true), 0);
  for (const float x : buf) EXPECT_EQ(x, 123.0f);
  // Without an nChannels pointer the entry is still chosen.
  EXPECT_EQ(comm.call_raw(abi::kFuncAllReduce, 65537, table, abi::kNumAlgorithms, kProtos, false), 0);
  EXPECT_EQ(buf[abi::kAlgoRing * kProtos + abi::kProtoLL128], 0.0f);
  // No context (an init that could not allocate one) and finalize of none.
  int n = 0;
  const auto get = v4() ? lib().v4->getCollInfo : lib().v5->getCollInfo;
  EXPECT_EQ(get(nullptr, abi::kFuncAllReduce, 65537, 1, table, abi::kNumAlgorithms, kProtos, 0, &n), abi::kSuccess);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(v4() ? lib().v4->destroy(nullptr) : lib().v5->finalize(nullptr), abi::kSuccess);
}

TEST_P(PluginHarness, WorksWithoutALogger) {
  setenv("RAILKIT_PROFILE", (kFixtures + "/profile-not-json.json").c_str(), 1);
  { Comm comm(v4(), 16, 2, nullptr); }
  setenv("RAILKIT_PROFILE", (kFixtures + "/profile-2x16.json").c_str(), 1);
  Comm comm(v4(), 16, 2, nullptr);
  CostTable t;
  EXPECT_EQ(comm.call(abi::kFuncAllReduce, 1024, t), 0);
  EXPECT_EQ(t.zeros(), (std::vector<Pick>{{abi::kAlgoTree, abi::kProtoLL}}));
  EXPECT_TRUE(g_log.empty());
}

INSTANTIATE_TEST_SUITE_P(Abi, PluginHarness, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "v4" : "v5"; });

}  // namespace
