// taxel-example-bullet: Bullet's collision world as the simulator. A convex triangle mesh (a
// hexagonal prism, uploaded to Taxel with UploadMesh and given to Bullet as a btConvexHullShape of
// the same vertices) is moved along a scripted path against primitives: it is pressed onto a
// sensor pad (box), rocked onto a vertex, slid and turned, pressed from above by a finger (capsule),
// then carried to the ground (plane). Every step the poses go to Taxel over one StepStream and
// Taxel's ContactDepthProbe readings are checked against Bullet's contact distances. Exit status 1
// when they disagree.
//
//   side view in the pad frame (x right, z up; not to scale)
//
//                  finger: capsule r 6 mm, half length 8 mm, axis along the part's x
//                 (=========)       * = finger probe (R 1 mm) at its lowest point
//          ____________*____________
//         /  part: hexagonal prism  \     circumradius 20 mm, half height 8 mm, 20 triangles;
//        o_________________________o     o = 20 part probes (R 1 mm): 12 vertices, 8 face centres
//   __________________________________________
//  | : : : : : : : : : : : : : : : : : : : : |  pad: box 60 x 60 x 10 mm at z = 50 mm, turned
//  |______ 15 x 15 probes (:), pitch 4 mm, R 1.5 mm      15 deg about z and 5 deg about x
//  ======================== ground: plane z = 0 ===========================================
//
// What is compared (depths in metres):
//  - Every probe vs Bullet's contact distance between the partner shapes and a "ghost" sphere of
//    radius R at the probe centre (a btSphereShape collision object that ignores its own link):
//    depth = max(0, −dist), over all partners. The probe centres go inside the partners (the part
//    sinks 1 mm into the pad, whose probe centres lie on its top face), so this exercises Bullet's
//    sphere-box, sphere-plane and GJK/EPA sphere-hull and sphere-capsule paths.
//  - The probes that sit where Bullet measures a contact: when the part touches the pad or the
//    ground its deepest point is a bottom vertex, so the deepest bottom-vertex probe reads R − dist
//    of the part-pad (GJK/EPA hull-box) or part-ground (convex-plane) contact; the finger probe
//    reads R − dist of the finger-part contact.
// Collision margins: btBoxShape and btConvexHullShape get margin 0, so they are the exact box and
// polytope (Bullet's default 0.04 m would round the box's edges and inflate the hull). Spheres and
// capsules keep their built-in margin, which is their radius, i.e. exact too.
// Tolerance, 1e-8 m: Bullet is built in double precision (bullet-float64) and its distances for
// these shape pairs are exact up to ~1e-12 m (GJK/EPA on polytopes converge to the exact face);
// the rest is the rounding of Taxel's float32 output, at most 2^-30 m ≈ 9.3e-10 m below 16 mm.
// Exception: a sphere centre exactly on a hull edge, where EPA is approximate (see kPartOffset).
// With single-precision Bullet, EPA errs by millimetres on this geometry, so CMake skips the
// example unless the double-precision build is installed.
//
// Usage: taxel-example-bullet [--target host:port]
//   Without --target the example starts a Taxel server in this process on 127.0.0.1:0.
#include <btBulletCollisionCommon.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "examples/common/example_support.h"
#include "taxel/client.h"

#ifndef BT_USE_DOUBLE_PRECISION
#error "taxel-example-bullet needs double-precision Bullet (pkg-config bullet-float64)"
#endif

namespace {

namespace v1 = taxel::v1;
using taxel::examples::AddProbeSensor;
using taxel::examples::AddSingleShapeLink;
using taxel::examples::AgreementCheck;
using taxel::examples::Channel;
using taxel::examples::PrintDepthGrid;

// Geometry shared by the Bullet world and the Taxel scene (m).
constexpr double kPadHalf[3] = {0.03, 0.03, 0.005};
constexpr double kPartRadius = 0.02;  // prism circumradius
constexpr double kPartHalfHeight = 0.008;
constexpr double kFingerRadius = 0.006;
constexpr double kFingerHalfLength = 0.008;
constexpr int kGrid = 15;  // pad probes: kGrid x kGrid
constexpr double kPitch = 0.004;
constexpr double kPadProbeRadius = 0.0015;
constexpr double kPointProbeRadius = 0.001;  // part and finger probes
constexpr double kPress = 0.001;             // how far the part and the finger sink in
// Bullet's GJK/EPA is exact for a sphere against a polytope except when the sphere's centre lies
// exactly on an edge of the polytope: then EPA approximates the rounded Minkowski sum by chords
// and returns depths up to ~6e-6 m short (seen with the part on the grid's centre line, where pad
// probes sat on its vertical edges). The path keeps clear of such coincidences.
constexpr double kPartOffset = 0.0007;  // m, along the pad's y

constexpr double kDt = 0.005;  // s
constexpr int kSteps = 560;    // 2.8 s
constexpr double kToleranceM = 1e-8;
constexpr char kSceneName[] = "bullet-example";
constexpr double kDeg = M_PI / 180;

// Geometry ids (also the btCollisionObject user index); probes get kFirstProbe + global index.
enum Geometry { kGround = 0, kPad = 1, kPart = 2, kFinger = 3, kNumGeometry = 4 };
constexpr int kFirstProbe = 100;

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "taxel-example-bullet: %s\n", s.ToString().c_str());
  return 1;
}

