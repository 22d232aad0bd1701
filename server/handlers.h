// The domain side of every RPC of taxel.v1.Taxel: a parsed request in, the response out, an
// absl::Status back. No gRPC status, context or reactor here: the transport (server/service.h)
// authenticates, queues, parses, maps the Status to gRPC in one place and sends. Decoding lives in
// the codec (server/codec.h), validation and state changes in the core and the scene registry.
#ifndef TAXEL_SERVER_HANDLERS_H_
#define TAXEL_SERVER_HANDLERS_H_

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/geometry/mesh_store.h"
#include "grpcpp/support/slice.h"
#include "server/metrics.h"
#include "server/options.h"
#include "server/scene_registry.h"
#include "server/thread_pool.h"
#include "taxel/v1/service.pb.h"

namespace taxel::server {

/// Who is calling and when the call arrived.
struct Call {
  std::string tenant;                              ///< "" without authentication
  std::chrono::steady_clock::time_point received;  ///< when the transport got the request
  double parse_seconds = 0;                        ///< time spent parsing the request bytes (decode phase)
};

class TaxelHandlers {
 public:
  struct Deps {
    const ServerOptions* options;
    SceneRegistry* registry;
    Metrics* metrics;
    ThreadPool* eval_pool;
    /// Set while the server drains: no new scenes.
    const std::atomic<bool>* draining;
  };
  explicit TaxelHandlers(Deps deps) : deps_(deps) {}

  absl::Status GetServerInfo(const Call& call, const v1::GetServerInfoRequest& request, v1::ServerInfo* response);
  absl::Status UploadMesh(const Call& call, const v1::UploadMeshRequest& request, v1::UploadMeshResponse* response);
  absl::Status CreateScene(const Call& call, const v1::CreateSceneRequest& request, v1::SceneInfo* response);
  absl::Status GetScene(const Call& call, const v1::GetSceneRequest& request, v1::SceneInfo* response);
  absl::Status ListScenes(const Call& call, const v1::ListScenesRequest& request, v1::ListScenesResponse* response);
  /// On success the caller also ends the scene's open streams (they are the transport's).
  absl::Status DeleteMesh(const Call& call, const v1::DeleteMeshRequest& request, v1::DeleteMeshResponse* response);
  absl::Status DeleteScene(const Call& call, const v1::DeleteSceneRequest& request, v1::DeleteSceneResponse* response);
  absl::Status AddSensor(const Call& call, const v1::AddSensorRequest& request, v1::SensorInfo* response);
  absl::Status RemoveSensor(const Call& call, const v1::RemoveSensorRequest& request,
                            v1::RemoveSensorResponse* response);
  absl::Status UpdateSensor(const Call& call, const v1::UpdateSensorRequest& request, v1::SensorInfo* response);
  /// The ReadSensorsResponse bytes as slices, readings written like Step's (server/step_wire.h).
  absl::Status ReadSensors(const Call& call, const v1::ReadSensorsRequest& request,
                           std::vector<grpc::Slice>* response);
  absl::Status ResetEnvs(const Call& call, const v1::ResetEnvsRequest& request, v1::ResetEnvsResponse* response);
  absl::Status GetContactMatrix(const Call& call, const v1::GetContactMatrixRequest& request,
                                v1::GetContactMatrixResponse* response);
  /// Step and StepStream: the StepResponse bytes, in field order, as slices (server/step_wire.h).
  absl::Status Step(const Call& call, const v1::StepRequest& request, std::vector<grpc::Slice>* response);

  /// The capabilities GetServerInfo lists, derived from the core's enums.
  static std::vector<std::string> Capabilities();

 private:
  void UpdateGauges();
  Deps deps_;
};

}  // namespace taxel::server

#endif  // TAXEL_SERVER_HANDLERS_H_
