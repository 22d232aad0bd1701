#include "server/service.h"

#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "grpcpp/grpcpp.h"
#include "server/call_support.h"
#include "server/grpc_status.h"
#include "server/log.h"
#include "server/tokens.h"

namespace taxel::server {

TaxelService::TaxelService(Deps deps)
    : deps_(std::move(deps)),
      handlers_(TaxelHandlers::Deps{deps_.options, deps_.registry, deps_.metrics, deps_.eval_pool, &draining_}) {}

grpc::Status TaxelService::Authenticate(grpc::CallbackServerContext* ctx, std::string* tenant) const {
  tenant->clear();
  if (deps_.tokens.empty()) return grpc::Status::OK;
  const auto& md = ctx->client_metadata();
  auto it = md.find("authorization");
  if (it == md.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "authorization: expected 'Bearer <token>' metadata");
  }
  absl::StatusOr<std::string> t =
      TenantOfBearer(deps_.tokens, absl::string_view(it->second.data(), it->second.size()));
  if (!t.ok()) return ToGrpcStatus(t.status());
  *tenant = *std::move(t);
  return grpc::Status::OK;
}

template <typename Work>
grpc::ServerUnaryReactor* TaxelService::RunUnary(grpc::CallbackServerContext* ctx, const char* method, Work work) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  const auto start = Clock::now();
  deps_.metrics->RpcStarted(method, "unary");
  auto finish = [this, reactor, method, start](const grpc::Status& unbounded) {
    const grpc::Status status = BoundedStatus(unbounded);
    deps_.metrics->RpcHandled(method, "unary", status.error_code(), Seconds(start, Clock::now()));
    if (!status.ok() && status.error_code() != grpc::StatusCode::NOT_FOUND) {
      Log(LogLevel::kDebug, "rpc_error",
          {{"method", method}, {"code", std::to_string(status.error_code())}, {"message", status.error_message()}});
    }
    reactor->Finish(status);
  };
  Call call;
  call.received = start;
  const grpc::Status auth = Authenticate(ctx, &call.tenant);
  if (!auth.ok()) {
    finish(auth);
    return reactor;
  }
  const bool queued = deps_.executor->TrySubmit(
      [ctx, work = std::move(work), finish, call]() mutable {
        // A call its client gave up on (deadline, cancel) while it waited is not run.
        if (ctx->IsCancelled())
          return finish(grpc::Status(grpc::StatusCode::CANCELLED, "request: cancelled while queued"));
        finish(ToGrpcStatus(GuardAllocation([&] { return work(call); })));
      },
      [finish] { finish(ShuttingDown()); });
  if (!queued) finish(draining_ ? ShuttingDown() : Busy());
  return reactor;
}

namespace {

// A protobuf response, serialised by gRPC.
template <typename Response>
absl::Status WriteResponse(const Response& response, grpc::ByteBuffer* out) {
  bool own = false;
  const grpc::Status serialised = grpc::SerializationTraits<Response>::Serialize(response, out, &own);
  if (!serialised.ok()) return absl::InternalError(absl::StrCat("response: ", serialised.error_message()));
  return absl::OkStatus();
}

// A response written by hand (Step, ReadSensors: server/step_wire.h), sent without copying.
absl::Status WriteResponse(const std::vector<grpc::Slice>& slices, grpc::ByteBuffer* out) {
  grpc::ByteBuffer bytes(slices.data(), slices.size());
  out->Swap(&bytes);
  return absl::OkStatus();
}

}  // namespace

template <typename Request, typename Response, typename Then>
grpc::ServerUnaryReactor* TaxelService::Serve(
    grpc::CallbackServerContext* ctx, const char* method, const grpc::ByteBuffer* in, grpc::ByteBuffer* out,
    absl::Status (TaxelHandlers::*handler)(const Call&, const Request&, Response*), Then then) {
  return RunUnary(ctx, method, [this, in, out, handler, then](Call& call) -> absl::Status {
    Request request;
    if (absl::Status s = ParseRequestTimed(*in, &request, &call.parse_seconds); !s.ok()) return s;
    Response response;
    if (absl::Status s = (handlers_.*handler)(call, request, &response); !s.ok()) return s;
    then(call, request);
    return WriteResponse(response, out);
  });
}

grpc::ServerUnaryReactor* TaxelService::GetServerInfo(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                                      grpc::ByteBuffer* out) {
  return Serve(ctx, "GetServerInfo", in, out, &TaxelHandlers::GetServerInfo);
}

grpc::ServerUnaryReactor* TaxelService::UploadMesh(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                                   grpc::ByteBuffer* out) {
  return Serve(ctx, "UploadMesh", in, out, &TaxelHandlers::UploadMesh);
}

