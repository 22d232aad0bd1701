// The partner-resolved contact matrix over gRPC (docs/reference.md, "Contact laws"): the axes a scene reports, the
// REPORTED aggregation of StepRequest.contacts and its validation, GetContactMatrix slices, the
// step response's matrix, ResetEnvs, and ESTIMATED forces against closed forms.
#include <chrono>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/server/service_fixture.h"

namespace taxel::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr double kPi = 3.141592653589793;

// ---------------------------------------------------------------------------------------------
// The "zoo": one entity of every kind, declared out of canonical order, so that the matrix's
// axes can only come out canonical if the server sorts them. Canonical link indices follow the
// declaration order:
//
//   link  entity/link    kind         moving index
//   0     table/top      STATIC       -
//   1     cup/body       OBJECT       0
//   2     arm/palm       ROBOT        1
//   3     arm/thumb      ROBOT        2
//   4     arm/index      ROBOT        3
//   5     ground/plane   TERRAIN      -
//   6     dart/tip       PROJECTILE   4
//   7     ramp/slope     TERRAIN      -      (a second terrain entity: same "terrain" column)
//   8     plate/disc     OBJECT       5
//   9     leg/foot       ROBOT        6
//
// Every column name: terrain, robot/palm, robot/thumb, robot/index, robot/foot, object/cup,
// object/plate, projectile/dart, static/table (that order).
constexpr int kZooLinks = 10;
constexpr int kZooMoving = 7;
constexpr int kPalm = 2, kThumb = 3, kIndex = 4, kGround = 5, kRamp = 7, kPlate = 8, kCup = 1;

scene::SceneSpec ZooCoreSpec(const std::string& name, int num_envs) {
  scene::SceneSpec spec;
  spec.name = name;
  spec.num_envs = num_envs;
  scene::LinkSpec top = Link("top", {BoxShape({0.5, 0.5, 0.02})});
  top.X_WL.p = Eigen::Vector3d(0, 0, 0.7);
  spec.entities.push_back(Entity("table", scene::EntityKind::kStatic, {top}));
  spec.entities.push_back(Entity("cup", scene::EntityKind::kObject, {Link("body", {SphereShape(0.03)})}));
  spec.entities.push_back(Entity("arm", scene::EntityKind::kRobot,
                                 {Link("palm", {BoxShape({0.04, 0.04, 0.01})}), Link("thumb", {SphereShape(0.01)}),
                                  Link("index", {SphereShape(0.01)})}));
  spec.entities.push_back(Entity("ground", scene::EntityKind::kTerrain, {Link("plane", {HalfSpaceShape()})}));
  spec.entities.push_back(Entity("dart", scene::EntityKind::kProjectile, {Link("tip", {SphereShape(0.005)})}));
  scene::LinkSpec slope = Link("slope", {BoxShape({1, 1, 0.1})});
  slope.X_WL.p = Eigen::Vector3d(5, 0, 0);
  spec.entities.push_back(Entity("ramp", scene::EntityKind::kTerrain, {slope}));
  spec.entities.push_back(Entity("plate", scene::EntityKind::kObject, {Link("disc", {BoxShape({0.1, 0.1, 0.005})})}));
  spec.entities.push_back(Entity("leg", scene::EntityKind::kRobot, {Link("foot", {BoxShape({0.05, 0.1, 0.02})})}));
  return spec;
}

v1::SceneSpec ZooSpec(const std::string& name, int num_envs, std::vector<std::string> bodies,
                      std::vector<std::string> partners, v1::ContactSource source = v1::REPORTED,
                      bool friction = false) {
  v1::SceneSpec wire = ToWire(ZooCoreSpec(name, num_envs));
  v1::ContactMatrixSpec* cm = wire.mutable_contact_matrix();
  for (const auto& b : bodies) cm->add_bodies(b);
  for (const auto& p : partners) cm->add_partners(p);
  cm->set_source(source);
  cm->set_friction(friction);
  return wire;
}

/// A step of the zoo: every moving link at the origin (REPORTED forces do not depend on poses).
v1::StepRequest ZooStep(const std::string& scene, std::vector<int32_t> env_ids, int num_envs) {
  const int n = env_ids.empty() ? num_envs : static_cast<int>(env_ids.size());
  std::vector<double> poses;
  for (int i = 0; i < n * kZooMoving; ++i) poses.insert(poses.end(), {0, 0, 0, 0, 0, 0, 1});
  v1::StepRequest req;
  req.set_scene(scene);
  for (int32_t e : env_ids) req.add_env_ids(e);
  *req.mutable_poses() = DoubleTensor({n, kZooMoving, 7}, poses);
  req.set_quat_order(v1::XYZW);
  req.set_dt(0.01);
  req.mutable_read()->set_none(true);
  return req;
}

/// One reported contact: force (and friction) on `body` from `partner`, N, world.
struct Contact {
  int env, body, partner;
  Eigen::Vector3d force;
  Eigen::Vector3d friction = Eigen::Vector3d::Zero();
};

v1::ReportedContacts Contacts(const std::vector<Contact>& ks, bool with_friction) {
  std::vector<int32_t> env, body, partner;
  std::vector<double> force, friction;
  for (const Contact& k : ks) {
    env.push_back(k.env);
    body.push_back(k.body);
    partner.push_back(k.partner);
    force.insert(force.end(), {k.force.x(), k.force.y(), k.force.z()});
    friction.insert(friction.end(), {k.friction.x(), k.friction.y(), k.friction.z()});
  }
  const int64_t K = static_cast<int64_t>(ks.size());
  v1::ReportedContacts out;
  *out.mutable_env() = Int32Tensor({K}, env);
  *out.mutable_body() = Int32Tensor({K}, body);
  *out.mutable_partner() = Int32Tensor({K}, partner);
  *out.mutable_force() = DoubleTensor({K, 3}, force);
  if (with_friction) *out.mutable_friction() = DoubleTensor({K, 3}, friction);
  return out;
}