// ---- Geometry ----

// Hexagonal prism: vertices 0-5 bottom ring (z = −h), 6-11 top ring, counter-clockwise from +z;
// 20 triangles counter-clockwise seen from outside.
void HexPrism(std::vector<double>* v, std::vector<int32_t>* t) {
  for (double z : {-kPartHalfHeight, kPartHalfHeight}) {
    for (int k = 0; k < 6; ++k) {
      v->insert(v->end(), {kPartRadius * std::cos(k * M_PI / 3), kPartRadius * std::sin(k * M_PI / 3), z});
    }
  }
  for (int k = 1; k < 5; ++k) {
    t->insert(t->end(), {6, 6 + k, 7 + k});  // top
    t->insert(t->end(), {0, k + 1, k});      // bottom
  }
  for (int a = 0; a < 6; ++a) {
    const int b = (a + 1) % 6;
    t->insert(t->end(), {a, b, b + 6});
    t->insert(t->end(), {a, b + 6, a + 6});
  }
}

std::vector<double> PadProbes() {  // [kGrid, kGrid, 3] on the top face, row i along y
  std::vector<double> p;
  for (int i = 0; i < kGrid; ++i) {
    for (int j = 0; j < kGrid; ++j) {
      p.insert(p.end(), {(j - (kGrid - 1) / 2.0) * kPitch, (i - (kGrid - 1) / 2.0) * kPitch, kPadHalf[2]});
    }
  }
  return p;
}

// [20, 3]: the 12 vertices (0-5 bottom, 6-11 top), then the 2 cap centres and the 6 side centres.
std::vector<double> PartProbes() {
  std::vector<double> p;
  std::vector<int32_t> unused;
  HexPrism(&p, &unused);
  p.insert(p.end(), {0, 0, -kPartHalfHeight, 0, 0, kPartHalfHeight});
  const double apothem = kPartRadius * std::cos(M_PI / 6);
  for (int k = 0; k < 6; ++k) {
    const double a = (k + 0.5) * M_PI / 3;
    p.insert(p.end(), {apothem * std::cos(a), apothem * std::sin(a), 0});
  }
  return p;
}
constexpr int kBottomVertices = 6;  // part probes 0-5

// The finger frame is the capsule frame (axis +z); its +x points down while it presses (below).
const std::vector<double> kFingerProbe = {kFingerRadius, 0, 0};

// ---- The Taxel scene ----

v1::SceneSpec MirrorScene(const std::string& mesh_id) {
  v1::SceneSpec spec;
  spec.set_name(kSceneName);
  spec.set_num_envs(1);
  // Registration order = canonical link order: ground, pad, part, finger (as enum Geometry).
  AddSingleShapeLink(&spec, "ground", v1::TERRAIN, "plane")->mutable_half_space();
  v1::Box* pad = AddSingleShapeLink(&spec, "gripper", v1::ROBOT, "pad")->mutable_box();
  for (double h : kPadHalf) pad->add_half_extents(h);
  AddSingleShapeLink(&spec, "part", v1::OBJECT, "body")->mutable_mesh()->set_mesh_id(mesh_id);
  v1::Capsule* finger = AddSingleShapeLink(&spec, "finger", v1::ROBOT, "tip")->mutable_capsule();
  finger->set_radius(kFingerRadius);
  finger->set_half_length(kFingerHalfLength);

  AddProbeSensor(&spec, "pad_depth", v1::CONTACT_DEPTH_PROBE, "gripper/pad", {kGrid, kGrid, 3}, PadProbes(),
                 kPadProbeRadius);
  AddProbeSensor(&spec, "pad_skin", v1::KINEMATIC_TAXEL, "gripper/pad", {kGrid, kGrid, 3}, PadProbes(),
                 kPadProbeRadius);
  AddProbeSensor(&spec, "part_depth", v1::CONTACT_DEPTH_PROBE, "part/body", {20, 3}, PartProbes(), kPointProbeRadius);
  AddProbeSensor(&spec, "finger_probe", v1::CONTACT_DEPTH_PROBE, "finger/tip", {1, 3}, kFingerProbe, kPointProbeRadius);
  return spec;
}

