#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/units.hpp"

using railkit::parse_size_bytes;

TEST(Units, ParsesPlainAndBinarySuffixes) {
  EXPECT_EQ(parse_size_bytes("8", "-b"), 8u);
  EXPECT_EQ(parse_size_bytes("64K", "-b"), 65536u);
  EXPECT_EQ(parse_size_bytes("64k", "-b"), 65536u);
  EXPECT_EQ(parse_size_bytes("16M", "-b"), 16u << 20);
  EXPECT_EQ(parse_size_bytes("2G", "-b"), 2ull << 30);
  EXPECT_EQ(parse_size_bytes("1.5M", "-b"), 1572864u);
  EXPECT_EQ(parse_size_bytes("4KiB", "-b"), 4096u);
  EXPECT_EQ(parse_size_bytes("4KB", "-b"), 4096u);
  EXPECT_EQ(parse_size_bytes(" 32 ", "-b"), 32u);
  EXPECT_EQ(parse_size_bytes("0", "-b"), 0u);
}

TEST(Units, RejectsBadInputNamingTheFlag) {
  for (const char* bad : {"", "-8", "abc", "12X", "1.3", "0.5K1", "1e3", "99999999999T"}) {
    try {
      parse_size_bytes(bad, "-e/--maxbytes");
      FAIL() << "accepted '" << bad << "'";
    } catch (const railkit::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("-e/--maxbytes"), std::string::npos) << e.what();
      EXPECT_EQ(e.code(), railkit::ErrorCode::Usage);
    }
  }
}

TEST(Units, FormatsBytes) {
  EXPECT_EQ(railkit::format_bytes(8), "8 B");
  EXPECT_EQ(railkit::format_bytes(65536), "64 KiB");
  EXPECT_EQ(railkit::format_bytes(3u << 20), "3 MiB");
  EXPECT_EQ(railkit::format_bytes(1000), "1000 B");
}

TEST(Units, AlgbwIsBytesPerMicrosecondOverThousand) {
  EXPECT_DOUBLE_EQ(railkit::algbw_GBps(1e9, 1e6), 1.0);  // 1 GB in 1 s
  EXPECT_DOUBLE_EQ(railkit::algbw_GBps(4096, 2.0), 2.048);
  EXPECT_DOUBLE_EQ(railkit::algbw_GBps(4096, 0.0), 0.0);
}
