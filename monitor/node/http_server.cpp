#include "monitor/node/http_server.hpp"

#include <microhttpd.h>
#include <netdb.h>
#include <sys/socket.h>

#include <fmt/format.h>

#include <cstdarg>
#include <cstring>
#include <mutex>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace railkit::monitor {
namespace {

constexpr const char* kPromContentType = "text/plain; version=0.0.4; charset=utf-8";
constexpr unsigned kConnectionTimeoutS = 10;
constexpr unsigned kConnectionLimit = 64;

MHD_Result reply(MHD_Connection* c, unsigned status, const std::string& body, const char* type) {
  MHD_Response* r = MHD_create_response_from_buffer(body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
  if (!r) return MHD_NO;
  MHD_add_response_header(r, "Content-Type", type);
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED) MHD_add_response_header(r, "Allow", "GET, HEAD");
  const MHD_Result rc = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return rc;
}

}  // namespace

struct MetricsServer::Impl {
  MHD_Daemon* daemon = nullptr;
  int port = 0;
  std::mutex mu;
  std::string latest;
  bool published = false;
  std::string last_log;  // MHD's last error message (bind failures), written before the thread starts

  static void log(void* cls, const char* fmt, va_list ap) {
    char buf[512];
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    static_cast<Impl*>(cls)->last_log = std::string(trim(buf));
  }

  static MHD_Result handle(void* cls, MHD_Connection* c, const char* url, const char* method, const char*,
                           const char*, size_t*, void**) {
    auto* self = static_cast<Impl*>(cls);
    if (std::strcmp(method, "GET") != 0 && std::strcmp(method, "HEAD") != 0)
      return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET /metrics\n", "text/plain");
    if (std::strcmp(url, "/metrics") == 0) {
      std::string body;
      bool ready = false;
      {
        std::lock_guard<std::mutex> g(self->mu);
        ready = self->published;
        if (ready) body = self->latest;
      }
      if (!ready) return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no sample yet\n", "text/plain");
      return reply(c, MHD_HTTP_OK, body, kPromContentType);
    }
    if (std::strcmp(url, "/") == 0)
      return reply(c, MHD_HTTP_OK, "railkit monitor node: the metrics are at /metrics\n", "text/plain");
    return reply(c, MHD_HTTP_NOT_FOUND, "not found; the metrics are at /metrics\n", "text/plain");
  }
};

ListenAddress parse_listen(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos)
    throw UsageError(fmt::format("--listen '{}': expected HOST:PORT, :PORT or [V6ADDR]:PORT", text));
  ListenAddress a;
  a.host = text.substr(0, colon);
  if (a.host.size() >= 2 && a.host.front() == '[' && a.host.back() == ']') a.host = a.host.substr(1, a.host.size() - 2);
  else if (a.host.find(':') != std::string::npos)
    throw UsageError(fmt::format("--listen '{}': an IPv6 address goes in brackets ([::1]:9100)", text));
  const auto port = to_int(text.substr(colon + 1));
  if (!port || *port < 0 || *port > 65535)
    throw UsageError(fmt::format("--listen '{}': the port must be a number 0-65535", text));
  a.port = static_cast<int>(*port);
  return a;
}

MetricsServer::MetricsServer(const ListenAddress& addr) : impl_(std::make_unique<Impl>()) {
  const std::string where = fmt::format("{}:{}", addr.host.empty() ? "*" : addr.host, addr.port);
  addrinfo hints{};
  hints.ai_family = addr.host.empty() ? AF_INET : AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(addr.port);
  if (int rc = getaddrinfo(addr.host.empty() ? nullptr : addr.host.c_str(), port.c_str(), &hints, &res); rc != 0)
    throw UsageError(fmt::format("--listen {}: cannot resolve the address ({})", where, gai_strerror(rc)));
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
  if (res->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
  impl_->daemon = MHD_start_daemon(flags, static_cast<std::uint16_t>(addr.port), nullptr, nullptr, &Impl::handle,
                                   impl_.get(), MHD_OPTION_SOCK_ADDR, res->ai_addr, MHD_OPTION_EXTERNAL_LOGGER,
                                   &Impl::log, impl_.get(), MHD_OPTION_CONNECTION_TIMEOUT, kConnectionTimeoutS,
                                   MHD_OPTION_CONNECTION_LIMIT, kConnectionLimit, MHD_OPTION_END);
  freeaddrinfo(res);
  if (!impl_->daemon)
    throw UsageError(fmt::format("--listen {}: cannot listen ({})", where,
                                 impl_->last_log.empty() ? "the HTTP server did not start" : impl_->last_log));
  const MHD_DaemonInfo* info = MHD_get_daemon_info(impl_->daemon, MHD_DAEMON_INFO_BIND_PORT);
  impl_->port = info ? info->port : addr.port;
}

MetricsServer::~MetricsServer() {
  if (impl_->daemon) MHD_stop_daemon(impl_->daemon);
}

void MetricsServer::publish(std::string exposition) {
  std::lock_guard<std::mutex> g(impl_->mu);
  impl_->latest = std::move(exposition);
  impl_->published = true;
}

int MetricsServer::port() const noexcept { return impl_->port; }

}  // namespace railkit::monitor
