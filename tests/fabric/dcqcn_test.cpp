// DCQCN show/apply/restore on fixture trees of both layouts (tests/fixtures/dcqcn/gen_dcqcn.py,
// generated into a fresh temporary directory per test since the tests write).
#include "fabric/dcqcn.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "test_util.hpp"

namespace railkit::fabric {
namespace {
namespace fs = std::filesystem;

const char* const kGen = RAILKIT_TESTS_DIR "/fixtures/dcqcn/gen_dcqcn.py";

std::string slurp(const fs::path& p) {
  std::string s = read_file(p);
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

/// Makes a file unwritable even for root where it can: mode 0444, else the immutable flag.
/// Returns false when neither stops a write here.
bool make_unwritable(const fs::path& p) {
  ::chmod(p.c_str(), 0444);
  if (::access(p.c_str(), W_OK) != 0) return true;
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  int flags = 0;
  bool ok = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
  flags |= FS_IMMUTABLE_FL;
  ok = ok && ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
  ::close(fd);
  return ok;
}

void clear_immutable(const fs::path& p) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  int flags = 0;
  if (::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & FS_IMMUTABLE_FL)) {
    flags &= ~FS_IMMUTABLE_FL;
    (void)::ioctl(fd, FS_IOC_SETFLAGS, &flags);
  }
  ::close(fd);
  ::chmod(p.c_str(), 0644);
}

class Dcqcn : public ::testing::Test {
 protected:
  railkit::test::TempDir tmp{"railkit-dcqcn"};
  fs::path dir;
  SysRoot root;
  fs::path eth0_rp;  ///< eth0's ecn/roce_rp directory
  fs::path cc;       ///< eth2's debugfs cc_params
  std::vector<fs::path> locked;

  void SetUp() override {
    dir = tmp.path;
    root = SysRoot{dir};
    const std::string cmd = std::string("python3 ") + kGen + " " + dir.string();
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    eth0_rp = dir / "sys/devices/pci0000:00/0000:17:00.0/net/eth0/ecn/roce_rp";
    cc = dir / "sys/kernel/debug/mlx5/0000:31:00.0/cc_params";
  }
  void TearDown() override {
    for (const auto& p : locked) clear_immutable(p);
  }

