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

TEST(Prom, LabelsInGivenOrder) {
  EXPECT_EQ(prom_labels({{"z", "1 MiB"}, {"a", "q\""}}), "z=\"1MiB\",a=\"q\\\"\"");
  EXPECT_EQ(prom_labels({}), "");
}