/// The first BadRequest field violation of a status (field and description; empty when none).
std::pair<std::string, std::string> Violation(const grpc::Status& status) {
  google::rpc::Status rpc;
  if (status.error_details().empty() || !rpc.ParseFromString(status.error_details())) return {};
  for (const auto& any : rpc.details()) {
    google::rpc::BadRequest bad;
    if (any.UnpackTo(&bad) && bad.field_violations_size() > 0) {
      return {bad.field_violations(0).field(), bad.field_violations(0).description()};
    }
  }
  return {};
}

/// Cell (e, r, c) of a [E, B, P, 3] matrix of a response, by position on its axes.
Eigen::Vector3f Cell(const v1::GetContactMatrixResponse& m, int e, int r, int c, bool friction = false) {
  const v1::Tensor& t = friction ? m.friction() : m.normal();
  const size_t at = ((static_cast<size_t>(e) * m.rows_size() + r) * m.columns_size() + c) * 3;
  return {FloatAt(t, at), FloatAt(t, at + 1), FloatAt(t, at + 2)};
}

/// Every value of `t` equals `expected` (flat [E, B, P, 3]).
void ExpectValues(const v1::Tensor& t, const std::vector<float>& expected, const std::string& what) {
  ASSERT_EQ(t.dtype(), v1::FLOAT32) << what;
  ASSERT_EQ(t.data().size(), 4 * expected.size()) << what;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_FLOAT_EQ(FloatAt(t, i), expected[i])
        << what << " value " << i << " (cell " << i / 3 << ", axis " << i % 3 << ")";
  }
}

class ContactMatrixTest : public ServerTest {
 protected:
  grpc::Status CallCreate(const v1::SceneSpec& spec, v1::SceneInfo* out) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    v1::CreateSceneRequest req;
    *req.mutable_spec() = spec;
    return client_->stub().CreateScene(&ctx, req, out);
  }
  grpc::Status CallStep(const v1::StepRequest& req, v1::StepResponse* out) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return client_->stub().Step(&ctx, req, out);
  }
  grpc::Status CallGet(const v1::GetContactMatrixRequest& req, v1::GetContactMatrixResponse* out) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return client_->stub().GetContactMatrix(&ctx, req, out);
  }
  v1::SceneInfo MustCreate(const v1::SceneSpec& spec) {
    auto info = client_->CreateScene(spec);
    EXPECT_TRUE(info.ok()) << info.status();
    return info.ok() ? *info : v1::SceneInfo();
  }
  v1::GetContactMatrixResponse MustGet(const std::string& scene, bool friction = false) {
    v1::GetContactMatrixRequest req;
    req.set_scene(scene);
    req.set_friction(friction);
    auto m = client_->GetContactMatrix(req);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? *m : v1::GetContactMatrixResponse();
  }
};

// ---------------------------------------------------------------------------------------------
// Scene info: the axes.

TEST_F(ContactMatrixTest, AxesAreCanonicalWhateverTheSelectorOrder) {
  const v1::SceneInfo info =
      MustCreate(ZooSpec("zoo", 3, {"thumb", "foot", "palm"},
                         {"static/table", "projectile/dart", "object/*", "robot/index", "terrain", "robot/palm"}));
  // Canonical link indices are the declaration order (the table in the header).
  ASSERT_EQ(info.links_size(), kZooLinks);
  EXPECT_EQ(info.links(kPalm).name(), "arm/palm");
  EXPECT_EQ(info.links(kRamp).name(), "ramp/slope");
  ASSERT_TRUE(info.has_contact_matrix());
  const v1::ContactMatrixInfo& cm = info.contact_matrix();
  // Rows in link order, columns terrain | robot links | object slots | projectiles | static.
  EXPECT_THAT(cm.rows(), ElementsAre("palm", "thumb", "foot"));
  EXPECT_THAT(cm.columns(), ElementsAre("terrain", "robot/palm", "robot/index", "object/cup", "object/plate",
                                        "projectile/dart", "static/table"));
  EXPECT_EQ(cm.source(), v1::REPORTED);
  EXPECT_FALSE(cm.friction());
  EXPECT_EQ(cm.bytes(), 3 * 3 * 7 * 3 * 4);  // E × B × P × 3 × 4 = 756
  // GetScene and ListScenes describe it the same way.
  auto again = client_->GetScene("zoo");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->contact_matrix().SerializeAsString(), cm.SerializeAsString());
  auto list = client_->ListScenes();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->scenes_size(), 1);
  EXPECT_EQ(list->scenes(0).contact_matrix().SerializeAsString(), cm.SerializeAsString());
  // Before any step the matrix reads zero, on the same axes, shaped [E, B, P, 3].
  const v1::GetContactMatrixResponse m = MustGet("zoo");
  EXPECT_THAT(m.env_ids(), ElementsAre(0, 1, 2));
  EXPECT_THAT(m.rows(), ElementsAre("palm", "thumb", "foot"));
  EXPECT_EQ(m.columns_size(), 7);
  EXPECT_THAT(m.normal().shape(), ElementsAre(3, 3, 7, 3));
  EXPECT_EQ(m.normal().data(), std::string(756, '\0'));
  EXPECT_FALSE(m.has_friction());
}

