// Scene-spec builders shared by the scene, sensor and server tests.
#ifndef TAXEL_TESTS_SUPPORT_SCENE_FIXTURES_H_
#define TAXEL_TESTS_SUPPORT_SCENE_FIXTURES_H_

#include <string>
#include <vector>

#include "Eigen/Core"
#include "core/geometry/mesh_generators.h"
#include "core/geometry/mesh_store.h"
#include "core/scene/scene_spec.h"

namespace taxel::testing {

inline scene::ShapeSpec SphereShape(double radius, const Eigen::Vector3d& p_LS = Eigen::Vector3d::Zero()) {
  scene::ShapeSpec s;
  s.kind = geometry::ShapeKind::kSphere;
  s.radius = radius;
  s.X_LS.p = p_LS;
  return s;
}

inline scene::ShapeSpec BoxShape(const Eigen::Vector3d& half_extents,
                                 const Eigen::Vector3d& p_LS = Eigen::Vector3d::Zero()) {
  scene::ShapeSpec s;
  s.kind = geometry::ShapeKind::kBox;
  s.half_extents = half_extents;
  s.X_LS.p = p_LS;
  return s;
}

inline scene::ShapeSpec MeshShape(const std::string& id) {
  scene::ShapeSpec s;
  s.kind = geometry::ShapeKind::kMesh;
  s.mesh_id = id;
  return s;
}

/// An implicit superellipsoid SE(n, a, b, c) (semi-axes along the link's x, y, z).
inline scene::ShapeSpec SuperellipsoidShape(double n, const Eigen::Vector3d& semi_axes,
                                            const Eigen::Vector3d& p_LS = Eigen::Vector3d::Zero()) {
  scene::ShapeSpec s;
  s.kind = geometry::ShapeKind::kImplicit;
  s.implicit.kind = geometry::ImplicitKind::kSuperellipsoid;
  s.implicit.n = n;
  s.implicit.semi_axes = semi_axes;
  s.X_LS.p = p_LS;
  return s;
}

/// An implicit sphere (the smooth-shape path, not the primitive).
inline scene::ShapeSpec ImplicitSphereShape(double radius, const Eigen::Vector3d& p_LS = Eigen::Vector3d::Zero()) {
  scene::ShapeSpec s;
  s.kind = geometry::ShapeKind::kImplicit;
  s.implicit.kind = geometry::ImplicitKind::kSphere;
  s.implicit.radius = radius;
  s.X_LS.p = p_LS;
  return s;
}

inline scene::ShapeSpec HalfSpaceShape() {
  scene::ShapeSpec s;
  s.kind = geometry::ShapeKind::kHalfSpace;
  return s;
}

inline scene::EntitySpec Entity(const std::string& name, scene::EntityKind kind, std::vector<scene::LinkSpec> links) {
  scene::EntitySpec e;
  e.name = name;
  e.kind = kind;
  e.links = std::move(links);
  return e;
}

inline scene::LinkSpec Link(const std::string& name, std::vector<scene::ShapeSpec> shapes) {
  scene::LinkSpec l;
  l.name = name;
  l.shapes = std::move(shapes);
  return l;
}

/// A row-major rows × cols grid in the plane z = z0 of the link, centred, with spacing `pitch`.
inline std::vector<Eigen::Vector3d> PlanarGrid(int rows, int cols, double pitch, double z0) {
  std::vector<Eigen::Vector3d> p;
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      p.emplace_back((j - 0.5 * (cols - 1)) * pitch, (i - 0.5 * (rows - 1)) * pitch, z0);
    }
  }
  return p;
}

/// Identity poses (xyzw) with the given positions, one per moving link, for one env.
inline std::vector<double> PosesXyzw(const std::vector<Eigen::Vector3d>& positions) {
  std::vector<double> out;
  for (const auto& p : positions) out.insert(out.end(), {p.x(), p.y(), p.z(), 0, 0, 0, 1});
  return out;
}

/// A sensor of `kind` on `link` with a grid × grid layout (PlanarGrid at z0, spacing `pitch`) and
/// one shared probe radius; other options at their defaults.
inline sensors::SensorSpec GridSensor(const std::string& name, sensors::SensorKind kind, const std::string& link,
                                      int grid, double pitch, double z0, double radius) {
  sensors::SensorSpec s;
  s.name = name;
  s.kind = kind;
  s.link = link;
  s.probe_local_pos = PlanarGrid(grid, grid, pitch, z0);
  s.grid_rows = s.grid_cols = grid;
  s.probe_radius = {radius};
  return s;
}

/// A robot "hand" with a 6 × 6 × 1 cm box pad, an object "ball" (sphere, r = 5 cm) and, on the pad's
/// top face (z = 5 mm), a grid × grid KinematicTaxel "kin" (pitch 1 cm, R = 2 mm).
inline scene::SceneSpec PadAndBallSpec(const std::string& name, int num_envs, int grid) {
  scene::SceneSpec spec;
  spec.name = name;
  spec.num_envs = num_envs;
  spec.entities.push_back(Entity("hand", scene::EntityKind::kRobot, {Link("pad", {BoxShape({0.03, 0.03, 0.005})})}));
  spec.entities.push_back(Entity("ball", scene::EntityKind::kObject, {Link("body", {SphereShape(0.05)})}));
  spec.sensors.push_back(GridSensor("kin", sensors::SensorKind::kKinematicTaxel, "pad", grid, 0.01, 0.005, 0.002));
  return spec;
}

/// The geodesic sphere of `radius` at frequency 32 (20,480 triangles), added to `meshes`: its id.
inline std::string AddMeshBall(geometry::MeshStore& meshes, double radius) {
  auto sphere = geometry::GeodesicSphere(radius, 32);
  auto added = meshes.Add(std::move(sphere.vertices), std::move(sphere.triangles));
  return added.ok() ? added->id : std::string();
}

/// A robot "hand" with an 8 × 8 cm box pad of half height `pad_half_z` (top face at z =
/// pad_half_z) and an object "ball" of mesh `mesh_id` scaled by `scale`.
inline scene::SceneSpec PadAndMeshBallSpec(int num_envs, const std::string& mesh_id, double pad_half_z,
                                           const Eigen::Vector3d& scale = Eigen::Vector3d::Ones()) {
  scene::SceneSpec spec;
  spec.num_envs = num_envs;
  spec.entities.push_back(
      Entity("hand", scene::EntityKind::kRobot, {Link("pad", {BoxShape({0.04, 0.04, pad_half_z})})}));
  scene::ShapeSpec ball = MeshShape(mesh_id);
  ball.mesh_scale = scale;
  spec.entities.push_back(Entity("ball", scene::EntityKind::kObject, {Link("body", {ball})}));
  return spec;
}

}  // namespace taxel::testing

#endif  // TAXEL_TESTS_SUPPORT_SCENE_FIXTURES_H_
