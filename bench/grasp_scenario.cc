#include "bench/grasp_scenario.h"

#include <cmath>

#include "core/common/check.h"
#include "core/geometry/mesh_generators.h"

namespace taxel::bench {
namespace {

constexpr int kGrid = 16;
constexpr double kPitch = 0.0035;
constexpr double kProbeRadius = 0.002;
constexpr double kObjectRadius = 0.04;

scene::ShapeSpec ObjectShape(GraspObject object, geometry::MeshStore& meshes) {
  scene::ShapeSpec s;
  switch (object) {
    case GraspObject::kMesh20k:
    case GraspObject::kMesh20kGrid: {
      auto data = geometry::GeodesicSphere(kObjectRadius, 32);
      auto added = meshes.Add(std::move(data.vertices), std::move(data.triangles));
      TAXEL_CHECK(added.ok());
      s.kind = geometry::ShapeKind::kMesh;
      s.mesh_id = added->id;
      break;
    }
    case GraspObject::kSphere:
      s.kind = geometry::ShapeKind::kSphere;
      s.radius = kObjectRadius;
      break;
    case GraspObject::kBox:
      // Faces ±x at 4 cm like the sphere; a 2.6 cm square face covers a quarter of the pad.
      s.kind = geometry::ShapeKind::kBox;
      s.half_extents = Eigen::Vector3d(kObjectRadius, 0.0131, 0.0131);
      break;
    case GraspObject::kCapsule:
      // Vertical capsule: the pads touch it along a strip.
      s.kind = geometry::ShapeKind::kCapsule;
      s.radius = kObjectRadius;
      s.half_length = 0.01;
      break;
    case GraspObject::kImplicitSe4:
      // The superellipsoid SE(n = 4) with semi-axes 4 cm: faces ±x at 4 cm like the sphere, flatter
      // (a rounded cube), answered by the implicit probe solve.
      s.kind = geometry::ShapeKind::kImplicit;
      s.implicit.kind = geometry::ImplicitKind::kSuperellipsoid;
      s.implicit.n = 4;
      s.implicit.semi_axes = Eigen::Vector3d::Constant(kObjectRadius);
      break;
  }
  return s;
}

}  // namespace

GraspScenario MakeGraspScenario(GraspObject object, int num_envs, geometry::MeshStore& meshes) {
  GraspScenario g;
  g.num_envs = num_envs;
  g.taxels_per_env = 2 * kGrid * kGrid;
  scene::SceneSpec& spec = g.spec;
  spec.name = "grasp_batch";
  spec.num_envs = num_envs;
  spec.seed = 7;
  // Pads: a thin box behind the probe plane (probes on z = 0 of the pad frame, facing +z).
  scene::ShapeSpec pad_box;
  pad_box.kind = geometry::ShapeKind::kBox;
  pad_box.half_extents = Eigen::Vector3d(0.5 * kGrid * kPitch, 0.5 * kGrid * kPitch, 0.002);
  pad_box.X_LS.p = Eigen::Vector3d(0, 0, -0.002);
  scene::EntitySpec gripper;
  gripper.name = "gripper";
  gripper.kind = scene::EntityKind::kRobot;
  gripper.links = {{"left_pad", {pad_box}, {}}, {"right_pad", {pad_box}, {}}};
  scene::EntitySpec obj;
  obj.name = "object";
  obj.kind = scene::EntityKind::kObject;
  obj.links = {{"body", {ObjectShape(object, meshes)}, {}}};
  spec.entities = {gripper, obj};
  for (const char* pad : {"left_pad", "right_pad"}) {
    sensors::SensorSpec s;
    s.name = pad;
    s.kind = sensors::SensorKind::kKinematicTaxel;
    s.link = pad;
    for (int i = 0; i < kGrid; ++i) {
      for (int j = 0; j < kGrid; ++j) {
        s.probe_local_pos.emplace_back((j - 0.5 * (kGrid - 1)) * kPitch, (i - 0.5 * (kGrid - 1)) * kPitch, 0.0);
      }
    }
    s.grid_rows = s.grid_cols = kGrid;
    s.probe_radius = {kProbeRadius};
    if (object == GraspObject::kMesh20kGrid) s.sdf_backend = sensors::SdfBackend::kGrid;
    spec.sensors.push_back(s);
  }
  // Left pad: local +z → world +x (90° about y); right pad: local +z → world −x (−90° about y).
  const double h = std::sqrt(0.5);
  g.poses.reserve(static_cast<size_t>(num_envs) * 3 * 7);
  for (int e = 0; e < num_envs; ++e) {
    const double depth = 0.0005 + 0.0005 * (e % 3);
    const Eigen::Vector3d c(0, 0.002 * std::sin(0.7 * e), 0.002 * std::cos(1.3 * e));
    const double x = kObjectRadius - depth;
    const double poses[3][7] = {{c.x() - x, c.y(), c.z(), 0, h, 0, h},
                                {c.x() + x, c.y(), c.z(), 0, -h, 0, h},
                                {c.x(), c.y(), c.z(), 0, 0, 0, 1}};
    for (const auto& p : poses) g.poses.insert(g.poses.end(), p, p + 7);
  }
  return g;
}

}  // namespace taxel::bench
