// What the fuzz targets share: the server limits they run under, the uploaded meshes, the fixed
// scenes, and the server's own request handlers (server/handlers.h) wired as server/server.cc
// wires them but without the transport, so that a fuzzer exercises exactly what a request reaches.
#ifndef TAXEL_FUZZ_FUZZ_SUPPORT_H_
#define TAXEL_FUZZ_FUZZ_SUPPORT_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "core/geometry/mesh_generators.h"
#include "core/geometry/mesh_store.h"
#include "core/scene/scene.h"
#include "fuzz/session.pb.h"
#include "server/codec.h"
#include "server/handlers.h"
#include "server/metrics.h"
#include "server/options.h"
#include "server/scene_registry.h"
#include "server/thread_pool.h"
#include "taxel/v1/service.pb.h"

namespace taxel::fuzz {

/// The limits of a small server: every scene a fuzzer creates passes SceneRegistry's guards with
/// these (256 MiB, 64 envs, 65536 probe slots, 4096 triangles, 16 MiB messages, 10^6 queries per
/// mesh grid build).
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
server::ThreadPool& EvalPool();

/// An UploadMeshRequest of `mesh` (FLOAT64 vertices, INT32 triangles).
v1::UploadMeshRequest MeshUploadRequest(const geometry::MeshData& mesh);

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
// Requests, through the server's handlers. Each returns the status the RPC would map to its gRPC
// code; a fuzzer only cares that none of them crashes, leaks or hangs.

/// The tenant every request of the fuzz targets comes from.
inline constexpr char kTenant[] = "tenant";

/// server::TaxelHandlers with the dependencies server/server.cc gives it: its own SceneRegistry
/// (FuzzLimits(), over `meshes`, which must outlive it), NullMetrics, EvalPool(), never draining.
/// Logging is turned down to warnings (the handlers log every scene and mesh at info).
class FuzzServer {
 public:
  explicit FuzzServer(geometry::MeshStore* meshes);
  FuzzServer(const FuzzServer&) = delete;
  FuzzServer& operator=(const FuzzServer&) = delete;

  server::SceneRegistry& registry() { return registry_; }

  /// Runs handler `rpc` on `request` as a call of kTenant that arrives now; the response goes to
  /// `response` when given.
  template <typename Request, typename Response>
  absl::Status Run(absl::Status (server::TaxelHandlers::*rpc)(const server::Call&, const Request&, Response*),
                   const Request& request, Response* response = nullptr) {
    Response discarded;
    const server::Call call{kTenant, std::chrono::steady_clock::now(), 0.0};
    return (handlers_.*rpc)(call, request, response != nullptr ? response : &discarded);
  }

 private:
  server::ServerOptions options_;
  server::SceneRegistry registry_;
  server::NullMetrics metrics_;
  std::atomic<bool> draining_{false};
  server::TaxelHandlers handlers_;
};

/// A scene created through TaxelHandlers::CreateScene on its own FuzzServer.
struct LiveScene {
  std::unique_ptr<FuzzServer> server;
  std::string name;
  v1::SceneInfo info;  ///< CreateScene's response

  /// Runs handler `rpc` on `request` addressed to this scene (whatever scene the request names: a
  /// fuzzed name would only ever reach NOT_FOUND).
  template <typename Request, typename Response>
  absl::Status Run(absl::Status (server::TaxelHandlers::*rpc)(const server::Call&, const Request&, Response*),
                   const Request& request, Response* response = nullptr) {
    if (request.scene() == name) return server->Run(rpc, request, response);
    Request addressed = request;
    addressed.set_scene(name);
    return server->Run(rpc, addressed, response);
  }
  /// Runs fn(scene) under the scene's lock (SceneRegistry::WithScene), for what no RPC does.
  absl::Status WithScene(absl::FunctionRef<absl::Status(scene::Scene&)> fn);
};

/// CreateScene (TaxelHandlers::CreateScene: DecodeSceneSpec, SceneRegistry::Create under
/// FuzzLimits() with its name, count, probe and memory guards, EncodeSceneInfo) on `server`; when
/// null, on a new FuzzServer over SharedMeshes() to which kTenant has uploaded both fixture meshes
/// (TaxelHandlers::UploadMesh).
absl::StatusOr<LiveScene> CreateScene(const v1::SceneSpec& spec, std::unique_ptr<FuzzServer> server = nullptr);
/// CreateScene that must succeed (fixtures); aborts with the status otherwise.
LiveScene CreateSceneOrDie(const v1::SceneSpec& spec);

/// The fixed scene, created once per process (its surface sampling costs more than a step, so
/// creating it per input would cut the rate ~5×), with every env reset (ResetEnvs): each input
/// starts from the state a ResetEnvs leaves (triggers, velocities, delay rings, histories
/// cleared; gains with a resample range redrawn). What a reset keeps (the step count, random-draw
/// keys, sensors' noise levels set by UpdateSensor) carries over between inputs; the targets undo
/// what they change.
LiveScene& FixedScene(bool reported);

/// AddSensor of `sensor` to the live scene (the fuzzers' inputs are bare SensorSpecs).
absl::Status AddSensor(const v1::SensorSpec& sensor, LiveScene& live);
/// One request of a Session (fuzz/session.proto) through its handler, addressed to `live`.
absl::Status RunSessionOp(const SessionOp& op, LiveScene& live);

}  // namespace taxel::fuzz

#endif  // TAXEL_FUZZ_FUZZ_SUPPORT_H_
