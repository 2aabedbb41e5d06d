#pragma once
// The bootstrap of a lone process (no launcher, no MPI): rank 0 of 1. railkit-bench built
// without MPI runs on it (one process driving -g N GPUs, as nccl-tests built with MPI=0), and
// tests use it.
#include <memory>
#include <string>

#include "bench/bootstrap.hpp"

namespace railkit::bench {

/// `host` names this process's machine (gethostname when empty).
std::unique_ptr<Bootstrap> make_lone_bootstrap(std::string host = {});

}  // namespace railkit::bench
