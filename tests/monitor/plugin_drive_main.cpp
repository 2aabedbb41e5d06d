// monitor_plugin_drive: loads libnccl-profiler-railkit.so and drives it as NCCL 2.28 does
// (plugin_drive.hpp). Usage: monitor_plugin_drive --so LIB --out DIR [--ranks 8] [--iters 24]
// [--window-s 0.1] [--tail-s S] [--abi v5|v4] [--delay-rank R --delay-us U] [--slow-nic R]
// [--xfer-us 400] [--wr-us 200] [--bytes B] [--no-hang]. Prints one summary line; exit 0, or 2 on
// bad arguments or a library that cannot be loaded.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include "plugin_drive.hpp"

int main(int argc, char** argv) {
  railkit::plugin_drive::Options o;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      if (a == "--so") o.so = next();
      else if (a == "--out") o.out = next();
      else if (a == "--abi") o.abi = next();
      else if (a == "--ranks") o.ranks = std::stoi(next());
      else if (a == "--iters") o.iters = std::stoi(next());
      else if (a == "--window-s") o.window_s = std::stod(next());
      else if (a == "--tail-s") o.tail_s = std::stod(next());
      else if (a == "--delay-rank") o.delay_rank = std::stoi(next());
      else if (a == "--delay-us") o.delay_us = std::stod(next());
      else if (a == "--slow-nic") o.slow_nic = std::stoi(next());
      else if (a == "--xfer-us") o.xfer_us = std::stod(next());
      else if (a == "--wr-us") o.wr_us = std::stod(next());
      else if (a == "--bytes") o.bytes = std::stoull(next());
      else if (a == "--no-hang") o.hang = false;
      else throw std::invalid_argument("unknown argument " + a);
    }
    if (o.so.empty() || o.ranks < 1 || o.ranks > 64 || o.iters < 0 || (o.abi != "v5" && o.abi != "v4"))
      throw std::invalid_argument("--so is required; --ranks 1..64; --abi v5 or v4");
    const auto out = railkit::plugin_drive::drive(o);
    std::printf("plugin_drive: ranks=%d iters=%d abi=%s init_failed=%d warn_lines=%d first_warn=%s\n", o.ranks, o.iters,
                o.abi.c_str(), out.init_failed, out.warn_lines, out.first_warn.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "monitor_plugin_drive: %s\n", e.what());
    return 2;
  }
}
