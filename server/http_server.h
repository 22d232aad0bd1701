// A small HTTP/1.1 server for the live viewer: one listening socket, a fixed set of worker
// threads, GET/HEAD only, one request per connection (`Connection: close`). It exists because the
// Prometheus exposer serves /metrics and nothing else; it is not a general web server.
#ifndef TAXEL_SERVER_HTTP_SERVER_H_
#define TAXEL_SERVER_HTTP_SERVER_H_

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace taxel::server {

/// One parsed request. Header names are lower-cased; the query is percent-decoded.
struct HttpRequest {
  std::string method;  ///< "GET" or "HEAD" (others are answered 405 before a handler runs)
  std::string path;    ///< decoded path, without the query ("/api/frame")
  /// Query parameters in order of appearance; a repeated name appears twice.
  std::vector<std::pair<std::string, std::string>> query;
  std::map<std::string, std::string> headers;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  /// Extra headers ("WWW-Authenticate", "Cache-Control", ...).
  std::vector<std::pair<std::string, std::string>> headers;
};

/// The reason phrase of the status codes this server sends ("Bad Request"); "" for others.
absl::string_view HttpReason(int status);

/// Parses one request head (request line and headers, up to and including the blank line).
/// INVALID_ARGUMENT naming what is wrong: a request line that is not "METHOD TARGET HTTP/1.x", a
/// target that is not an absolute path, bad percent-encoding, a header line without ':', a request
/// body (Content-Length other than 0, or Transfer-Encoding). The method is not checked here.
absl::StatusOr<HttpRequest> ParseHttpRequest(absl::string_view head);

/// The bytes of a response: status line, Content-Type, Content-Length, `Connection: close`,
/// `X-Content-Type-Options: nosniff`, the extra headers, the body (omitted when `head_only`).
std::string SerializeHttpResponse(const HttpResponse& response, bool head_only);

struct HttpServerOptions {
  int threads = 4;                   ///< connections served at once
  int max_pending = 16;              ///< accepted connections waiting for a thread; more get 503
  size_t max_request_bytes = 8192;   ///< request line + headers; larger requests get 400
  double read_timeout_seconds = 5;   ///< for the whole request head
  double write_timeout_seconds = 5;  ///< for the whole response
};

/// Serves `handler` on a TCP address. The handler runs on a worker thread and must not block for
/// long (the viewer's handlers copy one env's readings under the scene's lock and return).
class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  /// Binds "host:port" (port 0 picks one; host an IPv4 address or "localhost") and starts the
  /// threads. INVALID_ARGUMENT (field `field`) for an address that is not host:port, UNAVAILABLE
  /// when it cannot be bound.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const std::string& address, Handler handler,
                                                           HttpServerOptions options = {},
                                                           absl::string_view field = "ui_address");
  /// Stop().
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }
  /// Stops accepting, drops the connections still queued, shuts down the ones being served (a
  /// read or write in progress ends at once) and joins the threads. Idempotent.
  void Stop();

 private:
  HttpServer() = default;
  void AcceptLoop();
  void WorkerLoop();
  void Serve(int fd);

  Handler handler_;
  HttpServerOptions options_;
  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};  // written by Stop to end the accept loop's poll
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<int> pending_;  // under mu_
  std::vector<int> active_;  // under mu_: connections being served (Stop shuts them down)
  std::thread acceptor_;
  std::vector<std::thread> workers_;
};

}  // namespace taxel::server

#endif  // TAXEL_SERVER_HTTP_SERVER_H_
