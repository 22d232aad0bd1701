// Codec: scene and sensor specs, both ways, and every decode error with its field path.
#include <cmath>
#include <functional>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/codec.h"
#include "taxel/client.h"
#include "tests/support/scene_fixtures.h"

namespace taxel::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace taxel::testing;  // NOLINT

// Wire tensors: DoubleTensor, FloatTensor, Int32Tensor of the C++ client library (taxel/client.h).

RigidTransform QuarterTurnAboutZ(const Eigen::Vector3d& p) {
  RigidTransform X;
  X.R << 0, -1, 0, 1, 0, 0, 0, 0, 1;
  X.p = p;
  return X;
}

// One link per shape kind, OBJECT assets, fixed links with poses, and one sensor of each kind
// with every option set.
scene::SceneSpec EverythingSpec() {
  scene::SceneSpec spec;
  spec.name = "everything";
  spec.num_envs = 3;
  spec.seed = 0xfeedbeefcafeULL;
  spec.env_offset = (int64_t{1} << 32) - 3;  // the largest offset 3 envs allow
  scene::ShapeSpec capsule, cylinder, heightfield, mesh, scaled_mesh;
  capsule.kind = geometry::ShapeKind::kCapsule;
  capsule.radius = 0.01, capsule.half_length = 0.04;
  capsule.X_LS = QuarterTurnAboutZ({0, 0, 0.02});
  cylinder.kind = geometry::ShapeKind::kCylinder;
  cylinder.radius = 0.02, cylinder.half_length = 0.03;
  heightfield.kind = geometry::ShapeKind::kHeightfield;
  heightfield.hf_rows = 2, heightfield.hf_cols = 3;
  heightfield.hf_dx = 0.1, heightfield.hf_dy = 0.2;
  heightfield.hf_heights = {0, 0.01, 0.02, 0.03, 0.04, 0.05};
  mesh = MeshShape("abc123");
  scaled_mesh = MeshShape("def456");
  scaled_mesh.mesh_scale = Eigen::Vector3d(1, 2, -0.5);
  spec.entities.push_back(
      Entity("hand", scene::EntityKind::kRobot,
             {Link("pad", {BoxShape({0.03, 0.02, 0.005}, {0, 0, -0.001})}), Link("finger", {capsule, cylinder})}));
  scene::EntitySpec obj = Entity("obj", scene::EntityKind::kObject, {Link("body", {SphereShape(0.05)})});
  obj.assets.push_back({"mug", {{mesh}}});
  obj.assets.push_back({"big_mug", {{scaled_mesh, SphereShape(0.01, {0, 0, 0.1})}}});
  // Asset 3: one implicit shape of each kind.
  std::vector<scene::ShapeSpec> smooth(5);
  for (scene::ShapeSpec& shape : smooth) shape.kind = geometry::ShapeKind::kImplicit;
  smooth[0].implicit.kind = geometry::ImplicitKind::kSphere;
  smooth[0].implicit.radius = 0.02;
  smooth[1].implicit.kind = geometry::ImplicitKind::kSuperellipsoid;
  smooth[1].implicit.n = 4, smooth[1].implicit.semi_axes = Eigen::Vector3d(0.03, 0.02, 0.01);
  smooth[2].implicit.kind = geometry::ImplicitKind::kSmoothPolytope;
  smooth[2].implicit.normals = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {-1, -1, -1}};
  smooth[2].implicit.offsets = {0.01, 0.02, 0.03, 0.04};
  smooth[2].implicit.beta = 20;
  smooth[3].implicit.kind = geometry::ImplicitKind::kSuperellipticCylinder;
  smooth[3].implicit.n = 2, smooth[3].implicit.radius = 0.01, smooth[3].implicit.half_length = 0.05;
  smooth[4].implicit.kind = geometry::ImplicitKind::kTruncatedCone;
  smooth[4].implicit.beta = 8, smooth[4].implicit.bottom_radius = 0.02, smooth[4].implicit.top_radius = 0.01;
  smooth[4].implicit.a = 0.03, smooth[4].implicit.b = 0.04;
  smooth[4].X_LS = QuarterTurnAboutZ({0, 0.01, 0});
  obj.assets.push_back({"smooth", {smooth}});
  obj.env_assets = {0, 2, -1};
  spec.entities.push_back(obj);
  spec.entities.push_back(Entity("dart", scene::EntityKind::kProjectile, {Link("tip", {SphereShape(0.004)})}));
  scene::LinkSpec ground = Link("plane", {HalfSpaceShape()});
  ground.X_WL = QuarterTurnAboutZ({0, 0, -0.5});
  spec.entities.push_back(Entity("ground", scene::EntityKind::kTerrain, {ground}));
  scene::LinkSpec table = Link("top", {heightfield});
  table.X_WL.p = Eigen::Vector3d(1, 2, 3);
  spec.entities.push_back(Entity("table", scene::EntityKind::kStatic, {table}));

  sensors::SensorSpec touch;
  touch.name = "touch";
  touch.kind = sensors::SensorKind::kContactProbe;
  touch.link = "hand/pad";
  touch.probe_local_pos = {{0, 0, 0.005}, {0.01, 0, 0.005}};
  touch.probe_radius = {0.002};
  touch.contact_threshold = 2e-4;
  touch.release_threshold = -1e-4;
  spec.sensors.push_back(touch);
  sensors::SensorSpec depth;
  depth.name = "depth";
  depth.kind = sensors::SensorKind::kContactDepthProbe;
  depth.link = "finger";
  depth.probe_local_pos = {{0, 0, 0.01}, {0, 0, 0.02}, {0, 0, 0.03}};
  depth.probe_radius = {0.001, 0, 0.003};
  depth.probe_local_normal = {{0, 0, 1}};
  depth.filter_links = {"obj/body", "dart/tip"};
  spec.sensors.push_back(depth);
  sensors::SensorSpec kin;
  kin.name = "kin";
  kin.kind = sensors::SensorKind::kKinematicTaxel;
  kin.link = "hand/pad";
  kin.probe_local_pos = PlanarGrid(2, 3, 0.01, 0.005);
  kin.grid_rows = 2, kin.grid_cols = 3;
  kin.probe_radius = {0.001, 0.002, 0.003, 0.004, 0.005, 0.006};
  kin.probe_local_normal = {{0, 0, 1}, {0, 1, 0}, {1, 0, 0}, {0, 0, -1}, {0, -1, 0}, {-1, 0, 0}};
  kin.spring_damper.normal_stiffness = 2500;
  kin.spring_damper.normal_damping = 3;
  kin.spring_damper.exponent = 1.5;
  kin.spring_damper.shear_damping = 0.25;
  kin.spring_damper.twist_damping = 0.125;
  spec.sensors.push_back(kin);
  return spec;
}

