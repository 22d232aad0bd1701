// The real taxel-server binary as a child process, for tests that need a separate process: to
// signal it, to measure its memory, or to survive its crash. Its stderr (the structured log, and
// whatever a dying process prints) is read by a thread of its own into log(), so the child never
// blocks on a full pipe however long it runs.
//
//   ServerProcess server;
//   ASSERT_TRUE(server.Start({"--max_message_bytes=8388608"}));
//   ASSERT_TRUE(server.WaitStarted(Clock::now() + std::chrono::seconds(20))) << server.log();
//   ... connect to server.target() ...
//
// The child listens on 127.0.0.1:0 (the port it reports), without the metrics endpoint.
#ifndef TAXEL_TESTS_SERVER_SERVER_PROCESS_H_
#define TAXEL_TESTS_SERVER_SERVER_PROCESS_H_

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include <sys/wait.h>

#ifndef TAXEL_SERVER_BINARY
#error "TAXEL_SERVER_BINARY must name the taxel-server executable"
#endif

namespace taxel::testing {

/// A child process running taxel-server. Kills it (SIGKILL) if the test ends before it exited.
class ServerProcess {
 public:
  using Clock = std::chrono::steady_clock;

  ServerProcess() = default;
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  ~ServerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (reader_.joinable()) reader_.join();  // the pipe reaches EOF once the child is gone
    if (err_ >= 0) close(err_);
  }

  /// Starts taxel-server with the base flags below followed by `flags` (a later flag wins).
  bool Start(const std::vector<std::string>& flags = {}) {
    std::vector<std::string> args = {
        "taxel-server",        "--address=127.0.0.1:0",      "--metrics_address=", "--threads=1",
        "--request_threads=2", "--shutdown_grace_seconds=5", "--log_level=info"};
    args.insert(args.end(), flags.begin(), flags.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return false;
    pid_ = fork();
    if (pid_ < 0) return false;
    if (pid_ == 0) {  // child: only async-signal-safe calls until exec
      dup2(fds[1], STDERR_FILENO);
      execv(TAXEL_SERVER_BINARY, argv.data());
      _exit(127);
    }
    close(fds[1]);
    err_ = fds[0];
    reader_ = std::thread([this] { ReadStderr(); });
    return true;
  }

  /// Waits until `done(log)` holds, stderr reached EOF, or the deadline; returns whether `done` held.
  template <typename Done>
  bool ReadUntil(Done done, Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_until(lock, deadline, [&] { return eof_ || done(log_); });
    return done(log_);
  }

  /// Waits for the whole `event=server_started ... port=NNNN` line; true when it came.
  bool WaitStarted(Clock::time_point deadline) {
    return ReadUntil(
        [](const std::string& log) {
          const size_t at = log.find("event=server_started");
          return at != std::string::npos && log.find('\n', at) != std::string::npos;
        },
        deadline);
  }

  /// Waits until the child closed its stderr (it exited), or the deadline; true when it did.
  bool WaitEof(Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_until(lock, deadline, [&] { return eof_; });
  }

  /// The port of the `event=server_started ... port=NNNN` line, 0 if absent.
  int Port() const {
    const std::string log = this->log();
    const size_t line = log.find("event=server_started");
    if (line == std::string::npos) return 0;
    const size_t at = log.find(" port=", line);
    if (at == std::string::npos) return 0;
    const size_t end = log.find_first_of(" \n", at + 6);
    int port = 0;
    if (!absl::SimpleAtoi(log.substr(at + 6, end - at - 6), &port)) return 0;
    return port;
  }
  std::string target() const { return "127.0.0.1:" + std::to_string(Port()); }

  /// Whether the child is still running (reaps it, keeping its status, when it is not).
  bool Running() {
    if (pid_ <= 0) return false;
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == 0) return true;
    if (r == pid_) {
      status_ = status;
      pid_ = -1;
    }
    return false;
  }

  /// Waits for the child to exit (after its stderr reached EOF, say); its wait status, or −1.
  int Wait() {
    if (pid_ > 0) {
      int status = 0;
      if (waitpid(pid_, &status, 0) != pid_) return -1;
      status_ = status;
      pid_ = -1;
    }
    return status_;
  }

  /// "exit code 3", "signal 6 (Aborted)"; for a child that already exited (see Running, Wait).
  std::string ExitDescription() const {
    if (status_ < 0) return "still running";
    if (WIFEXITED(status_)) return "exit code " + std::to_string(WEXITSTATUS(status_));
    if (WIFSIGNALED(status_)) {
      return "signal " + std::to_string(WTERMSIG(status_)) + " (" + strsignal(WTERMSIG(status_)) + ")";
    }
    return "status " + std::to_string(status_);
  }

  /// Resident set size of the child (VmRSS of /proc/<pid>/status), in kB; −1 when unreadable.
  long RssKb() const { return StatusNumber("VmRSS:"); }
  /// The child's thread count (Threads of /proc/<pid>/status); −1 when unreadable.
  long Threads() const { return StatusNumber("Threads:"); }

  /// The number after `key` ("VmRSS:") in /proc/<pid>/status; −1 when unreadable.
  long StatusNumber(const char* key) const {
    if (pid_ <= 0) return -1;
    const std::string path = "/proc/" + std::to_string(pid_) + "/status";
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buf[8192];
    const ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) return -1;
    const std::string status(buf, static_cast<size_t>(n));
    const size_t at = status.find(key);
    if (at == std::string::npos) return -1;
    return std::strtol(status.c_str() + at + std::strlen(key), nullptr, 10);
  }

  pid_t pid() const { return pid_; }
  std::string log() const {
    std::lock_guard<std::mutex> lock(mu_);
    return log_;
  }
  /// The last `bytes` of the log, for failure messages.
  std::string LogTail(size_t bytes = 2000) const {
    const std::string log = this->log();
    return log.size() <= bytes ? log : "..." + log.substr(log.size() - bytes);
  }
  bool eof() const {
    std::lock_guard<std::mutex> lock(mu_);
    return eof_;
  }

 private:
  void ReadStderr() {
    char buf[4096];
    for (;;) {
      const ssize_t n = read(err_, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      std::lock_guard<std::mutex> lock(mu_);
      if (n <= 0) {
        eof_ = true;
        cv_.notify_all();
        return;
      }
      log_.append(buf, static_cast<size_t>(n));
      cv_.notify_all();
    }
  }

  pid_t pid_ = -1;
  int status_ = -1;  // wait status once reaped
  int err_ = -1;
  std::thread reader_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool eof_ = false;  // guarded by mu_
  std::string log_;   // guarded by mu_
};

}  // namespace taxel::testing

#endif  // TAXEL_TESTS_SERVER_SERVER_PROCESS_H_
