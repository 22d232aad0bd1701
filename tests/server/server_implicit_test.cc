// End to end from the C++ client: a real server on 127.0.0.1:0, a scene whose object is an implicit
// ellipsoid SE(1; 4, 3, 2 cm) written as a wire spec by hand, and a ContactDepthProbe (R = 2 mm) at
// the pad origin under it. Along the axis the foot point is the bottom (0, 0, −c) (symmetry; the
// outside problem is convex), so the probe reads R − gap, gap = the probe centre's height below that
// bottom. SE(1) is the ellipsoid up to ε = 1e-12: c' = c·√(1 − 3ε − 1e-16).
#include <cmath>
#include <cstring>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/server.h"
#include "taxel/client.h"
#include "tests/server/service_fixture.h"
#include "tests/support/scene_fixtures.h"

namespace taxel::server {
namespace {

using namespace taxel::testing;  // NOLINT

v1::SceneSpec EllipsoidOverProbe(double n) {
  v1::SceneSpec spec;
  spec.set_name("soap");
  spec.set_num_envs(3);
  v1::Entity* hand = spec.add_entities();
  hand->set_name("hand");
  hand->set_kind(v1::ROBOT);
  hand->add_links()->set_name("pad");
  v1::Entity* soap = spec.add_entities();
  soap->set_name("soap");
  soap->set_kind(v1::OBJECT);
  v1::Link* body = soap->add_links();
  body->set_name("body");
  v1::Implicit::Superellipsoid* se = body->add_shapes()->mutable_implicit()->mutable_superellipsoid();
  se->set_n(n);
  for (double a : {0.04, 0.03, 0.02}) se->add_semi_axes(a);
  v1::SensorSpec* s = spec.add_sensors();
  s->set_name("depth");
  s->set_kind(v1::CONTACT_DEPTH_PROBE);
  s->set_link("pad");
  *s->mutable_probe_local_pos() = DoubleTensor({1, 3}, std::vector<double>{0, 0, 0});
  *s->mutable_probe_radius() = DoubleTensor({}, std::vector<double>{0.002});
  return spec;
}

using ServerImplicitTest = ServerTest;

TEST_F(ServerImplicitTest, ContactProbeUnderAnEllipsoidReadsTheClosedFormDepth) {
  Client* client = client_.get();

  auto bad = client->CreateScene(EllipsoidOverProbe(2.5));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(),
              ::testing::HasSubstr("entities[1].links[0].shapes[0].implicit.superellipsoid.n: expected an integer"));

  ASSERT_TRUE(client->CreateScene(EllipsoidOverProbe(1)).ok());
  const double bottom = 0.02 * std::sqrt(1 - 3e-12 - 1e-16);
  const double gaps[3] = {0.0015, 0.0005, -0.001};
  std::vector<double> poses;
  for (double gap : gaps) {
    auto p = PosesXyzw({Eigen::Vector3d::Zero(), Eigen::Vector3d(0, 0, gap + bottom)});
    poses.insert(poses.end(), p.begin(), p.end());
  }
  v1::StepRequest req;
  req.set_scene("soap");
  *req.mutable_poses() = DoubleTensor({3, 2, 7}, poses);
  req.set_quat_order(v1::XYZW);
  req.set_dt(0.01);
  auto resp = client->Step(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  const v1::Tensor& depth = resp->readings(0).channels().at("depth");
  ASSERT_EQ(depth.data().size(), 3 * sizeof(float));
  for (int e = 0; e < 3; ++e) {
    float d;
    std::memcpy(&d, depth.data().data() + 4 * e, 4);
    EXPECT_NEAR(d, 0.002 - gaps[e], 1e-7) << "env " << e;
  }
}

// Contact-matrix gradients from the C++ client: two implicit spheres (tip R1 = 3 cm on the robot,
// ball R2 = 2 cm), centres d = 4.9 cm apart along x (overlap δ = 1 mm), at rest, pressure
// p = k·δ^1.5 (k = 1e8). The force on the tip is −f(d)·x̂ with f = 2π·R_e·k·δ^2.5/2.5,
// R_e = R1·R2/(R1 + R2); ∂F_x/∂x_ball = −f'(d) = 2π·R_e·k·δ^1.5 and ∂F_y/∂y_ball = −f/d.
TEST_F(ServerImplicitTest, ContactMatrixGradientOfTwoImplicitSpheres) {
  Client* client = client_.get();
  const double r1 = 0.03, r2 = 0.02, d = 0.049, k = 1e8;
  v1::SceneSpec spec;
  spec.set_name("pair");
  spec.set_num_envs(1);
  for (auto [entity, kind, radius] : {std::make_tuple("hand", v1::ROBOT, r1), std::make_tuple("ball", v1::OBJECT, r2)}) {
    v1::Entity* e = spec.add_entities();
    e->set_name(entity);
    e->set_kind(kind);
    v1::Link* l = e->add_links();
    l->set_name("body");
    l->add_shapes()->mutable_implicit()->mutable_sphere()->set_radius(radius);
  }
  v1::ContactMatrixSpec* cm = spec.mutable_contact_matrix();
  cm->add_bodies("all");
  cm->add_partners("object/*");
  cm->mutable_law()->set_stiffness(k);
  cm->mutable_law()->set_exponent(1.5);
  cm->mutable_law()->set_damping(0);
  cm->set_gradients(true);
  auto info = client->CreateScene(spec);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_TRUE(info->contact_matrix().gradients());
  v1::StepRequest req;
  req.set_scene("pair");
  *req.mutable_poses() = DoubleTensor({1, 2, 7}, PosesXyzw({Eigen::Vector3d::Zero(), Eigen::Vector3d(d, 0, 0)}));
  *req.mutable_twists() = DoubleTensor({1, 2, 6}, std::vector<double>(12, 0.0));
  req.set_quat_order(v1::XYZW);
  req.set_dt(0.01);
  req.mutable_read()->set_contact_matrix(true);
  auto resp = client->Step(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  v1::GetContactMatrixRequest get;
  get.set_scene("pair");
  get.set_gradients(true);
  auto m = client->GetContactMatrix(get);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_THAT(m->gradient().shape(), ::testing::ElementsAre(1, 1, 1, 3, 2, 6));
  // The step's read carries the same gradient (the matrix keeps it).
  EXPECT_EQ(resp->contact_matrix().gradient().data(), m->gradient().data());
  ASSERT_EQ(m->gradient().data().size(), 36 * sizeof(float));
  float g[36];
  for (size_t i = 0; i < 36; ++i) g[i] = FloatAt(m->gradient(), i);
  const double delta = r1 + r2 - d, re = r1 * r2 / (r1 + r2), pi = 3.141592653589793;
  const double dfx = 2 * pi * re * k * std::pow(delta, 1.5), dfy = -(2 * pi * re * k * std::pow(delta, 2.5) / 2.5) / d;
  // g[i·12 + side·6 + j]: ∂F_i/∂(t_j of the body (side 0) or the partner (side 1)).
  EXPECT_NEAR(g[0 * 12 + 6 + 0], dfx, 1e-5 * dfx);
  EXPECT_NEAR(g[1 * 12 + 6 + 1], dfy, 1e-5 * dfx);
  EXPECT_NEAR(g[0 * 12 + 0 + 0], -dfx, 1e-5 * dfx);
  // A scene that keeps no gradient refuses to read one.
  spec.set_name("plain");
  spec.mutable_contact_matrix()->set_gradients(false);
  ASSERT_TRUE(client->CreateScene(spec).ok());
  get.set_scene("plain");
  EXPECT_EQ(client->GetContactMatrix(get).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace taxel::server
