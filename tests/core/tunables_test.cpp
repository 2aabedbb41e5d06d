// The typed table of tunables (core/tunables): value checks per type, and every row's sanity.
#include "core/tunables.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "test_util.hpp"

namespace railkit {
namespace {

using test::usage_error_of;

const Tunable& row(std::string_view name) {
  const Tunable* t = find_tunable(name);
  if (!t) throw std::runtime_error("no tunable " + std::string(name));
  return *t;
}

std::string problem(std::string_view name, std::string_view value) { return tunable_value_problem(row(name), value); }

TEST(Tunables, EnumCaseInsensitive) {
  for (const char* v : {"PIX", "pix", "Sys", "LOC", "PXB", "PHB"}) EXPECT_EQ(problem("NCCL_NET_GDR_LEVEL", v), "") << v;
  EXPECT_NE(problem("NCCL_NET_GDR_LEVEL", "NODE").find("not one of LOC, PIX, PXB, PHB, SYS"), std::string::npos);
  EXPECT_NE(problem("NCCL_NET_GDR_LEVEL", ""), "");
  EXPECT_NE(problem("NCCL_NET_GDR_LEVEL", "PIX,SYS"), "");
}

TEST(Tunables, EnumList) {
  for (const char* v : {"Ring", "ring,tree", "^tree", "RING,Tree,NVLS", "allreduce:ring;broadcast:^tree", "allreduce:^ring,tree"})
    EXPECT_EQ(problem("NCCL_ALGO", v), "") << v;
  for (const char* v : {"LL", "ll128", "^LL", "allreduce:simple;allgather:LL128"}) EXPECT_EQ(problem("NCCL_PROTO", v), "") << v;
  EXPECT_NE(problem("NCCL_ALGO", "ring,foo").find("'foo' is not one of"), std::string::npos);
  EXPECT_NE(problem("NCCL_ALGO", "allreduce:ring;broadcast:^bogus").find("'bogus'"), std::string::npos);
  EXPECT_NE(problem("NCCL_PROTO", "LL,Ring").find("'Ring'"), std::string::npos);
  for (const char* v : {"", "^", "ring,", ",ring", "ring,,tree", ":ring", "allreduce:", "allreduce:ring;"})
    EXPECT_NE(problem("NCCL_ALGO", v), "") << '"' << v << '"';
}

TEST(Tunables, IntBounds) {
  EXPECT_EQ(problem("NCCL_IB_TC", "0"), "");
  EXPECT_EQ(problem("NCCL_IB_TC", "255"), "");
  EXPECT_EQ(problem("NCCL_IB_TC", "256"), "above the maximum 255");
  EXPECT_EQ(problem("NCCL_IB_TC", "-1"), "below the minimum 0");
  EXPECT_EQ(problem("NCCL_IB_TC", "abc"), "not an integer");
  EXPECT_EQ(problem("NCCL_IB_TC", "10x"), "not an integer");
  EXPECT_EQ(problem("NCCL_IB_TC", "1.5"), "not an integer");
  EXPECT_EQ(problem("NCCL_IB_TC", ""), "not an integer");
  EXPECT_EQ(problem("NCCL_IB_TC", "99999999999999999999999"), "not an integer");
  EXPECT_EQ(problem("NCCL_IB_GID_INDEX", "-1"), "");
  EXPECT_EQ(problem("NCCL_IB_GID_INDEX", "-2"), "below the minimum -1");
  EXPECT_EQ(problem("NCCL_IB_TIMEOUT", "31"), "");
  EXPECT_EQ(problem("NCCL_IB_TIMEOUT", "32"), "above the maximum 31");
  EXPECT_EQ(*tunable_int(row("NCCL_IB_TC"), "106"), 106);
  EXPECT_FALSE(tunable_int(row("NCCL_IB_TC"), "x"));
  EXPECT_FALSE(tunable_int(row("NCCL_ALGO"), "1"));
}

TEST(Tunables, Bool) {
  for (const char* v : {"0", "1", "true", "false", "TRUE", "False"}) EXPECT_EQ(problem("NCCL_PXN_DISABLE", v), "") << v;
  for (const char* v : {"2", "-1", "yes", "", "on"})
    EXPECT_EQ(problem("NCCL_PXN_DISABLE", v), "not a boolean (0, 1, true, false)") << v;
  EXPECT_EQ(*tunable_int(row("NCCL_PXN_DISABLE"), "true"), 1);
  EXPECT_EQ(*tunable_int(row("NCCL_PXN_DISABLE"), "FALSE"), 0);
}

TEST(Tunables, NthreadsMultipleOf32) {
  for (const char* v : {"64", "96", "128", "256", "512"}) EXPECT_EQ(problem("NCCL_NTHREADS", v), "") << v;
  EXPECT_EQ(problem("NCCL_NTHREADS", "100"), "not a multiple of 32");
  EXPECT_EQ(problem("NCCL_NTHREADS", "32"), "below the minimum 64");
  EXPECT_EQ(problem("NCCL_NTHREADS", "544"), "above the maximum 512");
}

TEST(Tunables, Pow2) {
  for (const char* v : {"2048", "131072", "16777216"}) EXPECT_EQ(problem("NCCL_P2P_NET_CHUNKSIZE", v), "") << v;
  EXPECT_EQ(problem("NCCL_P2P_NET_CHUNKSIZE", "3000"), "not a power of two");
  EXPECT_EQ(problem("NCCL_P2P_NET_CHUNKSIZE", "131073"), "not a power of two");
  EXPECT_EQ(problem("NCCL_P2P_NET_CHUNKSIZE", "1024"), "below the minimum 2048");
  EXPECT_EQ(problem("NCCL_P2P_NET_CHUNKSIZE", "0"), "below the minimum 2048");
  EXPECT_EQ(problem("NCCL_P2P_NET_CHUNKSIZE", "33554432"), "above the maximum 16777216");
}

TEST(Tunables, ValidateThrowsNamingWhere) {
  const std::string m = usage_error_of([] { validate_tunable_value(row("NCCL_IB_TC"), "300", "profile.json"); });
  EXPECT_EQ(m, "profile.json: NCCL_IB_TC=300: above the maximum 255");
  EXPECT_NO_THROW(validate_tunable_value(row("NCCL_IB_TC"), "106", "profile.json"));
}

TEST(Tunables, SwitchEcnSettingsReachOnlyTheSimulator) {
  EXPECT_EQ(problem("switch.ecn.pmax", "0.2"), "");
  EXPECT_EQ(problem("switch.ecn.pmax", "1"), "");
  EXPECT_EQ(problem("switch.ecn.pmax", "1.5"), "above the maximum 1");
  EXPECT_EQ(problem("switch.ecn.pmax", "-0.1"), "below the minimum 0");
  EXPECT_EQ(problem("switch.ecn.pmax", "often"), "not a decimal number");
  EXPECT_EQ(problem("switch.ecn.kmin_bytes", "100000"), "");
  EXPECT_EQ(problem("switch.ecn.kmax_bytes", "0"), "below the minimum 1");
  EXPECT_EQ(type_name(row("switch.ecn.pmax").type), "decimal");
  EXPECT_EQ(scope_name(row("switch.ecn.kmin_bytes").scope), "switch");
  EXPECT_EQ(inert_knobs({"switch.ecn.kmin_bytes"}, RunTarget{"nccl", true, {}}), std::vector<std::string>{"switch.ecn.kmin_bytes"});
  EXPECT_TRUE(inert_knobs({"switch.ecn.kmin_bytes", "switch.ecn.other"}, RunTarget{"sim", true, {}}).empty());
  // The flow level models no congestion control: DCQCN and switch knobs cannot act there, NCCL's can.
  const RunTarget flow{"sim", true, "flow"};
  EXPECT_EQ(inert_knobs({"roce_rp.rpg_ai_rate", "switch.ecn.kmin_bytes", "NCCL_ALGO"}, flow),
            (std::vector<std::string>{"roce_rp.rpg_ai_rate", "switch.ecn.kmin_bytes"}));
  EXPECT_TRUE(inert_knobs({"roce_rp.rpg_ai_rate"}, RunTarget{"sim", true, "packet"}).empty());
  EXPECT_EQ(reach_text(*knob_reach("switch.ecn.other")), "sim");
}

TEST(Tunables, EveryRow) {
  std::set<std::string_view> names;
  ASSERT_FALSE(tunables().empty());
  for (const Tunable& t : tunables()) {
    SCOPED_TRACE(std::string(t.name));
    EXPECT_FALSE(t.name.empty());
    EXPECT_TRUE(names.insert(t.name).second) << "duplicate";
    EXPECT_EQ(find_tunable(t.name), &t);
    EXPECT_FALSE(t.doc.empty());
    if (t.default_value != "auto") {
      EXPECT_EQ(tunable_value_problem(t, t.default_value), "") << t.default_value;
    }
    if (t.scope == TunableScope::Dcqcn) {
      EXPECT_TRUE(t.name.starts_with(kDcqcnRpPrefix) || t.name.starts_with(kDcqcnNpPrefix));
    } else if (t.scope == TunableScope::Switch) {
      EXPECT_TRUE(t.name.starts_with(kSwitchPrefix));
      EXPECT_EQ(t.reach, Reach::Sim) << "no host reaches a switch";
    } else {
      EXPECT_TRUE(t.name.starts_with("NCCL_") || t.name.starts_with("OMPI_MCA_"));
    }
    if (t.type == TunableType::Enum || t.type == TunableType::EnumList) {
      EXPECT_FALSE(t.values.empty());
    } else {
      EXPECT_LE(t.min, t.max);
    }
  }
  EXPECT_EQ(find_tunable("NCCL_NOPE"), nullptr);
  EXPECT_EQ(find_tunable("nccl_algo"), nullptr);  // exact match only
}


}  // namespace
}  // namespace railkit