TEST_F(ContactMatrixTest, GlobsAllAndDefaults) {
  // "all" rows and a "*" partner glob: every robot link, every column (P = 1 + 4 + 2 + 1 + 1).
  v1::SceneInfo info = MustCreate(ZooSpec("everything", 2, {"all"}, {"*"}, v1::ESTIMATED, /*friction=*/true));
  EXPECT_THAT(info.contact_matrix().rows(), ElementsAre("palm", "thumb", "index", "foot"));
  EXPECT_THAT(info.contact_matrix().columns(),
              ElementsAre("terrain", "robot/palm", "robot/thumb", "robot/index", "robot/foot", "object/cup",
                          "object/plate", "projectile/dart", "static/table"));
  EXPECT_EQ(info.contact_matrix().source(), v1::ESTIMATED);
  EXPECT_TRUE(info.contact_matrix().friction());
  EXPECT_EQ(info.contact_matrix().bytes(), 2 * 4 * 9 * 3 * 4);  // per matrix: 864, friction or not

  // Globs with '?' and '*', on both axes; selectors may overlap.
  info = MustCreate(ZooSpec("globs", 1, {"?alm", "t*", "palm"}, {"robot/*", "object/c?p", "*/dart"}));
  EXPECT_THAT(info.contact_matrix().rows(), ElementsAre("palm", "thumb"));
  EXPECT_THAT(info.contact_matrix().columns(),
              ElementsAre("robot/palm", "robot/thumb", "robot/index", "robot/foot", "object/cup", "projectile/dart"));
  EXPECT_EQ(info.contact_matrix().bytes(), 1 * 2 * 6 * 3 * 4);

  // Qualified link names select rows too; no partners = ["terrain"] (both terrain entities).
  info = MustCreate(ZooSpec("default_partners", 4, {"leg/foot", "arm/index"}, {}));
  EXPECT_THAT(info.contact_matrix().rows(), ElementsAre("index", "foot"));
  EXPECT_THAT(info.contact_matrix().columns(), ElementsAre("terrain"));
  EXPECT_EQ(info.contact_matrix().bytes(), 4 * 2 * 1 * 3 * 4);

  // No bodies: no matrix at all.
  info = MustCreate(ToWire(ZooCoreSpec("none", 1)));
  EXPECT_FALSE(info.has_contact_matrix());
}

