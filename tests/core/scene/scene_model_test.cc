// Tests for core/scene/scene_model.h: the canonical link order and moving indices, link lookup by
// qualified, bare and entity name, per-env assets and empty slots, shape bounds in the link frame,
// the validation of every field (path and rule in the message), and the memory of scaled meshes.
#include "core/scene/scene_model.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/geometry/mesh_generators.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/scene_fixtures.h"

namespace taxel::scene {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace taxel::testing;  // NOLINT

// Five entities, spec order = canonical order of their links (index: name, moving index):
//
//   0 hand/palm    (ROBOT, 0)       box, half extents 1 × 2 × 0.5 cm, centred at x = 10 cm in L
//   1 hand/finger  (ROBOT, 1)       sphere r 1 cm
//   2 ground/plane (TERRAIN, −1)    half-space, X_WL = translation (0, 0, −0.1)
//   3 ball/body    (OBJECT, 2)      asset 0 sphere r 5 cm, asset 1 "cube" box 2 cm; envs 0, 1, empty
//   4 dart/tip     (PROJECTILE, 3)  sphere r 5 mm
//   5 shelf/palm   (STATIC, −1)     box 1 cm (shares its link name "palm" with hand/palm)
SceneSpec FiveEntities() {
  SceneSpec spec;
  spec.name = "five";
  spec.num_envs = 3;
  spec.seed = 42;
  spec.entities.push_back(
      Entity("hand", EntityKind::kRobot,
             {Link("palm", {BoxShape({0.01, 0.02, 0.005}, {0.1, 0, 0})}), Link("finger", {SphereShape(0.01)})}));
  LinkSpec plane = Link("plane", {HalfSpaceShape()});
  plane.X_WL.p = Eigen::Vector3d(0, 0, -0.1);
  spec.entities.push_back(Entity("ground", EntityKind::kTerrain, {plane}));
  EntitySpec ball = Entity("ball", EntityKind::kObject, {Link("body", {SphereShape(0.05)})});
  ball.assets.push_back(AssetSpec{"cube", {{BoxShape({0.02, 0.02, 0.02})}}});
  ball.env_assets = {0, 1, -1};
  spec.entities.push_back(ball);
  spec.entities.push_back(Entity("dart", EntityKind::kProjectile, {Link("tip", {SphereShape(0.005)})}));
  spec.entities.push_back(Entity("shelf", EntityKind::kStatic, {Link("palm", {BoxShape({0.01, 0.01, 0.01})})}));
  return spec;
}

absl::StatusOr<std::shared_ptr<const SceneModel>> Build(const SceneSpec& spec) {
  static const geometry::MeshStore* const kNoMeshes = new geometry::MeshStore();
  return SceneModel::Build(spec, *kNoMeshes);
}

TEST(SceneModelTest, LinksInSpecOrderWithMovingIndices) {
  auto model = Build(FiveEntities());
  ASSERT_TRUE(model.ok()) << model.status();
  const SceneModel& m = **model;
  EXPECT_EQ(m.name(), "five");
  EXPECT_EQ(m.num_envs(), 3);
  EXPECT_EQ(m.seed(), 42u);
  ASSERT_EQ(m.num_links(), 6);
  std::vector<std::string> names;
  std::vector<int> moving;
  for (const LinkModel& l : m.links()) {
    names.push_back(l.name);
    moving.push_back(l.moving_index);
  }
  EXPECT_THAT(names, ElementsAre("hand/palm", "hand/finger", "ground/plane", "ball/body", "dart/tip", "shelf/palm"));
  EXPECT_THAT(moving, ElementsAre(0, 1, -1, 2, 3, -1));
  ASSERT_EQ(m.num_moving_links(), 4);
  std::vector<int> moving_links;
  for (LinkIndex l : m.moving_links()) moving_links.push_back(l.value());
  EXPECT_THAT(moving_links, ElementsAre(0, 1, 3, 4));
  const LinkModel& plane = m.link(LinkIndex(2));
  EXPECT_EQ(plane.short_name, "plane");
  EXPECT_EQ(plane.kind, EntityKind::kTerrain);
  EXPECT_EQ(plane.entity.value(), 1);
  EXPECT_TRUE(plane.X_WL.p.isApprox(Eigen::Vector3d(0, 0, -0.1)));
  ASSERT_EQ(m.entities().size(), 5u);
  std::vector<int> hand_links;
  for (LinkIndex l : m.entities()[0].links) hand_links.push_back(l.value());
  EXPECT_THAT(hand_links, ElementsAre(0, 1));
  EXPECT_EQ(m.entities()[4].kind, EntityKind::kStatic);
}

TEST(SceneModelTest, EntityKindNamesAndWhichKindsMove) {
  const EntityKind kinds[] = {EntityKind::kRobot, EntityKind::kObject, EntityKind::kProjectile, EntityKind::kTerrain,
                              EntityKind::kStatic};
  const char* names[] = {"robot", "object", "projectile", "terrain", "static"};
  const bool moves[] = {true, true, true, false, false};
  for (int k = 0; k < 5; ++k) {
    EXPECT_EQ(EntityKindName(kinds[k]), names[k]);
    EXPECT_EQ(IsMoving(kinds[k]), moves[k]) << names[k];
  }
}

TEST(SceneModelTest, FindLinkByQualifiedBareOrSingleLinkEntityName) {
  auto model = Build(FiveEntities());
  ASSERT_TRUE(model.ok()) << model.status();
  const SceneModel& m = **model;
  auto index = [&](const char* name) { return m.FindLink(name, "field")->value(); };
  EXPECT_EQ(index("hand/finger"), 1);
  EXPECT_EQ(index("finger"), 1) << "a bare name of one link";
  EXPECT_EQ(index("hand/palm"), 0);
  EXPECT_EQ(index("shelf/palm"), 5);
  EXPECT_EQ(index("ball"), 3) << "an entity of a single link";
  EXPECT_EQ(index("dart"), 4);

  auto ambiguous = m.FindLink("palm", "sensors[2].link");
  EXPECT_EQ(ambiguous.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ambiguous.status().message(),
              HasSubstr("sensors[2].link: link name 'palm' is ambiguous (2 entities have it); use 'entity/link'"));
  for (const char* unknown : {"hand", "nope", "ball/nope"}) {
    auto r = m.FindLink(unknown, "filter_links[0]");
    EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound) << unknown;
    EXPECT_THAT(r.status().message(), HasSubstr(std::string("filter_links[0]: unknown link '") + unknown + "'"));
  }
}

