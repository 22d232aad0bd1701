#include "bench/humanoid_scenario.h"

#include <cmath>
#include <string>

namespace taxel::bench {
namespace {

struct Body {
  std::string name;
  geometry::ShapeKind kind;
  double a, b, c;  // sphere: r; capsule: r, half length; box: half extents
  double x, y, z;  // position of the link (world, env 0)
  bool contact = false;
};

}  // namespace

HumanoidScenario MakeHumanoidScenario(int num_envs, contact::ContactSource source) {
  using geometry::ShapeKind;
  // A crouching figure: feet flat (boxes, bottom at z = −1 mm), hands (spheres) on the ground,
  // everything else well above it and apart from each other.
  std::vector<Body> bodies = {
      {"pelvis", ShapeKind::kBox, 0.12, 0.08, 0.05, 0, 0, 0.55},
      {"abdomen", ShapeKind::kCapsule, 0.07, 0.03, 0, 0, 0, 0.72},
      {"chest", ShapeKind::kBox, 0.13, 0.09, 0.08, 0, 0, 0.93},
      {"neck", ShapeKind::kCapsule, 0.03, 0.02, 0, 0, 0, 1.09},
      {"head", ShapeKind::kSphere, 0.09, 0, 0, 0, 0, 1.24},
  };
  for (int side : {-1, 1}) {
    const std::string s = side < 0 ? "left_" : "right_";
    const double y = 0.26 * side;
    bodies.push_back({s + "shoulder", ShapeKind::kSphere, 0.05, 0, 0, 0, y, 0.98});
    bodies.push_back({s + "upper_arm", ShapeKind::kCapsule, 0.04, 0.08, 0, 0.05, y, 0.78});
    bodies.push_back({s + "elbow", ShapeKind::kSphere, 0.035, 0, 0, 0.08, y, 0.61});
    bodies.push_back({s + "forearm", ShapeKind::kCapsule, 0.035, 0.08, 0, 0.12, y, 0.43});
    bodies.push_back({s + "wrist", ShapeKind::kSphere, 0.03, 0, 0, 0.15, y, 0.26});
    bodies.push_back({s + "palm", ShapeKind::kBox, 0.04, 0.03, 0.015, 0.17, y, 0.16});
    bodies.push_back({s + "hand", ShapeKind::kSphere, 0.04, 0, 0, 0.2, y, 0.039, true});
    bodies.push_back({s + "thigh", ShapeKind::kCapsule, 0.06, 0.11, 0, -0.05, 0.11 * side, 0.33});
    bodies.push_back({s + "knee", ShapeKind::kSphere, 0.045, 0, 0, 0.06, 0.11 * side, 0.15});
    bodies.push_back({s + "shin", ShapeKind::kCapsule, 0.045, 0.02, 0, -0.12, 0.11 * side, 0.12});
    bodies.push_back({s + "ankle", ShapeKind::kSphere, 0.03, 0, 0, -0.2, 0.11 * side, 0.1});
    bodies.push_back({s + "foot", ShapeKind::kBox, 0.1, 0.045, 0.025, -0.16, 0.11 * side, 0.024, true});
    bodies.push_back({s + "toe", ShapeKind::kBox, 0.02, 0.04, 0.015, -0.02, 0.11 * side, 0.04});
    bodies.push_back({s + "heel_pad", ShapeKind::kSphere, 0.012, 0, 0, -0.28, 0.11 * side, 0.05});
  }
  HumanoidScenario h;
  h.num_bodies = static_cast<int>(bodies.size());
  scene::EntitySpec robot;
  robot.name = "humanoid";
  robot.kind = scene::EntityKind::kRobot;
  for (size_t i = 0; i < bodies.size(); ++i) {
    const Body& b = bodies[i];
    scene::ShapeSpec s;
    s.kind = b.kind;
    if (b.kind == ShapeKind::kSphere) s.radius = b.a;
    if (b.kind == ShapeKind::kCapsule) s.radius = b.a, s.half_length = b.b;
    if (b.kind == ShapeKind::kBox) s.half_extents = Eigen::Vector3d(b.a, b.b, b.c);
    robot.links.push_back({b.name, {s}, {}});
    if (b.contact) h.feet_and_hands.push_back(static_cast<int>(i));
  }
  scene::EntitySpec ground;
  ground.name = "ground";
  ground.kind = scene::EntityKind::kTerrain;
  scene::ShapeSpec plane;
  plane.kind = ShapeKind::kHalfSpace;
  ground.links.push_back({"plane", {plane}, {}});
  h.spec.name = "humanoid";
  h.spec.num_envs = num_envs;
  h.spec.entities = {robot, ground};
  h.spec.contact_matrix.bodies = {"all"};
  h.spec.contact_matrix.partners = {"terrain", "robot/*"};
  h.spec.contact_matrix.source = source;
  h.spec.contact_matrix.law.stiffness = 1e7;  // Pa/m^n as a pressure law
  h.spec.contact_matrix.law.damping = 1e4;
  h.poses.reserve(static_cast<size_t>(num_envs) * bodies.size() * 7);
  for (int e = 0; e < num_envs; ++e) {
    // Each env in its own place (Isaac Lab style env origins), the same posture.
    const double ox = 2.0 * (e % 64), oy = 2.0 * (e / 64);
    for (const Body& b : bodies) h.poses.insert(h.poses.end(), {b.x + ox, b.y + oy, b.z, 0, 0, 0, 1});
  }
  return h;
}

}  // namespace taxel::bench
