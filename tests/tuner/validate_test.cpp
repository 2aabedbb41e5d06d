// Objective and statistics of the tuner (tuner/validate): buckets, weights, paired ratios.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/results.hpp"
#include "core/tunables.hpp"
#include "test_util.hpp"
#include "tuner_test_util.hpp"
#include "tuner/validate.hpp"

namespace railkit::tuner {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ScratchDir = railkit::test::TempDir;
using railkit::test::usage_error_of;

// ---------------------------------------------------------------- validate

using test::Rec;

ResultsDocument doc_of(const std::vector<Rec>& recs) { return test::make_doc("t", recs); }

TEST(Validate, BucketOfEdges) {
  EXPECT_EQ(bucket_of(0), 0u);
  EXPECT_EQ(bucket_of(1), 1u);
  EXPECT_EQ(bucket_of(3), 1u);
  EXPECT_EQ(bucket_of(4), 4u);
  EXPECT_EQ(bucket_of(15), 4u);
  EXPECT_EQ(bucket_of(16), 16u);
  EXPECT_EQ(bucket_of(4095), 1024u);
  EXPECT_EQ(bucket_of(4096), 4096u);
  EXPECT_EQ(bucket_of(16383), 4096u);
  EXPECT_EQ(bucket_of(16384), 16384u);
}

TEST(Validate, BucketOfPowers) {
  // Every power of 4 is its own lower edge; the value below it belongs to the previous bucket and
  // 2 * 4^k (a power of 2 in between) to 4^k.
  std::uint64_t p = 4;
  for (int k = 1; k < 32; ++k, p *= 4) {
    EXPECT_EQ(bucket_of(p), p) << p;
    EXPECT_EQ(bucket_of(p - 1), p / 4) << p;
    EXPECT_EQ(bucket_of(2 * p), p) << p;
  }
  EXPECT_EQ(bucket_of(std::uint64_t{1} << 62), std::uint64_t{1} << 62);
  EXPECT_EQ(bucket_of(UINT64_MAX), std::uint64_t{1} << 62);
}

TEST(Validate, BucketBusbwPrefersOutOfPlace) {
  const auto v = bucket_busbw(doc_of({{"all_reduce", 1024, true, 20}, {"all_reduce", 1024, false, 10},
                                      {"all_gather", 1024, true, 30}}));
  EXPECT_DOUBLE_EQ((v.size_busbw_GBps.at({"all_reduce", 1024})), 10.0);
  EXPECT_DOUBLE_EQ((v.size_busbw_GBps.at({"all_gather", 1024})), 30.0);  // in-place when it is all there is
  EXPECT_DOUBLE_EQ((v.busbw_GBps.at({"all_reduce", 1024})), 10.0);
  EXPECT_DOUBLE_EQ((v.busbw_GBps.at({"all_gather", 1024})), 30.0);
  EXPECT_EQ(v.busbw_GBps.size(), 2u);
}

TEST(Validate, BucketBusbwAveragesCycles) {
  const auto v = bucket_busbw(doc_of({{"all_reduce", 4096, false, 10, 0}, {"all_reduce", 4096, false, 30, 1},
                                      {"all_reduce", 4096, false, 20, 2}, {"all_reduce", 4096, true, 1, 0}}));
  EXPECT_DOUBLE_EQ((v.size_busbw_GBps.at({"all_reduce", 4096})), 20.0);
}

TEST(Validate, BucketBusbwSplitGroupsTakesSlowest) {
  const auto v = bucket_busbw(doc_of({
      {"all_reduce", 8192, false, 10, 0, "rail0"},
      {"all_reduce", 8192, false, 20, 1, "rail0"},  // rail0: 15 on average
      {"all_reduce", 8192, false, 40, 0, "rail1"},
      {"all_reduce", 8192, false, 44, 1, "rail1"},  // rail1: 42
      {"all_reduce", 8192, true, 5, 0, "rail1"},    // in-place: ignored, out-of-place exists
  }));
  EXPECT_DOUBLE_EQ((v.size_busbw_GBps.at({"all_reduce", 8192})), 15.0);
  EXPECT_DOUBLE_EQ((v.busbw_GBps.at({"all_reduce", 4096})), 15.0);
}

TEST(Validate, BucketBusbwHarmonicMeanWithinBucket) {
  // 4096 and 8192 share the bucket [4096, 16384); 16384 starts the next one.
  const auto v = bucket_busbw(doc_of({{"all_reduce", 4096, false, 10}, {"all_reduce", 8192, false, 40},
                                      {"all_reduce", 16384, false, 50}, {"all_gather", 4096, false, 7}}));
  EXPECT_DOUBLE_EQ((v.busbw_GBps.at({"all_reduce", 4096})), 2.0 / (1.0 / 10 + 1.0 / 40));  // 16
  EXPECT_DOUBLE_EQ((v.busbw_GBps.at({"all_reduce", 16384})), 50.0);
  EXPECT_DOUBLE_EQ((v.busbw_GBps.at({"all_gather", 4096})), 7.0);
  EXPECT_EQ(v.busbw_GBps.size(), 3u);
  EXPECT_EQ(v.size_busbw_GBps.size(), 4u);
}

TEST(Validate, BucketBusbwZeroMakesBucketZero) {
  const auto v = bucket_busbw(doc_of({{"all_reduce", 4096, false, 10}, {"all_reduce", 8192, false, 0}}));
  EXPECT_EQ((v.busbw_GBps.at({"all_reduce", 4096})), 0.0);
  EXPECT_TRUE(bucket_busbw(doc_of({})).busbw_GBps.empty());
}

TEST(Validate, ObjectiveEqualWeightsIsHarmonicMean) {
  const std::map<BucketKey, double> values = {{{"all_reduce", 1024}, 10}, {{"all_reduce", 4096}, 40}};
  const auto o = objective_GBps(values, {});
  ASSERT_TRUE(o);
  EXPECT_DOUBLE_EQ(*o, 16.0);
  EXPECT_FALSE(objective_GBps({}, {}));
}

TEST(Validate, ObjectiveWeighted) {
  const std::map<BucketKey, double> values = {
      {{"all_reduce", 1024}, 10}, {{"all_reduce", 4096}, 40}, {{"all_gather", 1024}, 1}};
  // all_gather is measured but not weighted: it does not count.
  const BucketWeights w = {{{"all_reduce", 1024}, 1}, {{"all_reduce", 4096}, 3}};
  const auto o = objective_GBps(values, w);
  ASSERT_TRUE(o);
  EXPECT_DOUBLE_EQ(*o, 4.0 / (1.0 / 10 + 3.0 / 40));
  // A zero weight does not count, even for a missing or zero bucket.
  BucketWeights w0 = w;
  w0[{"broadcast", 64}] = 0;
  w0[{"all_gather", 1024}] = 0;
  EXPECT_DOUBLE_EQ(*objective_GBps(values, w0), *o);
}

TEST(Validate, ObjectiveMissingWeightedBucketIsNullopt) {
  const std::map<BucketKey, double> values = {{{"all_reduce", 1024}, 10}};
  EXPECT_FALSE(objective_GBps(values, {{{"all_reduce", 1024}, 1}, {{"all_reduce", 4096}, 2}}));
}

TEST(Validate, ObjectiveZeroBusbwIsNullopt) {
  const std::map<BucketKey, double> values = {{{"all_reduce", 1024}, 10}, {{"all_reduce", 4096}, 0}};
  EXPECT_FALSE(objective_GBps(values, {}));
  EXPECT_FALSE(objective_GBps(values, {{{"all_reduce", 4096}, 1}}));
  EXPECT_TRUE(objective_GBps(values, {{{"all_reduce", 1024}, 1}}));
  EXPECT_FALSE(objective_GBps(values, {{{"all_reduce", 1024}, 0}}));  // nothing weighs
}

TEST(Validate, LoadWeightsValid) {
  ScratchDir d;
  const auto p = d.write("w.json", R"({"schema": "railkit.weights/1", "messages": [
      {"coll": "all_reduce", "bytes": "4M", "count": 10},
      {"coll": "all_reduce", "bytes": 5000000, "count": 2},
      {"coll": "all_gather", "bytes": 1000, "count": 0.5},
      {"coll": "broadcast", "bytes": "64K", "count": 0}]})");
  const BucketWeights w = load_weights(p.string());
  ASSERT_EQ(w.size(), 3u);
  EXPECT_DOUBLE_EQ((w.at({"all_reduce", 4194304})), 10.0 * 4194304 + 2.0 * 5000000);
  EXPECT_DOUBLE_EQ((w.at({"all_gather", 256})), 500.0);
  EXPECT_DOUBLE_EQ((w.at({"broadcast", 65536})), 0.0);
}

