#include "profiles/check.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <set>
#include <system_error>

#include <fmt/format.h>

#include "core/error.hpp"
#include "profiles/consume.hpp"
#include "topology/analyze.hpp"
#include "topology/probe.hpp"

namespace railkit::profiles {
namespace {
namespace fs = std::filesystem;

/// Library directories searched under the root, in the order a typical ld.so.conf lists them.
constexpr const char* kLibDirs[] = {
    "usr/lib/x86_64-linux-gnu", "usr/lib/aarch64-linux-gnu", "usr/lib/sbsa-linux-gnu", "usr/local/lib", "usr/lib64",
    "usr/lib", "lib/x86_64-linux-gnu", "lib64", "usr/local/cuda/lib64", "usr/local/cuda/lib",
    "usr/local/cuda/targets/x86_64-linux/lib", "usr/local/cuda/targets/sbsa-linux/lib", "usr/local/nccl/lib",
    "opt/nccl/lib",
};

/// "2.28" from a library file name "libnccl.so.2.28.9"; nullopt for libnccl.so / libnccl.so.2.
std::optional<std::string> version_of_file_name(const std::string& name) {
  static const std::regex re(R"(^libnccl\.so\.(\d+)\.(\d+)(\.\d+)*$)");
  std::smatch m;
  if (!std::regex_match(name, m, re)) return std::nullopt;
  return m[1].str() + "." + m[2].str();
}

/// The version of the library `file` (a path on this machine): its own name, else the name its
/// symlink chain ends at (read textually, so a capture's absolute links stay inside `root`).
std::optional<std::string> version_of(const fs::path& file, const fs::path& root) {
  fs::path p = file;
  for (int hop = 0; hop < 8; ++hop) {
    if (auto v = version_of_file_name(p.filename().string())) return v;
    std::error_code ec;
    if (!fs::is_symlink(p, ec)) return std::nullopt;
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) return std::nullopt;
    p = target.is_absolute() ? root / target.relative_path() : p.parent_path() / target;
  }
  return std::nullopt;
}

/// The libnccl.so* files of one directory, versioned names first.
std::optional<std::pair<std::string, std::string>> search_dir(const fs::path& dir, const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::nullopt;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().rfind("libnccl.so", 0) == 0) files.push_back(it->path());
  std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) {
    return a.filename().string().size() > b.filename().string().size();  // libnccl.so.2.28.9 first
  });
  for (const auto& f : files)
    if (auto v = version_of(f, root)) return std::make_pair(*v, f.string());
  return std::nullopt;
}

/// Paths of libnccl.so* in the dynamic linker's cache (`ldconfig -p`), for the live node only.
std::vector<fs::path> ldconfig_paths() {
  std::vector<fs::path> r;
  for (const char* cmd : {"ldconfig -p 2>/dev/null", "/sbin/ldconfig -p 2>/dev/null"}) {
    FILE* f = ::popen(cmd, "r");
    if (f == nullptr) continue;
    char line[4096];
    while (std::fgets(line, sizeof line, f) != nullptr) {
      const std::string s(line);
      const auto arrow = s.find("=> ");
      if (s.find("libnccl.so") == std::string::npos || arrow == std::string::npos) continue;
      std::string path = s.substr(arrow + 3);
      while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
      r.emplace_back(path);
    }
    const int rc = ::pclose(f);
    if (rc == 0) break;
  }
  return r;
}

std::string joined(const std::set<std::string>& s) {
  std::string r;
  for (const auto& x : s) r += (r.empty() ? "" : ", ") + x;
  return r;
}

std::string shown_list(const std::vector<std::string>& v) {
  std::string r;
  for (const auto& x : v) r += (r.empty() ? "" : ", ") + display(x);
  return r.empty() ? "(none)" : r;
}

using Status = CheckItem::Status;

}  // namespace

std::optional<std::string> major_minor(std::string_view text) {
  static const std::regex re(R"((\d+)\.(\d+))");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_search(text.begin(), text.end(), m, re)) return std::nullopt;
  return m[1].str() + "." + m[2].str();
}