// ---- The Bullet world ----

// One Taxel probe mirrored by a ghost sphere in Bullet.
struct Probe {
  const char* sensor;
  int index;      // in its sensor
  Geometry link;  // the geometry it is attached to (and ignores)
  btVector3 p_L;  // centre in the link frame
  double radius;
};

class BulletWorld {
 public:
  explicit BulletWorld(const std::vector<double>& hull_vertices);
  /// Places the moving geometry (the ground stays at the origin).
  void SetPoses(const btTransform& pad, const btTransform& part, const btTransform& finger);
  const btTransform& pose(Geometry g) const { return objects_[g]->getWorldTransform(); }
  /// Runs the narrow phase from scratch. Fills, per probe, the depth Bullet implies
  /// (max(0, −dist) over partners) and, per pair of geometries, the smallest contact distance
  /// (NaN: no contact point).
  void Detect(std::vector<double>* probe_depth, double pair_dist[kNumGeometry][kNumGeometry]);
  const std::vector<Probe>& probes() const { return probes_; }

 private:
  static constexpr int kGeometryGroup = 1 << 6, kProbeGroup = 1 << 7;
  btDefaultCollisionConfiguration config_;
  btCollisionDispatcher dispatcher_{&config_};
  btDbvtBroadphase broadphase_;
  btCollisionWorld world_{&dispatcher_, &broadphase_, &config_};
  btStaticPlaneShape ground_{btVector3(0, 0, 1), 0};
  btBoxShape pad_{btVector3(kPadHalf[0], kPadHalf[1], kPadHalf[2])};
  btConvexHullShape part_;
  btCapsuleShapeZ finger_{kFingerRadius, 2 * kFingerHalfLength};
  btSphereShape pad_probe_{kPadProbeRadius}, point_probe_{kPointProbeRadius};
  std::vector<std::unique_ptr<btCollisionObject>> objects_;  // by Geometry
  std::vector<Probe> probes_;
  std::vector<std::unique_ptr<btCollisionObject>> ghosts_;  // by probe
};

BulletWorld::BulletWorld(const std::vector<double>& hull_vertices) {
  for (size_t i = 0; i < hull_vertices.size(); i += 3) {
    part_.addPoint(btVector3(hull_vertices[i], hull_vertices[i + 1], hull_vertices[i + 2]), false);
  }
  part_.recalcLocalAabb();
  // Exact box and polytope (see the header). btBoxShape::setMargin keeps the outer half extents.
  pad_.setMargin(0);
  part_.setMargin(0);
  for (btCollisionShape* shape : std::initializer_list<btCollisionShape*>{&ground_, &pad_, &part_, &finger_}) {
    objects_.push_back(std::make_unique<btCollisionObject>());
    objects_.back()->setCollisionShape(shape);
    objects_.back()->setUserIndex(static_cast<int>(objects_.size()) - 1);
    world_.addCollisionObject(objects_.back().get(), kGeometryGroup, kGeometryGroup | kProbeGroup);
  }
  auto add = [&](const char* sensor, Geometry link, const std::vector<double>& p, double radius) {
    for (size_t k = 0; k < p.size() / 3; ++k) {
      probes_.push_back({sensor, static_cast<int>(k), link, btVector3(p[3 * k], p[3 * k + 1], p[3 * k + 2]), radius});
      auto ghost = std::make_unique<btCollisionObject>();
      ghost->setCollisionShape(radius == kPadProbeRadius ? &pad_probe_ : &point_probe_);
      ghost->setUserIndex(kFirstProbe + static_cast<int>(ghosts_.size()));
      ghost->setIgnoreCollisionCheck(objects_[link].get(), true);  // a probe ignores its own link
      world_.addCollisionObject(ghost.get(), kProbeGroup, kGeometryGroup);
      ghosts_.push_back(std::move(ghost));
    }
  };
  add("pad_depth", kPad, PadProbes(), kPadProbeRadius);
  add("part_depth", kPart, PartProbes(), kPointProbeRadius);
  add("finger_probe", kFinger, kFingerProbe, kPointProbeRadius);
}

