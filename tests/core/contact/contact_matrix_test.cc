// The partner-resolved contact matrix (docs/reference.md#contact-laws) through scene::Scene: selection and canonical
// axes, memory, and the REPORTED source (aggregation, reset, validation). ESTIMATED is in
// contact_matrix_estimated_test.cc.
#include "core/contact/contact_matrix.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/scene/scene.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/contact/contact_matrix_test_util.h"
#include "tests/support/scene_fixtures.h"

namespace taxel::scene {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace taxel::testing;              // NOLINT
using namespace taxel::scene::contact_test;  // NOLINT
// ---------------------------------------------------------------------------------------------
// Selection. Entities deliberately out of canonical order: an object, the robot, a projectile,
// the terrain, a static wall, another object.
SceneSpec SelectionScene() {
  SceneSpec spec;
  spec.num_envs = 2;
  spec.entities.push_back(Entity("crate", EntityKind::kObject, {Link("body", {BoxShape({0.1, 0.1, 0.1})})}));
  spec.entities.push_back(
      Entity("bot", EntityKind::kRobot,
             {Link("base", {SphereShape(0.1)}), Link("arm", {SphereShape(0.05)}), Link("hand", {SphereShape(0.03)})}));
  spec.entities.push_back(Entity("dart", EntityKind::kProjectile, {Link("tip", {SphereShape(0.01)})}));
  spec.entities.push_back(Entity("ground", EntityKind::kTerrain, {Link("plane", {HalfSpaceShape()})}));
  spec.entities.push_back(Entity("wall", EntityKind::kStatic, {Link("slab", {BoxShape({1, 0.1, 1})})}));
  spec.entities.push_back(Entity("ball", EntityKind::kObject, {Link("body", {SphereShape(0.05)})}));
  return spec;
}

TEST(ContactMatrixSelectionTest, AxesAreCanonicalWhateverTheSelectorOrder) {
  auto scene = WithMatrix(SelectionScene(), {"hand", "base"}, {"object/*", "terrain", "robot/*"});
  ASSERT_TRUE(scene.ok()) << scene.status();
  const contact::ContactMatrix& M = (*scene)->contact_matrix()->matrix();
  // Rows in link order; columns terrain, robot links, object slots (in entity order).
  EXPECT_THAT(M.row_names(), ElementsAre("base", "hand"));
  EXPECT_THAT(M.column_names(),
              ElementsAre("terrain", "robot/base", "robot/arm", "robot/hand", "object/crate", "object/ball"));
  EXPECT_EQ(M.num_envs(), 2);

  // "all", qualified names, globs over every kind, repeated selections.
  scene = WithMatrix(SelectionScene(), {"all"},
                     {"st*", "projectile/d?rt", "object/ball", "terrain", "robot/a*", "object/ball"});
  ASSERT_TRUE(scene.ok()) << scene.status();
  const contact::ContactMatrix& M2 = (*scene)->contact_matrix()->matrix();
  EXPECT_THAT(M2.row_names(), ElementsAre("base", "arm", "hand"));
  EXPECT_THAT(M2.column_names(), ElementsAre("terrain", "robot/arm", "object/ball", "projectile/dart", "static/wall"));
  scene = WithMatrix(SelectionScene(), {"bot/hand", "?rm"}, {"*"});
  ASSERT_TRUE(scene.ok()) << scene.status();
  EXPECT_THAT((*scene)->contact_matrix()->matrix().row_names(), ElementsAre("arm", "hand"));
  EXPECT_EQ((*scene)->contact_matrix()->matrix().cols(), 8);  // terrain, 3 robot, 2 objects, dart, wall

  // Row/column lookups by link index.
  const ContactEstimation& est = *(*scene)->contact_matrix();
  auto link = [&](const char* name) { return *(*scene)->model().FindLink(name, "test"); };
  EXPECT_EQ(est.row_of(link("bot/base")), -1);
  EXPECT_EQ(est.row_of(link("bot/hand")), 1);
  EXPECT_EQ(est.column_of(link("ground/plane")), 0);
  EXPECT_EQ(est.column_of(link("wall/slab")), 7);
}

// Two robots with a link of the same name: those links are named "entity/link" (rows and
// "robot/entity/link" columns); unique short names stay short.
TEST(ContactMatrixSelectionTest, SharedLinkNamesAreQualified) {
  SceneSpec spec;
  spec.entities.push_back(
      Entity("left", EntityKind::kRobot, {Link("hand", {SphereShape(0.02)}), Link("wrist", {SphereShape(0.02)})}));
  spec.entities.push_back(Entity("right", EntityKind::kRobot, {Link("hand", {SphereShape(0.02)})}));
  auto scene = WithMatrix(spec, {"*hand"}, {"robot/*hand", "robot/wrist"});
  ASSERT_TRUE(scene.ok()) << scene.status();
  const contact::ContactMatrix& M = (*scene)->contact_matrix()->matrix();
  EXPECT_THAT(M.row_names(), ElementsAre("left/hand", "right/hand"));
  EXPECT_THAT(M.column_names(), ElementsAre("robot/left/hand", "robot/wrist", "robot/right/hand"));
  scene = WithMatrix(spec, {"right/hand", "left/wrist"}, {"robot/left/hand"});
  ASSERT_TRUE(scene.ok()) << scene.status();
  EXPECT_THAT((*scene)->contact_matrix()->matrix().row_names(), ElementsAre("wrist", "right/hand"));
}

TEST(ContactMatrixSelectionTest, UnknownNamesAndEmptyGlobsAreInvalidArgument) {
  auto r = WithMatrix(SelectionScene(), {"base", "nope", "leg*"}, {"terrain"});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("contact_matrix.bodies"));
  EXPECT_THAT(r.status().message(), HasSubstr("'nope', 'leg*'"));
  // Partners: a bare robot link name is not a column name; a glob over a kind with no match.
  r = WithMatrix(SelectionScene(), {"all"}, {"terrain", "object/z*", "arm", "projectile/dart"});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("contact_matrix.partners"));
  EXPECT_THAT(r.status().message(), HasSubstr("'object/z*', 'arm'"));
  // A crate is an object, not a robot link: not selectable as a row.
  r = WithMatrix(SelectionScene(), {"crate"}, {"terrain"});
  EXPECT_THAT(r.status().message(), HasSubstr("'crate'"));
  // Invalid law and spacing name their field.
  SceneSpec spec = SelectionScene();
  spec.contact_matrix.bodies = {"all"};
  spec.contact_matrix.law.exponent = 0;
  geometry::MeshStore meshes;
  EXPECT_THAT(Scene::Create(spec, meshes).status().message(), HasSubstr("contact_matrix.law.exponent"));
  spec.contact_matrix.law = Law();
  spec.contact_matrix.sample_spacing = 0;
  EXPECT_THAT(Scene::Create(spec, meshes).status().message(), HasSubstr("contact_matrix.sample_spacing"));
  // No robot links at all.
  spec = SelectionScene();
  spec.entities.erase(spec.entities.begin() + 1);
  spec.contact_matrix.bodies = {"all"};
  auto none = Scene::Create(spec, meshes);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(none.status().message(), HasSubstr("contact_matrix.bodies"));
  // An empty body list disables the matrix.
  auto off = WithMatrix(SelectionScene(), {}, {"terrain"});
  ASSERT_TRUE(off.ok());
  EXPECT_EQ((*off)->contact_matrix(), nullptr);
}

