// The real taxel-server binary as a subprocess: it reports its port on stderr, and on SIGTERM it
// ends open streams with UNAVAILABLE and exits with code 0.
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "taxel/client.h"
#include "tests/server/server_process.h"
#include <sys/wait.h>

namespace taxel {
namespace {

using ::testing::HasSubstr;
using testing::ServerProcess;
using Clock = std::chrono::steady_clock;

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
  ASSERT_TRUE(server.WaitStarted(Clock::now() + std::chrono::seconds(20))) << "no server_started line; stderr:\n"
                                                                           << server.log();
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
  const bool exited = server.WaitEof(Clock::now() + std::chrono::seconds(8));
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
