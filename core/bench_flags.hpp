#pragma once
// railkit-bench's flags in one table (spellings, whether each takes a value, what it means to the
// control plane) and the functions that read and edit a railkit-bench argv over it. bench/options
// builds its CLI11 options from the table (a bench test holds the two together); launch, tuner
// and accept find, take, drop and add flags through these functions only.
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace railkit {

/// Every railkit-bench flag, in the order of bench_flags().
enum class BenchFlag {
  Help, MinBytes, MaxBytes, StepFactor, StepBytes, Iters, WarmupIters, Check, Datatype, Op, Root, Average,
  RunCycles, Timeout, Sync, OutputFile, Prom, Backend, Coll, Label, Placement, Split, RanksPerNode, Device, NGpus,
  CudaGraph, Observe, Nonblocking, InjectStall, InjectDelayUs, SimCluster, Fidelity, SimSet, Version,
};

struct BenchFlagSpec {
  BenchFlag flag;
  std::string_view short_name;  ///< "-b"; "" when none
  std::string_view long_name;   ///< "--minbytes"
  std::string_view negation;    ///< the switch that turns a boolean flag off ("--no-observe"); "" when none
  bool takes_value;             ///< false: a switch (--sync)
  std::string_view control;     ///< what the control plane does with it ("passed on" when nothing)
};

/// Every flag railkit-bench defines, in BenchFlag's order.
std::span<const BenchFlagSpec> bench_flags() noexcept;

/// The table's entry of `f`.
const BenchFlagSpec& bench_flag(BenchFlag f) noexcept;

/// The spelling the control plane writes: the short name when there is one ("-J"), else the long.
std::string_view bench_flag_name(BenchFlag f) noexcept;

/// The spellings for messages: "-b/--minbytes", "--coll".
std::string bench_flag_names(BenchFlag f);

/// `{bench_flag_name(f), value}`: the flag as the control plane adds it to a bench argv.
std::vector<std::string> bench_flag_args(BenchFlag f, std::string value);

/// Several flags with their values, in order: `{{BenchFlag::MinBytes, "8"}, ...}` -> {"-b", "8", ...}.
std::vector<std::string> bench_flag_args(std::initializer_list<std::pair<BenchFlag, std::string>> flags);

/// One occurrence of a flag in a bench argv, as railkit-bench (CLI11) reads it: `--name value`,
/// `--name=value`, `-n value`, `-nvalue` (a short name takes the rest of the word as its value).
struct BenchFlagHit {
  std::size_t index = 0;             ///< where it starts
  std::size_t span = 1;              ///< arguments it takes up: 2 for a value in the next one
  std::string_view spelling;         ///< the spelling that matched
  std::optional<std::string> value;  ///< unset for a switch, or a flag last with its value missing
  bool value_inline = false;         ///< the value is the end of args[index] (`--x=v`, `-nv`)
};

/// Whether args[i] is `f` in any of its spellings.
std::optional<BenchFlagHit> match_bench_flag(const std::vector<std::string>& args, std::size_t i, BenchFlag f);

/// Every occurrence of `f` in args, in order (an occurrence's value is never read as a flag).
std::vector<BenchFlagHit> find_bench_flag(const std::vector<std::string>& args, BenchFlag f);

/// Whether args set `f` in any spelling.
bool sets_bench_flag(const std::vector<std::string>& args, BenchFlag f);

/// Every value of `f` in args, in order (an occurrence without its value is left out).
std::vector<std::string> bench_flag_values(const std::vector<std::string>& args, BenchFlag f);

/// The last value of `f` in args; nullopt when absent.
std::optional<std::string> last_bench_flag_value(const std::vector<std::string>& args, BenchFlag f);

/// Removes every occurrence of `f` (with its value) from args and returns the last value
/// (nullopt when absent). Throws UsageError ("-n: missing value in the bench arguments") for an
/// occurrence without its value.
std::optional<std::string> take_bench_flag(std::vector<std::string>& args, BenchFlag f);

/// args without any occurrence of the flags `drop` (each with its value, if present).
std::vector<std::string> without_bench_flags(const std::vector<std::string>& args, std::span<const BenchFlag> drop);

/// Replaces every value of `f` in args by `edit(value)`, keeping its spelling and form.
void edit_bench_flag_values(std::vector<std::string>& args, BenchFlag f,
                            const std::function<std::string(const std::string&)>& edit);

}  // namespace railkit
