#pragma once
// The control channel between ranks (MPI underneath, or one lone process): who is where,
// barriers, and gathering the small figures the harness needs. Not timed. The data plane is a
// Communicator; backends reach the launcher only through this interface.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace railkit::bench {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Rank and count of ranks on this node (shared-memory domain).
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;
  /// Host name of every rank, indexed by rank.
  virtual const std::vector<std::string>& hosts() const = 0;
  /// Node index of every rank (0.. in order of each node's lowest rank), from the launcher's
  /// shared-memory domains (MPI_Comm_split_type SHARED).
  virtual const std::vector<int>& node_of_rank() const = 0;

  virtual void barrier() = 0;
  virtual std::int64_t allreduce_sum(std::int64_t v) = 0;
  virtual std::int64_t allreduce_max(std::int64_t v) = 0;
  /// Every rank's text at rank 0 (indexed by rank); empty elsewhere.
  virtual std::vector<std::string> gather_text_to_root(const std::string& mine) = 0;
  /// Concatenation of every rank's `mine` (all of equal length) at rank 0; empty elsewhere.
  virtual std::vector<double> gather_to_root(std::span<const double> mine) = 0;

  /// Rank `root`'s `data` in every rank's `data` (all of equal length).
  virtual void broadcast(std::span<std::byte> data, int root) = 0;
  /// The ranks that pass the same `color`, ordered by rank, as a bootstrap of their own
  /// (collective over every rank). Backends set up a group's communicator over it.
  virtual std::unique_ptr<Bootstrap> split(int color) = 0;
  /// Ends every process of the job with `code` (MPI_Abort), after an error on one rank.
  [[noreturn]] virtual void abort_job(int code) = 0;

  /// Whether post_status/collect_statuses may be called from the watchdog thread while the
  /// main thread is blocked inside a collective (MPI_THREAD_MULTIPLE).
  virtual bool has_side_channel() const = 0;
  /// Sends a short text to rank 0's collect_statuses (from a non-zero rank). Non-blocking.
  virtual void post_status(const std::string& text) = 0;
  /// On rank 0: texts posted by other ranks within `wait_s` seconds, at most size()-1.
  virtual std::vector<std::string> collect_statuses(double wait_s) = 0;
};

}  // namespace railkit::bench