void ExpectPoseEq(const RigidTransform& a, const RigidTransform& b) {
  EXPECT_TRUE(a.R.isApprox(b.R, 1e-15)) << a.R << "\nvs\n" << b.R;
  EXPECT_EQ(a.p, b.p);
}

void ExpectShapeEq(const scene::ShapeSpec& a, const scene::ShapeSpec& b) {
  EXPECT_EQ(a.kind, b.kind);
  ExpectPoseEq(a.X_LS, b.X_LS);
  EXPECT_EQ(a.radius, b.radius);
  EXPECT_EQ(a.half_length, b.half_length);
  EXPECT_EQ(a.half_extents, b.half_extents);
  EXPECT_EQ(a.hf_rows, b.hf_rows);
  EXPECT_EQ(a.hf_cols, b.hf_cols);
  EXPECT_EQ(a.hf_dx, b.hf_dx);
  EXPECT_EQ(a.hf_dy, b.hf_dy);
  EXPECT_EQ(a.hf_heights, b.hf_heights);
  EXPECT_EQ(a.mesh_id, b.mesh_id);
  EXPECT_EQ(a.mesh_scale, b.mesh_scale);
  if (a.kind == geometry::ShapeKind::kImplicit) {
    EXPECT_EQ(a.implicit.kind, b.implicit.kind);
    EXPECT_EQ(a.implicit.radius, b.implicit.radius);
    EXPECT_EQ(a.implicit.n, b.implicit.n);
    EXPECT_EQ(a.implicit.semi_axes, b.implicit.semi_axes);
    EXPECT_EQ(a.implicit.half_length, b.implicit.half_length);
    EXPECT_EQ(a.implicit.normals, b.implicit.normals);
    EXPECT_EQ(a.implicit.offsets, b.implicit.offsets);
    EXPECT_EQ(a.implicit.beta, b.implicit.beta);
    EXPECT_EQ(a.implicit.bottom_radius, b.implicit.bottom_radius);
    EXPECT_EQ(a.implicit.top_radius, b.implicit.top_radius);
    EXPECT_EQ(a.implicit.a, b.implicit.a);
    EXPECT_EQ(a.implicit.b, b.implicit.b);
  }
}

