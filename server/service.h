// The taxel.v1.Taxel service: the gRPC transport of the handlers (server/handlers.h). gRPC's
// callback threads only authenticate and hand requests to the RequestExecutor; parsing, the
// handler (decoding, evaluation, encoding) and the status mapping run there (evaluation fans out
// on the evaluation ThreadPool).
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
#include "server/handlers.h"
#include "server/metrics.h"
#include "server/options.h"
#include "server/request_executor.h"
#include "server/scene_registry.h"
#include "server/step_stream.h"
#include "server/thread_pool.h"
#include "taxel/v1/service.grpc.pb.h"

namespace taxel::server {

/// Every RPC on the callback API as a raw method (grpc::ByteBuffer in and out): the service
/// parses each request itself, so that a request protobuf cannot parse is INVALID_ARGUMENT
/// ("request: ...") on every RPC, and checks every enum in it against its declared values. Step
/// and StepStream responses are written by hand (server/step_wire.h) into pooled buffers
/// (server/response_buffers.h) instead of being built and serialised by protobuf.
using TaxelServiceBase = v1::Taxel::WithRawCallbackMethod_GetServerInfo<
    v1::Taxel::WithRawCallbackMethod_UploadMesh<v1::Taxel::WithRawCallbackMethod_DeleteMesh<
    v1::Taxel::WithRawCallbackMethod_CreateScene<
        v1::Taxel::WithRawCallbackMethod_GetScene<v1::Taxel::WithRawCallbackMethod_ListScenes<
            v1::Taxel::WithRawCallbackMethod_DeleteScene<v1::Taxel::WithRawCallbackMethod_AddSensor<
                v1::Taxel::WithRawCallbackMethod_RemoveSensor<v1::Taxel::WithRawCallbackMethod_UpdateSensor<
                    v1::Taxel::WithRawCallbackMethod_Step<v1::Taxel::WithRawCallbackMethod_StepStream<
                        v1::Taxel::WithRawCallbackMethod_ReadSensors<v1::Taxel::WithRawCallbackMethod_ResetEnvs<
                            v1::Taxel::WithRawCallbackMethod_GetContactMatrix<v1::Taxel::Service>>>>>>>>>>>>>>>;

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
  grpc::ServerUnaryReactor* GetServerInfo(grpc::CallbackServerContext*, const grpc::ByteBuffer*,
                                          grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* UploadMesh(grpc::CallbackServerContext*, const grpc::ByteBuffer*,
                                       grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* DeleteMesh(grpc::CallbackServerContext*, const grpc::ByteBuffer*,
                                       grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* CreateScene(grpc::CallbackServerContext*, const grpc::ByteBuffer*,
                                        grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* GetScene(grpc::CallbackServerContext*, const grpc::ByteBuffer*, grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* ListScenes(grpc::CallbackServerContext*, const grpc::ByteBuffer*,
                                       grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* DeleteScene(grpc::CallbackServerContext*, const grpc::ByteBuffer*,
                                        grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* AddSensor(grpc::CallbackServerContext*, const grpc::ByteBuffer*,
                                      grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* RemoveSensor(grpc::CallbackServerContext*, const grpc::ByteBuffer*,
                                         grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* UpdateSensor(grpc::CallbackServerContext*, const grpc::ByteBuffer*,
                                         grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* Step(grpc::CallbackServerContext*, const grpc::ByteBuffer*, grpc::ByteBuffer*) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* StepStream(grpc::CallbackServerContext*) override;
  grpc::ServerUnaryReactor* ReadSensors(grpc::CallbackServerContext*, const grpc::ByteBuffer*,
                                        grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* ResetEnvs(grpc::CallbackServerContext*, const grpc::ByteBuffer*,
                                      grpc::ByteBuffer*) override;
  grpc::ServerUnaryReactor* GetContactMatrix(grpc::CallbackServerContext*, const grpc::ByteBuffer*,
                                             grpc::ByteBuffer*) override;

  /// SIGTERM path: refuse new scenes and streams (UNAVAILABLE) and end open streams with
  /// UNAVAILABLE. Unary calls in flight complete.
  void Drain();
  bool draining() const { return draining_.load(); }

 private:
  /// Authenticates, queues `work(call)` on the request executor and finishes the call with its
  /// status mapped to gRPC (the one place: ToGrpcStatus, BoundedStatus), with metrics and logs.
  template <typename Work>
  grpc::ServerUnaryReactor* RunUnary(grpc::CallbackServerContext* ctx, const char* method, Work work);
  /// RunUnary for a handler with a protobuf request: parses `in` (INVALID_ARGUMENT when it cannot,
  /// or when an enum holds an undeclared value), runs the handler, and puts its response into
  /// `out` (a protobuf message serialised, or the slices of a hand-written one: Step, ReadSensors).
  /// `then(call, request)` runs after a successful handler (DeleteScene ends the scene's streams).
  template <typename Request, typename Response, typename Then = void (*)(const Call&, const Request&)>
  grpc::ServerUnaryReactor* Serve(
      grpc::CallbackServerContext* ctx, const char* method, const grpc::ByteBuffer* in, grpc::ByteBuffer* out,
      absl::Status (TaxelHandlers::*handler)(const Call&, const Request&, Response*),
      Then then = [](const Call&, const Request&) {});
  grpc::Status Authenticate(grpc::CallbackServerContext* ctx, std::string* tenant) const;
  void AbortStreams(const std::string& tenant, const std::string& scene, const grpc::Status& status);

  Deps deps_;
  std::atomic<bool> draining_{false};
  TaxelHandlers handlers_;
  std::mutex streams_mu_;
  std::set<StepStreamReactor*> streams_;
};

}  // namespace taxel::server

#endif  // TAXEL_SERVER_SERVICE_H_