TEST(ContactMatrixSelectionTest, MemoryIsEnvsTimesRowsTimesColumnsTimes12Bytes) {
  SceneSpec spec = SelectionScene();
  spec.num_envs = 3;
  auto scene = WithMatrix(spec, {"base", "hand"}, {"terrain", "robot/arm", "object/*"});
  ASSERT_TRUE(scene.ok());
  const contact::ContactMatrix& M = (*scene)->contact_matrix()->matrix();
  EXPECT_EQ(M.matrix_bytes(), 3u * 2 * 4 * 3 * 4);  // 288
  EXPECT_EQ(M.memory_bytes(), 288u);
  EXPECT_FALSE(M.has_friction());
  EXPECT_EQ(M.friction(0), nullptr);
  spec.contact_matrix.friction = true;
  scene = WithMatrix(spec, {"base", "hand"}, {"terrain", "robot/arm", "object/*"});
  ASSERT_TRUE(scene.ok());
  EXPECT_EQ((*scene)->contact_matrix()->matrix().memory_bytes(), 2u * 288);
  EXPECT_GE((*scene)->memory_bytes(), 2u * 288);
}

// ---------------------------------------------------------------------------------------------
// REPORTED: a robot with a base and a foot, a terrain, and an object (not selected).
class ContactMatrixReportedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SceneSpec spec;
    spec.num_envs = 2;
    spec.entities.push_back(Entity("bot", EntityKind::kRobot,
                                   {Link("base", {SphereShape(0.1)}), Link("foot", {BoxShape({0.1, 0.05, 0.02})})}));
    spec.entities.push_back(Entity("box", EntityKind::kObject, {Link("body", {BoxShape({0.1, 0.1, 0.1})})}));
    spec.entities.push_back(Entity("ground", EntityKind::kTerrain, {Link("plane", {HalfSpaceShape()})}));
    spec.contact_matrix.friction = true;
    auto scene = WithMatrix(spec, {"all"}, {"terrain", "robot/*"}, contact::ContactSource::kReported);
    ASSERT_TRUE(scene.ok()) << scene.status();
    scene_ = *std::move(scene);
    stepper_ = std::make_unique<Stepper>(scene_.get());
    auto link = [&](const char* name) { return (*scene_->model().FindLink(name, "test")).value(); };
    base_ = link("bot/base"), foot_ = link("bot/foot"), box_ = link("box/body"), ground_ = link("ground/plane");
  }
  // Identity poses for the 3 moving links (base, foot, box) of n envs.
  static std::vector<double> Poses(int n) {
    std::vector<double> out;
    for (int e = 0; e < n; ++e) {
      for (int l = 0; l < 3; ++l) AppendPose(Eigen::Matrix3d::Identity(), Eigen::Vector3d(l, 0, 1), &out);
    }
    return out;
  }
  absl::Status Step(std::vector<int32_t> envs = {}) {
    ReportedContacts k;
    k.env = env, k.body = body, k.partner = partner, k.force = force, k.friction = friction;
    const int n = envs.empty() ? 2 : static_cast<int>(envs.size());
    return stepper_->Step(Poses(n), {}, std::move(envs), k);
  }
  void Add(int32_t e, int32_t b, int32_t p, const Eigen::Vector3d& f,
           const Eigen::Vector3d& fr = Eigen::Vector3d::Zero()) {
    env.push_back(e), body.push_back(b), partner.push_back(p);
    force.insert(force.end(), {f.x(), f.y(), f.z()});
    friction.insert(friction.end(), {fr.x(), fr.y(), fr.z()});
  }
  void Clear() { env.clear(), body.clear(), partner.clear(), force.clear(), friction.clear(); }
  const contact::ContactMatrix& M() const { return scene_->contact_matrix()->matrix(); }
  std::vector<float> Snapshot() const {
    std::vector<float> out;
    for (int e = 0; e < 2; ++e) out.insert(out.end(), M().normal(e), M().normal(e) + M().rows() * M().cols() * 3);
    return out;
  }

  std::unique_ptr<Scene> scene_;
  std::unique_ptr<Stepper> stepper_;
  int32_t base_ = 0, foot_ = 0, box_ = 0, ground_ = 0;
  std::vector<int32_t> env, body, partner;
  std::vector<double> force, friction;
};