TEST_F(ContactMatrixTest, UnknownNamesAreInvalidArgumentAndCreateNothing) {
  struct Case {
    std::vector<std::string> bodies, partners;
    std::string field, name;
  };
  const std::vector<Case> cases = {
      {{"palm", "pinky"}, {"terrain"}, "spec.contact_matrix.bodies", "'pinky'"},
      {{"t*", "z*"}, {"terrain"}, "spec.contact_matrix.bodies", "'z*'"},
      // Rows are robot links only: an object's link is not a body.
      {{"cup/body"}, {"terrain"}, "spec.contact_matrix.bodies", "'cup/body'"},
      {{"palm"}, {"terrain", "object/mug*"}, "spec.contact_matrix.partners", "'object/mug*'"},
      {{"palm"}, {"robot/wrist"}, "spec.contact_matrix.partners", "'robot/wrist'"},
      // A partner is named by its column, not by its link.
      {{"palm"}, {"ground/plane"}, "spec.contact_matrix.partners", "'ground/plane'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    v1::SceneInfo info;
    const grpc::Status s = CallCreate(ZooSpec("bad", 2, c.bodies, c.partners), &info);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
    EXPECT_THAT(s.error_message(), StartsWith(c.field + ": "));
    EXPECT_THAT(s.error_message(), HasSubstr(c.name));
    const auto [field, description] = Violation(s);
    EXPECT_EQ(field, c.field);
    EXPECT_THAT(description, HasSubstr(c.name));
    // Nothing was created, and the name is still free.
    EXPECT_EQ(client_->GetScene("bad").status().code(), absl::StatusCode::kNotFound);
    auto list = client_->ListScenes();
    ASSERT_TRUE(list.ok());
    EXPECT_EQ(list->scenes_size(), 0);
    auto server_info = client_->GetServerInfo();
    ASSERT_TRUE(server_info.ok());
    EXPECT_EQ(server_info->num_scenes(), 0);
    EXPECT_EQ(server_info->memory_bytes(), 0);
  }
  ASSERT_TRUE(client_->CreateScene(ZooSpec("bad", 2, {"palm"}, {"terrain"})).ok());
}

// ---------------------------------------------------------------------------------------------
// REPORTED: aggregation of StepRequest.contacts.

// Rows palm (0), thumb (1); columns terrain (0), robot/index (1), object/cup (2); friction kept.
class ReportedTest : public ContactMatrixTest {
 protected:
  static constexpr int kEnvs = 3, kB = 2, kP = 3;
  void SetUp() override {
    ContactMatrixTest::SetUp();
    const v1::SceneInfo info =
        MustCreate(ZooSpec("rep", kEnvs, {"thumb", "palm"}, {"object/cup", "robot/index", "terrain"}, v1::REPORTED,
                           /*friction=*/true));
    ASSERT_THAT(info.contact_matrix().rows(), ElementsAre("palm", "thumb"));
    ASSERT_THAT(info.contact_matrix().columns(), ElementsAre("terrain", "robot/index", "object/cup"));
  }
  static size_t At(int e, int r, int c) { return ((static_cast<size_t>(e) * kB + r) * kP + c) * 3; }
  static void Set(std::vector<float>* m, int e, int r, int c, Eigen::Vector3f v) {
    for (int a = 0; a < 3; ++a) (*m)[At(e, r, c) + a] = v[a];
  }
  v1::StepResponse MustStep(const std::vector<int32_t>& envs, const std::vector<Contact>& ks, bool friction = true) {
    v1::StepRequest req = ZooStep("rep", envs, kEnvs);
    if (!ks.empty()) *req.mutable_contacts() = Contacts(ks, friction);
    v1::StepResponse r;
    const grpc::Status s = CallStep(req, &r);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return r;
  }
  // The step of the aggregation test, and the matrices it must produce (worked out by hand below).
  static std::vector<Contact> MixedContacts() {
    return {
        // env 0: two upward contacts of 10 N and 15 N between palm and the ground: (0, 0, 25);
        // friction (1, 0, 0) + (0, 2, 0) = (1, 2, 0).
        {0, kPalm, kGround, {0, 0, 10}, {1, 0, 0}},
        {0, kPalm, kGround, {0, 0, 15}, {0, 2, 0}},
        // env 1: thumb pushed both ways by the cup: the normal and friction parts cancel.
        {1, kThumb, kCup, {3, -4, 5}, {0, 0.5, 0}},
        {1, kThumb, kCup, {-3, 4, -5}, {0, -0.5, 0}},
        // env 1: thumb from the index finger (a robot column; the −force on the index is
        // dropped: the index is no row).
        {1, kThumb, kIndex, {0, -6, 0}, {0.25, 0, 0}},
        // env 1: palm against the plate, an unselected partner: dropped.
        {1, kPalm, kPlate, {0, 0, 100}, {9, 9, 9}},
        // env 2: the index finger is no row: dropped. So is the cup as a body.
        {2, kIndex, kGround, {0, 0, 7}, {9, 9, 9}},
        {2, kCup, kGround, {0, 0, 8}, {9, 9, 9}},
        // env 2: both terrain entities fall in the one terrain column: (0.5, 0, 1) + (0, 0, 2).
        {2, kPalm, kGround, {0.5, 0, 1}},
        {2, kPalm, kRamp, {0, 0, 2}, {0, -1, 0}},
    };
  }
  static std::vector<float> MixedNormal() {
    std::vector<float> m(kEnvs * kB * kP * 3, 0.f);
    Set(&m, 0, 0, 0, {0, 0, 25});
    Set(&m, 1, 1, 1, {0, -6, 0});
    Set(&m, 2, 0, 0, {0.5f, 0, 3});
    return m;
  }
  static std::vector<float> MixedFriction() {
    std::vector<float> m(kEnvs * kB * kP * 3, 0.f);
    Set(&m, 0, 0, 0, {1, 2, 0});
    Set(&m, 1, 1, 1, {0.25f, 0, 0});
    Set(&m, 2, 0, 0, {0, -1, 0});
    return m;
  }
};

TEST_F(ReportedTest, ContactsSumPerBodyAndPartner) {
  MustStep({}, MixedContacts());
  const v1::GetContactMatrixResponse m = MustGet("rep", /*friction=*/true);
  EXPECT_THAT(m.normal().shape(), ElementsAre(kEnvs, kB, kP, 3));
  EXPECT_THAT(m.friction().shape(), ElementsAre(kEnvs, kB, kP, 3));
  ExpectValues(m.normal(), MixedNormal(), "normal");
  ExpectValues(m.friction(), MixedFriction(), "friction");
  // Without friction in the request, the friction matrix is zero but the normal one the same.
  MustStep({}, MixedContacts(), /*friction=*/false);
  const v1::GetContactMatrixResponse n = MustGet("rep", /*friction=*/true);
  ExpectValues(n.normal(), MixedNormal(), "normal, no friction sent");
  EXPECT_EQ(n.friction().data(), std::string(4 * MixedFriction().size(), '\0'));
}

TEST_F(ReportedTest, AStepReplacesOnlyTheSteppedEnvs) {
  MustStep({}, MixedContacts());
  // Step env 1 alone: its contacts replace env 1's; envs 0 and 2 keep theirs.
  MustStep({1}, {{1, kThumb, kGround, {0, 0, 1}}});
  std::vector<float> want = MixedNormal();
  for (int r = 0; r < kB; ++r) {
    for (int c = 0; c < kP; ++c) Set(&want, 1, r, c, Eigen::Vector3f::Zero());
  }
  Set(&want, 1, 1, 0, {0, 0, 1});
  ExpectValues(MustGet("rep").normal(), want, "after stepping env 1");
  // A step without contacts clears the envs it steps.
  MustStep({2, 0}, {});
  std::vector<float> only1(want.size(), 0.f);
  Set(&only1, 1, 1, 0, {0, 0, 1});
  ExpectValues(MustGet("rep").normal(), only1, "after a step of envs 2 and 0 without contacts");
}

TEST_F(ReportedTest, BadContactsAreRefusedWithTheirFieldAndChangeNothing) {
  MustStep({}, MixedContacts());
  const std::string before_normal = MustGet("rep", true).normal().data();
  const std::string before_friction = MustGet("rep", true).friction().data();
  const int64_t before_step = client_->GetScene("rep")->step();
  ASSERT_EQ(before_step, 1);

  // A valid pair of contacts for a step of envs [0, 1], edited into each bad variant.
  const std::vector<Contact> good = {{0, kPalm, kGround, {0, 0, 1}}, {1, kThumb, kCup, {0, 1, 0}}};
  auto step01 = [&](const v1::ReportedContacts& k) {
    v1::StepRequest req = ZooStep("rep", {0, 1}, kEnvs);
    *req.mutable_contacts() = k;
    return req;
  };
  const double nan = std::nan("");
  struct Case {
    std::string what;
    v1::StepRequest request;
    std::string field, message;
  };
  std::vector<Case> cases;
  {
    auto ks = good;
    ks[1].env = 2;  // a valid env, but not stepped
    cases.push_back({"env not stepped", step01(Contacts(ks, false)), "contacts.env[1]",
                     "env 2 is not one of the envs this step updates"});
    ks[1].env = 7;  // beyond the scene
    cases.push_back({"env out of range", step01(Contacts(ks, false)), "contacts.env[1]",
                     "env 7 is not one of the envs this step updates"});
  }
  {
    auto ks = good;
    ks[0].body = kZooLinks;
    cases.push_back(
        {"body out of range", step01(Contacts(ks, false)), "contacts.body[0]", "link index 10 out of range [0, 10)"});
  }
  {
    auto ks = good;
    ks[1].partner = -1;
    cases.push_back({"partner out of range", step01(Contacts(ks, false)), "contacts.partner[1]",
                     "link index -1 out of range [0, 10)"});
  }
  {
    auto ks = good;
    ks[1].force.y() = nan;
    cases.push_back(
        {"NaN force", step01(Contacts(ks, false)), "contacts.force[1][1]", "expected a finite number, got nan"});
  }
  {
    auto ks = good;
    ks[0].friction.z() = -std::numeric_limits<double>::infinity();
    cases.push_back({"infinite friction", step01(Contacts(ks, true)), "contacts.friction[0][2]",
                     "expected a finite number, got -inf"});
  }
  {
    v1::ReportedContacts k = Contacts(good, true);
    *k.mutable_force() = DoubleTensor({1, 3}, {0, 0, 1});
    cases.push_back({"force K", step01(k), "contacts.force", "expected shape [2, 3], got [1, 3]"});
  }
  {
    v1::ReportedContacts k = Contacts(good, true);
    *k.mutable_friction() = DoubleTensor({3, 3}, std::vector<double>(9, 0.0));
    cases.push_back({"friction K", step01(k), "contacts.friction", "expected shape [2, 3], got [3, 3]"});
  }
  {
    v1::ReportedContacts k = Contacts(good, false);
    *k.mutable_body() = Int32Tensor({1}, {kPalm});
    cases.push_back({"body K", step01(k), "contacts.body", "expected shape [2]"});
  }
  {
    v1::ReportedContacts k = Contacts(good, false);
    *k.mutable_partner() = Int32Tensor({3}, {kGround, kCup, kCup});
    cases.push_back({"partner K", step01(k), "contacts.partner", "expected shape [2]"});
  }
  {
    v1::ReportedContacts k = Contacts(good, false);
    *k.mutable_env() = DoubleTensor({2}, {0, 1});
    cases.push_back({"env dtype", step01(k), "contacts.env", "expected INT32 of shape [K], got FLOAT64 [2]"});
  }
  {
    v1::ReportedContacts k = Contacts(good, false);
    k.clear_force();
    cases.push_back({"force missing", step01(k), "contacts.force", "dtype must be"});
  }

  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    v1::StepResponse r;
    const grpc::Status s = CallStep(c.request, &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
    EXPECT_THAT(s.error_message(), StartsWith(c.field + ": "));
    EXPECT_THAT(s.error_message(), HasSubstr(c.message));
    EXPECT_EQ(Violation(s).first, c.field);
    // Nothing changed: the step count and both matrices are those of the last good step.
    EXPECT_EQ(client_->GetScene("rep")->step(), before_step);
    const v1::GetContactMatrixResponse m = MustGet("rep", true);
    EXPECT_EQ(m.normal().data(), before_normal);
    EXPECT_EQ(m.friction().data(), before_friction);
  }
  // And the scene still steps.
  MustStep({0, 1}, good);
  EXPECT_EQ(client_->GetScene("rep")->step(), before_step + 1);
}

TEST_F(ContactMatrixTest, ContactsNeedAReportedMatrix) {
  // ESTIMATED matrix, and no matrix at all: contacts are refused, naming "contacts".
  MustCreate(ZooSpec("est", 1, {"palm"}, {"terrain"}, v1::ESTIMATED));
  MustCreate(ToWire(ZooCoreSpec("plain", 1)));
  for (const std::string scene : {"est", "plain"}) {
    SCOPED_TRACE(scene);
    v1::StepRequest req = ZooStep(scene, {}, 1);
    *req.mutable_contacts() = Contacts({{0, kPalm, kGround, {0, 0, 1}}}, false);
    v1::StepResponse r;
    const grpc::Status s = CallStep(req, &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("contacts: reported contacts need a contact matrix with source REPORTED"));
    EXPECT_EQ(Violation(s).first, "contacts");
    EXPECT_EQ(client_->GetScene(scene)->step(), 0);
  }
}

// ---------------------------------------------------------------------------------------------
// GetContactMatrix slices and the step response's matrix.

// Every cell of the REPORTED matrix gets its own value, v(e, r, c) = (100e + 10r + c + 1, −that, 0.5).
class SliceTest : public ReportedTest {
 protected:
  static Eigen::Vector3f V(int e, int r, int c) {
    const float x = static_cast<float>(100 * e + 10 * r + c + 1);
    return {x, -x, 0.5f};
  }
  static std::vector<Contact> EveryCell(const std::vector<int32_t>& envs) {
    const int body[kB] = {kPalm, kThumb};
    const int partner[kP] = {kGround, kIndex, kCup};
    std::vector<Contact> ks;
    for (int e : envs) {
      for (int r = 0; r < kB; ++r) {
        for (int c = 0; c < kP; ++c) ks.push_back({e, body[r], partner[c], V(e, r, c).cast<double>()});
      }
    }
    return ks;
  }
};

TEST_F(SliceTest, EnvsRowsAndColumnsComeInTheRequestedOrder) {
  MustStep({}, EveryCell({0, 1, 2}));
  v1::GetContactMatrixRequest req;
  req.set_scene("rep");
  for (int e : {2, 0}) req.add_env_ids(e);
  for (const char* r : {"thumb", "palm"}) req.add_rows(r);
  for (const char* c : {"object/cup", "terrain"}) req.add_columns(c);
  v1::GetContactMatrixResponse m;
  ASSERT_TRUE(CallGet(req, &m).ok());
  EXPECT_THAT(m.env_ids(), ElementsAre(2, 0));
  EXPECT_THAT(m.rows(), ElementsAre("thumb", "palm"));
  EXPECT_THAT(m.columns(), ElementsAre("object/cup", "terrain"));
  EXPECT_THAT(m.normal().shape(), ElementsAre(2, 2, 2, 3));
  EXPECT_FALSE(m.has_friction());
  const int envs[] = {2, 0}, rows[] = {1, 0}, cols[] = {2, 0};  // positions in the full matrix
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      for (int k = 0; k < 2; ++k) {
        EXPECT_EQ(Cell(m, i, j, k), V(envs[i], rows[j], cols[k])) << i << " " << j << " " << k;
      }
    }
  }
  // Rows only (all columns, canonical order), one env.
  req.clear_env_ids();
  req.add_env_ids(1);
  req.clear_rows();
  req.add_rows("thumb");
  req.clear_columns();
  ASSERT_TRUE(CallGet(req, &m).ok());
  EXPECT_THAT(m.columns(), ElementsAre("terrain", "robot/index", "object/cup"));
  EXPECT_THAT(m.normal().shape(), ElementsAre(1, 1, 3, 3));
  for (int c = 0; c < kP; ++c) EXPECT_EQ(Cell(m, 0, 0, c), V(1, 1, c)) << c;
  // Friction (kept by this scene): zeros, as no friction was sent; same shape.
  req.set_friction(true);
  ASSERT_TRUE(CallGet(req, &m).ok());
  EXPECT_THAT(m.friction().shape(), ElementsAre(1, 1, 3, 3));
  EXPECT_EQ(m.friction().data(), std::string(36, '\0'));
}