TEST(SceneModelTest, PerEnvAssetsAndEmptySlots) {
  auto model = Build(FiveEntities());
  ASSERT_TRUE(model.ok()) << model.status();
  const SceneModel& m = **model;
  const LinkIndex body(3), palm(0);
  EXPECT_EQ(m.AssetIn(body, 0), 0);
  EXPECT_EQ(m.AssetIn(body, 1), 1);
  EXPECT_EQ(m.AssetIn(body, 2), -1);
  ASSERT_EQ(m.ShapesIn(body, 0).size(), 1u);
  EXPECT_EQ(m.ShapesIn(body, 0)[0].shape.kind(), geometry::ShapeKind::kSphere);
  EXPECT_EQ(m.ShapesIn(body, 0)[0].shape.radius(), 0.05);
  ASSERT_EQ(m.ShapesIn(body, 1).size(), 1u);
  EXPECT_EQ(m.ShapesIn(body, 1)[0].shape.kind(), geometry::ShapeKind::kBox);
  EXPECT_TRUE(m.ShapesIn(body, 2).empty());
  // Entities without assets hold asset 0 in every env.
  for (int e = 0; e < 3; ++e) EXPECT_EQ(m.AssetIn(palm, e), 0);
  EXPECT_THAT(m.entities()[2].asset_names, ElementsAre("default", "cube"));
  EXPECT_THAT(m.entities()[2].env_assets, ElementsAre(0, 1, -1));
  EXPECT_THAT(m.entities()[0].env_assets, ElementsAre(0, 0, 0));
}

