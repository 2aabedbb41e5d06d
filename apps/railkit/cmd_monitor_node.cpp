// `railkit monitor node`: parses the flags into NodeMonitorOptions and runs monitor/node's loop.
#include <iostream>
#include <memory>
#include <string>

#include "apps/railkit/subcommands.hpp"
#include "monitor/node/node_monitor.hpp"

namespace railkit::app {

std::function<int()> setup_monitor_node(CLI::App& app) {
  auto o = std::make_shared<monitor::NodeMonitorOptions>();
  auto root = std::make_shared<std::string>("/");
  auto textfile = std::make_shared<std::string>();
  auto listen = std::make_shared<std::string>();
  auto nvml = std::make_shared<std::string>();
  app.add_option("--root", *root, "directory standing for / (a live node, a capture or a fixture)")->capture_default_str();
  app.add_option("--interval-s", o->interval_s, "seconds between samples (0.05 to 86400)")->capture_default_str();
  app.add_option("--count", o->count, "samples to take, then exit; 0 = until SIGINT or SIGTERM")->capture_default_str();
  app.add_option("--textfile", *textfile,
                 "Prometheus textfile rewritten atomically after each sample (node_exporter's textfile collector)");
  app.add_option("--listen", *listen, "serve GET /metrics over HTTP on HOST:PORT, :PORT or [V6ADDR]:PORT (port 0: any free port)");
  app.add_option("--nvml", *nvml, "NVML library to load (default libnvidia-ml.so.1 when --root is /; none otherwise)");
  auto& t = o->thresholds;
  app.add_option("--pause-ratio", t.pause_ratio, "pause_storm: fraction of the interval a priority was paused")
      ->capture_default_str();
  app.add_option("--pause-frames-per-s", t.pause_frames_per_s, "pause_storm: pause frames per second on a priority")
      ->capture_default_str();
  app.add_option("--cnp-per-s", t.cnp_per_s, "cnp_surge: np_cnp_sent or rp_cnp_handled per second")->capture_default_str();
  app.add_option("--retransmit-per-s", t.retransmit_per_s,
                 "retransmit_surge: out_of_sequence + packet_seq_err + local_ack_timeout_err per second")
      ->capture_default_str();
  app.add_option("--rail-fraction", t.rail_fraction, "rail_rate_outlier: a port's tx rate below this fraction of the median")
      ->capture_default_str();
  app.add_option("--rail-min-gbps", t.rail_min_Gbps, "rail_rate_outlier: judged only while the median is over this (Gb/s)")
      ->capture_default_str();
  return [o, root, textfile, listen, nvml]() -> int {
    o->root = *root;
    if (!textfile->empty()) o->textfile = *textfile;
    if (!listen->empty()) o->listen = *listen;
    if (!nvml->empty()) o->nvml = *nvml;
    return monitor::run_node_monitor(*o, std::cout, std::cerr);
  };
}

}  // namespace railkit::app