TEST_F(SliceTest, BadSlicesAreRefused) {
  MustStep({}, EveryCell({0, 1, 2}));
  struct Case {
    std::string what;
    std::vector<int32_t> envs;
    std::vector<std::string> rows, columns;
    grpc::StatusCode code;
    std::string field, message;
  };
  const std::vector<Case> cases = {
      {"unselected row",
       {},
       {"palm", "index"},
       {},
       grpc::StatusCode::INVALID_ARGUMENT,
       "rows[1]",
       "'index' is not in the contact matrix"},
      {"unknown row", {}, {"elbow"}, {}, grpc::StatusCode::INVALID_ARGUMENT, "rows[0]", "'elbow'"},
      {"unselected column",
       {},
       {},
       {"terrain", "static/table"},
       grpc::StatusCode::INVALID_ARGUMENT,
       "columns[1]",
       "'static/table' is not in the contact matrix"},
      {"link name as a column",
       {},
       {},
       {"ground/plane"},
       grpc::StatusCode::INVALID_ARGUMENT,
       "columns[0]",
       "'ground/plane'"},
      {"env out of range",
       {0, 3},
       {},
       {},
       grpc::StatusCode::OUT_OF_RANGE,
       "env_ids[1]",
       "env id 3 out of range [0, 3)"},
      {"negative env", {-1}, {}, {}, grpc::StatusCode::OUT_OF_RANGE, "env_ids[0]", "env id -1 out of range"},
      {"repeated env", {1, 1}, {}, {}, grpc::StatusCode::INVALID_ARGUMENT, "env_ids[1]", "appears more than once"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    v1::GetContactMatrixRequest req;
    req.set_scene("rep");
    for (int32_t e : c.envs) req.add_env_ids(e);
    for (const auto& r : c.rows) req.add_rows(r);
    for (const auto& col : c.columns) req.add_columns(col);
    v1::GetContactMatrixResponse m;
    const grpc::Status s = CallGet(req, &m);
    EXPECT_EQ(s.error_code(), c.code) << s.error_message();
    EXPECT_THAT(s.error_message(), StartsWith(c.field + ": "));
    EXPECT_THAT(s.error_message(), HasSubstr(c.message));
    EXPECT_EQ(Violation(s).first, c.field);
  }
  // Friction from a scene that does not keep it: FAILED_PRECONDITION, saying so.
  MustCreate(ZooSpec("nofric", 1, {"palm"}, {"terrain"}));
  v1::GetContactMatrixRequest req;
  req.set_scene("nofric");
  req.set_friction(true);
  v1::GetContactMatrixResponse m;
  const grpc::Status s = CallGet(req, &m);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("friction: this scene's contact matrix does not keep friction"));
  // An unknown scene.
  req.set_scene("nowhere");
  EXPECT_EQ(CallGet(req, &m).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(SliceTest, StepResponseCarriesTheSteppedEnvs) {
  MustStep({}, EveryCell({0, 1, 2}));
  // Step envs [2, 0] with new values (v + 1000 in x) and ask for the matrix in the response.
  std::vector<Contact> ks = EveryCell({2, 0});
  for (Contact& k : ks) k.force.x() += 1000;
  v1::StepRequest req = ZooStep("rep", {2, 0}, kEnvs);
  *req.mutable_contacts() = Contacts(ks, false);
  req.clear_read();  // the zoo has no sensors: only the matrix comes back
  req.mutable_read()->set_contact_matrix(true);
  v1::StepResponse r;
  const grpc::Status s = CallStep(req, &r);
  ASSERT_TRUE(s.ok()) << s.error_message();
  const v1::GetContactMatrixResponse& m = r.contact_matrix();
  EXPECT_THAT(m.env_ids(), ElementsAre(2, 0));
  EXPECT_THAT(m.rows(), ElementsAre("palm", "thumb"));
  EXPECT_THAT(m.columns(), ElementsAre("terrain", "robot/index", "object/cup"));
  EXPECT_THAT(m.normal().shape(), ElementsAre(2, kB, kP, 3));
  EXPECT_THAT(m.friction().shape(), ElementsAre(2, kB, kP, 3));  // kept by the scene: returned too
  const int envs[] = {2, 0};
  for (int i = 0; i < 2; ++i) {
    for (int row = 0; row < kB; ++row) {
      for (int c = 0; c < kP; ++c) {
        EXPECT_EQ(Cell(m, i, row, c), V(envs[i], row, c) + Eigen::Vector3f(1000, 0, 0)) << i << row << c;
      }
    }
  }
  // Env 1 was not stepped: GetContactMatrix still shows its first values.
  v1::GetContactMatrixRequest get;
  get.set_scene("rep");
  get.add_env_ids(1);
  v1::GetContactMatrixResponse one;
  ASSERT_TRUE(CallGet(get, &one).ok());
  for (int row = 0; row < kB; ++row) {
    for (int c = 0; c < kP; ++c) EXPECT_EQ(Cell(one, 0, row, c), V(1, row, c));
  }
  // Asking for the matrix of a scene without one is refused before the step happens.
  MustCreate(ToWire(ZooCoreSpec("plain", 1)));
  v1::StepRequest plain = ZooStep("plain", {}, 1);
  plain.mutable_read()->set_contact_matrix(true);
  const grpc::Status refused = CallStep(plain, &r);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(refused.error_message(), HasSubstr("read.contact_matrix: this scene has no contact matrix"));
  EXPECT_EQ(client_->GetScene("plain")->step(), 0);
}

TEST_F(SliceTest, ResetZeroesOnlyTheResetEnvsUntilTheirNextStep) {
  // Friction too: friction = the force halved.
  std::vector<Contact> ks = EveryCell({0, 1, 2});
  for (Contact& k : ks) k.friction = 0.5 * k.force;
  MustStep({}, ks);
  const v1::GetContactMatrixResponse before = MustGet("rep", true);
  ASSERT_TRUE(client_->ResetEnvs("rep", {1}).ok());
  const v1::GetContactMatrixResponse after = MustGet("rep", true);
  const size_t per_env = kB * kP * 3 * 4;  // bytes
  for (const auto& [what, b, a] : {std::make_tuple("normal", &before.normal(), &after.normal()),
                                   std::make_tuple("friction", &before.friction(), &after.friction())}) {
    SCOPED_TRACE(what);
    EXPECT_EQ(a->data().substr(0, per_env), b->data().substr(0, per_env));
    EXPECT_EQ(a->data().substr(per_env, per_env), std::string(per_env, '\0'));
    EXPECT_EQ(a->data().substr(2 * per_env), b->data().substr(2 * per_env));
  }
  // The reset env reads zero until it is stepped again; stepping env 1 fills it again.
  MustStep({0}, EveryCell({0}));
  EXPECT_EQ(MustGet("rep").normal().data().substr(per_env, per_env), std::string(per_env, '\0'));
  MustStep({1}, EveryCell({1}));
  const v1::GetContactMatrixResponse refilled = MustGet("rep");
  for (int row = 0; row < kB; ++row) {
    for (int c = 0; c < kP; ++c) EXPECT_EQ(Cell(refilled, 1, row, c), V(1, row, c));
  }
  // Reset of an env that does not exist: OUT_OF_RANGE, nothing cleared.
  EXPECT_EQ(client_->ResetEnvs("rep", {3}).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(MustGet("rep").normal().data(), refilled.normal().data());
}

// ---------------------------------------------------------------------------------------------
// ESTIMATED through the wire, against closed forms.
//
// Two sphere links a (r_a = 5 cm) and b (r_b = 3 cm) of robot "bot", and a terrain half-space
// z ≤ 0. Everything at rest (zero twists), so the law's damping term k_c·S·v_n is 0 and so is
// the friction. Rows a, b; columns terrain, robot/a, robot/b.
//
//   env 0:  a rests on the ground with depth δ;  b far away.      env 1: a and b overlap by δ₂,
//                                                                  centres d = r_a + r_b − δ₂
//              .-''-.                                              apart along e = (0.6, 0, 0.8),
//             /  a   \                                             high above the ground.
//   ---------\-------/---------  z = 0
//             '-..-'   ↕ δ
//
// The model (pair_contact.h): the law is a pressure p(δ_B) = k_p·δ_B^n on the part of ∂A inside
// B, pushing along B's distance gradient n_B:  F_on_A = ∫_{∂A ∩ B} p(δ_B(x))·n_B(x) dA.
constexpr double kRa = 0.05, kRb = 0.03;

v1::SceneSpec SpheresSpec(const std::string& name, bool explicit_law) {
  scene::SceneSpec spec;
  spec.name = name;
  spec.num_envs = 2;
  spec.entities.push_back(
      Entity("bot", scene::EntityKind::kRobot, {Link("a", {SphereShape(kRa)}), Link("b", {SphereShape(kRb)})}));
  spec.entities.push_back(Entity("ground", scene::EntityKind::kTerrain, {Link("plane", {HalfSpaceShape()})}));
  v1::SceneSpec wire = ToWire(spec);
  v1::ContactMatrixSpec* cm = wire.mutable_contact_matrix();
  cm->add_bodies("all");
  cm->add_partners("robot/*");
  cm->add_partners("terrain");
  cm->set_friction(true);
  if (explicit_law) {
    cm->mutable_law()->set_stiffness(2e8);  // Pa/m
    cm->mutable_law()->set_exponent(1.0);
    cm->mutable_law()->set_damping(50);
  }
  return wire;
}

v1::StepRequest SpheresStep(const std::string& scene, const std::vector<Eigen::Vector3d>& centres) {
  v1::StepRequest req;
  req.set_scene(scene);
  const int n = static_cast<int>(centres.size()) / 2;
  *req.mutable_poses() = DoubleTensor({n, 2, 7}, PosesXyzw(centres));
  *req.mutable_twists() = DoubleTensor({n, 2, 6}, std::vector<double>(n * 2 * 6, 0.0));
  req.set_quat_order(v1::XYZW);
  req.set_dt(0.01);
  req.mutable_read()->set_none(true);
  return req;
}

class EstimatedTest : public ContactMatrixTest {};

TEST_F(EstimatedTest, SphereOnTerrainAndSphereOnSphereMatchTheClosedForms) {
  const v1::SceneInfo info = MustCreate(SpheresSpec("spheres", /*explicit_law=*/true));
  ASSERT_THAT(info.contact_matrix().rows(), ElementsAre("a", "b"));
  ASSERT_THAT(info.contact_matrix().columns(), ElementsAre("terrain", "robot/a", "robot/b"));
  EXPECT_EQ(info.contact_matrix().source(), v1::ESTIMATED);
  const double kp = 2e8, n = 1.0;
  const double delta = 1e-3;                           // m, env 0: a into the ground
  const double delta2 = 2e-3, d = kRa + kRb - delta2;  // m, env 1: overlap, centre distance 0.078
  const Eigen::Vector3d e(0.6, 0, 0.8);                // unit, from a to b
  const Eigen::Vector3d ca1(0, 0, 0.5);
  ASSERT_TRUE(client_->Step(SpheresStep("spheres", {{0.1, -0.2, kRa - delta}, {1, 1, 1}, ca1, ca1 + d * e})).ok());
  const v1::GetContactMatrixResponse m = MustGet("spheres", /*friction=*/true);

  // Sphere on a half-space. n_B = +z everywhere; the part of ∂A below z = 0 is a cap of height
  // δ, and by Archimedes the zone of the sphere between heights u and u + du (u measured up
  // from the lowest point) has area 2πR·du whatever its latitude; its depth is δ − u. So
  //   F_z = ∫_0^δ k_p (δ − u)^n · 2πR du = 2πR·k_p·δ^(n+1)/(n+1),
  // for n = 1: π·R·k_p·δ² = π · 0.05 · 2e8 · 1e-6 = 31.4159 N.
  // (Not k_p·π·δ²·(R − δ/3) = k_p × cap volume = 31.2065 N: that is the buoyancy-like result of a
  // pressure along the sphere's own normal, whose z-part weighs each zone by cos θ. The 0.7 %
  // difference, δ/(3R), is far above the tolerance below.)
  const double F0 = 2 * kPi * kRa * kp * std::pow(delta, n + 1) / (n + 1);
  EXPECT_NEAR(F0, 31.4159265, 1e-6);
  const Eigen::Vector3f on_a = Cell(m, 0, 0, 0);
  EXPECT_NEAR(on_a.z(), F0, 1e-5 * F0);
  EXPECT_EQ(on_a.x(), 0.f);
  EXPECT_EQ(on_a.y(), 0.f);
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 3; ++c) {
      if (r == 0 && c == 0) continue;
      EXPECT_EQ(Cell(m, 0, r, c), Eigen::Vector3f::Zero()) << "env 0 cell " << r << ", " << c;
    }
  }

  // Two spheres. On ∂A at polar angle θ from e: ρ = |x − c_b| with ρ² = r_a² + d² − 2 r_a d cos θ,
  // depth r_b − ρ, axial part of n_B (r_a cos θ − d)/ρ, dA = 2π r_a² sin θ dθ. With
  // sin θ dθ = ρ dρ/(r_a d) and r_a cos θ − d = (r_a² − d² − ρ²)/(2d), then t = r_b − ρ ∈ [0, δ₂]:
  //   X_A = (π r_a k_p/d²) ∫_0^δ₂ t^n (r_a² − d² − r_b² + 2 r_b t − t²) dt = (π r_a k_p/d²)·I(r_a, r_b),
  //   I(r_s, r_o) = (r_s² − d² − r_o²) δ₂^(n+1)/(n+1) + 2 r_o δ₂^(n+2)/(n+2) − δ₂^(n+3)/(n+3),
  // the force on A along e from ∂A ∩ B. The integral over ∂B ∩ A gives, by Newton's third law,
  // X_B = (π r_b k_p/d²)·I(r_b, r_a) on A along e; the model averages the two:
  //   F_a = ½(X_A + X_B)·e, with n = 1: X_A = −45.5025 N, X_B = −46.7996 N, F_a = −46.1510 N.
  // (X_A was also checked by a 2·10⁵-point midpoint sum over θ: −45.50249 N.)
  auto I = [&](double rs, double ro) {
    return (rs * rs - d * d - ro * ro) * std::pow(delta2, n + 1) / (n + 1) +
           2 * ro * std::pow(delta2, n + 2) / (n + 2) - std::pow(delta2, n + 3) / (n + 3);
  };
  const double XA = kPi * kRa * kp / (d * d) * I(kRa, kRb), XB = kPi * kRb * kp / (d * d) * I(kRb, kRa);
  const double Fa = 0.5 * (XA + XB);
  EXPECT_NEAR(XA, -45.50249, 1e-4);
  EXPECT_NEAR(Fa, -46.15105, 1e-4);
  const Eigen::Vector3f a_from_b = Cell(m, 1, 0, 2), b_from_a = Cell(m, 1, 1, 1);
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(a_from_b[k], Fa * e[k], 1e-5 * std::abs(Fa)) << k;
    // Antisymmetric: F[e, a, robot/b] = −F[e, b, robot/a] (exactly: one evaluation, mirrored).
    EXPECT_EQ(b_from_a[k], -a_from_b[k]) << k;
  }
  // Self cells and the far-away terrain stay zero.
  for (const auto& [r, c] : std::initializer_list<std::pair<int, int>>{{0, 0}, {0, 1}, {1, 0}, {1, 2}}) {
    EXPECT_EQ(Cell(m, 1, r, c), Eigen::Vector3f::Zero()) << "env 1 cell " << r << ", " << c;
  }
  // At rest there is no slip: the friction matrix is zero.
  EXPECT_EQ(m.friction().data(), std::string(2 * 2 * 3 * 3 * 4, '\0'));

  // Reset env 0: its rows read zero until its next step; env 1 is untouched.
  ASSERT_TRUE(client_->ResetEnvs("spheres", {0}).ok());
  const v1::GetContactMatrixResponse reset = MustGet("spheres");
  EXPECT_EQ(reset.normal().data().substr(0, 72), std::string(72, '\0'));
  EXPECT_EQ(reset.normal().data().substr(72), m.normal().data().substr(72));
  ASSERT_TRUE(client_->Step(SpheresStep("spheres", {{0.1, -0.2, kRa - delta}, {1, 1, 1}, ca1, ca1 + d * e})).ok());
  EXPECT_EQ(MustGet("spheres").normal().data(), m.normal().data());
}