// Rows: base 0, foot 1. Columns: terrain 0, robot/base 1, robot/foot 2.
TEST_F(ContactMatrixReportedTest, AggregatesSelectedPairsPerEnv) {
  ASSERT_THAT(M().column_names(), ElementsAre("terrain", "robot/base", "robot/foot"));
  // Env 0: two upward contacts on the foot from the terrain, 10 N and 15 N → (0, 0, 25).
  Add(0, foot_, ground_, {0, 0, 10}, {1, 0, 0});
  Add(0, foot_, ground_, {0, 0, 15}, {0.5, -2, 0});
  // Opposite contacts between base and foot cancel: (1, 2, 3) + (−1, −2, −3) = 0.
  Add(0, base_, foot_, {1, 2, 3});
  Add(0, base_, foot_, {-1, -2, -3});
  // Against the unselected object, and a self-contact: dropped.
  Add(0, foot_, box_, {0, 0, 100});
  Add(0, foot_, foot_, {0, 0, 100});
  // Object as the body (not a row): dropped.
  Add(0, box_, ground_, {0, 0, 100});
  // Env 1: one sideways contact of the base against the terrain.
  Add(1, base_, ground_, {3, -4, 0});
  ASSERT_TRUE(Step().ok());
  ExpectCell(M(), 0, 1, 0, {0, 0, 25});
  EXPECT_TRUE(FrictionCell(M(), 0, 1, 0).isApprox(Eigen::Vector3d(1.5, -2, 0), 1e-6));
  ExpectCell(M(), 0, 0, 2, {0, 0, 0});
  ExpectCell(M(), 1, 0, 0, {3, -4, 0});
  // Every other cell is zero.
  float total = 0;
  for (int e = 0; e < 2; ++e) {
    for (int i = 0; i < M().rows() * M().cols() * 3; ++i) total += std::abs(M().normal(e)[i]);
  }
  EXPECT_FLOAT_EQ(total, 25 + 3 + 4);

  // Reset env 1 zeroes env 1 only.
  const std::vector<int32_t> env1 = {1};
  ASSERT_TRUE(scene_->Reset(env1).ok());
  ExpectCell(M(), 1, 0, 0, {0, 0, 0});
  ExpectCell(M(), 0, 1, 0, {0, 0, 25});
  // Until the next step of env 1, which fills it again (and leaves env 0 alone).
  Clear();
  Add(1, foot_, ground_, {0, 0, 7});
  ASSERT_TRUE(Step({1}).ok());
  ExpectCell(M(), 1, 1, 0, {0, 0, 7});
  ExpectCell(M(), 1, 0, 0, {0, 0, 0});  // last step's contact is gone
  ExpectCell(M(), 0, 1, 0, {0, 0, 25});
  // A step without contacts clears the stepped envs.
  Clear();
  ASSERT_TRUE(Step().ok());
  ExpectCell(M(), 0, 1, 0, {0, 0, 0});
  ExpectCell(M(), 1, 1, 0, {0, 0, 0});
}

