// The grasp-batch scenario of the benchmarks (docs/reference.md#benchmarks): num_envs parallel grippers, each with
// two finger pads of 16×16 KinematicTaxels (R = 2 mm, pitch 3.5 mm) squeezing an object.
//
//            left pad (probes face +x)     object      right pad (probes face −x)
//                 |::::|                  .-----.            |::::|
//                 |::::|  --> +x         /       \           |::::|
//                 |::::|                 \       /           |::::|
//                                         '-----'
// The pads press δ = 0.5–1.5 mm into the object (varied per env), and the object's centre is
// jittered by up to 2 mm per env, so that about a quarter of the 524,288 taxels of the 1024-env
// batch are within reach of the surface (the "contact_fraction" of the records).
#ifndef TAXEL_BENCH_GRASP_SCENARIO_H_
#define TAXEL_BENCH_GRASP_SCENARIO_H_

#include <string>
#include <vector>

#include "core/geometry/mesh_store.h"
#include "core/scene/scene_spec.h"

namespace taxel::bench {

/// kMesh20kGrid: the kMesh20k object, read by the pads through its narrow-band grid (sdf_backend
/// GRID; built on first use with the default error, 1e-4 m, and a band of the probe radius).
enum class GraspObject { kMesh20k, kMesh20kGrid, kSphere, kBox, kCapsule, kImplicitSe4 };

struct GraspScenario {
  scene::SceneSpec spec;
  /// Poses of the moving links (left pad, right pad, object), [num_envs, 3, 7], xyzw.
  std::vector<double> poses;
  int num_envs = 0;
  int taxels_per_env = 0;
};

/// Builds the scenario; the 20k-triangle mesh (a geodesic sphere of radius 4 cm, 20,480
/// triangles) is added to `meshes` when needed.
GraspScenario MakeGraspScenario(GraspObject object, int num_envs, geometry::MeshStore& meshes);

}  // namespace taxel::bench

#endif  // TAXEL_BENCH_GRASP_SCENARIO_H_