void ExpectSensorEq(const sensors::SensorSpec& a, const sensors::SensorSpec& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.link, b.link);
  EXPECT_EQ(a.probe_local_pos, b.probe_local_pos);
  EXPECT_EQ(a.grid_rows, b.grid_rows);
  EXPECT_EQ(a.grid_cols, b.grid_cols);
  EXPECT_EQ(a.probe_radius, b.probe_radius);
  EXPECT_EQ(a.probe_local_normal, b.probe_local_normal);
  EXPECT_EQ(a.filter_links, b.filter_links);
  EXPECT_EQ(a.contact_threshold, b.contact_threshold);
  EXPECT_EQ(a.release_threshold, b.release_threshold);
  EXPECT_EQ(a.spring_damper.normal_stiffness, b.spring_damper.normal_stiffness);
  EXPECT_EQ(a.spring_damper.normal_damping, b.spring_damper.normal_damping);
  EXPECT_EQ(a.spring_damper.exponent, b.spring_damper.exponent);
  EXPECT_EQ(a.spring_damper.shear_damping, b.spring_damper.shear_damping);
  EXPECT_EQ(a.spring_damper.twist_damping, b.spring_damper.twist_damping);
}

TEST(SceneSpecCodecTest, RoundTripsEveryShapeKindAndSensorOption) {
  const scene::SceneSpec spec = EverythingSpec();
  v1::SceneSpec wire;
  EncodeSceneSpec(spec, &wire);
  auto back = DecodeSceneSpec(wire);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->name, spec.name);
  EXPECT_EQ(back->num_envs, spec.num_envs);
  EXPECT_EQ(back->seed, spec.seed);
  EXPECT_EQ(wire.env_offset(), 4294967293);
  EXPECT_EQ(back->env_offset, spec.env_offset);
  ASSERT_EQ(back->entities.size(), spec.entities.size());
  for (size_t e = 0; e < spec.entities.size(); ++e) {
    SCOPED_TRACE(spec.entities[e].name);
    const auto &a = back->entities[e], &b = spec.entities[e];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.env_assets, b.env_assets);
    ASSERT_EQ(a.links.size(), b.links.size());
    for (size_t l = 0; l < b.links.size(); ++l) {
      EXPECT_EQ(a.links[l].name, b.links[l].name);
      ExpectPoseEq(a.links[l].X_WL, b.links[l].X_WL);
      ASSERT_EQ(a.links[l].shapes.size(), b.links[l].shapes.size());
      for (size_t s = 0; s < b.links[l].shapes.size(); ++s) ExpectShapeEq(a.links[l].shapes[s], b.links[l].shapes[s]);
    }
    ASSERT_EQ(a.assets.size(), b.assets.size());
    for (size_t k = 0; k < b.assets.size(); ++k) {
      EXPECT_EQ(a.assets[k].name, b.assets[k].name);
      ASSERT_EQ(a.assets[k].link_shapes.size(), b.assets[k].link_shapes.size());
      for (size_t l = 0; l < b.assets[k].link_shapes.size(); ++l) {
        ASSERT_EQ(a.assets[k].link_shapes[l].size(), b.assets[k].link_shapes[l].size());
        for (size_t s = 0; s < b.assets[k].link_shapes[l].size(); ++s) {
          ExpectShapeEq(a.assets[k].link_shapes[l][s], b.assets[k].link_shapes[l][s]);
        }
      }
    }
  }
  ASSERT_EQ(back->sensors.size(), spec.sensors.size());
  for (size_t s = 0; s < spec.sensors.size(); ++s) ExpectSensorEq(back->sensors[s], spec.sensors[s]);
}

