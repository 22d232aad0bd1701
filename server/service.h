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

/// Every RPC on the callback API as a raw method (grpc::ByteBuffer in and out): the service
/// parses each request itself, so that a request protobuf cannot parse is INVALID_ARGUMENT
/// ("request: ...") on every RPC, and checks every enum in it against its declared values. Step
/// and StepStream responses are written by hand (server/step_wire.h) into pooled buffers
/// (server/response_buffers.h) instead of being built and serialised by protobuf.
using TaxelServiceBase = v1::Taxel::WithRawCallbackMethod_GetServerInfo<v1::Taxel::WithRawCallbackMethod_UploadMesh<
    v1::Taxel::WithRawCallbackMethod_CreateScene<v1::Taxel::WithRawCallbackMethod_GetScene<
        v1::Taxel::WithRawCallbackMethod_ListScenes<v1::Taxel::WithRawCallbackMethod_DeleteScene<
            v1::Taxel::WithRawCallbackMethod_AddSensor<v1::Taxel::WithRawCallbackMethod_RemoveSensor<
                v1::Taxel::WithRawCallbackMethod_UpdateSensor<v1::Taxel::WithRawCallbackMethod_Step<
                    v1::Taxel::WithRawCallbackMethod_StepStream<v1::Taxel::WithRawCallbackMethod_ReadSensors<
                        v1::Taxel::WithRawCallbackMethod_ResetEnvs<v1::Taxel::WithRawCallbackMethod_GetContactMatrix<
                            v1::Taxel::Service>>>>>>>>>>>>>>;

class TaxelService final : public TaxelServiceBase {
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

  // Raw: the request bytes are the method's request message, the response bytes its response.
  grpc::ServerUnaryReactor* GetServerInfo(grpc::CallbackServerContext*, const grpc::ByteBuffer*, grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* UploadMesh(grpc::CallbackServerContext*, const grpc::ByteBuffer*, grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* CreateScene(grpc::CallbackServerContext*, const grpc::ByteBuffer*, grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* GetScene(grpc::CallbackServerContext*, const grpc::ByteBuffer*, grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* ListScenes(grpc::CallbackServerContext*, const grpc::ByteBuffer*, grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* DeleteScene(grpc::CallbackServerContext*, const grpc::ByteBuffer*, grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* AddSensor(grpc::CallbackServerContext*, const grpc::ByteBuffer*, grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* RemoveSensor(grpc::CallbackServerContext*, const grpc::ByteBuffer*, grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* UpdateSensor(grpc::CallbackServerContext*, const grpc::ByteBuffer*, grpc::ByteBuffer*) override;
  /// Raw: the request bytes are a v1::StepRequest, the response bytes a v1::StepResponse.
  grpc::ServerUnaryReactor* Step(grpc::CallbackServerContext*, const grpc::ByteBuffer*, grpc::ByteBuffer*) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* StepStream(grpc::CallbackServerContext*) override;
  grpc::ServerUnaryReactor* ReadSensors(grpc::CallbackServerContext*, const grpc::ByteBuffer*, grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* ResetEnvs(grpc::CallbackServerContext*, const grpc::ByteBuffer*, grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* GetContactMatrix(grpc::CallbackServerContext*, const grpc::ByteBuffer*, grpc::ByteBuffer*) override;

  /// SIGTERM path: refuse new scenes and streams (UNAVAILABLE) and end open streams with
  /// UNAVAILABLE. Unary calls in flight complete.
  void Drain();
  bool draining() const { return draining_.load(); }

  // Used by StepStreamReactor.
  using Clock = std::chrono::steady_clock;
  /// Steps the scene and writes the StepResponse bytes to `response`. `parse_seconds`: the time
  /// spent parsing the request bytes after `queued_at`, reported as decode rather than queue.
  grpc::Status StepOnce(const std::string& tenant, const v1::StepRequest& request, grpc::ByteBuffer* response,
                        Clock::time_point queued_at, double parse_seconds);
  void Unregister(StepStreamReactor* stream);
  RequestExecutor& executor() { return *deps_.executor; }
  Metrics& metrics() { return *deps_.metrics; }

 private:
  template <typename Handler>
  grpc::ServerUnaryReactor* RunUnary(grpc::CallbackServerContext* ctx, const char* method, Handler handler);
  /// RunUnary for a protobuf request and response: parses `in` as a Request (INVALID_ARGUMENT
  /// when it cannot, or when an enum holds an undeclared value), runs
  /// handler(tenant, request, &response), serialises the response into `out`.
  template <typename Request, typename Response, typename Handler>
  grpc::ServerUnaryReactor* Serve(grpc::CallbackServerContext* ctx, const char* method, const grpc::ByteBuffer* in,
                                  grpc::ByteBuffer* out, Handler handler);
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
