// The taxel.v1.Taxel service: one thin handler per RPC over the scene registry and the core.
// gRPC's callback threads only hand requests to the RequestExecutor; decoding, evaluation and
// encoding run there (evaluation fans out on the evaluation ThreadPool).
#ifndef TAXEL_SERVER_SERVICE_H_
#define TAXEL_SERVER_SERVICE_H_

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "core/common/executor.h"
#include "core/geometry/mesh_store.h"
#include "server/metrics.h"
#include "server/options.h"
#include "server/request_executor.h"
#include "server/scene_registry.h"
#include "taxel/v1/service.grpc.pb.h"

namespace taxel::server {

class StepStreamReactor;

class TaxelService final : public v1::Taxel::CallbackService {
 public:
  struct Deps {
    const ServerOptions* options;
    geometry::MeshStore* meshes;
    SceneRegistry* registry;
    Metrics* metrics;
    RequestExecutor* executor;
    ThreadPool* eval_pool;
    /// Bearer token → tenant. Empty: no authentication, every caller is tenant "".
    std::map<std::string, std::string> tokens;
  };
  explicit TaxelService(Deps deps);

  grpc::ServerUnaryReactor* GetServerInfo(grpc::CallbackServerContext*, const v1::GetServerInfoRequest*,
                                          v1::ServerInfo*) override;
  grpc::ServerUnaryReactor* UploadMesh(grpc::CallbackServerContext*, const v1::UploadMeshRequest*,
                                       v1::UploadMeshResponse*) override;
  grpc::ServerUnaryReactor* CreateScene(grpc::CallbackServerContext*, const v1::CreateSceneRequest*,
                                        v1::SceneInfo*) override;
  grpc::ServerUnaryReactor* GetScene(grpc::CallbackServerContext*, const v1::GetSceneRequest*, v1::SceneInfo*) override;
  grpc::ServerUnaryReactor* ListScenes(grpc::CallbackServerContext*, const v1::ListScenesRequest*,
                                       v1::ListScenesResponse*) override;
  grpc::ServerUnaryReactor* DeleteScene(grpc::CallbackServerContext*, const v1::DeleteSceneRequest*,
                                        v1::DeleteSceneResponse*) override;
  grpc::ServerUnaryReactor* AddSensor(grpc::CallbackServerContext*, const v1::AddSensorRequest*,
                                      v1::SensorInfo*) override;
  grpc::ServerUnaryReactor* RemoveSensor(grpc::CallbackServerContext*, const v1::RemoveSensorRequest*,
                                         v1::RemoveSensorResponse*) override;
  grpc::ServerUnaryReactor* UpdateSensor(grpc::CallbackServerContext*, const v1::UpdateSensorRequest*,
                                         v1::SensorInfo*) override;
  grpc::ServerUnaryReactor* Step(grpc::CallbackServerContext*, const v1::StepRequest*, v1::StepResponse*) override;
  grpc::ServerBidiReactor<v1::StepRequest, v1::StepResponse>* StepStream(grpc::CallbackServerContext*) override;
  grpc::ServerUnaryReactor* ReadSensors(grpc::CallbackServerContext*, const v1::ReadSensorsRequest*,
                                        v1::ReadSensorsResponse*) override;
  grpc::ServerUnaryReactor* ResetEnvs(grpc::CallbackServerContext*, const v1::ResetEnvsRequest*,
                                      v1::ResetEnvsResponse*) override;
  grpc::ServerUnaryReactor* GetContactMatrix(grpc::CallbackServerContext*, const v1::GetContactMatrixRequest*,
                                             v1::GetContactMatrixResponse*) override;

  /// SIGTERM path: refuse new scenes and streams (UNAVAILABLE) and end open streams with
  /// UNAVAILABLE. Unary calls in flight complete.
  void Drain();
  bool draining() const { return draining_.load(); }

  // Used by StepStreamReactor.
  using Clock = std::chrono::steady_clock;
  grpc::Status StepOnce(const std::string& tenant, const v1::StepRequest& request, v1::StepResponse* response,
                        Clock::time_point queued_at);
  void Unregister(StepStreamReactor* stream);
  RequestExecutor& executor() { return *deps_.executor; }
  Metrics& metrics() { return *deps_.metrics; }

 private:
  template <typename Handler>
  grpc::ServerUnaryReactor* RunUnary(grpc::CallbackServerContext* ctx, const char* method, Handler handler);
  grpc::Status Authenticate(grpc::CallbackServerContext* ctx, std::string* tenant) const;
  void AbortStreams(const std::string& tenant, const std::string& scene, const grpc::Status& status);
  void UpdateGauges();

  Deps deps_;
  std::atomic<bool> draining_{false};
  std::mutex streams_mu_;
  std::set<StepStreamReactor*> streams_;
};

}  // namespace taxel::server

#endif  // TAXEL_SERVER_SERVICE_H_