std::optional<std::pair<std::string, std::string>> find_nccl_version(const fs::path& root) {
  std::error_code ec;
  const bool live = fs::equivalent(root, "/", ec);
  if (live) {
    if (const char* llp = std::getenv("LD_LIBRARY_PATH")) {
      std::string s(llp);
      std::size_t start = 0;
      while (start <= s.size()) {
        const std::size_t end = std::min(s.find(':', start), s.size());
        const std::string dir = s.substr(start, end - start);
        if (!dir.empty())
          if (auto v = search_dir(dir, root)) return v;
        start = end + 1;
      }
    }
    for (const auto& p : ldconfig_paths())
      if (auto v = version_of(p, root)) return std::make_pair(*v, p.string());
  }
  for (const char* d : kLibDirs)
    if (auto v = search_dir(root / d, root)) return v;
  return std::nullopt;
}

NodeFacts probe_node_facts(const fs::path& root, const std::optional<std::string>& nccl_override) {
  NodeFacts n;
  try {
    topo::ProbeOptions po;
    po.root = root;
    topo::Topology t = topo::probe_node(po);
    topo::analyze(t, topo::LintOptions{});
    n.fingerprint = t.fingerprint.hash;
    n.fingerprint_facts = t.fingerprint.facts;
    std::set<std::string> gpus, nics;
    for (const auto& g : t.gpus) gpus.insert(g.model);
    for (const auto& x : t.nics) nics.insert(x.model);
    n.gpu_models.assign(gpus.begin(), gpus.end());
    n.nic_models.assign(nics.begin(), nics.end());
  } catch (const Error& e) {
    n.fingerprint_error = e.what();
  }
  if (nccl_override) {
    n.nccl_version = major_minor(*nccl_override);
    if (!n.nccl_version) throw UsageError(fmt::format("--nccl-version {}: expected X.Y (2.28)", display(*nccl_override)));
    n.nccl_source = "--nccl-version";
  } else if (auto v = find_nccl_version(root)) {
    n.nccl_version = v->first;
    n.nccl_source = v->second;
  }
  return n;
}

std::optional<std::string> profile_nccl_version(const ProfileDocument& p) {
  const auto& extra = p.cluster.extra;
  if (extra.is_object() && extra.contains("nccl_version") && extra["nccl_version"].is_string())
    if (auto v = major_minor(extra["nccl_version"].get<std::string>())) return v;
  if (p.cluster.backend == "nccl") return major_minor(p.cluster.backend_version);
  return std::nullopt;
}

