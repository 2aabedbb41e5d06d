// The tuning journal (tuner/journal): append, read back, torn and broken lines.
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
#include "tuner/journal.hpp"

namespace railkit::tuner {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ScratchDir = railkit::test::TempDir;
using railkit::test::usage_error_of;

// ---------------------------------------------------------------- journal

nlohmann::ordered_json session_line() {
  nlohmann::ordered_json j;
  j["type"] = "session";
  j["schema"] = kJournalSchema;
  j["space"] = "ompi-coll";
  return j;
}

nlohmann::ordered_json trial_line(int i) {
  nlohmann::ordered_json j;
  j["type"] = "trial";
  j["trial"] = i;
  j["objective_GBps"] = 1.5 * i;
  return j;
}

TEST(Journal, AppendReadRoundTrip) {
  ScratchDir d;
  const fs::path p = d.path / "journal.jsonl";
  append_journal(p, session_line());
  append_journal(p, trial_line(1));
  append_journal(p, trial_line(2));
  const auto lines = read_journal(p);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], json(session_line()));
  EXPECT_EQ(lines[1], json(trial_line(1)));
  EXPECT_EQ(lines[2]["trial"], 2);
  // One compact line each, keys in the order given.
  const std::string text = read_file(p);
  EXPECT_EQ(text.rfind(session_line().dump() + "\n", 0), 0u);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
}

TEST(Journal, TornLastLineDroppedAndTruncated) {
  const std::string tails[] = {
      R"({"type": "trial", "tri)",          // half JSON, no newline
      "{\"type\": \"trial\", \"tri\n",      // half JSON with a newline
      R"({"type": "trial", "trial": 9})",   // complete JSON but no newline
  };
  for (const auto& tail : tails) {
    ScratchDir d;
    const fs::path p = d.path / "journal.jsonl";
    append_journal(p, session_line());
    append_journal(p, trial_line(1));
    const auto good_size = fs::file_size(p);
    std::ofstream(p, std::ios::app | std::ios::binary) << tail;
    const auto lines = read_journal(p);
    ASSERT_EQ(lines.size(), 2u) << tail;
    EXPECT_EQ(fs::file_size(p), good_size) << tail;
    append_journal(p, trial_line(2));
    const auto again = read_journal(p);
    ASSERT_EQ(again.size(), 3u) << tail;
    EXPECT_EQ(again[2]["trial"], 2);
  }
}

TEST(Journal, BrokenMiddleLineNamesFileAndLine) {
  ScratchDir d;
  const fs::path p = d.path / "journal.jsonl";
  append_journal(p, session_line());
  std::ofstream(p, std::ios::app | std::ios::binary) << "{\"type\": \"tri\n";
  append_journal(p, trial_line(2));
  const auto size = fs::file_size(p);
  const std::string m = usage_error_of([&] { read_journal(p); });
  EXPECT_NE(m.find(p.string() + ":2:"), std::string::npos) << m;
  EXPECT_EQ(fs::file_size(p), size);  // not truncated

  // A complete last line that is JSON but not an object is broken too, not torn.
  ScratchDir d2;
  const fs::path p2 = d2.path / "journal.jsonl";
  append_journal(p2, session_line());
  std::ofstream(p2, std::ios::app | std::ios::binary) << "[1, 2]\n";
  const std::string m2 = usage_error_of([&] { read_journal(p2); });
  EXPECT_NE(m2.find(p2.string() + ":2:"), std::string::npos) << m2;
}

TEST(Journal, FirstLineMustBeSession) {
  ScratchDir d;
  const std::string cases[] = {
      trial_line(1).dump() + "\n" + trial_line(2).dump() + "\n",
      R"({"type": "session", "schema": "railkit.tune-journal/2"})" "\n",
      R"({"type": "session"})" "\n",
      "",
      R"({"type": "sess)",  // only a torn session line
  };
  int i = 0;
  for (const auto& text : cases) {
    const auto p = d.write("j" + std::to_string(i++) + ".jsonl", text);
    const std::string m = usage_error_of([&] { read_journal(p); });
    EXPECT_NE(m.find(p.string()), std::string::npos) << m;
    EXPECT_NE(m.find("railkit.tune-journal/1"), std::string::npos) << m;
  }
  EXPECT_THROW(read_journal(d.path / "missing.jsonl"), Error);
}


}  // namespace
}  // namespace railkit::tuner
