#include "bench/mpi/mpi_session.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "bench/mpi/ompi_probe.h"
#include "core/error.hpp"

namespace railkit::bench::mpi {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw MpiError(std::string(what) + ": " + std::string(text, static_cast<size_t>(len)));
}

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string v(text, static_cast<size_t>(len));
  const auto cut = v.find_first_of(",\n");
  if (cut != std::string::npos) v.resize(cut);
  return v;
}

Session::Session(int* argc, char*** argv, bool want_threads) {
  int provided = MPI_THREAD_SINGLE;
  check(MPI_Init_thread(argc, argv, want_threads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided), "MPI_Init_thread");
  thread_multiple_ = provided >= MPI_THREAD_MULTIPLE;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

Session::~Session() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && finalize_) MPI_Finalize();
}

void abort_world(int code) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return;
  MPI_Abort(MPI_COMM_WORLD, code);
  ::_exit(code);
}

namespace {

constexpr int kStatusTag = 0x7a11;

class MpiBootstrap final : public Bootstrap {
 public:
  /// Over the ranks of `parent` (MPI_COMM_WORLD, or a group of split()).
  MpiBootstrap(MPI_Comm parent, bool side_channel) : side_channel_(side_channel) {
    check(MPI_Comm_dup(parent, &comm_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    check(MPI_Comm_dup(parent, &side_), "MPI_Comm_dup");
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    MPI_Comm local;
    check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local), "MPI_Comm_split_type");
    MPI_Comm_rank(local, &local_rank_);
    MPI_Comm_size(local, &local_size_);
    int leader = rank_;
    check(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, local), "MPI_Allreduce(node leader)");
    MPI_Comm_free(&local);
    std::vector<int> leaders(static_cast<size_t>(size_));
    check(MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, comm_), "MPI_Allgather(node leaders)");
    std::vector<int> distinct = leaders;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    for (int l : leaders)
      node_of_rank_.push_back(static_cast<int>(std::lower_bound(distinct.begin(), distinct.end(), l) - distinct.begin()));

    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int len = 0;
    MPI_Get_processor_name(name, &len);
    std::vector<char> all(static_cast<size_t>(size_) * MPI_MAX_PROCESSOR_NAME);
    check(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm_),
          "MPI_Allgather(hosts)");
    for (int r = 0; r < size_; ++r) {
      const char* p = all.data() + static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME;
      hosts_.emplace_back(p, strnlen(p, MPI_MAX_PROCESSOR_NAME));
    }
  }
  ~MpiBootstrap() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    MPI_Comm_free(&comm_);
    MPI_Comm_free(&side_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  const std::vector<std::string>& hosts() const override { return hosts_; }
  const std::vector<int>& node_of_rank() const override { return node_of_rank_; }

  void barrier() override { check(MPI_Barrier(comm_), "MPI_Barrier"); }
  std::int64_t allreduce_sum(std::int64_t v) override {
    std::int64_t out = 0;
    check(MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_SUM, comm_), "MPI_Allreduce(control)");
    return out;
  }
  std::int64_t allreduce_max(std::int64_t v) override {
    std::int64_t out = 0;
    check(MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_MAX, comm_), "MPI_Allreduce(control)");
    return out;
  }
  std::vector<std::string> gather_text_to_root(const std::string& mine) override {
    const int len = static_cast<int>(mine.size());
    std::vector<int> lens(rank_ == 0 ? static_cast<size_t>(size_) : 0);
    check(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm_), "MPI_Gather(text sizes)");
    std::vector<int> displs(lens.size());
    int total = 0;
    for (size_t r = 0; r < lens.size(); ++r) {
      displs[r] = total;
      total += lens[r];
    }
    std::string all(static_cast<size_t>(total), '\0');
    check(MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, comm_),
          "MPI_Gatherv(text)");
    std::vector<std::string> out;
    for (size_t r = 0; r < lens.size(); ++r) out.push_back(all.substr(static_cast<size_t>(displs[r]), static_cast<size_t>(lens[r])));
    return out;
  }
  std::vector<double> gather_to_root(std::span<const double> mine) override {
    std::vector<double> all(rank_ == 0 ? mine.size() * static_cast<size_t>(size_) : 0);
    check(MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), static_cast<int>(mine.size()),
                     MPI_DOUBLE, 0, comm_),
          "MPI_Gather(control)");
    return all;
  }

  void broadcast(std::span<std::byte> data, int root) override {
    check(MPI_Bcast(data.data(), static_cast<int>(data.size()), MPI_BYTE, root, comm_), "MPI_Bcast(control)");
  }
  std::unique_ptr<Bootstrap> split(int color) override {
    MPI_Comm group = MPI_COMM_NULL;
    check(MPI_Comm_split(comm_, color, rank_, &group), "MPI_Comm_split(control)");
    auto out = std::make_unique<MpiBootstrap>(group, false);
    MPI_Comm_free(&group);
    return out;
  }
  [[noreturn]] void abort_job(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    ::_exit(code);
  }

  bool has_side_channel() const override { return side_channel_; }
  void post_status(const std::string& text) override {
    if (!side_channel_ || rank_ == 0) return;
    pending_ = text;
    MPI_Request req;
    MPI_Isend(pending_.data(), static_cast<int>(pending_.size()), MPI_CHAR, 0, kStatusTag, side_, &req);
    MPI_Request_free(&req);
  }
  std::vector<std::string> collect_statuses(double wait_s) override {
    std::vector<std::string> out;
    if (!side_channel_ || rank_ != 0) return out;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
    while (static_cast<int>(out.size()) < size_ - 1 && std::chrono::steady_clock::now() < deadline) {
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, kStatusTag, side_, &flag, &st);
      if (!flag) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        continue;
      }
      int n = 0;
      MPI_Get_count(&st, MPI_CHAR, &n);
      std::string text(static_cast<size_t>(std::max(n, 0)), '\0');
      MPI_Recv(text.data(), n, MPI_CHAR, st.MPI_SOURCE, kStatusTag, side_, MPI_STATUS_IGNORE);
      out.push_back(std::move(text));
    }
    return out;
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Comm side_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  bool side_channel_ = false;
  std::vector<std::string> hosts_;
  std::vector<int> node_of_rank_;
  std::string pending_;
};

}  // namespace

