#include "profiles/plugin/rules.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <exception>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/collectives.hpp"
#include "profiles/plugin/nccl_tuner_abi.h"

namespace railkit::tuner_plugin {
namespace {

namespace abi = railkit::nccl_abi;

// The collectives the tuner is asked about: ncclFunc_t 0 (broadcast) to 4 (allreduce), named by
// core's collectives table (railkit-bench, NCCL_ALGO prefixes, the example CSV).
constexpr int kTunedColls = abi::kFuncAllReduce + 1;
const Collective& tuned_coll(int func) { return *collective_of_nccl_func(func); }
/// "broadcast, reduce, allgather, reducescatter, allreduce": the CSV names, in ncclFunc_t order.
std::string tuned_csv_names() {
  std::string out;
  for (int c = 0; c < kTunedColls; ++c) out += fmt::format("{}{}", c == 0 ? "" : ", ", tuned_coll(c).tuner_csv);
  return out;
}
// Indexed by the cost table's algorithm / protocol index: CSV spelling, NCCL_ALGO/PROTO spelling.
constexpr std::string_view kAlgoCsv[] = {"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
constexpr std::string_view kAlgoEnv[] = {"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
constexpr std::string_view kProtoCsv[] = {"ll", "ll128", "simple"};
constexpr std::string_view kProtoEnv[] = {"LL", "LL128", "Simple"};
static_assert(std::size(kAlgoCsv) == abi::kNumAlgorithms && std::size(kAlgoEnv) == abi::kNumAlgorithms);
static_assert(std::size(kProtoCsv) == abi::kNumProtocols && std::size(kProtoEnv) == abi::kNumProtocols);

constexpr long long kMaxChannels = 64;  // MAXCHANNELS, src/include/device.h of NCCL 2.28.9

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    const size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

template <size_t N>
int index_of(const std::string_view (&names)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (iequals(names[i], name)) return static_cast<int>(i);
  return -1;
}

template <size_t N>
std::string join(const std::string_view (&names)[N]) {
  std::string s;
  for (const auto n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

std::optional<long long> parse_ll(std::string_view s) {
  long long v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// -------------------------------------------------------------------- CSV
// One CSV line to a rule, or the reason it is malformed.
std::string csv_rule(std::string_view line, Rule& r) {
  const auto f = split(line, ',');
  if (f.size() < 8 || f.size() > 10)
    return fmt::format("{} fields, want 8 to 10 (collective_type,min_bytes,max_bytes,algorithm,protocol,channels,"
                       "nNodes,nRanks[,numPipeOps[,regBuff]])", f.size());
  std::vector<std::string_view> v;
  for (const auto x : f) v.push_back(trim(x));

  bool coll_found = false;
  for (int c = 0; c < kTunedColls; ++c)
    if (iequals(v[0], tuned_coll(c).tuner_csv)) r.coll = c, coll_found = true;
  if (!coll_found) return fmt::format("unknown collective_type '{}' ({})", v[0], tuned_csv_names());

  const char* names[] = {"min_bytes", "max_bytes", "algorithm", "protocol", "channels", "nNodes", "nRanks",
                         "numPipeOps", "regBuff"};
  auto integer = [&](size_t i, long long& out) -> std::string {
    const auto x = parse_ll(v[i]);
    if (!x) return fmt::format("{} '{}' is not an integer", names[i - 1], v[i]);
    if (*x < -1) return fmt::format("{} {} is below -1 (-1 = any)", names[i - 1], *x);
    out = *x;
    return "";
  };
  long long lo = 0, hi = 0;
  if (auto e = integer(1, lo); !e.empty()) return e;
  if (auto e = integer(2, hi); !e.empty()) return e;
  r.min_bytes = lo == -1 ? 0 : static_cast<std::uint64_t>(lo);
  r.max_bytes = hi == -1 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(hi);
  if (r.min_bytes > r.max_bytes) return fmt::format("min_bytes {} is above max_bytes {}", r.min_bytes, r.max_bytes);

  if (v[3] == "-1") {
    r.algos = kAnyAlgo;
  } else if (const int a = index_of(kAlgoCsv, v[3]); a >= 0) {
    r.algos = 1u << a;
  } else {
    return fmt::format("unknown algorithm '{}' ({} or -1)", v[3], join(kAlgoCsv));
  }
  if (v[4] == "-1") {
    r.protos = kAnyProto;
  } else if (const int p = index_of(kProtoCsv, v[4]); p >= 0) {
    r.protos = 1u << p;
  } else {
    return fmt::format("unknown protocol '{}' ({} or -1)", v[4], join(kProtoCsv));
  }
  long long ch = 0;
  if (auto e = integer(5, ch); !e.empty()) return e;
  if (ch > kMaxChannels) return fmt::format("channels {} is above {} (NCCL's MAXCHANNELS)", ch, kMaxChannels);
  r.channels = static_cast<int>(ch > 0 ? ch : 0);
  if (auto e = integer(6, r.nodes); !e.empty()) return e;
  if (auto e = integer(7, r.ranks); !e.empty()) return e;
  if (v.size() > 8)
    if (auto e = integer(8, r.pipe_ops); !e.empty()) return e;
  if (v.size() > 9) {
    if (auto e = integer(9, r.reg_buff); !e.empty()) return e;
    if (r.reg_buff > 1) return fmt::format("regBuff {} is not 0, 1 or -1", r.reg_buff);
  }
  return "";
}

// ---------------------------------------------------------------- profile
// The mask NCCL_ALGO / NCCL_PROTO allows for collective `coll`, in NCCL's syntax
// ("ring,tree", "^tree", "ring;allreduce:tree"): later parts for the collective override.
template <size_t N>
std::optional<std::uint32_t> env_mask(std::string_view value, int coll, const std::string_view (&names)[N],
                                      std::string& problem) {
  std::uint32_t mask = (1u << N) - 1;
  for (auto part : split(value, ';')) {
    if (const size_t colon = part.find(':'); colon != std::string_view::npos) {
      const auto prefix = trim(part.substr(0, colon));
      bool known = false;
      for (int c = 0; c < kTunedColls; ++c) known = known || iequals(prefix, tuned_coll(c).nccl_name);
      if (!known) {
        problem = fmt::format("unknown collective prefix '{}'", prefix);
        return std::nullopt;
      }
      if (!iequals(prefix, tuned_coll(coll).nccl_name)) continue;
      part = part.substr(colon + 1);
    }
    part = trim(part);
    const bool invert = !part.empty() && part.front() == '^';
    if (invert) part.remove_prefix(1);
    std::uint32_t listed = 0;
    for (const auto item : split(part, ',')) {
      const int i = index_of(names, trim(item));
      if (i < 0) {
        problem = fmt::format("'{}' is not one of {}", trim(item), join(names));
        return std::nullopt;
      }
      listed |= 1u << i;
    }
    mask = invert ? ((1u << N) - 1) & ~listed : listed;
  }
  return mask;
}

std::optional<int> env_channels(const std::map<std::string, std::string>& env, std::string& problem) {
  for (const char* key : {"NCCL_MAX_NCHANNELS", "NCCL_MAX_CTAS", "NCCL_MIN_NCHANNELS", "NCCL_MIN_CTAS"}) {
    const auto it = env.find(key);
    if (it == env.end()) continue;
    const auto v = parse_ll(trim(it->second));
    if (!v || *v < 1 || *v > kMaxChannels) {
      problem = fmt::format("{}={} is not a channel count", key, it->second);
      return std::nullopt;
    }
    return static_cast<int>(*v);
  }
  return 0;
}

std::string describe(const Rule& r) {
  auto field = [](long long v) { return v < 0 ? std::string("any") : std::to_string(v); };
  std::string algos, protos;
  for (int a = 0; a < abi::kNumAlgorithms; ++a)
    if ((r.algos >> a) & 1u) algos += (algos.empty() ? "" : ",") + std::string(kAlgoCsv[a]);
  for (int p = 0; p < abi::kNumProtocols; ++p)
    if ((r.protos >> p) & 1u) protos += (protos.empty() ? "" : ",") + std::string(kProtoCsv[p]);
  return fmt::format("{} [{}-{}] {}/{} channels={} nodes={} ranks={}", coll_name(r.coll), r.min_bytes,
                     r.max_bytes == std::numeric_limits<std::uint64_t>::max() ? std::string("max")
                                                                              : std::to_string(r.max_bytes),
                     r.algos == kAnyAlgo ? "any" : algos, r.protos == kAnyProto ? "any" : protos,
                     r.channels > 0 ? std::to_string(r.channels) : "nccl", field(r.nodes), field(r.ranks));
}

bool selects(const Rule& r) { return r.algos != kAnyAlgo || r.protos != kAnyProto; }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot open", path));
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw std::runtime_error(fmt::format("{}: read error", path));
  return s.str();
}

constexpr const char* kNoop = "the plugin does nothing; NCCL's own choices stand";

}  // namespace

std::string_view coll_name(int coll) noexcept {
  return coll >= 0 && coll < kTunedColls ? tuned_coll(coll).tuner_csv : "?";
}
std::string_view algo_name(int algo) noexcept {
  return algo >= 0 && algo < abi::kNumAlgorithms ? kAlgoCsv[algo] : "?";
}
std::string_view proto_name(int proto) noexcept {
  return proto >= 0 && proto < abi::kNumProtocols ? kProtoCsv[proto] : "?";
}

void rules_from_csv(std::string_view text, const std::string& source, Loaded& out) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a spreadsheet's UTF-8 byte order mark
  size_t line_no = 0;
  for (auto line : split(text, '\n')) {
    ++line_no;
    line = trim(line);
    if (line.empty() || line.front() == '#') continue;
    Rule r;
    r.origin = fmt::format("{}:{}", source, line_no);
    if (const auto problem = csv_rule(line, r); !problem.empty()) {
      out.log.push_back({Severity::Warn, fmt::format("{}: skipped: {}", r.origin, problem)});
      continue;
    }
    out.rules.push_back(std::move(r));
  }
}

void rules_from_profile(const ProfileDocument& p, Loaded& out) {
  for (size_t i = 0; i < p.decisions.size(); ++i) {
    const auto& d = p.decisions[i];
    Rule r;
    r.origin = fmt::format("decisions[{}]", i);
    int coll = -1;
    if (const Collective* x = find_collective(d.coll); x && x->nccl_func >= 0 && x->nccl_func < kTunedColls)
      coll = x->nccl_func;
    if (coll < 0) continue;  // alltoall, sendrecv: NCCL's tuner is not asked about them
    r.coll = coll;
    r.min_bytes = d.min_bytes;
    r.max_bytes = d.max_bytes;
    std::string problem;
    std::optional<std::uint32_t> algos = kAnyAlgo, protos = kAnyProto;
    if (const auto it = d.env.find("NCCL_ALGO"); it != d.env.end()) algos = env_mask(it->second, coll, kAlgoEnv, problem);
    if (const auto it = d.env.find("NCCL_PROTO"); algos && it != d.env.end())
      protos = env_mask(it->second, coll, kProtoEnv, problem);
    const auto channels = algos && protos ? env_channels(d.env, problem) : std::nullopt;
    if (!algos || !protos || !channels) {
      out.log.push_back({Severity::Warn, fmt::format("{} ({}): skipped: {}", r.origin, d.coll, problem)});
      continue;
    }
    r.algos = *algos;
    r.protos = *protos;
    r.channels = *channels;
    out.rules.push_back(std::move(r));
  }
}

Loaded load(const PluginEnv& env, std::size_t nRanks, std::size_t nNodes) noexcept {
  Loaded out;
  try {
    std::string what;
    if (env.profile) {
      const ProfileDocument p = load_profile(*env.profile);
      if (static_cast<std::size_t>(p.cluster.nodes) != nNodes || static_cast<std::size_t>(p.cluster.ranks) != nRanks) {
        out.log.push_back({Severity::Warn,
                           fmt::format("RAILKIT_PROFILE={}: profile '{}' was measured on {} nodes, {} ranks; this "
                                       "communicator has {} nodes, {} ranks, and a profile measured at another scale "
                                       "is no evidence for this one: {}",
                                       *env.profile, p.name, p.cluster.nodes, p.cluster.ranks, nNodes, nRanks, kNoop)});
        return out;
      }
      rules_from_profile(p, out);
      what = fmt::format("profile '{}' (RAILKIT_PROFILE={})", p.name, *env.profile);
    } else if (env.config_file) {
      rules_from_csv(read_file(*env.config_file), *env.config_file, out);
      what = fmt::format("NCCL_TUNER_CONFIG_FILE={}", *env.config_file);
    } else {
      out.log.push_back({Severity::Warn, fmt::format("neither RAILKIT_PROFILE nor NCCL_TUNER_CONFIG_FILE is set: {}", kNoop)});
      return out;
    }
    const auto n_select = std::count_if(out.rules.begin(), out.rules.end(), selects);
    out.log.push_back({Severity::Info, fmt::format("loaded {}: {} rules, {} choosing an algorithm or protocol, for {} "
                                                   "nodes, {} ranks", what, out.rules.size(), n_select, nNodes, nRanks)});
    for (const auto& r : out.rules)
      if (selects(r)) out.log.push_back({Severity::Detail, fmt::format("{}: {}", r.origin, describe(r))});
  } catch (const std::exception& e) {
    out.rules.clear();
    out.log.push_back({Severity::Warn, fmt::format("{}: {}", e.what(), kNoop)});
  } catch (...) {
    out.rules.clear();
    out.log.push_back({Severity::Warn, fmt::format("unknown error while loading: {}", kNoop)});
  }
  return out;
}

const Rule* find_rule(std::span<const Rule> rules, int coll, std::size_t nBytes, std::size_t nNodes, std::size_t nRanks,
                      int numPipeOps, int regBuff) noexcept {
  auto any_or = [](long long want, long long have) { return want < 0 || want == have; };
  for (const auto& r : rules) {
    if (r.coll == coll && nBytes >= r.min_bytes && nBytes <= r.max_bytes &&
        any_or(r.nodes, static_cast<long long>(nNodes)) && any_or(r.ranks, static_cast<long long>(nRanks)) &&
        any_or(r.pipe_ops, numPipeOps) && any_or(r.reg_buff, regBuff))
      return &r;
  }
  return nullptr;
}

Applied apply(const Rule& r, float* table, int numAlgo, int numProto, int* nChannels) noexcept {
  Applied done;
  if (!table || numAlgo <= 0 || numProto <= 0 || !selects(r)) return done;
  float best = 0;
  for (int a = 0; a < std::min(numAlgo, 32); ++a) {
    if (!((r.algos >> a) & 1u)) continue;
    for (int p = 0; p < std::min(numProto, 32); ++p) {
      if (!((r.protos >> p) & 1u)) continue;
      const float cost = table[a * numProto + p];
      if (cost >= 0 && (done.algo < 0 || cost < best)) done.algo = a, done.proto = p, best = cost;
    }
  }
  if (done.algo < 0) return done;
  table[done.algo * numProto + done.proto] = 0.0f;
  // NCCL 2.28 clamps the count to the communicator's channels except for CollNet, where a count
  // above them would address channels that do not exist: there NCCL's count stands.
  const bool collnet = done.algo == abi::kAlgoCollNetDirect || done.algo == abi::kAlgoCollNetChain;
  if (r.channels > 0 && nChannels && !collnet) {
    *nChannels = r.channels;
    done.channels = r.channels;
  }
  return done;
}

}  // namespace railkit::tuner_plugin