TEST(Validate, LoadWeightsErrorsNameTheFile) {
  ScratchDir d;
  const struct {
    const char* name;
    const char* text;
    const char* problem;
  } cases[] = {
      {"schema.json", R"({"schema": "railkit.weights/2", "messages": []})", "railkit.weights/1"},
      {"nomsg.json", R"({"schema": "railkit.weights/1"})", "railkit.weights/1"},
      {"notjson.json", R"({"schema": )", "not JSON"},
      {"negative.json", R"({"schema": "railkit.weights/1", "messages": [{"coll": "all_reduce", "bytes": 8, "count": -1}]})",
       "messages[0].count"},
      {"zero.json", R"({"schema": "railkit.weights/1", "messages": [{"coll": "all_reduce", "bytes": 8, "count": 1},
                                                                 {"coll": "all_reduce", "bytes": 0, "count": 1}]})",
       "messages[1].bytes: must be > 0"},
      {"badsize.json", R"({"schema": "railkit.weights/1", "messages": [{"coll": "all_reduce", "bytes": "4Q", "count": 1}]})",
       "messages[0].bytes"},
      {"negbytes.json", R"({"schema": "railkit.weights/1", "messages": [{"coll": "all_reduce", "bytes": -8, "count": 1}]})",
       "messages[0].bytes"},
      {"nocoll.json", R"({"schema": "railkit.weights/1", "messages": [{"bytes": 8, "count": 1}]})", "needs coll"},
      {"empty.json", R"({"schema": "railkit.weights/1", "messages": []})", "no messages"},
  };
  for (const auto& c : cases) {
    const auto p = d.write(c.name, c.text);
    const std::string m = usage_error_of([&] { load_weights(p.string()); });
    EXPECT_NE(m.find(p.string()), std::string::npos) << c.name << ": " << m;
    EXPECT_NE(m.find(c.problem), std::string::npos) << c.name << ": " << m;
  }
}