std::string gpu_family(std::string_view model) {
  std::string word;
  std::vector<std::string> words;
  for (char c : model) {
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (alnum) {
      word += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    } else if (c == ':' && !word.empty()) {
      word += c;  // "10de:2330" stays one word
    } else if (!word.empty()) {
      words.push_back(word);
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(word);
  for (const auto& w : words)
    if (w != "nvidia" && w != "tesla") return w;
  return {};
}

std::vector<FactDifference> fact_differences(const std::map<std::string, std::string>& profile,
                                             const std::map<std::string, std::string>& node) {
  std::vector<FactDifference> diffs;
  std::set<std::string> names;
  for (const auto& [k, _] : profile) names.insert(k);
  for (const auto& [k, _] : node) names.insert(k);
  for (const auto& k : names) {
    FactDifference d{k, std::nullopt, std::nullopt};
    if (const auto it = profile.find(k); it != profile.end()) d.profile = it->second;
    if (const auto it = node.find(k); it != node.end()) d.node = it->second;
    if (d.profile != d.node) diffs.push_back(std::move(d));
  }
  const auto group = [](const FactDifference& d) {
    if (!d.profile || !d.node) return 0;  // a device one side lacks
    const auto ends = [&](std::string_view suffix) {
      return d.fact.size() >= suffix.size() && d.fact.compare(d.fact.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    return ends(".count") || ends(".models") ? 1 : 2;
  };
  std::stable_sort(diffs.begin(), diffs.end(),
                   [&](const FactDifference& a, const FactDifference& b) { return group(a) < group(b); });
  return diffs;
}

namespace {

/// The fingerprint item: by hash; the differing facts named when the profile stores them.
CheckItem check_fingerprint(const ProfileCluster& c, const NodeFacts& node) {
  CheckItem fp{"fingerprint", Status::Same, c.fingerprint, node.fingerprint, "", {}};
  const bool has_facts = !c.fingerprint_facts.empty();
  if (c.fingerprint.empty() && !has_facts) {
    fp.status = Status::NotRecorded;
    fp.note = "the profile has no fingerprint (its probe could not run)";
    return fp;
  }
  if (node.fingerprint.empty()) {
    fp.status = Status::Unknown;
    fp.note = "this node could not be probed: " + node.fingerprint_error;
    return fp;
  }
  if (c.fingerprint == node.fingerprint) return fp;
  if (has_facts) fp.facts = fact_differences(c.fingerprint_facts, node.fingerprint_facts);
  if (c.fingerprint.empty()) {  // facts without their hash: compared by facts alone
    fp.profile = "(no hash)";
    fp.status = fp.facts.empty() ? Status::Same : Status::Differs;
    fp.note = fmt::format("the profile records the facts but no hash; compared fact by fact: {} differ", fp.facts.size());
    return fp;
  }
  fp.status = Status::Differs;
  if (!has_facts)
    fp.note = "the profile stores only the fingerprint's hash (no cluster.fingerprint_facts), so the facts that "
              "differ cannot be named; compare `railkit topo` of a profiled node with this one";
  else if (fp.facts.empty())
    fp.note = "no recorded fact differs, only the hash: the fingerprint's definition may differ between the railkit "
              "that wrote the profile and this one";
  else
    fp.note = fmt::format("{} fact(s) differ", fp.facts.size());
  return fp;
}

}  // namespace

std::vector<CheckItem> check_profile(const ProfileDocument& p, const NodeFacts& node) {
  std::vector<CheckItem> items;
  const ProfileCluster& c = p.cluster;

  items.push_back(check_fingerprint(c, node));

  CheckItem nccl{"NCCL", Status::Same, profile_nccl_version(p).value_or(""), node.nccl_version.value_or(""), "", {}};
  if (nccl.profile.empty()) {
    nccl.status = Status::NotRecorded;
    nccl.note = fmt::format("the profile records no NCCL version (backend {})", display(c.backend));
  } else if (!node.nccl_version) {
    nccl.status = Status::Unknown;
    nccl.note = "no libnccl.so.X.Y.Z found on this node; give --nccl-version X.Y";
  } else if (nccl.profile != nccl.node) {
    nccl.status = Status::Differs;
  } else {
    nccl.note = "major.minor, from " + display(node.nccl_source);
  }
  items.push_back(nccl);

  CheckItem gpu{"GPU models", Status::Same, shown_list(c.gpu_models), shown_list(node.gpu_models), "", {}};
  if (c.gpu_models.empty()) {
    gpu.status = Status::NotRecorded;
    gpu.note = "the profile lists no GPU model";
  } else {
    std::set<std::string> a, b;
    for (const auto& m : c.gpu_models) a.insert(gpu_family(m));
    for (const auto& m : node.gpu_models) b.insert(gpu_family(m));
    gpu.status = a == b ? Status::Same : Status::Differs;
    gpu.note = fmt::format("compared by family: profile {}, this node {}", joined(a), b.empty() ? "(none)" : joined(b));
  }
  items.push_back(gpu);

  CheckItem nic{"NIC models", Status::Same, shown_list(c.nic_models), shown_list(node.nic_models), "", {}};
  if (c.nic_models.empty()) {
    nic.status = Status::NotRecorded;
    nic.note = "the profile lists no NIC model";
  } else {
    const std::set<std::string> a(c.nic_models.begin(), c.nic_models.end()), b(node.nic_models.begin(), node.nic_models.end());
    nic.status = a == b ? Status::Same : Status::Differs;
  }
  items.push_back(nic);
  return items;
}

bool has_mismatch(const std::vector<CheckItem>& items) {
  return std::any_of(items.begin(), items.end(), [](const CheckItem& i) { return i.status == Status::Differs; });
}

std::vector<std::string> check_lines(const std::vector<CheckItem>& items) {
  std::vector<std::string> r;
  for (const auto& i : items) {
    std::string line;
    switch (i.status) {
      case Status::Same: line = fmt::format("{}: same ({})", i.what, display(i.node)); break;
      case Status::Differs:
        line = fmt::format("{}: differs: profile {}, this node {}", i.what, display(i.profile), display(i.node.empty() ? "(none)" : i.node));
        break;
      case Status::NotRecorded: line = fmt::format("{}: not recorded, not compared", i.what); break;
      case Status::Unknown: line = fmt::format("{}: unknown on this node, not compared (profile {})", i.what, display(i.profile)); break;
    }
    if (!i.note.empty()) line += " [" + i.note + "]";
    r.push_back(line);
    for (const auto& f : i.facts)
      r.push_back(fmt::format("  {}: profile {}, this node {}", display(f.fact), f.profile ? display(*f.profile) : "(absent)",
                              f.node ? display(*f.node) : "(absent)"));
  }
  return r;
}

}  // namespace railkit::profiles