TEST_F(EstimatedTest, DefaultLawThroughTheWire) {
  // No law options: the pressure defaults k_p = 1e9, n = 1.5 (scene.proto). Sphere a, δ = 2 mm:
  //   F_z = 2πR·k_p·δ^2.5/2.5 = 2π · 0.05 · 1e9 · (2e-3)^2.5 / 2.5 = 22.4794 N.
  MustCreate(SpheresSpec("default_law", /*explicit_law=*/false));
  const double delta = 2e-3;
  const double F = 2 * kPi * kRa * 1e9 * std::pow(delta, 2.5) / 2.5;
  EXPECT_NEAR(F, 22.4794, 1e-4);
  // Env 0 as a one-env step ([1, 2, 7] poses), env 1 left unstepped.
  v1::StepRequest req = SpheresStep("default_law", {{0, 0, kRa - delta}, {1, 1, 1}});
  req.add_env_ids(0);
  ASSERT_TRUE(client_->Step(req).ok());
  const v1::GetContactMatrixResponse m = MustGet("default_law");
  EXPECT_NEAR(Cell(m, 0, 0, 0).z(), F, 1e-5 * F);
  EXPECT_EQ(Cell(m, 0, 0, 0).x(), 0.f);
  EXPECT_EQ(Cell(m, 0, 0, 0).y(), 0.f);
  EXPECT_EQ(m.normal().data().substr(72), std::string(72, '\0'));  // env 1 never stepped
}

}  // namespace
}  // namespace taxel::testing