// A contact acts on both links: reported as (terrain, foot) it lands on the foot's row with the
// opposite sign; between base and foot it fills both robot cells, antisymmetrically.
TEST_F(ContactMatrixReportedTest, ContactsActOnBothLinks) {
  Add(0, ground_, foot_, {0, 0, -10});         // force on the ground: the foot gets (0, 0, 10)
  Add(0, base_, foot_, {1, 2, 3}, {0, 1, 0});  // base: (1, 2, 3); foot: (−1, −2, −3)
  Add(1, box_, base_, {0, 0, 5});              // box is no column: dropped on both sides
  ASSERT_TRUE(Step().ok());
  ExpectCell(M(), 0, 1, 0, {0, 0, 10});    // foot, terrain
  ExpectCell(M(), 0, 0, 2, {1, 2, 3});     // base, robot/foot
  ExpectCell(M(), 0, 1, 1, {-1, -2, -3});  // foot, robot/base
  EXPECT_TRUE(FrictionCell(M(), 0, 1, 1).isApprox(Eigen::Vector3d(0, -1, 0), 1e-6));
  float total = 0;
  for (int e = 0; e < 2; ++e) {
    for (int i = 0; i < M().rows() * M().cols() * 3; ++i) total += std::abs(M().normal(e)[i]);
  }
  EXPECT_FLOAT_EQ(total, 10 + 6 + 6);
}