// A shape's bounds are its own box moved by X_LS; a link's asset bounds the union of its shapes.
TEST(SceneModelTest, ShapeAndAssetBoundsInTheLinkFrame) {
  auto model = Build(FiveEntities());
  ASSERT_TRUE(model.ok()) << model.status();
  const SceneModel& m = **model;
  const geometry::Aabb& palm = m.link(LinkIndex(0)).assets[0][0].bounds_L;
  EXPECT_TRUE(palm.lo.isApprox(Eigen::Vector3d(0.09, -0.02, -0.005)));
  EXPECT_TRUE(palm.hi.isApprox(Eigen::Vector3d(0.11, 0.02, 0.005)));
  const LinkModel& body = m.link(LinkIndex(3));
  ASSERT_EQ(body.asset_bounds_L.size(), 2u);
  EXPECT_TRUE(body.asset_bounds_L[0].hi.isApprox(Eigen::Vector3d::Constant(0.05)));
  EXPECT_TRUE(body.asset_bounds_L[1].lo.isApprox(Eigen::Vector3d::Constant(-0.02)));
  EXPECT_FALSE(m.link(LinkIndex(2)).asset_bounds_L[0].is_finite()) << "a half-space is unbounded";
  EXPECT_FALSE(m.link(LinkIndex(0)).assets[0][0].scaled_mesh);
}

TEST(SceneModelTest, EveryFieldErrorNamesItsPathAndRule) {
  struct Case {
    const char* what;
    void (*edit)(SceneSpec&);
    const char* message;
  };
  const Case cases[] = {
      {"no envs", [](SceneSpec& s) { s.num_envs = 0; }, "num_envs: expected a value >= 1, got 0"},
      {"empty entity name", [](SceneSpec& s) { s.entities[0].name = ""; },
       "entities[0].name: expected a non-empty name without '/'"},
      {"slash in entity name", [](SceneSpec& s) { s.entities[3].name = "a/b"; },
       "entities[3].name: expected a non-empty name without '/'"},
      {"duplicate entity", [](SceneSpec& s) { s.entities[1].name = "hand"; },
       "entities[1].name: duplicate entity name 'hand'"},
      {"no links", [](SceneSpec& s) { s.entities[3].links.clear(); }, "entities[3].links: expected at least one link"},
      {"assets on a robot",
       [](SceneSpec& s) {
         s.entities[0].env_assets = {0, 0, 0};
       },
       "entities[0].assets: per-env assets are only allowed on OBJECT entities"},
      {"env_assets size",
       [](SceneSpec& s) {
         s.entities[2].env_assets = {0, 1};
       },
       "entities[2].env_assets: expected 3 values (one per env), got 2"},
      {"env_assets range",
       [](SceneSpec& s) {
         s.entities[2].env_assets = {0, 2, 0};
       },
       "entities[2].env_assets[1]: expected -1 (empty) or an asset index in [0, 2), got 2"},
      {"asset per link", [](SceneSpec& s) { s.entities[2].assets[0].link_shapes.push_back({}); },
       "entities[2].assets[0].link_shapes: expected one shape list per link (1), got 2"},
      {"duplicate link", [](SceneSpec& s) { s.entities[0].links[1].name = "palm"; },
       "entities[0].links[1].name: duplicate link name 'palm'"},
      {"empty link name", [](SceneSpec& s) { s.entities[4].links[0].name = ""; },
       "entities[4].links[0].name: expected a non-empty name without '/'"},
      {"static pose", [](SceneSpec& s) { s.entities[1].links[0].X_WL.p.x() = std::nan(""); },
       "entities[1].links[0].pose: expected finite numbers"},
      {"shape pose", [](SceneSpec& s) { s.entities[0].links[0].shapes[0].X_LS.p.y() = std::nan(""); },
       "entities[0].links[0].shapes[0].pose: expected finite numbers"},
      {"sphere radius", [](SceneSpec& s) { s.entities[0].links[1].shapes[0].radius = -1; },
       "entities[0].links[1].shapes[0].sphere.radius: expected a finite value > 0, got -1"},
      {"asset shape", [](SceneSpec& s) { s.entities[2].assets[0].link_shapes[0][0].half_extents.z() = 0; },
       "entities[2].assets[0].link_shapes[0][0].box.half_extents[2]: expected a finite value > 0, got 0"},
      {"mesh without id", [](SceneSpec& s) { s.entities[3].links[0].shapes[0] = MeshShape(""); },
       "entities[3].links[0].shapes[0].mesh.mesh_id: expected the id of an uploaded mesh"},
      {"mesh scale",
       [](SceneSpec& s) {
         s.entities[3].links[0].shapes[0] = MeshShape("abc");
         s.entities[3].links[0].shapes[0].mesh_scale = Eigen::Vector3d(1, 0, 1);
       },
       "entities[3].links[0].shapes[0].mesh.scale: expected finite, non-zero components"},
  };
  for (const Case& c : cases) {
    SceneSpec spec = FiveEntities();
    c.edit(spec);
    auto r = Build(spec);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.what << ": " << r.status();
    EXPECT_THAT(r.status().message(), HasSubstr(c.message)) << c.what;
  }
}