TEST(SensorSpecCodecTest, RoundTripsEachSensorOnItsOwn) {
  for (const sensors::SensorSpec& spec : EverythingSpec().sensors) {
    SCOPED_TRACE(spec.name);
    v1::SensorSpec wire;
    EncodeSensorSpec(spec, &wire);
    auto back = DecodeSensorSpec(wire, "sensor");
    ASSERT_TRUE(back.ok()) << back.status();
    ExpectSensorEq(*back, spec);
  }
}

TEST(SceneSpecCodecTest, EncodesTheDocumentedWireShapes) {
  v1::SceneSpec wire;
  EncodeSceneSpec(EverythingSpec(), &wire);
  // Moving links carry no pose; fixed links do.
  EXPECT_FALSE(wire.entities(0).links(0).has_pose());
  EXPECT_TRUE(wire.entities(3).links(0).has_pose());
  EXPECT_THAT(wire.entities(4).links(0).pose().position(), ElementsAre(1, 2, 3));
  // Heightfield heights [rows, cols]; unit mesh scale omitted, other scales kept.
  const v1::Heightfield& hf = wire.entities(4).links(0).shapes(0).heightfield();
  EXPECT_THAT(hf.heights().shape(), ElementsAre(2, 3));
  EXPECT_EQ(wire.entities(1).assets(0).link_shapes(0).shapes(0).mesh().scale_size(), 0);
  EXPECT_THAT(wire.entities(1).assets(1).link_shapes(0).shapes(0).mesh().scale(), ElementsAre(1, 2, -0.5));
  EXPECT_THAT(wire.entities(1).env_assets(), ElementsAre(0, 2, -1));
  // Flat probes [N, 3] with a scalar radius []; a grid [rows, cols, 3] with radii per probe.
  EXPECT_THAT(wire.sensors(0).probe_local_pos().shape(), ElementsAre(2, 3));
  EXPECT_EQ(wire.sensors(0).probe_radius().shape_size(), 0);
  EXPECT_EQ(wire.sensors(0).probe_radius().data().size(), 8u);
  EXPECT_THAT(wire.sensors(1).probe_local_normal().shape(), ElementsAre(3));
  EXPECT_THAT(wire.sensors(1).filter_links(), ElementsAre("obj/body", "dart/tip"));
  EXPECT_THAT(wire.sensors(2).probe_local_pos().shape(), ElementsAre(2, 3, 3));
  EXPECT_THAT(wire.sensors(2).probe_radius().shape(), ElementsAre(6));
  EXPECT_EQ(wire.sensors(2).kinematic_taxel().exponent(), 1.5);
  EXPECT_EQ(wire.sensors(0).contact_probe().release_threshold(), -1e-4);
}

