#include "core/bench_flags.hpp"

#include <algorithm>
#include <array>

#include "core/error.hpp"

namespace railkit {
namespace {

using F = BenchFlag;

constexpr std::string_view kPassed = "passed on";
constexpr std::string_view kAcceptSets = "railkit accept and railkit job --accept set it; refused in bench arguments";
constexpr std::string_view kAcceptSize = "accept gives a default; a stage's own value replaces the common one";
constexpr std::string_view kSimRead = "read for a simulated run's evidence (sweep, tune)";

constexpr std::array<BenchFlagSpec, 34> kFlags{{
    {F::Help, "-h", "--help", "", false, kPassed},
    {F::MinBytes, "-b", "--minbytes", "", true, kAcceptSize},
    {F::MaxBytes, "-e", "--maxbytes", "", true, kAcceptSize},
    {F::StepFactor, "-f", "--stepfactor", "", true, kAcceptSize},
    {F::StepBytes, "-i", "--stepbytes", "", true, "a stage's own value replaces the common one (accept)"},
    {F::Iters, "-n", "--iters", "", true, "tune takes it as the iterations of each trial; accept gives a default"},
    {F::WarmupIters, "-w", "--warmup_iters", "", true, "accept gives a default"},
    {F::Check, "-c", "--check", "", true, "tune's validation trials set -c 1"},
    {F::Datatype, "-d", "--datatype", "", true, kPassed},
    {F::Op, "-o", "--op", "", true, kPassed},
    {F::Root, "-r", "--root", "", true, kPassed},
    {F::Average, "-a", "--average", "", true, kPassed},
    {F::RunCycles, "-N", "--run_cycles", "", true, kAcceptSets},
    {F::Timeout, "-T", "--timeout", "", true, kPassed},
    {F::Sync, "", "--sync", "", false, kPassed},
    {F::OutputFile, "-J", "--output_file", "", true,
     "set for each launch by sweep, tune, accept and job (one results document each); refused in bench arguments"},
    {F::Prom, "", "--prom", "", true, kPassed},
    {F::Backend, "", "--backend", "", true,
     "read to know the backend before a launch (sim: one local process); railkit job sets it"},
    {F::Coll, "", "--coll", "", true, "read by tune (the space's collectives); accept sets each stage's"},
    {F::Label, "", "--label", "", true, "set to the configuration's name unless given; accept sets it"},
    {F::Placement, "", "--placement", "", true, "accept gives a default"},
    {F::Split, "", "--split", "", true, kAcceptSets},
    {F::RanksPerNode, "", "--ranks-per-node", "", true, kAcceptSets},
    {F::Device, "", "--device", "", true, kPassed},
    {F::NGpus, "-g", "--ngpus", "", true, kPassed},
    {F::CudaGraph, "-G", "--cudagraph", "", true, kPassed},
    {F::Observe, "", "--observe", "--no-observe", false, kPassed},
    {F::Nonblocking, "", "--nonblocking", "", false, kPassed},
    {F::InjectStall, "", "--inject-stall", "", true, kPassed},
    {F::InjectDelayUs, "", "--inject-delay-us", "", true, kPassed},
    {F::SimCluster, "", "--sim-cluster", "", true, "read for a simulated run's evidence; made absolute by tune"},
    {F::Fidelity, "", "--fidelity", "", true, kSimRead},
    {F::SimSet, "", "--sim-set", "", true, "read (seed=N); tune adds DCQCN and switch settings and seeds"},
    {F::Version, "", "--version", "", false, "asked before a launch to know what --backend auto resolves to"},
}};

constexpr bool in_enum_order() {
  for (std::size_t k = 0; k < kFlags.size(); ++k)
    if (static_cast<std::size_t>(kFlags[k].flag) != k) return false;
  return kFlags.back().flag == F::Version;
}
static_assert(in_enum_order(), "kFlags: one entry per BenchFlag, in the enum's order");

bool is_short(std::string_view name) { return name.size() == 2 && name[0] == '-' && name[1] != '-'; }

/// Whether args[i] is spelling `name` (of a flag that takes a value or not); nullopt when not.
/// A switch matches only itself or `name=...`, and never takes the next argument.
std::optional<BenchFlagHit> match_flag_spelling(const std::vector<std::string>& args, std::size_t i,
                                                std::string_view name, bool takes_value) {
  const std::string_view a = args.at(i);
  BenchFlagHit hit;
  hit.index = i;
  hit.spelling = name;
  if (a == name) {
    if (takes_value && i + 1 < args.size()) {
      hit.span = 2;
      hit.value = args[i + 1];
    }
    return hit;
  }
  if (name.empty() || a.size() <= name.size() || !a.starts_with(name)) return std::nullopt;
  if (is_short(name)) {  // -n5, as CLI11 reads it (and -n=5, whose value CLI11 reads as "=5")
    hit.value = std::string(a.substr(name.size()));
  } else if (a[name.size()] == '=') {
    hit.value = std::string(a.substr(name.size() + 1));
  } else {
    return std::nullopt;
  }
  hit.value_inline = true;
  return hit;
}

}  // namespace

std::span<const BenchFlagSpec> bench_flags() noexcept { return kFlags; }

const BenchFlagSpec& bench_flag(BenchFlag f) noexcept { return kFlags[static_cast<std::size_t>(f)]; }

std::string_view bench_flag_name(BenchFlag f) noexcept {
  const BenchFlagSpec& s = bench_flag(f);
  return s.short_name.empty() ? s.long_name : s.short_name;
}

std::string bench_flag_names(BenchFlag f) {
  const BenchFlagSpec& s = bench_flag(f);
  return s.short_name.empty() ? std::string(s.long_name) : std::string(s.short_name) + "/" + std::string(s.long_name);
}

std::vector<std::string> bench_flag_args(BenchFlag f, std::string value) {
  return {std::string(bench_flag_name(f)), std::move(value)};
}

std::vector<std::string> bench_flag_args(std::initializer_list<std::pair<BenchFlag, std::string>> flags) {
  std::vector<std::string> out;
  for (const auto& [f, value] : flags) out.insert(out.end(), {std::string(bench_flag_name(f)), value});
  return out;
}

std::optional<BenchFlagHit> match_bench_flag(const std::vector<std::string>& args, std::size_t i, BenchFlag f) {
  const BenchFlagSpec& s = bench_flag(f);
  for (std::string_view name : {s.short_name, s.long_name, s.negation}) {
    if (name.empty()) continue;
    if (auto hit = match_flag_spelling(args, i, name, s.takes_value)) return hit;
  }
  return std::nullopt;
}

std::vector<BenchFlagHit> find_bench_flag(const std::vector<std::string>& args, BenchFlag f) {
  std::vector<BenchFlagHit> out;
  for (std::size_t i = 0; i < args.size();) {
    if (auto hit = match_bench_flag(args, i, f)) {
      i += hit->span;
      out.push_back(std::move(*hit));
    } else {
      ++i;
    }
  }
  return out;
}

bool sets_bench_flag(const std::vector<std::string>& args, BenchFlag f) { return !find_bench_flag(args, f).empty(); }

std::vector<std::string> bench_flag_values(const std::vector<std::string>& args, BenchFlag f) {
  std::vector<std::string> out;
  for (BenchFlagHit& hit : find_bench_flag(args, f))
    if (hit.value) out.push_back(std::move(*hit.value));
  return out;
}

std::optional<std::string> last_bench_flag_value(const std::vector<std::string>& args, BenchFlag f) {
  std::vector<std::string> values = bench_flag_values(args, f);
  if (values.empty()) return std::nullopt;
  return std::move(values.back());
}

std::optional<std::string> take_bench_flag(std::vector<std::string>& args, BenchFlag f) {
  std::optional<std::string> value;
  for (const BenchFlagHit& hit : find_bench_flag(args, f)) {
    if (!hit.value) throw UsageError(std::string(hit.spelling) + ": missing value in the bench arguments");
    value = hit.value;
  }
  const BenchFlag drop[] = {f};
  args = without_bench_flags(args, drop);
  return value;
}

std::vector<std::string> without_bench_flags(const std::vector<std::string>& args, std::span<const BenchFlag> drop) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size();) {
    std::size_t span = 0;
    for (const BenchFlag f : drop)
      if (const auto hit = match_bench_flag(args, i, f)) {
        span = hit->span;
        break;
      }
    if (span == 0) out.push_back(args[i++]);
    else i += span;
  }
  return out;
}

void edit_bench_flag_values(std::vector<std::string>& args, BenchFlag f,
                            const std::function<std::string(const std::string&)>& edit) {
  for (const BenchFlagHit& hit : find_bench_flag(args, f)) {
    if (!hit.value) continue;
    if (!hit.value_inline) {
      args[hit.index + 1] = edit(*hit.value);
    } else {
      std::string& a = args[hit.index];
      a = a.substr(0, a.size() - hit.value->size()) + edit(*hit.value);
    }
  }
}

}  // namespace railkit