TEST(SceneModelTest, AnUnknownMeshIsNotFoundAtItsPath) {
  SceneSpec spec = FiveEntities();
  spec.entities[2].assets[0].link_shapes[0][0] = MeshShape("deadbeef");
  auto r = Build(spec);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(),
              HasSubstr("entities[2].assets[0].link_shapes[0][0].mesh.mesh_id: mesh 'deadbeef' has not been uploaded"));
}

// A scaled mesh is a copy the scene owns: reserved against the budget before it is built, counted
// in memory_bytes once however many shapes share it; an unscaled mesh belongs to the store.
TEST(SceneModelTest, ScaledMeshCopiesAreTheScenesMemoryCountedOnce) {
  geometry::MeshStore store;
  geometry::MeshData sphere = geometry::GeodesicSphere(0.02, 1);
  auto added = store.Add(sphere.vertices, sphere.triangles);
  ASSERT_TRUE(added.ok()) << added.status();
  const double base_bytes = static_cast<double>(store.mesh_bytes(added->id));
  auto two_links = [&](const Eigen::Vector3d& scale) {
    ShapeSpec mesh = MeshShape(added->id);
    mesh.mesh_scale = scale;
    SceneSpec spec;
    spec.num_envs = 1;
    spec.entities.push_back(Entity("a", EntityKind::kObject, {Link("body", {mesh})}));
    spec.entities.push_back(Entity("b", EntityKind::kStatic, {Link("body", {mesh})}));
    return spec;
  };
  auto plain = SceneModel::Build(two_links(Eigen::Vector3d::Ones()), store);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE((*plain)->link(LinkIndex(0)).assets[0][0].scaled_mesh);

  FixedMemoryBudget budget(1e12);
  auto scaled = SceneModel::Build(two_links(Eigen::Vector3d(2, 1, 1)), store, budget);
  ASSERT_TRUE(scaled.ok()) << scaled.status();
  const ShapeInstance& a = (*scaled)->link(LinkIndex(0)).assets[0][0];
  const ShapeInstance& b = (*scaled)->link(LinkIndex(1)).assets[0][0];
  EXPECT_TRUE(a.scaled_mesh && b.scaled_mesh);
  ASSERT_EQ(a.shape.mesh().get(), b.shape.mesh().get()) << "one shared copy per (mesh, scale)";
  // Each scaled shape reserves the base mesh's bytes (the copy's size before it exists).
  EXPECT_EQ(budget.reserved(), 2 * base_bytes);
  const size_t copy = a.shape.mesh()->memory_bytes() + a.shape.mesh()->mesh().memory_bytes();
  EXPECT_EQ((*scaled)->memory_bytes() - (*plain)->memory_bytes(), copy);
  // x scaled ×2 doubles the extent along x (the sphere is centred on the origin), keeps y.
  const geometry::Aabb& unscaled = (*plain)->link(LinkIndex(0)).assets[0][0].bounds_L;
  EXPECT_NEAR(a.bounds_L.hi.x(), 2 * unscaled.hi.x(), 1e-12);
  EXPECT_NEAR(a.bounds_L.lo.x(), 2 * unscaled.lo.x(), 1e-12);
  EXPECT_NEAR(a.bounds_L.hi.y(), unscaled.hi.y(), 1e-12);

  FixedMemoryBudget small(base_bytes / 2);
  auto refused = SceneModel::Build(two_links(Eigen::Vector3d(3, 1, 1)), store, small);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("entities[0].links[0].shapes[0].mesh.scale: a scaled copy of the mesh"));
}

}  // namespace
}  // namespace taxel::scene
