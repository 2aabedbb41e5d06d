#include <gtest/gtest.h>

#include "core/env.hpp"

TEST(Env, CapturesOnlyRecordedPrefixes) {
  const char* raw[] = {"NCCL_DEBUG=INFO", "PATH=/bin", "OMPI_MCA_btl=self,vader", "UCX_TLS=rc",
                       "RAILKIT_X=a=b", "NCCLX=1", "HOME=/root", nullptr};
  auto env = railkit::capture_env(const_cast<char* const*>(raw), railkit::kRecordedEnvPrefixes);
  EXPECT_EQ(env.size(), 4u);
  EXPECT_EQ(env["NCCL_DEBUG"], "INFO");
  EXPECT_EQ(env["OMPI_MCA_btl"], "self,vader");
  EXPECT_EQ(env["RAILKIT_X"], "a=b");
  EXPECT_EQ(env.count("PATH"), 0u);
  EXPECT_EQ(env.count("NCCLX"), 0u);
  EXPECT_EQ(railkit::env_value(const_cast<char* const*>(raw), "HOME"), "/root");
  EXPECT_EQ(railkit::env_value(const_cast<char* const*>(raw), "HOM"), "");
}

TEST(Env, NcclDebugFileExpandsAsNcclDoes) {
  // src/debug.cc: the host name up to its first '.', the pid, %% as %, anything else echoed.
  EXPECT_EQ(railkit::expand_nccl_debug_file("/tmp/nccl.%h.%p.log", "node07.cluster.local", 4242),
            "/tmp/nccl.node07.4242.log");
  EXPECT_EQ(railkit::expand_nccl_debug_file("a%%h-%x-%", "h", 1), "a%h-%x-%");
  EXPECT_EQ(railkit::expand_nccl_debug_file("%h%h", "gpu1", 7), "gpu1gpu1");
}
