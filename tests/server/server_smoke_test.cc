// End-to-end smoke test: a real server on 127.0.0.1:0, the C++ client, one scene, one step.
#include <cstring>

#include "core/scene/scene.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/codec.h"
#include "server/server.h"
#include "taxel/client.h"
#include "tests/support/scene_fixtures.h"

namespace taxel::server {
namespace {

using namespace taxel::testing;  // NOLINT

TEST(ServerSmokeTest, StepOverGrpcEqualsInProcess) {
  ServerOptions options;
  options.address = "127.0.0.1:0";
  options.metrics_address = "127.0.0.1:0";
  options.eval_threads = 2;
  auto server = TaxelServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  auto client = Client::Connect((*server)->target());
  ASSERT_TRUE(client.ok());
  auto info = (*client)->GetServerInfo();
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->limits().max_message_bytes(), 64 << 20);

  const scene::SceneSpec spec = PadAndBallSpec("smoke", 2, 5);
  v1::SceneSpec wire;
  EncodeSceneSpec(spec, &wire);
  auto created = (*client)->CreateScene(wire);
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_EQ(created->moving_links_size(), 2);
  EXPECT_EQ(created->moving_links(1), "ball/body");

  std::vector<double> poses;
  for (int e = 0; e < 2; ++e) {
    auto p = PosesXyzw({Eigen::Vector3d(0, 0, 0), Eigen::Vector3d(0.001 * e, 0, 0.054)});
    poses.insert(poses.end(), p.begin(), p.end());
  }
  v1::StepRequest req;
  req.set_scene("smoke");
  *req.mutable_poses() = DoubleTensor({2, 2, 7}, poses);
  req.set_quat_order(v1::XYZW);
  req.set_dt(0.01);
  auto resp = (*client)->Step(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  ASSERT_EQ(resp->readings_size(), 1);
  const v1::Tensor& force = resp->readings(0).channels().at("force");
  EXPECT_THAT(force.shape(), ::testing::ElementsAre(2, 5, 5, 3));

  geometry::MeshStore meshes;
  auto local = scene::Scene::Create(spec, meshes);
  ASSERT_TRUE(local.ok());
  InlineExecutor ex;
  scene::StepInput in;
  in.poses = poses;
  in.quat_order = QuatOrder::kXyzw;
  in.dt = 0.01;
  ASSERT_TRUE((*local)->Step(in, ex).ok());
  const auto& expected = (*local)->sensors()[0]->outputs(sensors::Branch::kGroundTruth).force;
  ASSERT_EQ(force.data().size(), expected.size() * 4);
  EXPECT_EQ(std::memcmp(force.data().data(), expected.data(), force.data().size()), 0);
  float fz;
  std::memcpy(&fz, force.data().data() + 4 * (12 * 3 + 2), 4);
  // Centre probe: the ball (r 5 cm, centre 4.9 cm above the probe) presses 3 mm → F = k_n·3e-3 = 3 N,
  // along the normal out of the ball, i.e. −z.
  EXPECT_NEAR(fz, -3.0f, 1e-5);

  // A bad step: wrong shape, with the field path in the BadRequest.
  *req.mutable_poses() = DoubleTensor({2, 1, 7}, absl::MakeConstSpan(poses).subspan(0, 14));
  auto bad = (*client)->Step(req);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("poses: expected shape [2, 2, 7]"));

  // Stream.
  *req.mutable_poses() = DoubleTensor({2, 2, 7}, poses);
  auto stream = (*client)->OpenStepStream();
  for (int i = 0; i < 3; ++i) {
    auto r = stream->Step(req);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->sequence(), static_cast<uint64_t>(i + 1));
    EXPECT_EQ(r->readings(0).channels().at("force").data(), force.data());
  }
  EXPECT_TRUE(stream->Close().ok());
  EXPECT_TRUE((*client)->DeleteScene("smoke").ok());
  EXPECT_EQ((*client)->GetScene("smoke").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace taxel::server
