// core/strings, core/enums and format_duration: the helpers every folder shares.
#include "core/strings.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/enums.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

namespace railkit {
namespace {

using Strings = std::vector<std::string>;

TEST(Strings, SplitKeepsEmptyFieldsSplitNonemptyDropsThem) {
  EXPECT_EQ(split("a,,b", ','), (Strings{"a", "", "b"}));
  EXPECT_EQ(split("", ','), (Strings{""}));
  EXPECT_EQ(split("a,b,", ','), (Strings{"a", "b", ""}));
  EXPECT_EQ(split_nonempty(",a,,b,", ','), (Strings{"a", "b"}));
  EXPECT_EQ(split_ws("  mpirun\t-np  4\n"), (Strings{"mpirun", "-np", "4"}));
  EXPECT_TRUE(split_ws(" \t ").empty());
}

TEST(Strings, TrimJoinLower) {
  EXPECT_EQ(trim("  400 Gb/sec (4X NDR)\n"), "400 Gb/sec (4X NDR)");
  EXPECT_EQ(trim(std::string("1\0", 2)), "1");
  EXPECT_EQ(trim(" \t"), "");
  EXPECT_EQ(join(Strings{"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(join(std::set<std::string>{"y", "x"}, ","), "x,y");
  EXPECT_EQ(join(Strings{}, ","), "");
  EXPECT_EQ(to_lower("RoCE v2"), "roce v2");
}

TEST(Strings, NaturalOrder) {
  std::vector<std::string> v{"mlx5_10", "mlx5_3", "mlx5_11", "mlx5_0", "mlx5_1", "GPU10", "GPU2"};
  std::sort(v.begin(), v.end(), [](const std::string& a, const std::string& b) { return natural_less(a, b); });
  EXPECT_EQ(v, (Strings{"GPU2", "GPU10", "mlx5_0", "mlx5_1", "mlx5_3", "mlx5_10", "mlx5_11"}));
  EXPECT_TRUE(natural_less("mlx5_01", "mlx5_1") != natural_less("mlx5_1", "mlx5_01"));  // a strict order still
  EXPECT_FALSE(natural_less("a", "a"));
}

TEST(Strings, ParseIntNamesTheInput) {
  EXPECT_EQ(parse_int("--np", "16", 1, 1024), 16);
  try {
    parse_int("--np", "16x", 1, 1024);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--np '16x': expected an integer");
  }
  try {
    parse_int("--np", "0", 1, 1024);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--np '0': must be between 1 and 1024");
  }
  EXPECT_EQ(to_int("-3"), -3);
  EXPECT_FALSE(to_int("").has_value());
  EXPECT_FALSE(to_int(" 3").has_value());
  EXPECT_EQ(to_double("2.5"), 2.5);
  EXPECT_FALSE(to_double("2.5x").has_value());
}

TEST(Enums, NamesRoundTrip) {
  for (TrialStatus s : {TrialStatus::Ok, TrialStatus::Failed, TrialStatus::Timeout, TrialStatus::Interrupted})
    EXPECT_EQ(parse_trial_status(name(s)), s);
  for (Verdict v : {Verdict::Pass, Verdict::Fail, Verdict::Skipped, Verdict::Explained, Verdict::Reported}) EXPECT_EQ(parse_verdict(name(v)), v);
  EXPECT_EQ(name(TrialStatus::Ok), "ok");
  EXPECT_EQ(name(Verdict::Skipped), "skipped");
  EXPECT_FALSE(parse_trial_status("weird").has_value());
}

TEST(Format, SlugAndDuration) {
  EXPECT_EQ(slug("NCCL_ALGO=Ring,NCCL_PROTO=LL"), "NCCL_ALGO=Ring_NCCL_PROTO=LL");
  EXPECT_EQ(slug("a/b c"), "a_b_c");
  EXPECT_EQ(slug(".hidden"), "_.hidden");
  EXPECT_EQ(slug(std::string(200, 'x')).size(), 80u);
  EXPECT_EQ(format_duration(3.3), "3.3 s");
  EXPECT_EQ(format_duration(42), "42 s");
  EXPECT_EQ(format_duration(185), "3 min 05 s");
  EXPECT_EQ(format_duration(3720), "1 h 02 min");
}

TEST(Printable, EscapesControlBytesAndBytesThatAreNotUtf8) {
  EXPECT_EQ(printable("plain text, caf\xc3\xa9 \xe2\x86\x92 ok"), "plain text, caf\xc3\xa9 \xe2\x86\x92 ok");
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable("\x1b[2J\r\n\t\x7f"), "\\x1b[2J\\x0d\\x0a\\x09\\x7f");
  EXPECT_EQ(printable("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(printable("\xc2\x9b" "31m"), "\\xc2\\x9b" "31m");         // C1 CSI written as UTF-8
  EXPECT_EQ(printable("\xc0\xaf \xed\xa0\x80 \xe2\x86"), "\\xc0\\xaf \\xed\\xa0\\x80 \\xe2\\x86");  // overlong, surrogate, cut
  EXPECT_EQ(printable(""), "");
}

TEST(Printable, CutsLongTextWithItsSize) {
  const std::string line(1 << 20, 'x');
  const std::string shown = printable(line);
  EXPECT_EQ(shown, std::string(200, 'x') + "... (1048576 bytes)");
  EXPECT_EQ(printable("abcdef", 3), "abc... (6 bytes)");
  EXPECT_EQ(printable("abc", 3), "abc");
  EXPECT_EQ(printable("ab\xc3\xa9", 3), "ab... (4 bytes)");  // never half a character
  EXPECT_EQ(printable("\x01\x02", 1), "\\x01... (2 bytes)");
}

TEST(Printable, ControlCharacters) {
  EXPECT_TRUE(has_control_chars("a\nb"));
  EXPECT_TRUE(has_control_chars(std::string("a\0", 2)));
  EXPECT_TRUE(has_control_chars("\x7f"));
  EXPECT_TRUE(has_control_chars("\xc2\x85"));  // NEL
  EXPECT_FALSE(has_control_chars("rail 0 \xc3\xa9"));
  EXPECT_FALSE(has_control_chars("\xff\xfe"));  // not UTF-8, but no control character: stored as U+FFFD
}

// Issue 32: host names and labels of documents reached the terminal raw (history show, report).
TEST(Printable, TerminalFieldsAndTextNeverCarryAnEscape) {
  const std::string long_host = std::string(300, 'h') + "\x1b";
  EXPECT_EQ(terminal_field(long_host), std::string(300, 'h') + "\\x1b");  // no length cut
  EXPECT_EQ(terminal_field("node\x1b]0;t\x07\n"), "node\\x1b]0;t\\x07\\x0a");
  EXPECT_EQ(terminal_text("a\x1b[2J\tb\nc\xc2\x9b" "1m\r\xff\n"), "a\\x1b[2J\tb\nc\\xc2\\x9b" "1m\\x0d\\xff\n");
  EXPECT_EQ(terminal_text("caf\xc3\xa9 | x\n"), "caf\xc3\xa9 | x\n");
}

TEST(Printable, InvalidUtf8IsReplaced) {
  EXPECT_EQ(replace_invalid_utf8("ok \xc3\xa9"), "ok \xc3\xa9");
  EXPECT_EQ(replace_invalid_utf8("a\xff" "b\xe2\x86"), "a\xEF\xBF\xBD" "b\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(replace_invalid_utf8(""), "");
}

TEST(Printable, WarningsOfOneKindAreOneLine) {
  std::vector<std::string> lines;
  for (int i = 0; i < 10000; ++i) lines.push_back("settings.env.NCCL_X_" + std::to_string(i) + ": not in the tunables table");
  lines.push_back("rank 3: NCCL versions differ");
  for (int i = 0; i < 5; ++i) lines.push_back("no NCCL log lines found");
  lines.push_back("rank 1: NCCL versions differ");
  lines.push_back(std::string("a file says \x1b[2J") + std::string(1 << 20, 'y'));
  const auto out = summarize_warnings(lines);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], "settings.env.NCCL_X_0: not in the tunables table (and 9999 more like it)");
  EXPECT_EQ(out[1], "rank 3: NCCL versions differ (and 1 more like it)");
  EXPECT_EQ(out[2], "no NCCL log lines found (5 times)");
  EXPECT_EQ(out[3].substr(0, 22), "a file says \\x1b[2Jyyy");
  EXPECT_NE(out[3].find("... (1048592 bytes)"), std::string::npos);
  EXPECT_LT(out[3].size(), 500u);
  EXPECT_TRUE(summarize_warnings({}).empty());
}

}  // namespace
}  // namespace railkit