// A hand-written wire spec (not produced by the encoder) decodes to the documented defaults.
TEST(SceneSpecCodecTest, DecodesHandWrittenWireWithDefaults) {
  v1::SceneSpec wire;
  wire.set_name("hand");
  wire.set_num_envs(4);
  v1::Entity* e = wire.add_entities();
  e->set_name("robot");
  e->set_kind(v1::ROBOT);
  v1::Link* l = e->add_links();
  l->set_name("palm");
  l->add_shapes()->mutable_sphere()->set_radius(0.1);
  v1::SensorSpec* s = wire.add_sensors();
  s->set_name("k");
  s->set_kind(v1::KINEMATIC_TAXEL);
  s->set_link("palm");
  const std::vector<float> grid = {0, 0, 0.1f, 0.01f, 0, 0.1f, 0, 0.01f, 0.1f, 0.01f, 0.01f, 0.1f};
  *s->mutable_probe_local_pos() = FloatTensor({2, 2, 3}, grid);
  *s->mutable_probe_radius() = FloatTensor({2, 2}, std::vector<float>{0.001f, 0.002f, 0.003f, 0.004f});

  auto spec = DecodeSceneSpec(wire);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->num_envs, 4);
  EXPECT_EQ(spec->seed, 0u);
  ASSERT_EQ(spec->entities.size(), 1u);
  const scene::ShapeSpec& sphere = spec->entities[0].links[0].shapes[0];
  EXPECT_EQ(sphere.kind, geometry::ShapeKind::kSphere);
  EXPECT_EQ(sphere.radius, 0.1);
  EXPECT_EQ(sphere.X_LS.R, Eigen::Matrix3d::Identity());  // absent pose = identity
  EXPECT_EQ(sphere.X_LS.p, Eigen::Vector3d::Zero());
  const sensors::SensorSpec& k = spec->sensors[0];
  EXPECT_EQ(k.grid_rows, 2);
  EXPECT_EQ(k.grid_cols, 2);
  ASSERT_EQ(k.probe_local_pos.size(), 4u);
  EXPECT_EQ(k.probe_local_pos[3], Eigen::Vector3d(0.01f, 0.01f, 0.1f));  // row-major, float32 widened exactly
  EXPECT_THAT(k.probe_radius, ElementsAre(0.001f, 0.002f, 0.003f, 0.004f));
  EXPECT_TRUE(k.probe_local_normal.empty());
  EXPECT_EQ(k.contact_threshold, 1e-4);  // defaults of taxel.v1 (and of the core)
  EXPECT_FALSE(k.release_threshold.has_value());
  EXPECT_EQ(k.spring_damper.normal_stiffness, 1000);
  EXPECT_EQ(k.spring_damper.normal_damping, 1);
  EXPECT_EQ(k.spring_damper.exponent, 1);
  EXPECT_EQ(k.spring_damper.shear_damping, 1);
  EXPECT_EQ(k.spring_damper.twist_damping, 1);
}

TEST(SensorSpecCodecTest, RadiusShapesAccepted) {
  // For 3 flat probes: a scalar [], [1], or [3].
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{}, {1}, {3}}) {
    v1::SensorSpec s;
    s.set_name("d");
    s.set_kind(v1::CONTACT_DEPTH_PROBE);
    *s.mutable_probe_local_pos() = DoubleTensor({3, 3}, std::vector<double>(9, 0.0));
    const std::vector<double> radii(shape.empty() ? 1 : shape[0], 0.002);
    *s.mutable_probe_radius() = DoubleTensor(shape, radii);
    auto spec = DecodeSensorSpec(s, "sensor");
    ASSERT_TRUE(spec.ok()) << ShapeString(shape) << ": " << spec.status();
    EXPECT_EQ(spec->probe_radius, radii);
  }
}

// ---------------------------------------------------------------------------------------------
// Decode errors: code INVALID_ARGUMENT and the path of the offending field.

v1::SceneSpec ValidWire() {
  const scene::SceneSpec spec = PadAndBallSpec("s", 2, 2);
  v1::SceneSpec wire;
  EncodeSceneSpec(spec, &wire);
  return wire;
}

struct SpecErrorCase {
  std::string name;
  std::function<void(v1::SceneSpec*)> mutate;
  std::string message;  // must appear in the status message
};