void BulletWorld::SetPoses(const btTransform& pad, const btTransform& part, const btTransform& finger) {
  objects_[kPad]->setWorldTransform(pad);
  objects_[kPart]->setWorldTransform(part);
  objects_[kFinger]->setWorldTransform(finger);
  for (size_t k = 0; k < probes_.size(); ++k) {
    btTransform X(btQuaternion::getIdentity(), pose(probes_[k].link) * probes_[k].p_L);
    ghosts_[k]->setWorldTransform(X);
  }
}

void BulletWorld::Detect(std::vector<double>* probe_depth, double pair_dist[kNumGeometry][kNumGeometry]) {
  // Persistent manifolds would keep last step's points with distances re-projected onto stale
  // normals; clear them so every point is this step's exact query.
  for (int i = 0; i < dispatcher_.getNumManifolds(); ++i) dispatcher_.getManifoldByIndexInternal(i)->clearManifold();
  world_.performDiscreteCollisionDetection();
  probe_depth->assign(probes_.size(), 0.0);
  for (int a = 0; a < kNumGeometry; ++a) std::fill(pair_dist[a], pair_dist[a] + kNumGeometry, NAN);
  for (int i = 0; i < dispatcher_.getNumManifolds(); ++i) {
    const btPersistentManifold* m = dispatcher_.getManifoldByIndexInternal(i);
    const int a = m->getBody0()->getUserIndex(), b = m->getBody1()->getUserIndex();
    for (int j = 0; j < m->getNumContacts(); ++j) {
      const double dist = m->getContactPoint(j).getDistance();
      if (a >= kFirstProbe || b >= kFirstProbe) {
        double& depth = (*probe_depth)[std::max(a, b) - kFirstProbe];
        depth = std::max(depth, -dist);
      } else if (!(pair_dist[a][b] <= dist)) {  // NaN or larger
        pair_dist[a][b] = pair_dist[b][a] = dist;
      }
    }
  }
}

// ---- The scripted path ----

const char* Phase(double t) {
  return t < 0.5    ? "press"
         : t < 1.0  ? "rock"
         : t < 1.5  ? "slide"
         : t < 2.0  ? "finger"
         : t < 2.2  ? "lift"
         : t < 2.55 ? "place"
                    : "rest";
}

double Ramp(double t, double t0, double t1) { return std::clamp((t - t0) / (t1 - t0), 0.0, 1.0); }

btTransform Pose(const btQuaternion& q, const btVector3& p) { return btTransform(q, p); }

struct Poses {
  btTransform pad, part, finger;
};

// The lowest point of the part turned by q, relative to its centre (m, along z).
double LowestZ(const btQuaternion& q) {
  double z = 0;
  const std::vector<double> p = PartProbes();
  for (int k = 0; k < 12; ++k) z = std::min(z, quatRotate(q, btVector3(p[3 * k], p[3 * k + 1], p[3 * k + 2])).z());
  return z;
}

