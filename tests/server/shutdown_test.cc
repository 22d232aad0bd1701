// The real taxel-server binary as a subprocess: it reports its port on stderr, and on SIGTERM it
// ends open streams with UNAVAILABLE and exits with code 0.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "taxel/client.h"

#ifndef TAXEL_SERVER_BINARY
#error "TAXEL_SERVER_BINARY must name the taxel-server executable"
#endif

namespace taxel {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

// A child process running taxel-server with its stderr on a pipe. Kills the child (SIGKILL) if a
// test ends before it exited.
class ServerProcess {
 public:
  bool Start() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return false;
    pid_ = fork();
    if (pid_ < 0) return false;
    if (pid_ == 0) {  // child: only async-signal-safe calls until exec
      dup2(fds[1], STDERR_FILENO);
      execl(TAXEL_SERVER_BINARY, "taxel-server", "--address=127.0.0.1:0", "--metrics_address=", "--threads=1",
            "--request_threads=2", "--shutdown_grace_seconds=5", "--log_level=info", static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fds[1]);
    err_ = fds[0];
    return true;
  }

  ~ServerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (err_ >= 0) close(err_);
  }

  /// Reads stderr until `done(log)` holds, EOF, or the deadline; returns whether `done` held.
  template <typename Done>
  bool ReadUntil(Done done, Clock::time_point deadline) {
    while (!done(log_)) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0 || eof_) return false;
      pollfd p{err_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;  // timeout is checked above
      char buf[4096];
      const ssize_t n = read(err_, buf, sizeof(buf));
      if (n <= 0) {
        eof_ = true;
      } else {
        log_.append(buf, static_cast<size_t>(n));
      }
    }
    return true;
  }

  /// The port of the `event=server_started ... port=NNNN` line, 0 if absent.
  int Port() const {
    const size_t line = log_.find("event=server_started");
    if (line == std::string::npos) return 0;
    const size_t at = log_.find(" port=", line);
    const size_t end = log_.find_first_of(" \n", at + 6);
    int port = 0;
    if (at == std::string::npos || !absl::SimpleAtoi(log_.substr(at + 6, end - at - 6), &port)) return 0;
    return port;
  }

  /// Waits for the child to exit after its stderr reached EOF; its wait status, or −1.
  int Wait() {
    int status = 0;
    if (waitpid(pid_, &status, 0) != pid_) return -1;
    pid_ = -1;
    return status;
  }

  pid_t pid() const { return pid_; }
  const std::string& log() const { return log_; }
  bool eof() const { return eof_; }

 private:
  pid_t pid_ = -1;
  int err_ = -1;
  bool eof_ = false;
  std::string log_;
};

v1::SceneSpec OneBallScene() {
  // A sphere pad with one ContactDepthProbe on top, and a ball; one env.
  v1::SceneSpec spec;
  spec.set_name("sig");
  spec.set_num_envs(1);
  for (const char* name : {"hand", "ball"}) {
    v1::Entity* e = spec.add_entities();
    e->set_name(name);
    e->set_kind(std::string(name) == "hand" ? v1::ROBOT : v1::OBJECT);
    v1::Link* l = e->add_links();
    l->set_name("body");
    l->add_shapes()->mutable_sphere()->set_radius(0.05);
  }
  v1::SensorSpec* s = spec.add_sensors();
  s->set_name("depth");
  s->set_kind(v1::CONTACT_DEPTH_PROBE);
  s->set_link("hand/body");
  *s->mutable_probe_local_pos() = DoubleTensor({1, 3}, {0, 0, 0.05});
  *s->mutable_probe_radius() = DoubleTensor({}, {0.002});
  return spec;
}

TEST(ShutdownTest, SigtermEndsStreamsWithUnavailableAndExitsZero) {
  ServerProcess server;
  ASSERT_TRUE(server.Start());
  // Until the whole `event=server_started ... port=NNNN` line has arrived.
  auto started = [](const std::string& log) {
    const size_t at = log.find("event=server_started");
    return at != std::string::npos && log.find('\n', at) != std::string::npos;
  };
  ASSERT_TRUE(server.ReadUntil(started, Clock::now() + std::chrono::seconds(20)))
      << "no server_started line; stderr:\n" << server.log();
  const int port = server.Port();
  ASSERT_GT(port, 0) << server.log();

  // One channel for every call, so that the test can keep it polled below.
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
  auto stub = v1::Taxel::NewStub(channel);
  {
    grpc::ClientContext create_ctx;
    v1::CreateSceneRequest create;
    *create.mutable_spec() = OneBallScene();
    v1::SceneInfo info;
    const grpc::Status created = stub->CreateScene(&create_ctx, create, &info);
    ASSERT_TRUE(created.ok()) << created.error_message();
  }

  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));  // a hang fails, not blocks
  auto stream = stub->StepStream(&ctx);
  v1::StepRequest req;
  req.set_scene("sig");
  req.set_sequence(1);
  // Hand at the origin, ball centre 9.9 cm above: the probe at (0, 0, 5 cm) is pressed 1 mm → 3 mm.
  *req.mutable_poses() = DoubleTensor({1, 2, 7}, {0, 0, 0, 0, 0, 0, 1, 0, 0, 0.099, 0, 0, 0, 1});
  req.set_quat_order(v1::XYZW);
  req.set_dt(0.01);
  ASSERT_TRUE(stream->Write(req));
  v1::StepResponse response;
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_EQ(response.sequence(), 1u);
  auto depth = FloatValues(response.readings(0).channels().at("depth"));
  ASSERT_TRUE(depth.ok());
  EXPECT_NEAR((*depth)[0], 0.003, 1e-9);

  ASSERT_EQ(kill(server.pid(), SIGTERM), 0);

  // The idle stream is ended by the server with UNAVAILABLE.
  EXPECT_FALSE(stream->Read(&response));
  const grpc::Status ended = stream->Finish();
  EXPECT_EQ(ended.error_code(), grpc::StatusCode::UNAVAILABLE) << ended.error_message();
  EXPECT_THAT(ended.error_message(), HasSubstr("shutting down"));

  // A graceful gRPC shutdown waits for connected clients to close their connections after its
  // GOAWAY; a synchronous client only reads its socket while something polls the channel. Keep it
  // polled until the server drops the connection (bounded), as a live client would.
  std::thread watcher([&channel] {
    const auto until = std::chrono::system_clock::now() + std::chrono::seconds(8);
    grpc_connectivity_state state = channel->GetState(false);
    while (state == GRPC_CHANNEL_READY && channel->WaitForStateChange(state, until)) state = channel->GetState(false);
  });
  // The process closes stderr when it exits: wait for EOF (bounded), then reap it.
  const bool exited = server.ReadUntil([&](const std::string&) { return server.eof(); },
                                       Clock::now() + std::chrono::seconds(8));
  watcher.join();
  ASSERT_TRUE(exited) << "taxel-server still running 8 s after SIGTERM; stderr:\n" << server.log();
  const int status = server.Wait();
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status << "; stderr:\n" << server.log();
  EXPECT_EQ(WEXITSTATUS(status), 0) << server.log();
  EXPECT_THAT(server.log(), HasSubstr("event=signal signal=SIGTERM"));
  EXPECT_THAT(server.log(), HasSubstr("event=server_draining"));
  EXPECT_THAT(server.log(), HasSubstr("event=server_stopped"));
}

}  // namespace
}  // namespace taxel