grpc::ServerUnaryReactor* TaxelService::DeleteMesh(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                                   grpc::ByteBuffer* out) {
  return Serve(ctx, "DeleteMesh", in, out, &TaxelHandlers::DeleteMesh);
}

grpc::ServerUnaryReactor* TaxelService::CreateScene(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                                    grpc::ByteBuffer* out) {
  return Serve(ctx, "CreateScene", in, out, &TaxelHandlers::CreateScene);
}

grpc::ServerUnaryReactor* TaxelService::GetScene(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                                 grpc::ByteBuffer* out) {
  return Serve(ctx, "GetScene", in, out, &TaxelHandlers::GetScene);
}

grpc::ServerUnaryReactor* TaxelService::ListScenes(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                                   grpc::ByteBuffer* out) {
  return Serve(ctx, "ListScenes", in, out, &TaxelHandlers::ListScenes);
}

grpc::ServerUnaryReactor* TaxelService::DeleteScene(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                                    grpc::ByteBuffer* out) {
  // The scene's open streams (the transport's) end with the handler's "deleted" error.
  return Serve(ctx, "DeleteScene", in, out, &TaxelHandlers::DeleteScene,
               [this](const Call& call, const v1::DeleteSceneRequest& request) {
                 AbortStreams(call.tenant, request.scene(), ToGrpcStatus(SceneRegistry::SceneGone(request.scene())));
               });
}

grpc::ServerUnaryReactor* TaxelService::AddSensor(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                                  grpc::ByteBuffer* out) {
  return Serve(ctx, "AddSensor", in, out, &TaxelHandlers::AddSensor);
}

grpc::ServerUnaryReactor* TaxelService::RemoveSensor(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                                     grpc::ByteBuffer* out) {
  return Serve(ctx, "RemoveSensor", in, out, &TaxelHandlers::RemoveSensor);
}

grpc::ServerUnaryReactor* TaxelService::UpdateSensor(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                                     grpc::ByteBuffer* out) {
  return Serve(ctx, "UpdateSensor", in, out, &TaxelHandlers::UpdateSensor);
}

grpc::ServerUnaryReactor* TaxelService::ReadSensors(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                                    grpc::ByteBuffer* out) {
  return Serve(ctx, "ReadSensors", in, out, &TaxelHandlers::ReadSensors);
}

grpc::ServerUnaryReactor* TaxelService::ResetEnvs(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                                  grpc::ByteBuffer* out) {
  return Serve(ctx, "ResetEnvs", in, out, &TaxelHandlers::ResetEnvs);
}

grpc::ServerUnaryReactor* TaxelService::GetContactMatrix(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                                         grpc::ByteBuffer* out) {
  return Serve(ctx, "GetContactMatrix", in, out, &TaxelHandlers::GetContactMatrix);
}

grpc::ServerUnaryReactor* TaxelService::Step(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                             grpc::ByteBuffer* out) {
  return Serve(ctx, "Step", in, out, &TaxelHandlers::Step);
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* TaxelService::StepStream(
    grpc::CallbackServerContext* ctx) {
  std::string tenant;
  const grpc::Status auth = Authenticate(ctx, &tenant);
  if (!auth.ok() || draining_) {
    // A reactor that ends at once.
    class Refused final : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
     public:
      explicit Refused(const grpc::Status& s) { Finish(s); }
      void OnDone() override { delete this; }
    };
    return new Refused(!auth.ok() ? auth : grpc::Status(grpc::StatusCode::UNAVAILABLE, "server is shutting down"));
  }
  StepStreamReactor::Deps deps{&handlers_, deps_.executor, deps_.metrics, &draining_,
                               [this](StepStreamReactor* stream) {
                                 std::lock_guard<std::mutex> lock(streams_mu_);
                                 streams_.erase(stream);
                               }};
  auto* stream = new StepStreamReactor(std::move(deps), tenant);
  std::lock_guard<std::mutex> lock(streams_mu_);
  streams_.insert(stream);
  // Drain() may have run between the check above and the insert; it sets draining_ before it
  // takes streams_mu_, so a stream it missed sees the flag here.
  if (draining_) stream->Abort(grpc::Status(grpc::StatusCode::UNAVAILABLE, "server is shutting down"));
  return stream;
}

void TaxelService::AbortStreams(const std::string& tenant, const std::string& scene, const grpc::Status& status) {
  std::lock_guard<std::mutex> lock(streams_mu_);
  for (StepStreamReactor* s : streams_) {
    if (s->Matches(tenant, scene)) s->Abort(status);
  }
}

void TaxelService::Drain() {
  draining_ = true;
  std::lock_guard<std::mutex> lock(streams_mu_);
  for (StepStreamReactor* s : streams_) {
    s->Abort(grpc::Status(grpc::StatusCode::UNAVAILABLE, "server is shutting down"));
  }
}

}  // namespace taxel::server
