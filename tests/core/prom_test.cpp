// core/prom: Prometheus text helpers shared by accept.prom and railkit-bench --prom.
#include <gtest/gtest.h>

#include "core/prom.hpp"

using namespace railkit;

TEST(Prom, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(prom_escape("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(prom_label_value("all.all_reduce@16 KiB"), "all.all_reduce@16KiB");
  EXPECT_EQ(prom_label_value("odd host\tname"), "odd_host_name");
  EXPECT_EQ(prom_label_value("a\nb"), "a_b");
  EXPECT_EQ(prom_help_type("m", "x\\y\nz"), "# HELP m x\\\\y\\nz\n# TYPE m gauge\n");
  EXPECT_EQ(prom_help_type("c", "n", "counter"), "# HELP c n\n# TYPE c counter\n");
}

// Issue 32: a label or sweep axis value that is not UTF-8 reached the textfile raw, and promtool
// (so node_exporter) refused the whole file. Bytes that are not UTF-8 become U+FFFD, as in the
// JSON documents; valid UTF-8 is kept.
TEST(Prom, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  EXPECT_EQ(prom_escape("lab\xff" "el"), "lab\xEF\xBF\xBD" "el");
  EXPECT_EQ(prom_label_value("a\xc3 b\xe2\x82"), "a\xEF\xBF\xBD_b\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(prom_label_value("caf\xc3\xa9 \"x\""), "caf\xc3\xa9_\\\"x\\\"");
  EXPECT_EQ(prom_labels({{"label", "\xc0\xaf"}}), "label=\"\xEF\xBF\xBD\xEF\xBF\xBD\"");  // overlong '/'
  EXPECT_EQ(prom_help_type("m", "h\xfe"), "# HELP m h\xEF\xBF\xBD\n# TYPE m gauge\n");
}

TEST(Prom, LabelsInGivenOrder) {
  EXPECT_EQ(prom_labels({{"z", "1 MiB"}, {"a", "q\""}}), "z=\"1MiB\",a=\"q\\\"\"");
  EXPECT_EQ(prom_labels({}), "");
}
