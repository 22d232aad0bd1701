// What the fuzz targets share: the server limits they run under, the uploaded meshes, the fixed
// scenes, and the request paths of server/service.cc replayed without gRPC (decode, limit checks,
// core call, encode), so that a fuzzer exercises exactly what a request reaches.
#ifndef TAXEL_FUZZ_FUZZ_SUPPORT_H_
#define TAXEL_FUZZ_FUZZ_SUPPORT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/common/executor.h"
#include "core/geometry/mesh_generators.h"
#include "core/geometry/mesh_store.h"
#include "core/scene/scene.h"
#include "server/codec.h"
#include "server/options.h"
#include "server/scene_registry.h"
#include "taxel/v1/service.pb.h"

namespace taxel::fuzz {

/// The limits of a small server: every scene a fuzzer creates passes SceneRegistry's guards with
/// these (256 MiB, 64 envs, 65536 probe slots, 4096 triangles, 16 MiB messages).
server::Limits FuzzLimits();

/// Fixture meshes: a closed octahedron (signs from pseudo-normals) and an open square of two
/// triangles (signs from the winding number), both in metres around the origin.
geometry::MeshData ClosedMesh();
geometry::MeshData OpenMesh();

/// The process-wide mesh store holding both fixture meshes (uploaded on first use), as the
/// server's store holds the meshes uploaded before a CreateScene.
geometry::MeshStore& SharedMeshes();
const std::string& ClosedMeshId();
const std::string& OpenMeshId();

/// The evaluation pool of every target: 2 workers, as on the CI machine.
Executor& EvalPool();

// ------------------------------------------------------------------------------------------
// The fixed scene (targets that fuzz one request on a valid scene).
//
//   hand (ROBOT):  palm  box 3 × 3 × 0.5 cm; finger capsule r 0.8 cm, half length 2 cm
//   ball (OBJECT): body  sphere r 2 cm; asset 1 = the closed mesh; env 1 holds asset 1
//   dart (PROJECTILE): tip cylinder r 0.5 cm, half length 1 cm
//   ground (TERRAIN): plane half-space at z = −0.1 m;  bowl (STATIC): the open mesh
//   sensors on palm: "touch" CONTACT_PROBE 3 × 3, "kin" KINEMATIC_TAXEL 4 × 4 with every
//   imperfection, "gel" ELASTOMER_TAXEL 4 × 4 tracking ball/body with an explicit crosstalk kernel;
//   on finger: "depth" CONTACT_DEPTH_PROBE (4 probes, normals), "kin_nl" KINEMATIC_TAXEL with the
//   nonlinear law, "prox" PROXIMITY_TAXEL tracking ball/body and dart/tip.
//   contact matrix: bodies "all", partners terrain, object/*, robot/*, projectile/dart, friction.

inline constexpr int kFixedEnvs = 2;
/// Moving links in canonical order: hand/palm, hand/finger, ball/body, dart/tip.
inline constexpr int kFixedMovingLinks = 4;
/// Sensor names of the fixed scene; the ones in kFixedMeasuredSensors have imperfections.
inline const std::vector<std::string>& FixedSensorNames() {
  static const auto* names = new std::vector<std::string>{"touch", "kin", "gel", "depth", "kin_nl", "prox"};
  return *names;
}
inline const std::vector<std::string>& FixedMeasuredSensors() {
  static const auto* names = new std::vector<std::string>{"kin", "gel", "depth"};
  return *names;
}

/// The fixed scene as a client sends it. `reported`: the contact matrix takes the simulator's
/// reported contacts instead of estimating them.
v1::SceneSpec FixedSceneSpec(bool reported);

/// Poses [E, 4, 7] (xyzw) that press the ball into the palm's sensors and the dart against the
/// finger; `phase` moves them a little so that consecutive steps have velocities.
std::vector<double> FixedPoses(int num_envs, double phase);

// ------------------------------------------------------------------------------------------
// Request paths (server/service.cc without the transport). Each returns the status the RPC would
// map to its gRPC code; a fuzzer only cares that none of them crashes, leaks or hangs.

/// A scene with its own registry, created as CreateScene does.
struct LiveScene {
  std::unique_ptr<server::SceneRegistry> registry;
  std::shared_ptr<server::SceneEntry> entry;
  scene::Scene& scene() const { return *entry->scene; }
};

/// The tenant every request of the fuzz targets comes from.
inline constexpr char kTenant[] = "tenant";

/// A registry with FuzzLimits() over `meshes` (which must outlive it).
std::unique_ptr<server::SceneRegistry> NewRegistry(geometry::MeshStore* meshes);

/// CreateScene: DecodeSceneSpec, SceneRegistry::Create under FuzzLimits() (name, count, probe and
/// memory guards), then EncodeSceneInfo, in `registry`; when null, in a new registry over
/// SharedMeshes() to which kTenant has uploaded both fixture meshes (SceneRegistry::AddMesh).
absl::StatusOr<LiveScene> CreateScene(const v1::SceneSpec& spec,
                                      std::unique_ptr<server::SceneRegistry> registry = nullptr);
/// CreateScene that must succeed (fixtures); aborts with the status otherwise.
LiveScene CreateSceneOrDie(const v1::SceneSpec& spec);

/// The fixed scene, created once per process (its surface sampling costs more than a step, so
/// creating it per input would cut the rate ~5×), with every env reset: each input starts from
/// the state a ResetEnvs leaves (triggers, velocities, delay rings, histories cleared; gains with
/// a resample range redrawn). What a reset keeps (the step count, random-draw keys, sensors' noise
/// levels set by UpdateSensor) carries over between inputs; the targets undo what they change.
LiveScene& FixedScene(bool reported);

/// Step (TaxelHandlers::Step): DecodeStep, PlanRead, the contact-matrix and response-size checks,
/// Scene::Step on EvalPool() with a Reservation of the registry as its memory budget, then the
/// response bytes (ReadingsWireWriter, contact matrix).
absl::Status RunStep(const v1::StepRequest& request, LiveScene& live);
/// UpdateSensor: DecodeSensorUpdate then ApplySensorUpdate and EncodeSensorInfo.
absl::Status RunUpdateSensor(const v1::UpdateSensorRequest& request, scene::Scene& scene);
/// AddSensor: DecodeSensorSpec, SceneRegistry::CheckAddSensor, Scene::AddSensor (with a
/// Reservation), EncodeSensorInfo.
absl::Status RunAddSensor(const v1::SensorSpec& sensor, LiveScene& live);
/// RemoveSensor by id or name.
absl::Status RunRemoveSensor(const v1::RemoveSensorRequest& request, LiveScene& live);
/// ReadSensors (latest readings or history).
absl::Status RunReadSensors(const v1::ReadSensorsRequest& request, const scene::Scene& scene);
/// GetContactMatrix.
absl::Status RunGetContactMatrix(const v1::GetContactMatrixRequest& request, const scene::Scene& scene);
/// ResetEnvs.
absl::Status RunReset(const v1::ResetEnvsRequest& request, scene::Scene& scene);

}  // namespace taxel::fuzz

#endif  // TAXEL_FUZZ_FUZZ_SUPPORT_H_
