#include "server/http_server.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/common/field_error.h"
#include "core/common/status_macros.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace taxel::server {
namespace {

using Clock = std::chrono::steady_clock;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decoding; '+' is a space in the query (form encoding) but not in the path.
absl::StatusOr<std::string> Decode(absl::string_view in, bool plus_is_space, absl::string_view what) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '%') {
      const int hi = i + 2 < in.size() ? HexDigit(in[i + 1]) : -1;
      const int lo = i + 2 < in.size() ? HexDigit(in[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": '%' not followed by two hex digits"));
      }
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// Milliseconds left until `deadline` (0 when past).
int MillisLeft(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

// Reads until the blank line that ends the head. Returns false on timeout, EOF, error or when
// more than `max_bytes` arrive first (*too_large then).
bool ReadHead(int fd, size_t max_bytes, Clock::time_point deadline, std::string* head, bool* too_large) {
  char buf[2048];
  while (true) {
    const size_t end = head->find("\r\n\r\n");
    const size_t bare = head->find("\n\n");
    if (end != std::string::npos || bare != std::string::npos) {
      const size_t cut = end != std::string::npos && (bare == std::string::npos || end < bare) ? end + 4 : bare + 2;
      if (cut > max_bytes) break;
      head->resize(cut);
      return true;
    }
    if (head->size() > max_bytes) break;
    pollfd p{fd, POLLIN, 0};
    const int ms = MillisLeft(deadline);
    if (ms == 0 || poll(&p, 1, ms) <= 0) return false;
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    head->append(buf, static_cast<size_t>(n));
  }
  *too_large = true;
  return false;
}

void WriteAll(int fd, const std::string& bytes, Clock::time_point deadline) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    pollfd p{fd, POLLOUT, 0};
    const int ms = MillisLeft(deadline);
    if (ms == 0 || poll(&p, 1, ms) <= 0) return;
    const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

// After the response: reads (and drops) what the client still sends, up to EOF, 64 KiB or the
// deadline, so that closing with unread input does not reset the connection before the client
// has read the answer.
void DrainInput(int fd, Clock::time_point deadline) {
  char buf[4096];
  size_t total = 0;
  while (total < (64u << 10)) {
    pollfd p{fd, POLLIN, 0};
    const int ms = MillisLeft(deadline);
    if (ms == 0 || poll(&p, 1, ms) <= 0) return;
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return;
    total += static_cast<size_t>(n);
  }
}

HttpResponse PlainError(int status, absl::string_view message) {
  HttpResponse r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = absl::StrCat(status, " ", HttpReason(status), ": ", message, "\n");
  return r;
}

Clock::time_point After(double seconds) {
  return Clock::now() + std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6));
}

}  // namespace

absl::string_view HttpReason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "";
  }
}

absl::StatusOr<HttpRequest> ParseHttpRequest(absl::string_view head) {
  std::vector<absl::string_view> lines = absl::StrSplit(head, '\n');
  for (absl::string_view& line : lines) absl::ConsumeSuffix(&line, "\r");
  const std::vector<absl::string_view> parts = absl::StrSplit(lines.empty() ? "" : lines[0], ' ');
  if (parts.size() != 3 || parts[0].empty() || parts[1].empty() || (parts[2] != "HTTP/1.1" && parts[2] != "HTTP/1.0")) {
    return absl::InvalidArgumentError("request line: expected 'METHOD /path HTTP/1.1'");
  }
  HttpRequest req;
  req.method = std::string(parts[0]);
  if (parts[1][0] != '/') return absl::InvalidArgumentError("request target: must be a path starting with '/'");
  const size_t q = parts[1].find('?');
  TAXEL_ASSIGN_OR_RETURN(req.path, Decode(parts[1].substr(0, q), false, "path"));
  if (q != absl::string_view::npos) {
    for (absl::string_view pair : absl::StrSplit(parts[1].substr(q + 1), '&', absl::SkipEmpty())) {
      const size_t eq = pair.find('=');
      TAXEL_ASSIGN_OR_RETURN(std::string name, Decode(pair.substr(0, eq), true, "query"));
      std::string value;
      if (eq != absl::string_view::npos) {
        TAXEL_ASSIGN_OR_RETURN(value, Decode(pair.substr(eq + 1), true, absl::StrCat("query parameter ", name)));
      }
      req.query.emplace_back(std::move(name), std::move(value));
    }
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const size_t colon = lines[i].find(':');
    if (colon == absl::string_view::npos || colon == 0) {
      return absl::InvalidArgumentError(absl::StrCat("header line ", i, ": expected 'Name: value'"));
    }
    req.headers[absl::AsciiStrToLower(lines[i].substr(0, colon))] =
        std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
  }
  // GET carries no body; one would stay unread and turn the close into a reset.
  if (auto it = req.headers.find("content-length"); it != req.headers.end() && it->second != "0") {
    return absl::InvalidArgumentError("content-length: a GET request has no body");
  }
  if (req.headers.count("transfer-encoding") > 0) {
    return absl::InvalidArgumentError("transfer-encoding: a GET request has no body");
  }
  return req;
}

