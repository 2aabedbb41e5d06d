#pragma once
// railkit-bench's program logic behind its thin main: MPI start, runtime checks, the harness,
// reporting, the results document, and the exit code.
#include <string>

#include "bench/options.hpp"
#include "core/error.hpp"

namespace railkit::bench {

/// Runs the benchmark described by `o` on this rank. `envp` is the process environment
/// (main's third argument). Returns the exit code; throws railkit::Error for failures
/// that happen before the run starts, and RankFailure for one that may be this rank's alone.
int run_bench(const BenchOptions& o, int* argc, char*** argv, char** envp);

/// "railkit-bench 0.1.0\nbackends: mpi (Open MPI v4.1.4)\n"
std::string version_text();

/// Rank of this process from the launcher's environment (Open MPI, PMIx, PMI, Slurm), or -1.
int launcher_rank(char** envp);

/// Joins argv with POSIX shell quoting, so the command can be pasted back into a shell.
std::string shell_join(const std::vector<std::string>& argv);

/// Prints "railkit-bench: error: <message>[ [rank N]]" to stderr in one write, so that a
/// launcher interleaving several processes' output keeps the line whole.
void print_error_line(const std::string& message, int rank_suffix = -1);

/// An exit with a code and nothing to print (another rank prints the reason).
class QuietExit : public Error {
 public:
  explicit QuietExit(ErrorCode c) : Error(c, "") {}
};

/// An error that escaped run_bench on one rank of several where the others may not share it
/// (after the ranks stopped agreeing, or any exception that is not a railkit::Error): they may
/// wait in a collective for this rank, so MPI is left up, not finalized. main prints the line
/// and then ends every rank with abort_every_rank.
class RankFailure : public Error {
 public:
  RankFailure(ErrorCode c, const std::string& message, int rank) : Error(c, message), rank_(rank) {}
  int rank() const { return rank_; }

 private:
  int rank_ = 0;
};

/// Ends every process of the job with `code` (MPI_Abort) while MPI is up and not finalized;
/// otherwise (no MPI, a lone process) returns `code`.
int abort_every_rank(int code);

}  // namespace railkit::bench