TEST(Validate, PairedRatioKnownValues) {
  // Per-round ratios 2 and 8: geometric mean 4; the log ratios ln2 and 3 ln2 have standard
  // error ln2, so the interval is 4 * 2^(-+12.706).
  const PairedRatio r = paired_ratio({1, 2}, {2, 16});
  EXPECT_EQ(r.n, 2);
  EXPECT_NEAR(r.ratio, 4.0, 1e-12);
  EXPECT_NEAR(r.lo, std::exp((2 - 12.706) * std::log(2.0)), 1e-12);
  EXPECT_NEAR(r.hi, std::exp((2 + 12.706) * std::log(2.0)), 1e-6);

  // Five rounds: mean of logs and the t95(4) interval computed here.
  const std::vector<double> base = {10, 11, 9, 10.5, 10.2}, tuned = {11, 12.5, 9.6, 11.4, 11.0};
  double mean = 0;
  std::vector<double> l;
  for (size_t i = 0; i < base.size(); ++i) l.push_back(std::log(tuned[i] / base[i]));
  for (double x : l) mean += x / 5;
  double ss = 0;
  for (double x : l) ss += (x - mean) * (x - mean);
  const double h = 2.776 * std::sqrt(ss / 4 / 5);
  const PairedRatio r5 = paired_ratio(base, tuned);
  EXPECT_EQ(r5.n, 5);
  EXPECT_NEAR(r5.ratio, std::exp(mean), 1e-12);
  EXPECT_NEAR(r5.lo, std::exp(mean - h), 1e-12);
  EXPECT_NEAR(r5.hi, std::exp(mean + h), 1e-12);
  EXPECT_LT(r5.lo, r5.ratio);
  EXPECT_GT(r5.hi, r5.ratio);
  EXPECT_GT(r5.lo, 1.0);  // consistently faster: significant

  // Identical ratios: a zero-width interval.
  const PairedRatio same = paired_ratio({1, 2, 4}, {1.5, 3, 6});
  EXPECT_NEAR(same.ratio, 1.5, 1e-12);
  EXPECT_NEAR(same.lo, 1.5, 1e-12);
  EXPECT_NEAR(same.hi, 1.5, 1e-12);
}

TEST(Validate, PairedRatioSingleRound) {
  const PairedRatio r = paired_ratio({8}, {10});
  EXPECT_EQ(r.n, 1);
  EXPECT_DOUBLE_EQ(r.ratio, 1.25);
  EXPECT_DOUBLE_EQ(r.lo, 1.25);
  EXPECT_DOUBLE_EQ(r.hi, 1.25);
}

TEST(Validate, PairedRatioRejectsBadInput) {
  EXPECT_THROW(paired_ratio({1, 2}, {1}), std::invalid_argument);
  EXPECT_THROW(paired_ratio({1}, {1, 2}), std::invalid_argument);
  EXPECT_THROW(paired_ratio({}, {}), std::invalid_argument);
  EXPECT_THROW(paired_ratio({1, 0}, {1, 1}), std::invalid_argument);
  EXPECT_THROW(paired_ratio({1, 1}, {1, -1}), std::invalid_argument);
  EXPECT_THROW(paired_ratio({1, NAN}, {1, 1}), std::invalid_argument);
}

TEST(Validate, T95Table) {
  EXPECT_DOUBLE_EQ(t95(1), 12.706);
  EXPECT_DOUBLE_EQ(t95(2), 4.303);
  EXPECT_DOUBLE_EQ(t95(4), 2.776);
  EXPECT_DOUBLE_EQ(t95(10), 2.228);
  EXPECT_DOUBLE_EQ(t95(30), 2.042);
  EXPECT_NEAR(t95(60), 2.000, 1e-12);
  EXPECT_NEAR(t95(120), 1.980, 1e-12);
  EXPECT_DOUBLE_EQ(t95(121), 1.96);
  EXPECT_DOUBLE_EQ(t95(100000), 1.96);
  EXPECT_TRUE(std::isinf(t95(0)));
  for (int df = 1; df < 200; ++df) EXPECT_GE(t95(df), t95(df + 1)) << df;  // decreasing
}


}  // namespace
}  // namespace railkit::tuner