Poses ScriptedPoses(double t) {
  Poses x;
  // The pad, turned 15° about z and tilted 5° about x, carries phases 1-4 (part poses in its frame).
  const btQuaternion q_pad = btQuaternion(btVector3(0, 0, 1), 15 * kDeg) * btQuaternion(btVector3(1, 0, 0), 5 * kDeg);
  x.pad = Pose(q_pad, btVector3(0, 0, 0.05));
  const double top = kPadHalf[2];
  // press: descend flat from 3 mm above to kPress into the pad. rock: tilt 15° about y and back,
  // the lowest vertex kPress deep. slide: 8.3 mm along x while turning 30° about z. The part runs
  // 0.7 mm off the grid's centre line so that no probe centre lies exactly on one of its edges
  // (see kPartOffset).
  const double tilt = 15 * kDeg * std::sin(M_PI * Ramp(t, 0.5, 1.0));
  const btQuaternion q_rel =
      btQuaternion(btVector3(0, 0, 1), 30 * kDeg * Ramp(t, 1.0, 1.5)) * btQuaternion(btVector3(0, 1, 0), tilt);
  const double sink = -kPress + 0.004 * (1 - Ramp(t, 0.0, 0.45));
  const btTransform X_PB = Pose(q_rel, btVector3(0.0083 * Ramp(t, 1.0, 1.5), kPartOffset, top - LowestZ(q_rel) + sink));
  const btTransform on_pad = x.pad * X_PB;
  // lift: 40 mm up along the pad normal. place: over to the ground, then down onto it, tilted 20°
  // about x with the lowest edge kPress deep.
  const btTransform lifted = x.pad * Pose(X_PB.getRotation(), X_PB.getOrigin() + btVector3(0, 0, 0.04));
  const btQuaternion q_ground(btVector3(1, 0, 0), 20 * kDeg);
  const btTransform grounded = Pose(q_ground, btVector3(0.12, 0.02, -LowestZ(q_ground) - kPress));
  if (t < 2.0) {
    x.part = on_pad;
  } else if (t < 2.2) {
    const double s = Ramp(t, 2.0, 2.2);
    x.part = Pose(on_pad.getRotation().slerp(lifted.getRotation(), s), on_pad.getOrigin().lerp(lifted.getOrigin(), s));
  } else {
    const double s = Ramp(t, 2.2, 2.4);
    const btVector3 over(grounded.getOrigin().x(), grounded.getOrigin().y(), lifted.getOrigin().z());
    const btVector3 p = lifted.getOrigin().lerp(over, s).lerp(grounded.getOrigin(), Ramp(t, 2.4, 2.55));
    x.part = Pose(lifted.getRotation().slerp(q_ground, s), p);
  }
  // finger: capsule axis along the part's x (turned 90° about y, so its +x points down), lowered
  // from 4 mm above the top face to kPress into it, then raised 20 mm and carried along.
  const double gap = 0.005 * (1 - Ramp(t, 1.5, 1.7)) - kPress + 0.021 * Ramp(t, 2.0, 2.2);
  x.finger = x.part *
             Pose(btQuaternion(btVector3(0, 1, 0), 90 * kDeg), btVector3(0, 0, kPartHalfHeight + kFingerRadius + gap));
  return x;
}

// ---- Comparison ----

struct Checks {
  AgreementCheck ghosts{"every probe vs its ghost sphere", 2000, kToleranceM};
  AgreementCheck part_pad{"deepest bottom vertex vs part-pad", 100, kToleranceM};
  AgreementCheck part_ground{"deepest bottom vertex vs part-ground", 30, kToleranceM};
  AgreementCheck finger{"finger probe vs finger-part", 50, kToleranceM};
};

// Taxel's depths of one step next to what Bullet implies, for printing.
struct StepComparison {
  std::vector<float> pad_depth, pad_force, part_depth;
  float finger_depth = 0;
  std::vector<double> expected;  // per Bullet ghost probe
  double pair_dist[kNumGeometry][kNumGeometry];
  float deepest_vertex = 0;  // max over the part's bottom-vertex probes
};

StepComparison Compare(BulletWorld& bullet, const v1::StepResponse& r, Checks* checks) {
  StepComparison c;
  bullet.Detect(&c.expected, c.pair_dist);
  c.pad_depth = Channel(r, "pad_depth", "depth");
  c.pad_force = Channel(r, "pad_skin", "force");
  c.part_depth = Channel(r, "part_depth", "depth");
  c.finger_depth = Channel(r, "finger_probe", "depth").at(0);
  for (size_t k = 0; k < bullet.probes().size(); ++k) {
    const Probe& p = bullet.probes()[k];
    const std::string sensor = p.sensor;
    const float taxel = sensor == "pad_depth"    ? c.pad_depth[p.index]
                        : sensor == "part_depth" ? c.part_depth[p.index]
                                                 : c.finger_depth;
    checks->ghosts.Equal(taxel, c.expected[k], c.expected[k] > 0);
  }
  // Probes at the point where Bullet measures a contact: depth = R − dist.
  c.deepest_vertex = *std::max_element(c.part_depth.begin(), c.part_depth.begin() + kBottomVertices);
  for (auto [check, partner] : {std::pair{&checks->part_pad, kPad}, std::pair{&checks->part_ground, kGround}}) {
    const double dist = c.pair_dist[kPart][partner];
    if (dist < 0) check->Equal(c.deepest_vertex, kPointProbeRadius - dist, true);
  }
  const double finger_dist = c.pair_dist[kFinger][kPart];
  if (finger_dist < 0) checks->finger.Equal(c.finger_depth, kPointProbeRadius - finger_dist, true);
  return c;
}

std::string Mm(double m) { return std::isnan(m) ? "     -" : absl::StrFormat("%+6.3f", 1e3 * m); }

void PrintHeader() {
  std::printf(
      "  t [s]  phase  | bullet dist: part-pad part-ground finger-part | taxel: deepest vertex  finger |"
      "  pad: n  max depth (bullet)  sum |F| [N]   (lengths in mm)\n");
}