RankTransport probe_transport(int world_rank, const std::vector<std::string>& hosts, const LauncherGuess& guess) {
  RankTransport t;
  t.launcher = guess.launcher;
  char text[256] = {};
  const std::string running = library_version();  // "Open MPI v4.1.4"
  if (railkit_ompi_probe_release(text, sizeof text) != 0) {
    t.source = running.rfind("Open MPI", 0) == 0 ? "unknown: built without Open MPI's internal headers"
                                                 : "unknown: not Open MPI (" + running + ")";
    t.pmi = pmi_text(guess, {});
    return t;
  }
  const std::string built = text;
  if (running != "Open MPI v" + built) {
    t.source = "unknown: built against Open MPI " + built + ", running " + running;
    t.pmi = pmi_text(guess, {});
    return t;
  }
  t.source = "Open MPI " + built + " internals";
  if (railkit_ompi_pml(text, sizeof text) == 0) t.pml = text;
  if (railkit_ompi_mtl(text, sizeof text) == 0) t.mtl = text;
  t.pmi = pmi_text(guess, railkit_ompi_pmix(text, sizeof text) == 0 ? std::string(text) : std::string());
  if (t.pml != "ob1") return t;
  for (int peer : peers_to_probe(world_rank, hosts)) {
    int local = 0;
    if (railkit_ompi_peer_btls(MPI_COMM_WORLD, peer, text, sizeof text, &local) != 0) continue;
    t.btl_peers[text].push_back(peer);
    if (peer != world_rank && !local && hosts.at(static_cast<size_t>(peer)) == hosts.at(static_cast<size_t>(world_rank)))
      t.seen_remote.push_back(peer);
  }
  return t;
}

std::unique_ptr<Bootstrap> make_bootstrap(const Session& session) {
  return std::make_unique<MpiBootstrap>(MPI_COMM_WORLD, session.thread_multiple());
}

}  // namespace railkit::bench::mpi