std::string SerializeHttpResponse(const HttpResponse& r, bool head_only) {
  std::string out = absl::StrCat("HTTP/1.1 ", r.status, " ", HttpReason(r.status), "\r\nContent-Type: ", r.content_type,
                                 "\r\nContent-Length: ", r.body.size(),
                                 "\r\nConnection: close\r\nX-Content-Type-Options: nosniff\r\n");
  for (const auto& [name, value] : r.headers) absl::StrAppend(&out, name, ": ", value, "\r\n");
  out += "\r\n";
  if (!head_only) out += r.body;
  return out;
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& address, Handler handler,
                                                              HttpServerOptions options, absl::string_view field) {
  const size_t colon = address.rfind(':');
  int port = -1;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return InvalidFieldError(field, absl::StrCat("'", address, "' is not host:port (port 0-65535)"));
  }
  std::string host = address.substr(0, colon);
  if (host == "localhost") host = "127.0.0.1";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return InvalidFieldError(field, absl::StrCat("'", host, "' is not an IPv4 address (or localhost)"));
  }
  std::unique_ptr<HttpServer> s(new HttpServer());
  s->handler_ = std::move(handler);
  s->options_ = options;
  s->listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(s->listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  socklen_t len = sizeof(addr);
  if (s->listen_fd_ < 0 || bind(s->listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(s->listen_fd_, 64) != 0 || getsockname(s->listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      pipe2(s->wake_pipe_, O_CLOEXEC) != 0) {
    return FieldError(absl::StatusCode::kUnavailable, field,
                      absl::StrCat("cannot listen on '", address, "': ", std::strerror(errno)));
  }
  s->port_ = ntohs(addr.sin_port);
  s->acceptor_ = std::thread([p = s.get()] { p->AcceptLoop(); });
  for (int i = 0; i < std::max(1, options.threads); ++i) s->workers_.emplace_back([p = s.get()] { p->WorkerLoop(); });
  return s;
}

HttpServer::~HttpServer() {
  Stop();
  for (int fd : {listen_fd_, wake_pipe_[0], wake_pipe_[1]}) {
    if (fd >= 0) close(fd);
  }
}

void HttpServer::Stop() {
  if (stopping_.exchange(true)) return;
  if (wake_pipe_[1] >= 0) (void)!write(wake_pipe_[1], "x", 1);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : active_) shutdown(fd, SHUT_RDWR);
  }
  cv_.notify_all();
  if (acceptor_.joinable()) acceptor_.join();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  std::lock_guard<std::mutex> lock(mu_);
  for (int fd : pending_) close(fd);
  pending_.clear();
}

void HttpServer::AcceptLoop() {
  while (!stopping_.load()) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {wake_pipe_[0], POLLIN, 0}};
    if (poll(p, 2, -1) < 0 && errno != EINTR) return;
    if (stopping_.load()) return;
    if ((p[0].revents & POLLIN) == 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::unique_lock<std::mutex> lock(mu_);
    if (pending_.size() >= static_cast<size_t>(options_.max_pending)) {
      lock.unlock();
      // Busy: answer at once rather than let a flood of connections queue without bound.
      WriteAll(fd, SerializeHttpResponse(PlainError(503, "too many connections; retry"), false), After(0.5));
      close(fd);
      continue;
    }
    pending_.push_back(fd);
    lock.unlock();
    cv_.notify_one();
  }
}

void HttpServer::WorkerLoop() {
  while (true) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return stopping_.load() || !pending_.empty(); });
    if (stopping_.load()) return;
    const int fd = pending_.front();
    pending_.pop_front();
    active_.push_back(fd);
    lock.unlock();
    Serve(fd);
    lock.lock();
    active_.erase(std::find(active_.begin(), active_.end(), fd));
    lock.unlock();
    close(fd);
  }
}

void HttpServer::Serve(int fd) {
  std::string head;
  bool too_large = false;
  const bool complete =
      ReadHead(fd, options_.max_request_bytes, After(options_.read_timeout_seconds), &head, &too_large);
  const auto write_deadline = After(options_.write_timeout_seconds);
  if (!complete) {
    // A timeout or a closed connection gets no answer; an oversized head gets 400.
    if (too_large) {
      WriteAll(
          fd,
          SerializeHttpResponse(
              PlainError(400, absl::StrCat("request head larger than ", options_.max_request_bytes, " bytes")), false),
          write_deadline);
      shutdown(fd, SHUT_WR);
      DrainInput(fd, After(0.5));
    }
    return;
  }
  absl::StatusOr<HttpRequest> req = ParseHttpRequest(head);
  HttpResponse response;
  bool head_only = false;
  if (!req.ok()) {
    response = PlainError(400, req.status().message());
  } else if (req->method != "GET" && req->method != "HEAD") {
    response = PlainError(405, absl::StrCat("method ", req->method, ": only GET and HEAD are served"));
    response.headers.emplace_back("Allow", "GET, HEAD");
  } else {
    head_only = req->method == "HEAD";
    response = handler_(*req);
  }
  WriteAll(fd, SerializeHttpResponse(response, head_only), write_deadline);
  // Half-close and let the client read everything before the socket goes.
  shutdown(fd, SHUT_WR);
  DrainInput(fd, After(0.5));
}

}  // namespace taxel::server