TEST(SceneSpecCodecTest, EveryDecodeErrorNamesItsField) {
  ASSERT_TRUE(DecodeSceneSpec(ValidWire()).ok());
  const std::vector<SpecErrorCase> cases = {
      {"entity kind", [](v1::SceneSpec* w) { w->mutable_entities(0)->set_kind(v1::ENTITY_KIND_UNSPECIFIED); },
       "entities[0].kind: expected ROBOT, OBJECT, PROJECTILE, TERRAIN or STATIC"},
      {"no geometry",
       [](v1::SceneSpec* w) { w->mutable_entities(1)->mutable_links(0)->mutable_shapes(0)->clear_geometry(); },
       "entities[1].links[0].shapes[0]: expected one of sphere, box, capsule, cylinder, half_space, heightfield, mesh"},
      {"box half extents",
       [](v1::SceneSpec* w) {
         w->mutable_entities(0)
             ->mutable_links(0)
             ->mutable_shapes(0)
             ->mutable_box()
             ->mutable_half_extents()
             ->RemoveLast();
       },
       "entities[0].links[0].shapes[0].box.half_extents: expected 3 values, got 2"},
      {"heightfield rank",
       [](v1::SceneSpec* w) {
         auto* hf = w->mutable_entities(1)->mutable_links(0)->mutable_shapes(0)->mutable_heightfield();
         *hf->mutable_heights() = DoubleTensor({6}, std::vector<double>(6, 0.0));
         hf->set_dx(0.1), hf->set_dy(0.1);
       },
       "entities[1].links[0].shapes[0].heightfield.heights: expected shape [rows, cols], got [6]"},
      {"heightfield dtype",
       [](v1::SceneSpec* w) {
         auto* hf = w->mutable_entities(1)->mutable_links(0)->mutable_shapes(0)->mutable_heightfield();
         *hf->mutable_heights() = Int32Tensor({2, 2}, std::vector<int32_t>(4, 0));
       },
       "entities[1].links[0].shapes[0].heightfield.heights: expected dtype FLOAT32 or FLOAT64, got INT32"},
      {"mesh scale",
       [](v1::SceneSpec* w) {
         auto* m = w->mutable_entities(1)->mutable_links(0)->mutable_shapes(0)->mutable_mesh();
         m->set_mesh_id("x");
         m->add_scale(1), m->add_scale(2);
       },
       "entities[1].links[0].shapes[0].mesh.scale: expected 3 values or none, got 2"},
      {"shape pose",
       [](v1::SceneSpec* w) {
         w->mutable_entities(0)
             ->mutable_links(0)
             ->mutable_shapes(0)
             ->mutable_pose()
             ->mutable_quaternion()
             ->RemoveLast();
       },
       "entities[0].links[0].shapes[0].pose.quaternion: expected 4 values or none, got 3"},
      {"moving link pose", [](v1::SceneSpec* w) { w->mutable_entities(1)->mutable_links(0)->mutable_pose(); },
       "entities[1].links[0].pose: only TERRAIN and STATIC links have a fixed pose"},
      {"fixed link pose",
       [](v1::SceneSpec* w) {
         w->mutable_entities(1)->set_kind(v1::STATIC);
         w->mutable_entities(1)->mutable_links(0)->mutable_pose()->add_position(1);
       },
       "entities[1].links[0].pose.position: expected 3 values or none, got 1"},
      {"asset shape", [](v1::SceneSpec* w) { w->mutable_entities(1)->add_assets()->add_link_shapes()->add_shapes(); },
       "entities[1].assets[0].link_shapes[0].shapes[0]: expected one of sphere"},
      {"sensor kind", [](v1::SceneSpec* w) { w->mutable_sensors(0)->set_kind(v1::SENSOR_KIND_UNSPECIFIED); },
       "sensors[0].kind: expected CONTACT_PROBE, CONTACT_DEPTH_PROBE, KINEMATIC_TAXEL"},
      {"probes missing", [](v1::SceneSpec* w) { w->mutable_sensors(0)->clear_probe_local_pos(); },
       "sensors[0].probe_local_pos: required ([N, 3] or [rows, cols, 3])"},
      {"probes shape",
       [](v1::SceneSpec* w) {
         *w->mutable_sensors(0)->mutable_probe_local_pos() = DoubleTensor({4, 2}, std::vector<double>(8, 0.0));
       },
       "sensors[0].probe_local_pos: expected shape [N, 3] or [rows, cols, 3], got [4, 2]"},
      {"probes bytes",
       [](v1::SceneSpec* w) { w->mutable_sensors(0)->mutable_probe_local_pos()->mutable_data()->resize(40); },
       "sensors[0].probe_local_pos: shape [2, 2, 3] of FLOAT64 needs 96 bytes, got 40"},
      {"radius missing", [](v1::SceneSpec* w) { w->mutable_sensors(0)->clear_probe_radius(); },
       "sensors[0].probe_radius: required (a scalar or one value per probe)"},
      {"radius count",
       [](v1::SceneSpec* w) {
         *w->mutable_sensors(0)->mutable_probe_radius() = DoubleTensor({3}, {0.1, 0.1, 0.1});
       },
       "sensors[0].probe_radius: expected a scalar, [4] or [2, 2], got [3]"},
      {"radius grid",
       [](v1::SceneSpec* w) {
         *w->mutable_sensors(0)->mutable_probe_radius() = DoubleTensor({2, 1}, {0.1, 0.1});
       },
       "sensors[0].probe_radius: expected a scalar, [4] or [2, 2], got [2, 1]"},
      {"normal count",
       [](v1::SceneSpec* w) {
         *w->mutable_sensors(0)->mutable_probe_local_normal() = DoubleTensor({2, 3}, std::vector<double>(6, 1.0));
       },
       "sensors[0].probe_local_normal: expected [3] or one normal per probe (4), got [2, 3]"},
      {"normal shape",
       [](v1::SceneSpec* w) {
         *w->mutable_sensors(0)->mutable_probe_local_normal() = DoubleTensor({2}, {0.0, 1.0});
       },
       "sensors[0].probe_local_normal: expected shape [N, 3] or [rows, cols, 3], got [2]"},
      // (CheckEnumValues refuses undeclared numbers first in the service; the codec on its own too.)
      {"contact matrix sdf backend",
       [](v1::SceneSpec* w) {
         w->mutable_contact_matrix()->add_bodies("all");
         w->mutable_contact_matrix()->set_sdf_backend(static_cast<v1::SdfBackend>(7));
       },
       "contact_matrix.sdf_backend: expected EXACT (0) or GRID (1), got 7"},
  };
  for (const SpecErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    v1::SceneSpec wire = ValidWire();
    c.mutate(&wire);
    auto spec = DecodeSceneSpec(wire);
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(spec.status().message(), HasSubstr(c.message));
  }
}