// Many contacts on every cell, then a single one: no cell keeps a stale value (the matrix
// clears what was written, however many contacts wrote it).
TEST_F(ContactMatrixReportedTest, ManyContactsThenFewLeaveNoStaleCells) {
  const int32_t links[3] = {ground_, base_, foot_};
  for (int i = 0; i < 60; ++i) Add(i % 2, i % 4 < 2 ? base_ : foot_, links[i % 3], {1, 0, 0});
  ASSERT_TRUE(Step().ok());
  float total = 0;
  for (float v : Snapshot()) total += v;
  // 20 against the terrain count +1 each; the 20 self-contacts are dropped; the 20 base/foot
  // contacts act on both links (+1 on the body's row, −1 on the partner's): net 0.
  EXPECT_FLOAT_EQ(total, 20);
  Clear();
  Add(1, base_, ground_, {0, 0, 2});
  ASSERT_TRUE(Step().ok());
  std::vector<float> expected(Snapshot().size(), 0.f);
  expected[(1 * M().rows() * M().cols() + 0) * 3 + 2] = 2.f;  // env 1, base, terrain, z
  EXPECT_EQ(Snapshot(), expected);
}

TEST_F(ContactMatrixReportedTest, InvalidContactsRefuseTheStepAndChangeNothing) {
  Add(0, foot_, ground_, {0, 0, 10});
  ASSERT_TRUE(Step().ok());
  const std::vector<float> before = Snapshot();
  const int64_t steps = scene_->step_count();
  auto expect_refused = [&](std::vector<int32_t> envs, const char* message) {
    const absl::Status s = Step(std::move(envs));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << message;
    EXPECT_THAT(s.message(), HasSubstr(message));
    EXPECT_EQ(scene_->step_count(), steps);
    EXPECT_EQ(Snapshot(), before) << message;
  };
  // A contact for env 1 in a step that updates env 0 only.
  Clear();
  Add(0, foot_, ground_, {0, 0, 1});
  Add(1, foot_, ground_, {0, 0, 1});
  expect_refused({0}, "contacts.env[1]: env 1 is not one of the envs this step updates");
  // Env out of range.
  Clear();
  Add(5, foot_, ground_, {0, 0, 1});
  expect_refused({}, "contacts.env[0]");
  // Link indices out of range (4 links).
  Clear();
  Add(0, foot_, ground_, {0, 0, 1});
  Add(0, 4, ground_, {0, 0, 1});
  expect_refused({}, "contacts.body[1]: link index 4 out of range [0, 4)");
  Clear();
  Add(0, foot_, -1, {0, 0, 1});
  expect_refused({}, "contacts.partner[0]: link index -1 out of range");
  // Non-finite forces and friction.
  Clear();
  Add(0, foot_, ground_, {0, 0, std::numeric_limits<double>::quiet_NaN()});
  expect_refused({}, "contacts.force[0][2]");
  Clear();
  Add(0, foot_, ground_, {0, 0, 1}, {std::numeric_limits<double>::infinity(), 0, 0});
  expect_refused({}, "contacts.friction[0][0]");
  // Mismatched lengths.
  Clear();
  Add(0, foot_, ground_, {0, 0, 1});
  partner.push_back(ground_);
  expect_refused({}, "contacts: env, body and partner need the same length");
  // The scene still works afterwards.
  Clear();
  Add(0, foot_, ground_, {0, 0, 2});
  ASSERT_TRUE(Step().ok());
  ExpectCell(M(), 0, 1, 0, {0, 0, 2});
}

TEST(ContactMatrixSourceTest, ContactsNeedAReportedMatrix) {
  SceneSpec spec = SelectionScene();
  auto scene = WithMatrix(spec, {"all"}, {"terrain"});  // ESTIMATED
  ASSERT_TRUE(scene.ok());
  Stepper stepper(scene->get());
  std::vector<int32_t> env = {0}, body = {1}, partner = {4};
  std::vector<double> force = {0, 0, 1};
  ReportedContacts k;
  k.env = env, k.body = body, k.partner = partner, k.force = force;
  std::vector<double> poses;
  for (int i = 0; i < 2 * 6; ++i) AppendPose(Eigen::Matrix3d::Identity(), Eigen::Vector3d(0, 0, 5), &poses);
  const absl::Status s = stepper.Step(poses, {}, {}, k);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("contacts: reported contacts need a contact matrix with source REPORTED"));
}

}  // namespace
}  // namespace taxel::scene