  DcqcnDevice device(const std::string& nd) { return find_dcqcn_devices(root, {nd}).at(0); }
  fs::path state(const std::string& nd) { return default_state_file(root, nd); }
};

TEST_F(Dcqcn, FindsBothLayoutsAndSkipsTheRest) {
  const auto devs = find_dcqcn_devices(root, {});
  ASSERT_EQ(devs.size(), 3u);
  EXPECT_EQ(devs[0].netdev, "eth0");
  EXPECT_EQ(devs[0].layout, DcqcnLayout::Mlnx);
  EXPECT_EQ(devs[0].pci_bdf, "0000:17:00.0");
  EXPECT_EQ(devs[1].netdev, "eth1");
  EXPECT_EQ(devs[1].layout, DcqcnLayout::Mlnx);
  EXPECT_EQ(devs[2].netdev, "eth2");
  EXPECT_EQ(devs[2].layout, DcqcnLayout::Debugfs);
  EXPECT_EQ(devs[2].pci_bdf, "0000:31:00.0");
  EXPECT_EQ(devs[2].dir, fs::path("sys/kernel/debug/mlx5/0000:31:00.0/cc_params"));
  // Symlinks resolved inside the root.
  EXPECT_EQ(devs[0].files.at("roce_rp.rpg_time_reset"),
            fs::path("sys/devices/pci0000:00/0000:17:00.0/net/eth0/ecn/roce_rp/rpg_time_reset"));
  EXPECT_EQ(devs[2].files.at("roce_np.cnp_802p_prio"), devs[2].dir / "np_cnp_prio");
  EXPECT_EQ(devs[2].files.at("roce_rp.clamp_tgt_rate_after_time_inc"), devs[2].dir / "rp_clamp_tgt_rate_ati");
  EXPECT_EQ(debugfs_name("roce_rp.rpg_min_dec_fac"), "rp_min_dec_fac");
  EXPECT_EQ(debugfs_name("NCCL_ALGO"), "");
}

TEST_F(Dcqcn, NamedNetdevs) {
  EXPECT_THROW(find_dcqcn_devices(root, {"eth9"}), UsageError);
  EXPECT_THROW(find_dcqcn_devices(root, {"eth3"}), UnavailableError);
  EXPECT_THROW(find_dcqcn_devices(root, {"lo"}), UnavailableError);
  EXPECT_THROW(find_dcqcn_devices(root, {"../eth0"}), UsageError);
  const auto devs = find_dcqcn_devices(root, {"eth2", "eth0"});
  ASSERT_EQ(devs.size(), 2u);
  EXPECT_EQ(devs[0].netdev, "eth2");
}

TEST_F(Dcqcn, ReadsBothLayouts) {
  const auto a = read_dcqcn(root, device("eth0"));
  EXPECT_EQ(a.at("roce_rp.rpg_time_reset"), "300");
  EXPECT_EQ(a.at("roce_np.cnp_dscp"), "48");
  EXPECT_EQ(a.at("roce_rp.enable.3"), "0");
  EXPECT_EQ(a.at("roce_np.enable.4"), "1");
  EXPECT_EQ(a.size(), 19u + 16u);
  const auto b = read_dcqcn(root, device("eth1"));  // params/ subdirectory, two absent, "foo" ignored
  EXPECT_EQ(b.at("roce_rp.rpg_gd"), "11");
  EXPECT_EQ(b.count("roce_rp.clamp_tgt_rate_after_time_inc"), 0u);
  EXPECT_EQ(b.count("roce_np.cnp_802p_prio"), 0u);
  EXPECT_EQ(b.size(), 17u + 16u);
  const auto c = read_dcqcn(root, device("eth2"));
  EXPECT_EQ(c.at("roce_rp.rpg_time_reset"), "200");
  EXPECT_EQ(c.at("roce_np.cnp_802p_prio"), "6");
  EXPECT_EQ(c.size(), 19u);  // np_cnp_prio_mode is not a tunable
}

TEST_F(Dcqcn, AFifoInTheTreeIsNeitherWaitedForNorWritten) {
  // `dcqcn show` on a tree with a FIFO for an attribute blocked forever.
  const fs::path attr = eth0_rp / "rpg_time_reset";
  fs::remove(attr);
  ASSERT_EQ(::mkfifo(attr.c_str(), 0644), 0);
  try {
    read_dcqcn(root, device("eth0"));
    ADD_FAILURE() << "read a FIFO as an attribute";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("rpg_time_reset (roce_rp.rpg_time_reset): not a regular file"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(dcqcn_show_table(root, {device("eth0")}), IoError);
}

TEST_F(Dcqcn, ShowJsonAndTable) {
  const auto devs = find_dcqcn_devices(root, {});
  const auto j = dcqcn_show_json(root, devs);
  EXPECT_EQ(j["schema"], "railkit.dcqcn/1");
  ASSERT_EQ(j["netdevs"].size(), 3u);
  EXPECT_EQ(j["netdevs"][0]["layout"], "mlnx-sysfs");
  EXPECT_EQ(j["netdevs"][0]["attributes"]["roce_rp.rpg_time_reset"], 300);
  EXPECT_EQ(j["netdevs"][0]["enable"]["roce_rp"][3], 0);
  EXPECT_EQ(j["netdevs"][0]["enable"]["roce_np"][0], 1);
  EXPECT_TRUE(j["netdevs"][1]["attributes"]["roce_np.cnp_802p_prio"].is_null());
  EXPECT_FALSE(j["netdevs"][1]["attributes"].contains("roce_rp.foo"));
  EXPECT_EQ(j["netdevs"][2]["layout"], "debugfs");
  EXPECT_TRUE(j["netdevs"][2]["enable"].is_null());
  EXPECT_EQ(j["netdevs"][2]["attributes"]["roce_rp.rpg_time_reset"], 200);

  const std::string t = dcqcn_show_table(root, devs);
  EXPECT_NE(t.find("eth0  mlnx-sysfs  0000:17:00.0"), std::string::npos) << t;
  EXPECT_NE(t.find("eth2  debugfs  0000:31:00.0  sys/kernel/debug/mlx5/0000:31:00.0/cc_params"), std::string::npos);
  EXPECT_NE(t.find("1 1 1 0 1 1 1 1"), std::string::npos);
  EXPECT_NE(t.find("absent"), std::string::npos);
  EXPECT_NE(t.find("none in the debugfs layout"), std::string::npos);
  EXPECT_EQ(dcqcn_show_table(root, {}), "no netdev with DCQCN attributes under " + dir.string() + "\n");
}

TEST_F(Dcqcn, ApplyWritesAndSavesOriginals) {
  DcqcnSettings s;
  s.values = {{"roce_rp.rpg_time_reset", "100"}, {"roce_np.min_time_between_cnps", "+2"},
              {"roce_rp.clamp_tgt_rate", "true"}};
  s.enable_priorities = {3};
  const auto changes = apply_dcqcn(root, "eth0", s);
  ASSERT_EQ(changes.size(), 5u);
  EXPECT_EQ(changes[0].name, "roce_np.min_time_between_cnps");
  EXPECT_EQ(changes[0].before, "4");
  EXPECT_EQ(changes[0].after, "2");
  EXPECT_EQ(slurp(eth0_rp / "rpg_time_reset"), "100");
  EXPECT_EQ(slurp(eth0_rp / "clamp_tgt_rate"), "1");
  EXPECT_EQ(slurp(eth0_rp / "enable/3"), "1");
  EXPECT_EQ(slurp(eth0_rp / "../roce_np/min_time_between_cnps"), "2");
  EXPECT_EQ(slurp(eth0_rp / "../roce_np/enable/3"), "1");

  const auto st = nlohmann::json::parse(read_file(state("eth0")));
  EXPECT_EQ(st["schema"], "railkit.dcqcn-state/1");
  EXPECT_EQ(st["netdev"], "eth0");
  EXPECT_EQ(st["layout"], "mlnx-sysfs");
  ASSERT_EQ(st["entries"].size(), 5u);
  EXPECT_EQ(st["entries"][1]["name"], "roce_rp.clamp_tgt_rate");
  EXPECT_EQ(st["entries"][1]["old"], "0");
  EXPECT_EQ(st["entries"][3]["name"], "roce_rp.enable.3");
  EXPECT_EQ(st["entries"][3]["old"], "0");

  const auto r = restore_dcqcn(root, "eth0", state("eth0"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->restored, 5u);
  EXPECT_EQ(slurp(eth0_rp / "rpg_time_reset"), "300");
  EXPECT_EQ(slurp(eth0_rp / "clamp_tgt_rate"), "0");
  EXPECT_EQ(slurp(eth0_rp / "enable/3"), "0");
  EXPECT_EQ(slurp(eth0_rp / "../roce_np/enable/3"), "0");
  EXPECT_FALSE(fs::exists(state("eth0")));
  EXPECT_FALSE(restore_dcqcn(root, "eth0", state("eth0")));  // nothing to restore
}

TEST_F(Dcqcn, ApplyAndRestoreDebugfs) {
  DcqcnSettings s;
  s.values = {{"roce_rp.rpg_time_reset", "50"}, {"roce_np.cnp_802p_prio", "5"},
              {"roce_rp.clamp_tgt_rate_after_time_inc", "0"}};
  const fs::path sf = dir / "elsewhere/eth2-state.json";
  apply_dcqcn(root, "eth2", s, sf);
  EXPECT_EQ(slurp(cc / "rp_time_reset"), "50");
  EXPECT_EQ(slurp(cc / "np_cnp_prio"), "5");
  EXPECT_EQ(slurp(cc / "rp_clamp_tgt_rate_ati"), "0");
  EXPECT_EQ(read_dcqcn(root, device("eth2")).at("roce_np.cnp_802p_prio"), "5");
  EXPECT_FALSE(fs::exists(state("eth2")));
  ASSERT_TRUE(restore_dcqcn(root, "eth2", sf));
  EXPECT_EQ(slurp(cc / "rp_time_reset"), "200");
  EXPECT_EQ(slurp(cc / "np_cnp_prio"), "6");
  EXPECT_EQ(slurp(cc / "rp_clamp_tgt_rate_ati"), "1");
}

TEST_F(Dcqcn, InvalidValuesWriteNothing) {
  const auto before = read_dcqcn(root, device("eth0"));
  auto refused = [&](DcqcnSettings s, const std::string& nd, const std::string& needle) {
    try {
      apply_dcqcn(root, nd, s);
      ADD_FAILURE() << "accepted " << needle;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  };
  // A valid value first (alphabetically), then a bad one: neither is written.
  refused({{{"roce_np.cnp_dscp", "26"}, {"roce_rp.rpg_gd", "16"}}, {}}, "eth0", "roce_rp.rpg_gd=16: above the maximum 15");
  refused({{{"roce_rp.rpg_min_dec_fac", "-1"}}, {}}, "eth0", "below the minimum 0");
  refused({{{"roce_rp.rpg_ai_rate", "fast"}}, {}}, "eth0", "not an integer");
  refused({{{"roce_rp.clamp_tgt_rate", "2"}}, {}}, "eth0", "not a boolean");
  refused({{{"roce_rp.no_such", "1"}}, {}}, "eth0", "roce_rp.no_such: not a DCQCN attribute");
  refused({{{"NCCL_ALGO", "Ring"}}, {}}, "eth0", "NCCL_ALGO: not a DCQCN attribute");
  refused({{{"roce_np.cnp_802p_prio", "3"}}, {}}, "eth1", "not present");
  refused({{}, {3}}, "eth2", "no per-priority enable");
  refused({{}, {9}}, "eth0", "not in 0..7");
  EXPECT_EQ(read_dcqcn(root, device("eth0")), before);
  EXPECT_FALSE(fs::exists(state("eth0")));
  EXPECT_FALSE(fs::exists(state("eth1")));
  EXPECT_FALSE(fs::exists(state("eth2")));
}

TEST_F(Dcqcn, UnreadableAttributeWritesNothing) {
  // A "file" that cannot be read (a directory) fails before any state or write.
  fs::remove(eth0_rp / "rpg_threshold");
  fs::create_directory(eth0_rp / "rpg_threshold");
  DcqcnSettings s{{{"roce_rp.rpg_ai_rate", "10"}, {"roce_rp.rpg_threshold", "3"}}, {}};
  try {
    apply_dcqcn(root, "eth0", s);
    FAIL() << "applied";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("nothing written: cannot read"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rpg_threshold"), std::string::npos);
  }
  EXPECT_EQ(slurp(eth0_rp / "rpg_ai_rate"), "5");
  EXPECT_FALSE(fs::exists(state("eth0")));
}

TEST_F(Dcqcn, RepeatedApplyKeepsTheOriginals) {
  apply_dcqcn(root, "eth0", {{{"roce_rp.rpg_time_reset", "100"}}, {}});
  apply_dcqcn(root, "eth0", {{{"roce_rp.rpg_time_reset", "50"}, {"roce_rp.rpg_ai_rate", "20"}}, {}});
  EXPECT_EQ(slurp(eth0_rp / "rpg_time_reset"), "50");
  EXPECT_EQ(slurp(eth0_rp / "rpg_ai_rate"), "20");
  const auto st = nlohmann::json::parse(read_file(state("eth0")));
  ASSERT_EQ(st["entries"].size(), 2u);
  EXPECT_EQ(st["entries"][0]["name"], "roce_rp.rpg_time_reset");
  EXPECT_EQ(st["entries"][0]["old"], "300");  // not 100
  EXPECT_EQ(st["entries"][1]["name"], "roce_rp.rpg_ai_rate");
  EXPECT_EQ(st["entries"][1]["old"], "5");
  ASSERT_TRUE(restore_dcqcn(root, "eth0", state("eth0")));
  EXPECT_EQ(slurp(eth0_rp / "rpg_time_reset"), "300");
  EXPECT_EQ(slurp(eth0_rp / "rpg_ai_rate"), "5");
}

TEST_F(Dcqcn, StateOfAnotherNetdevIsRefused) {
  const fs::path sf = dir / "s.json";
  apply_dcqcn(root, "eth0", {{{"roce_rp.rpg_gd", "10"}}, {}}, sf);
  EXPECT_THROW(apply_dcqcn(root, "eth2", {{{"roce_rp.rpg_gd", "10"}}, {}}, sf), UsageError);
  EXPECT_EQ(slurp(cc / "rp_gd"), "11");
  write_file_atomic(dir / "bad.json", "{\"schema\": \"railkit.dcqcn-state/1\", \"root\": \"/\", \"netdev\": \"x\", "
                                      "\"layout\": \"debugfs\", \"entries\": [{\"name\": \"roce_rp.rpg_gd\", "
                                      "\"path\": \"../../etc/passwd\", \"old\": \"1\"}]}");
  EXPECT_THROW(restore_dcqcn(root, "x", dir / "bad.json"), UsageError);
  write_file_atomic(dir / "garbled.json", "{");
  EXPECT_THROW(restore_dcqcn(root, "eth0", dir / "garbled.json"), UsageError);
}

TEST_F(Dcqcn, InjectedFailureHalfWayRestoresEverything) {
  const auto before0 = read_dcqcn(root, device("eth0"));
  const auto before2 = read_dcqcn(root, device("eth2"));
  DcqcnSettings s{{{"roce_np.cnp_dscp", "26"}, {"roce_rp.rpg_ai_rate", "10"}, {"roce_rp.rpg_gd", "9"},
                   {"roce_rp.rpg_time_reset", "64"}},
                  {}};
  const auto devs = find_dcqcn_devices(root, {"eth0", "eth2"});
  std::vector<DcqcnTarget> targets{{devs[0], state("eth0")}, {devs[1], state("eth2")}};
  try {
    apply_dcqcn(root, targets, s, "roce_rp.rpg_gd");  // eth0 gets two writes, then the third fails
    FAIL() << "applied";
  } catch (const IoError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cannot write roce_rp.rpg_gd=9"), std::string::npos) << m;
    EXPECT_NE(m.find("wrote back the 2 value(s) set before it"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos);
  }
  EXPECT_EQ(read_dcqcn(root, device("eth0")), before0);
  EXPECT_EQ(read_dcqcn(root, device("eth2")), before2);
  EXPECT_TRUE(fs::exists(state("eth0")));  // the originals stay for restore
  ASSERT_TRUE(restore_dcqcn(root, "eth0", state("eth0")));
  ASSERT_TRUE(restore_dcqcn(root, "eth2", state("eth2")));
  EXPECT_EQ(read_dcqcn(root, device("eth0")), before0);
}

TEST_F(Dcqcn, RealWriteFailureHalfWayRestoresEverything) {
  // The second target's third entry (eth2, debugfs) cannot be written: eth0 and the first two of
  // eth2 are written, then all of them are written back.
  if (!make_unwritable(cc / "rp_gd")) GTEST_SKIP() << "cannot make a file unwritable here";
  locked.push_back(cc / "rp_gd");
  const auto before0 = read_dcqcn(root, device("eth0"));
  const auto before2 = read_dcqcn(root, device("eth2"));
  DcqcnSettings s{{{"roce_np.cnp_dscp", "26"}, {"roce_rp.rpg_ai_rate", "10"}, {"roce_rp.rpg_gd", "9"},
                   {"roce_rp.rpg_time_reset", "64"}},
                  {}};
  const auto devs = find_dcqcn_devices(root, {"eth0", "eth2"});
  std::vector<DcqcnTarget> targets{{devs[0], state("eth0")}, {devs[1], state("eth2")}};
  try {
    apply_dcqcn(root, targets, s);
    FAIL() << "applied";
  } catch (const IoError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cannot write roce_rp.rpg_gd=9 to " + (cc / "rp_gd").string()), std::string::npos) << m;
    EXPECT_NE(m.find("wrote back the 6 value(s) set before it"), std::string::npos) << m;
  }
  EXPECT_EQ(read_dcqcn(root, device("eth0")), before0);
  EXPECT_EQ(read_dcqcn(root, device("eth2")), before2);

  // A restore that cannot write keeps the state file and names the file.
  const fs::path sf = dir / "s2.json";
  apply_dcqcn(root, "eth2", {{{"roce_rp.rpg_ai_rate", "10"}}, {}}, sf);
  auto st = nlohmann::json::parse(read_file(sf));
  st["entries"].push_back({{"name", "roce_rp.rpg_gd"}, {"path", "sys/kernel/debug/mlx5/0000:31:00.0/cc_params/rp_gd"},
                           {"old", "12"}});
  write_file_atomic(sf, st.dump());
  try {
    restore_dcqcn(root, "eth2", sf);
    FAIL() << "restored";
  } catch (const IoError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cannot restore roce_rp.rpg_gd=12 to " + (cc / "rp_gd").string()), std::string::npos) << m;
    EXPECT_NE(m.find("restored 1 of 2"), std::string::npos) << m;
  }
  EXPECT_TRUE(fs::exists(sf));
  EXPECT_EQ(slurp(cc / "rp_ai_rate"), "5");  // the others were restored all the same
}

// ---- restore trusts nothing in a state file (issue 14)

/// eth0 applied (rpg_time_reset 300 -> 100, rpg_ai_rate 5 -> 20), its state file returned with
/// `tamper` applied to the JSON.
class DcqcnTampered : public Dcqcn {
 protected:
  fs::path applied(const std::function<void(nlohmann::json&)>& tamper) {
    const fs::path sf = state("eth0");
    apply_dcqcn(root, "eth0", {{{"roce_rp.rpg_time_reset", "100"}, {"roce_rp.rpg_ai_rate", "20"}}, {}});
    auto st = nlohmann::json::parse(read_file(sf));
    tamper(st);
    write_file_atomic(sf, st.dump());
    return sf;
  }
  /// restore_dcqcn refuses `sf` with UsageError whose one line holds `needles`; nothing written,
  /// the state file kept.
  void refused(const fs::path& sf, const std::vector<std::string>& needles) {
    const auto before = read_dcqcn(root, device("eth0"));
    try {
      restore_dcqcn(root, "eth0", sf);
      ADD_FAILURE() << "restored " << read_file(sf);
    } catch (const UsageError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("nothing restored: " + sf.string() + ": "), std::string::npos) << m;
      for (const auto& n : needles) EXPECT_NE(m.find(n), std::string::npos) << "no '" << n << "' in: " << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
    EXPECT_EQ(read_dcqcn(root, device("eth0")), before);  // not even the good entries
    EXPECT_TRUE(fs::exists(sf));
  }
};

TEST_F(DcqcnTampered, APathThatIsNotTheAttributesFileIsRefused) {
  // etc/passwd inside the root, and eth0's mtu, named as DCQCN attributes: values in range, paths
  // inside the root, but not the files of those attributes.
  fs::create_directories(dir / "etc");
  write_file_atomic(dir / "etc/passwd", "root:x:0:0::/root:/bin/sh\n");
  const std::string mtu = "sys/devices/pci0000:00/0000:17:00.0/net/eth0/mtu";
  const fs::path sf = applied([&](nlohmann::json& st) {
    st["entries"][0]["path"] = "etc/passwd";
    st["entries"].push_back({{"name", "roce_rp.rpg_threshold"}, {"path", mtu}, {"old", "1"}});
  });
  refused(sf, {"entries[0] (roce_rp.rpg_ai_rate): path 'etc/passwd' is not the roce_rp.rpg_ai_rate file of eth0",
               "entries[2] (roce_rp.rpg_threshold): path '" + mtu + "' is not the roce_rp.rpg_threshold file"});
  EXPECT_EQ(slurp(dir / "etc/passwd"), "root:x:0:0::/root:/bin/sh");
  EXPECT_EQ(slurp(dir / mtu), "9000");
  // ".." and absolute paths too.
  auto st = nlohmann::json::parse(read_file(sf));
  st["entries"][0]["path"] = "sys/../etc/passwd";
  st["entries"][1]["path"] = (dir / mtu).string();
  write_file_atomic(sf, st.dump());
  refused(sf, {"path 'sys/../etc/passwd' leaves the root", "entries[1] (roce_rp.rpg_time_reset): path '"});
  EXPECT_EQ(slurp(dir / mtu), "9000");
}

TEST_F(DcqcnTampered, AValueOutsideTheRangeApplyValidatesIsRefused) {
  const fs::path sf = applied([](nlohmann::json& st) {
    st["entries"][1]["old"] = "999999999";  // roce_rp.rpg_time_reset: 1..131071
    st["entries"].push_back({{"name", "roce_rp.enable.3"}, {"path", "x"}, {"old", "2"}});
    st["entries"].push_back({{"name", "roce_rp.mtu"}, {"path", "x"}, {"old", "1"}});
  });
  refused(sf, {"entries[1] (roce_rp.rpg_time_reset): value '999999999': above the maximum 131071",
               "entries[2] (roce_rp.enable.3): value '2': an enable is 0 or 1",
               "entries[3] (roce_rp.mtu): not a DCQCN attribute"});
  EXPECT_EQ(slurp(eth0_rp / "rpg_time_reset"), "100");
}

TEST_F(DcqcnTampered, ASymlinkOutOfTheRootIsNotFollowed) {
  railkit::test::TempDir outside{"railkit-dcqcn-outside"};
  write_file_atomic(outside.path / "rpg_ai_rate", "77\n");
  const fs::path sf = applied([](nlohmann::json&) {});
  // The attribute file itself becomes an absolute link out of the root.
  fs::remove(eth0_rp / "rpg_ai_rate");
  fs::create_symlink(outside.path / "rpg_ai_rate", eth0_rp / "rpg_ai_rate");
  refused(sf, {"entries[0] (roce_rp.rpg_ai_rate): path 'sys/devices/pci0000:00/0000:17:00.0/net/eth0/ecn/roce_rp/"
               "rpg_ai_rate': symlink ",
               " -> " + (outside.path / "rpg_ai_rate").string() + " leaves the root"});
  EXPECT_EQ(slurp(outside.path / "rpg_ai_rate"), "77");
  // A directory on the way becomes a relative link climbing out of the root.
  fs::remove(eth0_rp / "rpg_ai_rate");
  write_file_atomic(eth0_rp / "rpg_ai_rate", "20\n");
  fs::rename(eth0_rp, outside.path / "roce_rp");
  fs::create_symlink(fs::relative(outside.path / "roce_rp", eth0_rp.parent_path()), eth0_rp);
  refused(sf, {"entries[0] (roce_rp.rpg_ai_rate): path '", "/ecn/roce_rp -> ../", " leaves the root"});
  EXPECT_EQ(slurp(outside.path / "roce_rp/rpg_ai_rate"), "20");
  EXPECT_EQ(slurp(outside.path / "roce_rp/rpg_time_reset"), "100");
}

TEST_F(Dcqcn, ReadsAndWritesFollowNoSymlink) {
  // A link planted after the netdev was detected is not followed (here apply's read of the original).
  railkit::test::TempDir outside{"railkit-dcqcn-outside"};
  write_file_atomic(outside.path / "rpg_gd", "3\n");
  const auto d = device("eth0");
  fs::remove(eth0_rp / "rpg_gd");
  fs::create_symlink(outside.path / "rpg_gd", eth0_rp / "rpg_gd");
  DcqcnTarget t{d, state("eth0")};  // detected before the link was planted
  try {
    apply_dcqcn(root, {t}, {{{"roce_rp.rpg_gd", "9"}}, {}});
    ADD_FAILURE() << "applied through a symlink";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("rpg_gd is a symlink (not followed"), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(outside.path / "rpg_gd"), "3");
}

TEST_F(Dcqcn, RestoreTriesEveryNetdevAndKeepsTheStatesOfThoseThatFailed) {
  const auto before2 = read_dcqcn(root, device("eth2"));
  apply_dcqcn(root, "eth0", {{{"roce_rp.rpg_time_reset", "100"}}, {}});
  apply_dcqcn(root, "eth1", {{{"roce_rp.rpg_time_reset", "100"}, {"roce_rp.rpg_ai_rate", "20"}}, {}});
  apply_dcqcn(root, "eth2", {{{"roce_rp.rpg_time_reset", "100"}}, {}});
  // eth0: a refused state file; eth1: one attribute cannot be written (now a directory).
  auto st = nlohmann::json::parse(read_file(state("eth0")));
  st["entries"][0]["old"] = "999999999";
  write_file_atomic(state("eth0"), st.dump());
  const fs::path eth1_rp = dir / "sys/devices/pci0000:00/0000:17:00.1/net/eth1/ecn/roce_rp/params";
  fs::remove(eth1_rp / "rpg_ai_rate");
  fs::create_directory(eth1_rp / "rpg_ai_rate");

  const auto out = restore_dcqcn_all(root, {}, {});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].netdev, "eth0");
  EXPECT_EQ(out[0].error_code, ErrorCode::Usage);
  EXPECT_NE(out[0].error.find("above the maximum"), std::string::npos) << out[0].error;
  EXPECT_EQ(out[1].netdev, "eth1");
  EXPECT_EQ(out[1].error_code, ErrorCode::Io);
  EXPECT_NE(out[1].error.find("cannot restore roce_rp.rpg_ai_rate=5"), std::string::npos) << out[1].error;
  EXPECT_EQ(out[2].netdev, "eth2");
  EXPECT_FALSE(out[2].error_code) << out[2].error;
  ASSERT_TRUE(out[2].restored);
  EXPECT_EQ(out[2].restored->restored, 1u);

  EXPECT_EQ(slurp(eth0_rp / "rpg_time_reset"), "100");  // refused as a whole: nothing written
  EXPECT_EQ(slurp(eth1_rp / "rpg_time_reset"), "300");  // the others of eth1 restored all the same
  EXPECT_EQ(read_dcqcn(root, device("eth2")), before2);  // restored after the two failures
  EXPECT_TRUE(fs::exists(state("eth0")));
  EXPECT_TRUE(fs::exists(state("eth1")));
  EXPECT_FALSE(fs::exists(state("eth2")));

  try {
    check_restored(out);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Io);  // mixed: 6 and 9
    const std::string m = e.what();
    EXPECT_NE(m.find("2 of 3 netdevs not restored (their state files kept): eth0: "), std::string::npos) << m;
    EXPECT_NE(m.find("; eth1: cannot restore"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos);
  }
  EXPECT_THROW(check_restored({out[0], out[2]}), UsageError);  // all failures refused state files: 6
  EXPECT_NO_THROW(check_restored({out[2]}));
}

TEST_F(Dcqcn, ApplyAndRestoreShareTheStateFlagRule) {
  EXPECT_NO_THROW(check_state_flags("", {}));
  EXPECT_NO_THROW(check_state_flags("", {"eth0", "eth2"}));
  EXPECT_NO_THROW(check_state_flags("s.json", {"eth0"}));
  EXPECT_THROW(check_state_flags("s.json", {}), UsageError);
  EXPECT_THROW(check_state_flags("s.json", {"eth0", "eth2"}), UsageError);
  EXPECT_THROW(check_state_flags("", {"eth0", "eth0"}), UsageError);
  EXPECT_THROW(check_state_flags("", {"../../etc/x"}), UsageError);
  EXPECT_THROW(restore_dcqcn_all(root, {"../../etc/x"}, {}), UsageError);  // not <root>/etc/x.json
  EXPECT_THROW(restore_dcqcn_all(root, {}, dir / "s.json"), UsageError);

  // apply --netdev eth0 --state F, then restore --netdev eth0 --state F.
  const fs::path sf = dir / "s.json";
  apply_dcqcn(root, "eth0", {{{"roce_rp.rpg_gd", "9"}}, {}}, sf);
  // The mismatches apply refuses, restore refuses too: another netdev, another root.
  EXPECT_THROW(apply_dcqcn(root, "eth1", {{{"roce_rp.rpg_gd", "9"}}, {}}, sf), UsageError);
  try {
    restore_dcqcn(root, "eth1", sf);
    ADD_FAILURE() << "restored eth0's state to eth1";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("holds the originals of eth0 (mlnx-sysfs"), std::string::npos) << e.what();
  }
  railkit::test::TempDir other{"railkit-dcqcn-other"};
  ASSERT_EQ(std::system((std::string("python3 ") + kGen + " " + other.path.string()).c_str()), 0);
  EXPECT_THROW(apply_dcqcn(SysRoot{other.path}, "eth0", {{{"roce_rp.rpg_gd", "9"}}, {}}, sf), UsageError);
  EXPECT_THROW(restore_dcqcn(SysRoot{other.path}, "eth0", sf), UsageError);
  EXPECT_EQ(slurp(other.path / "sys/devices/pci0000:00/0000:17:00.0/net/eth0/ecn/roce_rp/rpg_gd"), "11");
  EXPECT_EQ(slurp(eth0_rp / "rpg_gd"), "9");

  const auto out = restore_dcqcn_all(root, {"eth0"}, sf);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].error_code) << out[0].error;
  EXPECT_EQ(slurp(eth0_rp / "rpg_gd"), "11");
  EXPECT_FALSE(fs::exists(sf));
}

TEST_F(Dcqcn, ApplyRefusesToSaveAnOriginalRestoreWouldRefuse) {
  write_file_atomic(eth0_rp / "rpg_time_reset", "999999999\n");
  try {
    apply_dcqcn(root, "eth0", {{{"roce_rp.rpg_time_reset", "100"}}, {}});
    ADD_FAILURE() << "applied";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("nothing written: the current roce_rp.rpg_time_reset of eth0 cannot be saved"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(slurp(eth0_rp / "rpg_time_reset"), "999999999");
  EXPECT_FALSE(fs::exists(state("eth0")));
}

}  // namespace
}  // namespace railkit::fabric