// ContactMatrixSpec.sdf_backend: EXACT when absent, GRID when set, and encoded back as it was.
TEST(SceneSpecCodecTest, ContactMatrixSdfBackend) {
  v1::SceneSpec wire = ValidWire();
  wire.mutable_contact_matrix()->add_bodies("all");
  auto spec = DecodeSceneSpec(wire);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->contact_matrix.sdf_backend, geometry::SdfBackend::kExact);
  wire.mutable_contact_matrix()->set_sdf_backend(v1::GRID);
  spec = DecodeSceneSpec(wire);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->contact_matrix.sdf_backend, geometry::SdfBackend::kGrid);
  v1::SceneSpec back;
  EncodeSceneSpec(*spec, &back);
  EXPECT_EQ(back.contact_matrix().sdf_backend(), v1::GRID);
  spec->contact_matrix.sdf_backend = geometry::SdfBackend::kExact;
  EncodeSceneSpec(*spec, &back);
  EXPECT_EQ(back.contact_matrix().sdf_backend(), v1::EXACT);
}

TEST(SensorSpecCodecTest, ErrorsUseTheGivenFieldPrefix) {
  v1::SensorSpec s = ValidWire().sensors(0);
  s.clear_kind();
  auto spec = DecodeSensorSpec(s, "sensor");
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(), HasSubstr("sensor.kind: expected CONTACT_PROBE"));
  // A flat layout of 4 probes names only [4] as the per-probe shape.
  s = ValidWire().sensors(0);
  *s.mutable_probe_local_pos() = DoubleTensor({4, 3}, std::vector<double>(12, 0.0));
  *s.mutable_probe_radius() = DoubleTensor({2}, {0.1, 0.1});
  spec = DecodeSensorSpec(s, "sensor");
  EXPECT_THAT(spec.status().message(), HasSubstr("sensor.probe_radius: expected a scalar, [4], got [2]"));
}

}  // namespace
}  // namespace taxel::server