void PrintRow(double t, const StepComparison& c, const BulletWorld& bullet) {
  int touching = 0;
  double fx = 0, fy = 0, fz = 0, pad_expected = 0;
  for (size_t k = 0; k < c.pad_depth.size(); ++k) {
    touching += c.pad_depth[k] > 0;
    fx += c.pad_force[3 * k];
    fy += c.pad_force[3 * k + 1];
    fz += c.pad_force[3 * k + 2];
  }
  for (size_t k = 0; k < bullet.probes().size(); ++k) {
    if (bullet.probes()[k].link == kPad) pad_expected = std::max(pad_expected, c.expected[k]);
  }
  std::printf("  %5.3f  %-6s |            %s      %s      %s |               %s  %s | %6d %7.3f  (%7.3f)  %8.3f\n", t,
              Phase(t), Mm(c.pair_dist[kPart][kPad]).c_str(), Mm(c.pair_dist[kPart][kGround]).c_str(),
              Mm(c.pair_dist[kFinger][kPart]).c_str(), Mm(c.deepest_vertex).c_str(), Mm(c.finger_depth).c_str(),
              touching, 1e3 * *std::max_element(c.pad_depth.begin(), c.pad_depth.end()), 1e3 * pad_expected,
              std::sqrt(fx * fx + fy * fy + fz * fz));
}

bool Report(const Checks& checks) {
  const bool ok = taxel::examples::ReportAgreement(
      "bullet", kSteps, kToleranceM, {&checks.ghosts, &checks.part_pad, &checks.part_ground, &checks.finger});
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok;
}

// ---- The run ----

void AppendPose(const btTransform& X, std::vector<double>* poses) {
  const btVector3& p = X.getOrigin();
  const btQuaternion q = X.getRotation();
  poses->insert(poses->end(), {p.x(), p.y(), p.z(), q.x(), q.y(), q.z(), q.w()});  // XYZW, Bullet's order
}

int Run(taxel::Client& client) {
  std::vector<double> vertices;
  std::vector<int32_t> triangles;
  HexPrism(&vertices, &triangles);
  auto mesh = client.UploadMesh(vertices, triangles);
  if (!mesh.ok()) return Fail(mesh.status());
  client.DeleteScene(kSceneName).IgnoreError();  // leftovers of an earlier run against the same server
  auto info = client.CreateScene(MirrorScene(mesh->mesh_id()));
  if (!info.ok()) return Fail(info.status());
  std::printf(
      "Bullet %d (double precision); part mesh %s... (%d triangles, watertight: %s); Taxel scene '%s', "
      "moving links [%s]\n\n",
      btGetVersion(), mesh->mesh_id().substr(0, 12).c_str(), mesh->num_triangles(), mesh->watertight() ? "yes" : "no",
      info->name().c_str(), absl::StrJoin(info->moving_links(), ", ").c_str());
  PrintHeader();

  BulletWorld bullet(vertices);
  Checks checks;
  auto stream = client.OpenStepStream();
  v1::StepRequest req;
  req.set_scene(kSceneName);
  req.set_quat_order(v1::XYZW);
  req.set_dt(kDt);
  req.mutable_read()->add_branches(v1::GROUND_TRUTH);
  for (int step = 0; step < kSteps; ++step) {
    const double t = step * kDt;
    const Poses x = ScriptedPoses(t);
    bullet.SetPoses(x.pad, x.part, x.finger);
    // Moving links in canonical order (pad, part, finger), poses read back from Bullet's objects.
    std::vector<double> poses;
    for (Geometry g : {kPad, kPart, kFinger}) AppendPose(bullet.pose(g), &poses);
    *req.mutable_poses() = taxel::DoubleTensor({1, 3, 7}, poses);
    auto r = stream->Step(req);
    if (!r.ok()) return Fail(r.status());
    const StepComparison c = Compare(bullet, *r, &checks);
    if (step % 40 == 20 || step == kSteps - 1) PrintRow(t, c, bullet);
    if (step == 150 || step == 290) {
      std::printf("         pad depth at t = %.2f s (%s):\n", t,
                  step == 150 ? "rocked onto a vertex" : "turned 30 deg");
      PrintDepthGrid(c.pad_depth, kGrid);
    }
  }
  if (auto s = stream->Close(); !s.ok()) return Fail(s);
  client.DeleteScene(kSceneName).IgnoreError();
  return Report(checks) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return taxel::examples::ExampleMain(argc, argv, "taxel-example-bullet", Run); }
