#pragma once
// GET /metrics over HTTP, served by libmicrohttpd from its own thread: the latest exposition
// published by the sampling loop.
#include <memory>
#include <string>

namespace railkit::monitor {

/// A --listen address: HOST:PORT, :PORT (every IPv4 address) or [V6ADDR]:PORT; PORT 0 asks the
/// system for a free port.
struct ListenAddress {
  std::string host;  ///< "" = every IPv4 address
  int port = 0;
};

/// Parses a --listen value. Throws UsageError naming --listen when it is malformed.
ListenAddress parse_listen(const std::string& text);

/// The HTTP server of `railkit monitor node --listen`.
class MetricsServer {
 public:
  /// Starts listening. Throws UsageError naming --listen when the address cannot be resolved or
  /// bound (in use, not permitted, not an address of this host), with the system's reason.
  explicit MetricsServer(const ListenAddress& addr);
  ~MetricsServer();  ///< stops the server thread (requests in progress complete)
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  /// Replaces what GET /metrics returns (503 until the first publish).
  void publish(std::string exposition);
  /// The bound port (the system's choice for port 0).
  int port() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace railkit::monitor
