#include "bench/lone_bootstrap.hpp"

#include <unistd.h>

#include "core/error.hpp"

namespace railkit::bench {
namespace {

class LoneBootstrap final : public Bootstrap {
 public:
  explicit LoneBootstrap(std::string host) : hosts_{std::move(host)} {}

  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  const std::vector<std::string>& hosts() const override { return hosts_; }
  const std::vector<int>& node_of_rank() const override { return nodes_; }

  void barrier() override {}
  std::int64_t allreduce_sum(std::int64_t v) override { return v; }
  std::int64_t allreduce_max(std::int64_t v) override { return v; }
  std::vector<std::string> gather_text_to_root(const std::string& mine) override { return {mine}; }
  std::vector<double> gather_to_root(std::span<const double> mine) override { return {mine.begin(), mine.end()}; }
  void broadcast(std::span<std::byte>, int root) override {
    if (root != 0) throw Error(ErrorCode::Internal, "broadcast from rank " + std::to_string(root) + " of 1");
  }
  std::unique_ptr<Bootstrap> split(int) override { return std::make_unique<LoneBootstrap>(hosts_.front()); }
  [[noreturn]] void abort_job(int code) override { ::_exit(code); }

  // No other rank to hear from: the watchdog's report is complete at once.
  bool has_side_channel() const override { return true; }
  void post_status(const std::string&) override {}
  std::vector<std::string> collect_statuses(double) override { return {}; }

 private:
  std::vector<std::string> hosts_;
  std::vector<int> nodes_{0};
};

}  // namespace

std::unique_ptr<Bootstrap> make_lone_bootstrap(std::string host) {
  if (host.empty()) {
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    host = name;
  }
  return std::make_unique<LoneBootstrap>(std::move(host));
}

}  // namespace railkit::bench
