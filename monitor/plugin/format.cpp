// The JSON line and the textfile (format.hpp), with snprintf.
#include "monitor/plugin/format.hpp"

#include <cstdarg>
#include <cstdio>

namespace railkit::monitor_plugin {
namespace {

__attribute__((format(printf, 2, 3))) void appendf(std::string& out, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (static_cast<std::size_t>(n) < sizeof buf) {
    out.append(buf, static_cast<std::size_t>(n));
    return;
  }
  std::string big(static_cast<std::size_t>(n) + 1, '\0');
  va_start(ap, fmt);
  std::vsnprintf(big.data(), big.size(), fmt, ap);
  va_end(ap);
  out.append(big.data(), static_cast<std::size_t>(n));
}

/// A JSON string literal of `s` (quotes included).
void json_string(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      appendf(out, "\\u%04x", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

/// A Prometheus label value of `s` (quotes included).
void prom_label(std::string& out, const std::string& s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  out += '"';
}

void json_number_or_null(std::string& out, double v) {
  if (v < 0) {
    out += "null";
  } else {
    appendf(out, "%.6g", v);
  }
}

void append_time(std::string& out, const TimeStats& t) {
  appendf(out, "\"count\":%u,\"time_us\":{\"p50\":%.3f,\"min\":%.3f,\"max\":%.3f,\"sum\":%.3f}", t.count, t.p50_us(),
          t.min_us, t.max_us, t.sum_us);
}

void append_colls(std::string& out, const WindowView& v) {
  out += ",\"colls\":[";
  for (int i = 0; i < v.w.ncolls; ++i) {
    const CollBucket& b = v.w.colls[i];
    if (i) out += ',';
    appendf(out, "{\"op\":\"%s\",\"bytes\":%llu,\"algo\":\"%s\",\"proto\":\"%s\",\"channels\":%d,\"timing\":\"%s\",",
            op_info(b.op).name, static_cast<unsigned long long>(b.bytes), algo_name(b.algo), proto_name(b.proto),
            b.channels, timing_name(b.timing));
    append_time(out, b.time);
    const bool bw = b.timing != Timing::Enqueue;
    out += ",\"busbw_GBps\":{\"p50\":";
    json_number_or_null(out, bw ? busbw_GBps(b.op, b.bytes, b.time.p50_us(), v.info.nranks) : -1);
    out += ",\"min\":";
    json_number_or_null(out, bw ? busbw_GBps(b.op, b.bytes, b.time.max_us, v.info.nranks) : -1);
    out += "}}";
  }
  out += "],\"p2p\":[";
  for (int i = 0; i < v.w.np2p; ++i) {
    const P2pBucket& b = v.w.p2p[i];
    if (i) out += ',';
    appendf(out, "{\"op\":\"%s\",\"peer\":%d,\"bytes\":%llu,\"timing\":\"%s\",", op_info(b.op).name, b.peer,
            static_cast<unsigned long long>(b.bytes), timing_name(b.timing));
    append_time(out, b.time);
    out += '}';
  }
  out += ']';
}

void append_activity(std::string& out, const Config& cfg, const WindowView& v) {
  out += ",\"samples\":[";
  for (int i = 0; i < v.w.nsamples; ++i) {
    const Sample& s = v.w.samples[i];
    appendf(out, "%s{\"op\":\"%s\",\"seq\":%llu,\"bytes\":%llu,\"start_unix_ns\":%lld,\"time_us\":%.3f}", i ? "," : "",
            op_info(s.op).name, static_cast<unsigned long long>(s.seq), static_cast<unsigned long long>(s.bytes),
            static_cast<long long>(s.start_unix_ns), static_cast<double>(s.time_us));
  }
  out += "],\"proxy\":[";
  for (int i = 0; i < v.w.nproxy; ++i) {
    const ProxyEntry& p = v.w.proxy[i];
    appendf(out, "%s{\"channel\":%d,\"peer\":%d,\"send\":%s,\"ops\":%llu,\"bytes\":%llu,\"busy_us\":%.3f}", i ? "," : "",
            p.channel, p.peer, p.send ? "true" : "false", static_cast<unsigned long long>(p.ops),
            static_cast<unsigned long long>(p.bytes), p.busy_us);
  }
  out += "],\"nics\":[";
  bool first = true;
  for (int d = 0; d < kMaxNics; ++d) {
    const NicEntry& n = v.w.nics[d];
    if (n.wrs == 0 && n.busy_us == 0) continue;
    appendf(out, "%s{\"device\":%d,\"name\":", first ? "" : ",", d);
    json_string(out, nic_name(cfg, d));
    appendf(out, ",\"bytes\":%llu,\"busy_us\":%.3f,\"wrs\":%llu}", static_cast<unsigned long long>(n.bytes), n.busy_us,
            static_cast<unsigned long long>(n.wrs));
    first = false;
  }
  out += ']';
}

}  // namespace

std::string nic_name(const Config& cfg, int device) {
  if (device >= 0 && static_cast<std::size_t>(device) < cfg.nic_names.size()) return cfg.nic_names[device];
  return "dev" + std::to_string(device);
}

double busbw_GBps(Op op, std::uint64_t bytes, double time_us, int nranks) noexcept {
  const double f = busbw_factor(op, nranks);
  if (f <= 0 || time_us <= 0) return -1;
  return static_cast<double>(bytes) / (time_us * 1e-6) * f / 1e9;
}

void append_window_json(std::string& out, const Config& cfg, const WindowView& v) {
  out += "{\"schema\":\"railkit.monitor.window/1\",\"source\":";
  json_string(out, cfg.source);
  out += ",\"job\":";
  json_string(out, cfg.job);
  out += ",\"host\":";
  json_string(out, cfg.host);
  appendf(out, ",\"pid\":%d,\"rank\":%d,\"nranks\":%d,\"nnodes\":%d,\"comm\":\"0x%016llx\",\"comm_name\":", cfg.pid,
          v.info.rank, v.info.nranks, v.info.nnodes, static_cast<unsigned long long>(v.info.comm_hash));
  json_string(out, v.info.comm_name);
  appendf(out, ",\"abi\":\"%s\",\"gpu\":", v.info.abi);
  json_string(out, cfg.gpu);
  if (cfg.local_rank >= 0) {
    appendf(out, ",\"local_rank\":%d", cfg.local_rank);
  } else {
    out += ",\"local_rank\":null";
  }
  appendf(out, ",\"window\":{\"index\":%llu,\"start_unix_s\":%.6f,\"end_unix_s\":%.6f}",
          static_cast<unsigned long long>(v.index), double(v.w.start_unix_ns) / 1e9, double(v.end_unix_ns) / 1e9);
  append_colls(out, v);
  append_activity(out, cfg, v);
  appendf(out, ",\"inflight\":{\"count\":%d", v.inflight.count);
  if (v.inflight.count > 0) {
    appendf(out, ",\"oldest_seq\":%llu,\"oldest_op\":\"%s\",\"oldest_age_s\":%.6f}",
            static_cast<unsigned long long>(v.inflight.oldest_seq), op_info(v.inflight.oldest_op).name, v.inflight_age_s);
  } else {
    out += ",\"oldest_seq\":null,\"oldest_op\":null,\"oldest_age_s\":0}";
  }
  out += ",\"last_completion_unix_s\":";
  if (v.last_completion_unix_ns > 0) {
    appendf(out, "%.6f", double(v.last_completion_unix_ns) / 1e9);
  } else {
    out += "null";
  }
  appendf(out, ",\"dropped\":{\"events\":%llu,\"samples\":%llu},\"callbacks\":%llu}\n",
          static_cast<unsigned long long>(v.w.dropped_events), static_cast<unsigned long long>(v.w.dropped_samples),
          static_cast<unsigned long long>(v.callbacks));
}

void Totals::add(const Window& w, int nranks) {
  for (int i = 0; i < w.ncolls; ++i) {
    const CollBucket& b = w.colls[i];
    Coll* row = nullptr;
    for (auto& c : colls)
      if (c.op == b.op && c.algo == b.algo && c.proto == b.proto) row = &c;
    if (!row) row = &colls.emplace_back(Coll{b.op, b.algo, b.proto});
    row->count += b.time.count;
    row->bytes += b.bytes * b.time.count;
    row->time_s += b.time.sum_us / 1e6;
    if (b.bytes >= row->gauge_bytes || row->time_p50_s < 0) {  // the gauges follow the largest size
      row->gauge_bytes = b.bytes;
      row->time_p50_s = b.time.p50_us() / 1e6;
      row->busbw_GBps = b.timing == Timing::Enqueue ? -1 : busbw_GBps(b.op, b.bytes, b.time.p50_us(), nranks);
    }
  }
  for (int d = 0; d < kMaxNics; ++d) {
    nic_bytes[d] += w.nics[d].bytes;
    nic_busy_s[d] += w.nics[d].busy_us / 1e6;
  }
  dropped += w.dropped_events;
  if (w.last_completion_unix_ns > last_completion_unix_ns) last_completion_unix_ns = w.last_completion_unix_ns;
}

namespace {

struct Metric {
  const char* name;
  const char* type;
  const char* help;
};

constexpr Metric kMetrics[] = {
    {"railkit_nccl_collectives_total", "counter", "completed collectives"},
    {"railkit_nccl_bytes_total", "counter", "bytes of completed collectives (nccl-tests' size)"},
    {"railkit_nccl_time_seconds_total", "counter", "summed collective time"},
    {"railkit_nccl_busbw_gbps", "gauge", "last window's median busbw of the largest size (GB/s)"},
    {"railkit_nccl_time_p50_seconds", "gauge", "last window's median collective time of the largest size"},
    {"railkit_nccl_inflight_oldest_age_seconds", "gauge", "age of the oldest collective not completed"},
    {"railkit_nccl_last_completion_timestamp_seconds", "gauge", "Unix time of the last completion"},
    {"railkit_nccl_nic_bytes_total", "counter", "bytes the proxy moved on that NIC"},
    {"railkit_nccl_nic_busy_seconds_total", "counter", "time with a transfer outstanding on that NIC"},
    {"railkit_nccl_plugin_dropped_events_total", "counter", "events not recorded"},
    {"railkit_nccl_plugin_enabled", "gauge", "1 while recording, 0 after an internal error"},
    {"railkit_nccl_window_timestamp_seconds", "gauge", "end of the last window written"},
    {"railkit_nccl_window_seconds", "gauge", "window length (RAILKIT_MONITOR_WINDOW_S)"},
};

std::string base_labels(const Config& cfg, const CommInfo& info) {
  std::string l = "job=";
  prom_label(l, cfg.job);
  l += ",host=";
  prom_label(l, cfg.host);
  char buf[64];
  std::snprintf(buf, sizeof buf, ",rank=\"%d\",comm=\"0x%016llx\"", info.rank,
                static_cast<unsigned long long>(info.comm_hash));
  return l + buf;
}

void prom_series(std::string& out, const Config& cfg, const PromComm& pc, int metric, bool enabled, double ts) {
  const std::string base = base_labels(cfg, *pc.info);
  const char* name = kMetrics[metric].name;
  const Totals& t = *pc.totals;
  switch (metric) {
    case 0: case 1: case 2: case 3: case 4:
      for (const auto& c : t.colls) {
        const double v[] = {double(c.count), double(c.bytes), c.time_s, c.busbw_GBps, c.time_p50_s};
        if (v[metric] < 0) continue;
        appendf(out, "%s{%s,op=\"%s\",algo=\"%s\",proto=\"%s\"} %.9g\n", name, base.c_str(), op_info(c.op).name,
                algo_name(c.algo), proto_name(c.proto), v[metric]);
      }
      return;
    case 5: appendf(out, "%s{%s} %.6f\n", name, base.c_str(), t.inflight_oldest_age_s); return;
    case 6:  // absent until the first completion
      if (t.last_completion_unix_ns > 0)
        appendf(out, "%s{%s} %.6f\n", name, base.c_str(), double(t.last_completion_unix_ns) / 1e9);
      return;
    case 7: case 8:
      for (int d = 0; d < kMaxNics; ++d) {
        if (t.nic_bytes[d] == 0 && t.nic_busy_s[d] == 0) continue;
        std::string nic;
        prom_label(nic, nic_name(cfg, d));
        appendf(out, "%s{%s,nic=%s} %.9g\n", name, base.c_str(), nic.c_str(),
                metric == 7 ? double(t.nic_bytes[d]) : t.nic_busy_s[d]);
      }
      return;
    case 9: appendf(out, "%s{%s} %llu\n", name, base.c_str(), static_cast<unsigned long long>(t.dropped)); return;
    case 10: appendf(out, "%s{%s} %d\n", name, base.c_str(), enabled ? 1 : 0); return;
    case 12: appendf(out, "%s{%s} %.3f\n", name, base.c_str(), cfg.window_s); return;
    default: appendf(out, "%s{%s} %.3f\n", name, base.c_str(), ts); return;
  }
}

}  // namespace

std::string prom_text(const Config& cfg, const std::vector<PromComm>& comms, bool enabled, double window_unix_s) {
  std::string out;
  constexpr int n = sizeof(kMetrics) / sizeof(kMetrics[0]);
  for (int m = 0; m < n; ++m) {
    appendf(out, "# HELP %s %s\n# TYPE %s %s\n", kMetrics[m].name, kMetrics[m].help, kMetrics[m].name, kMetrics[m].type);
    for (const auto& pc : comms) prom_series(out, cfg, pc, m, enabled, window_unix_s);
  }
  return out;
}

}  // namespace railkit::monitor_plugin
