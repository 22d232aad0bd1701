#include "server/service.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <new>
#include <optional>
#include <tuple>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/common/status_macros.h"
#include "grpcpp/grpcpp.h"
#include "server/codec.h"
#include "server/grpc_status.h"
#include "server/log.h"
#include "server/response_buffers.h"
#include "server/step_wire.h"
#include "server/version.h"

namespace taxel::server {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

grpc::Status Busy() {
  return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "server busy: the request queue is full; retry later");
}

grpc::Status ShuttingDown() {
  return grpc::Status(grpc::StatusCode::UNAVAILABLE, "server is shutting down; the request was not run");
}

// The last line of defence of "nothing on the request path takes the process down": every size a
// request controls is reserved before it is allocated (core/common/memory_budget.h), so an
// allocation failure here means the machine itself ran out of memory.
template <typename Fn>
grpc::Status GuardAllocation(Fn fn) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    Log(LogLevel::kError, "out_of_memory", {});
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "server: out of memory while handling the request");
  } catch (const std::exception& e) {  // e.g. std::length_error from a container: a bug, reported as one
    Log(LogLevel::kError, "internal_error", {{"what", e.what()}});
    return grpc::Status(grpc::StatusCode::INTERNAL, "server: internal error while handling the request");
  }
}

// Parses a request message from the raw call's bytes: INVALID_ARGUMENT when protobuf cannot
// parse them (garbage, truncation, nesting deeper than protobuf's recursion limit) and when an
// enum field holds a number its enum does not declare.
template <typename Request>
grpc::Status ParseRequest(const grpc::ByteBuffer& bytes, Request* request) {
  grpc::ByteBuffer copy(bytes);  // shares the slices; Deserialize consumes its argument
  if (!grpc::SerializationTraits<Request>::Deserialize(&copy, request).ok()) {
    return ToGrpcStatus(absl::InvalidArgumentError(absl::StrCat(
        "request: not a valid ", Request::descriptor()->full_name(), " (protobuf parse failed)")));
  }
  return ToGrpcStatus(CheckEnumValues(*request));
}

grpc::Status SceneGone(const std::string& name) {
  return grpc::Status(grpc::StatusCode::NOT_FOUND, absl::StrCat("scene: scene '", name, "' was deleted"));
}

// Runs fn(entry) on the tenant's scene `name` under the scene's lock: NOT_FOUND when there is no
// such scene or it was deleted while the call waited for the lock.
template <typename Fn>
grpc::Status WithScene(SceneRegistry& registry, const std::string& tenant, const std::string& name, Fn fn) {
  auto entry = registry.Get(tenant, name);
  if (!entry.ok()) return ToGrpcStatus(entry.status());
  std::lock_guard<std::mutex> lock((*entry)->mu);
  if ((*entry)->deleted) return SceneGone(name);
  return fn(**entry);
}

// A response the transport would refuse to send must be refused before the step changes state.
absl::Status CheckResponseSize(const ReadPlan& plan, int64_t num_envs, int64_t matrix_bytes,
                               int64_t max_message_bytes) {
  const int64_t bytes = EstimateResponseBytes(plan, num_envs) + matrix_bytes;
  if (bytes <= max_message_bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat("read: the readings of ", num_envs, " envs take about ", bytes,
                   " bytes", matrix_bytes > 0 ? absl::StrCat(" (", matrix_bytes, " of them the contact matrix)") : "",
                   ", over the message limit of ", max_message_bytes,
                   " bytes; read fewer sensors, channels or envs, or set read.none"));
}

// The request bytes of a raw Step/StepStream call, parsed by protobuf; `*seconds` is the time it
// took (part of the decode phase).
grpc::Status ParseStepRequest(const grpc::ByteBuffer& bytes, v1::StepRequest* request, double* seconds) {
  const auto start = Clock::now();
  grpc::Status status = ParseRequest(bytes, request);
  *seconds = Seconds(start, Clock::now());
  return status;
}

// A protobuf message serialised into a response slice.
grpc::Slice SerializeToSlice(const google::protobuf::MessageLite& message) {
  const size_t size = message.ByteSizeLong();
  char* data = nullptr;
  grpc::Slice slice = NewResponseSlice(size, &data);
  message.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(data));
  return slice;
}

}  // namespace

// -----------------------------------------------------------------------------------------------
// StepStream: one request in flight at a time; each is processed on the request executor.

class StepStreamReactor final : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  // States: reading (a read is outstanding) -> processing (on the executor) -> writing -> reading.
  // Finish is only ever called while reading or writing, never while processing, so OnDone (and
  // the deletion of this object) cannot happen under a running Process(). gRPC operations are
  // started outside mu_, so inline reactions cannot deadlock. Exactly one thread wins the right
  // to call Finish (TakeFinish under mu_).
  StepStreamReactor(TaxelService* service, std::string tenant) : service_(service), tenant_(std::move(tenant)) {
    service_->metrics().RpcStarted("StepStream", "bidi_stream");
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    std::optional<grpc::Status> finish;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (finished_) return;
      if (!ok) {  // the client closed its side
        finish = TakeFinish(grpc::Status::OK);
      } else if (abort_) {
        finish = TakeFinish(*abort_);
      } else {
        phase_ = Phase::kProcessing;
      }
    }
    if (finish) return DoFinish(*finish);
    const auto queued = Clock::now();
    if (!service_->executor().TrySubmit([this, queued] { Process(queued); },
                                        [this] { Refuse(ShuttingDown()); })) {
      Refuse(service_->draining() ? ShuttingDown() : Busy());
    }
  }

  void OnWriteDone(bool ok) override {
    std::optional<grpc::Status> finish;
    {
      std::lock_guard<std::mutex> lock(mu_);
      phase_ = Phase::kReading;
      if (finished_) return;
      if (!ok) {
        finish = TakeFinish(grpc::Status(grpc::StatusCode::CANCELLED, "stream: write failed (client gone)"));
      } else if (abort_) {
        finish = TakeFinish(*abort_);
      }
    }
    if (finish) return DoFinish(*finish);
    response_.Clear();
    StartRead(&request_);
  }

  void OnDone() override {
    service_->Unregister(this);
    delete this;
  }

  /// Ends the stream with `status` (scene deleted, server draining): at once when waiting for the
  /// client, else when the step in progress completes. Called with the service's stream lock held.
  void Abort(const grpc::Status& status) {
    std::optional<grpc::Status> finish;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (finished_) return;
      if (phase_ != Phase::kReading) {
        abort_ = status;
        return;
      }
      finish = TakeFinish(status);
    }
    DoFinish(*finish);
  }

  bool Matches(const std::string& tenant, const std::string& scene) {
    std::lock_guard<std::mutex> lock(mu_);
    return tenant == tenant_ && scene == scene_;
  }

 private:
  enum class Phase { kReading, kProcessing, kWriting };

  // The step read last is not run (queue full, or refused at shutdown): end the stream.
  void Refuse(const grpc::Status& status) {
    std::optional<grpc::Status> finish;
    {
      std::lock_guard<std::mutex> lock(mu_);
      phase_ = Phase::kReading;  // nothing outstanding: Finish is allowed
      if (!finished_) finish = TakeFinish(status);
    }
    if (finish) DoFinish(*finish);
  }

  void Process(Clock::time_point queued) {
    grpc::Status status = GuardAllocation([&] { return Step(queued); });
    std::optional<grpc::Status> finish;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!status.ok() || abort_) {
        phase_ = Phase::kReading;  // the read completed; nothing outstanding
        finish = TakeFinish(!status.ok() ? status : *abort_);
      } else {
        phase_ = Phase::kWriting;
      }
    }
    if (finish) return DoFinish(*finish);
    StartWrite(&response_);
  }

  grpc::Status Step(Clock::time_point queued) {
    double parse_seconds = 0;
    if (grpc::Status s = ParseStepRequest(request_, &parsed_, &parse_seconds); !s.ok()) return s;
    {
      std::lock_guard<std::mutex> lock(mu_);
      scene_ = parsed_.scene();
    }
    return service_->StepOnce(tenant_, parsed_, &response_, queued, parse_seconds);
  }

  grpc::Status TakeFinish(const grpc::Status& status) {  // mu_ held, finished_ false
    finished_ = true;
    return status;
  }

  void DoFinish(const grpc::Status& status) {
    service_->metrics().RpcHandled("StepStream", "bidi_stream", status.error_code(), Seconds(start_, Clock::now()));
    Finish(BoundedStatus(status));
  }

  TaxelService* service_;
  const std::string tenant_;
  const Clock::time_point start_ = Clock::now();
  grpc::ByteBuffer request_;
  v1::StepRequest parsed_;  // reused from step to step
  grpc::ByteBuffer response_;
  std::mutex mu_;
  std::string scene_;
  Phase phase_ = Phase::kReading;
  bool finished_ = false;
  std::optional<grpc::Status> abort_;
};

// -----------------------------------------------------------------------------------------------

TaxelService::TaxelService(Deps deps) : deps_(std::move(deps)) {}

grpc::Status TaxelService::Authenticate(grpc::CallbackServerContext* ctx, std::string* tenant) const {
  tenant->clear();
  if (deps_.tokens.empty()) return grpc::Status::OK;
  const auto& md = ctx->client_metadata();
  auto it = md.find("authorization");
  if (it == md.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "authorization: expected 'Bearer <token>' metadata");
  }
  const std::string value(it->second.data(), it->second.size());
  if (!absl::StartsWith(value, "Bearer ")) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "authorization: expected 'Bearer <token>'");
  }
  auto t = deps_.tokens.find(value.substr(7));
  if (t == deps_.tokens.end()) return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "authorization: unknown token");
  *tenant = t->second;
  return grpc::Status::OK;
}

template <typename Handler>
grpc::ServerUnaryReactor* TaxelService::RunUnary(grpc::CallbackServerContext* ctx, const char* method,
                                                 Handler handler) {
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
  std::string tenant;
  const grpc::Status auth = Authenticate(ctx, &tenant);
  if (!auth.ok()) {
    finish(auth);
    return reactor;
  }
  const bool queued = deps_.executor->TrySubmit(
      [ctx, handler = std::move(handler), finish, tenant, start]() mutable {
        // A call its client gave up on (deadline, cancel) while it waited is not run.
        if (ctx->IsCancelled()) return finish(grpc::Status(grpc::StatusCode::CANCELLED, "request: cancelled while queued"));
        finish(GuardAllocation([&] { return handler(tenant, start); }));
      },
      [finish] { finish(ShuttingDown()); });
  if (!queued) finish(draining_ ? ShuttingDown() : Busy());
  deps_.metrics->SetExecutorQueueDepth(static_cast<int64_t>(deps_.executor->queue_depth()));
  return reactor;
}

template <typename Request, typename Response, typename Handler>
grpc::ServerUnaryReactor* TaxelService::Serve(grpc::CallbackServerContext* ctx, const char* method,
                                              const grpc::ByteBuffer* in, grpc::ByteBuffer* out, Handler handler) {
  return RunUnary(ctx, method, [in, out, handler = std::move(handler)](const std::string& tenant, Clock::time_point) {
    Request request;
    if (grpc::Status s = ParseRequest(*in, &request); !s.ok()) return s;
    Response response;
    grpc::Status status = handler(tenant, &request, &response);
    if (status.ok()) {
      bool own = false;
      status = grpc::SerializationTraits<Response>::Serialize(response, out, &own);
    }
    return status;
  });
}

void TaxelService::UpdateGauges() {
  deps_.metrics->SetScenes(deps_.registry->size());
  deps_.metrics->SetMemoryBytes(deps_.registry->memory_bytes());
}

grpc::ServerUnaryReactor* TaxelService::GetServerInfo(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                            grpc::ByteBuffer* bytes) {
  return Serve<v1::GetServerInfoRequest, v1::ServerInfo>(ctx, "GetServerInfo", in, bytes, [this](const std::string& tenant, const v1::GetServerInfoRequest* /*req*/, v1::ServerInfo* out) -> grpc::Status {
    const Limits& l = deps_.options->limits;
    out->set_version(kTaxelVersion);
    out->set_grpc_version(grpc::Version());
    auto* lim = out->mutable_limits();
    lim->set_max_message_bytes(l.max_message_bytes);
    lim->set_max_scenes(l.max_scenes);
    lim->set_max_envs_per_scene(l.max_envs_per_scene);
    lim->set_max_probes_per_scene(l.max_probes_per_scene);
    lim->set_max_triangles_per_mesh(l.max_triangles_per_mesh);
    lim->set_max_memory_bytes(l.max_memory_bytes);
    lim->set_max_scenes_per_tenant(l.max_scenes_per_tenant);
    lim->set_max_memory_bytes_per_tenant(l.max_memory_bytes_per_tenant);
    for (const char* cap : {"sensor:contact_probe", "sensor:contact_depth_probe", "sensor:kinematic_taxel",
                            "sensor:elastomer_taxel", "sensor:proximity_taxel", "imperfections", "history",
                            "contact_matrix:estimated", "contact_matrix:reported", "force_law:nonlinear",
                            "shape:sphere", "shape:box", "shape:capsule", "shape:cylinder", "shape:half_space",
                            "shape:heightfield", "shape:mesh", "step_stream", "object_slots", "quat_order:xyzw",
                            "quat_order:wxyz"}) {
      out->add_capabilities(cap);
    }
    out->set_threads(deps_.eval_pool->num_workers());
    const TenantUsage usage = deps_.registry->usage(tenant);
    out->set_num_scenes(usage.num_scenes);
    out->set_num_meshes(usage.num_meshes);
    out->set_memory_bytes(usage.memory_bytes);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* TaxelService::UploadMesh(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                            grpc::ByteBuffer* bytes) {
  return Serve<v1::UploadMeshRequest, v1::UploadMeshResponse>(ctx, "UploadMesh", in, bytes, [this](const std::string& tenant, const v1::UploadMeshRequest* req, v1::UploadMeshResponse* out) -> grpc::Status {
    auto decode = [&]() -> absl::Status {
      TAXEL_ASSIGN_OR_RETURN(DecodedMesh decoded,
                             DecodeMeshUpload(*req, deps_.options->limits.max_triangles_per_mesh));
      auto added_or = deps_.registry->AddMesh(tenant, std::move(decoded.vertices), std::move(decoded.triangles));
      if (!added_or.ok()) {
        // The core prefixes its paths with the field given and a '.'; with "" that leaves a leading
        // '.', and "vertices"/"triangles" are top-level fields of this request.
        absl::string_view message = added_or.status().message();
        absl::ConsumePrefix(&message, ".");
        return absl::Status(added_or.status().code(), message);
      }
      const auto& added = added_or->result;
      out->set_mesh_id(added.id);
      out->set_newly_added(added_or->newly_added);
      const auto& m = added.mesh->mesh();
      out->set_num_vertices(m.num_vertices());
      out->set_num_triangles(m.num_triangles());
      out->set_watertight(m.is_watertight());
      out->set_was_inside_out(m.was_inside_out());
      if (added_or->newly_added) {
        Log(LogLevel::kInfo, "mesh_uploaded",
            {{"mesh", added.id.substr(0, 16)}, {"triangles", std::to_string(m.num_triangles())},
             {"watertight", m.is_watertight() ? "true" : "false"}});
      }
      UpdateGauges();
      return absl::OkStatus();
    };
    return ToGrpcStatus(decode());
  });
}

grpc::ServerUnaryReactor* TaxelService::CreateScene(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                            grpc::ByteBuffer* bytes) {
  return Serve<v1::CreateSceneRequest, v1::SceneInfo>(ctx, "CreateScene", in, bytes, [this](const std::string& tenant, const v1::CreateSceneRequest* req, v1::SceneInfo* out) -> grpc::Status {
    if (draining_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "server is shutting down; no new scenes");
    auto spec = DecodeSceneSpec(req->spec());
    if (!spec.ok()) return ToGrpcStatus(spec.status(), "spec.");
    const auto start = Clock::now();
    auto entry = deps_.registry->Create(tenant, *std::move(spec));
    if (!entry.ok()) {
      Log(LogLevel::kInfo, "scene_create_failed", {{"scene", req->spec().name()}, {"error", std::string(entry.status().message())}});
      return ToGrpcStatus(entry.status(), "spec.");
    }
    std::lock_guard<std::mutex> lock((*entry)->mu);
    EncodeSceneInfo(*(*entry)->scene, out);
    Log(LogLevel::kInfo, "scene_created",
        {{"scene", out->name()}, {"tenant", tenant}, {"envs", std::to_string(out->num_envs())},
         {"links", std::to_string(out->links_size())}, {"sensors", std::to_string(out->sensors_size())},
         {"bytes", std::to_string(out->memory_bytes())}, {"ms", std::to_string(1e3 * Seconds(start, Clock::now()))}});
    UpdateGauges();
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* TaxelService::GetScene(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                            grpc::ByteBuffer* bytes) {
  return Serve<v1::GetSceneRequest, v1::SceneInfo>(ctx, "GetScene", in, bytes, [this](const std::string& tenant, const v1::GetSceneRequest* req, v1::SceneInfo* out) -> grpc::Status {
    return WithScene(*deps_.registry, tenant, req->scene(), [&](SceneEntry& entry) {
      EncodeSceneInfo(*entry.scene, out);
      return grpc::Status::OK;
    });
  });
}

grpc::ServerUnaryReactor* TaxelService::ListScenes(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                            grpc::ByteBuffer* bytes) {
  return Serve<v1::ListScenesRequest, v1::ListScenesResponse>(ctx, "ListScenes", in, bytes, [this](const std::string& tenant, const v1::ListScenesRequest* /*req*/, v1::ListScenesResponse* out) -> grpc::Status {
    for (const auto& entry : deps_.registry->List(tenant)) {
      std::lock_guard<std::mutex> lock(entry->mu);
      if (!entry->deleted) EncodeSceneInfo(*entry->scene, out->add_scenes());
    }
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* TaxelService::DeleteScene(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                            grpc::ByteBuffer* bytes) {
  return Serve<v1::DeleteSceneRequest, v1::DeleteSceneResponse>(ctx, "DeleteScene", in, bytes, [this](const std::string& tenant, const v1::DeleteSceneRequest* req, v1::DeleteSceneResponse* /*out*/) -> grpc::Status {
    const absl::Status s = deps_.registry->Delete(tenant, req->scene());
    if (!s.ok()) return ToGrpcStatus(s);
    AbortStreams(tenant, req->scene(), SceneGone(req->scene()));
    Log(LogLevel::kInfo, "scene_deleted", {{"scene", req->scene()}, {"tenant", tenant}});
    UpdateGauges();
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* TaxelService::AddSensor(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                            grpc::ByteBuffer* bytes) {
  return Serve<v1::AddSensorRequest, v1::SensorInfo>(ctx, "AddSensor", in, bytes, [this](const std::string& tenant, const v1::AddSensorRequest* req, v1::SensorInfo* out) -> grpc::Status {
    return WithScene(*deps_.registry, tenant, req->scene(), [&](SceneEntry& entry) {
      auto spec = DecodeSensorSpec(req->sensor(), "sensor");
      if (!spec.ok()) return ToGrpcStatus(spec.status());
      scene::Scene& scene = *entry.scene;
      if (auto s = deps_.registry->CheckAddSensor(scene, *spec); !s.ok()) return ToGrpcStatus(s);
      Reservation budget(deps_.registry, tenant);
      auto id = scene.AddSensor(*spec, "sensor", budget);
      if (!id.ok()) return ToGrpcStatus(id.status());
      EncodeSensorInfo(scene, *scene.FindSensor(*id), out);
      deps_.registry->UpdateSceneBytes(entry);
      Log(LogLevel::kInfo, "sensor_added", {{"scene", req->scene()}, {"sensor", spec->name}});
      UpdateGauges();
      return grpc::Status::OK;
    });
  });
}

grpc::ServerUnaryReactor* TaxelService::RemoveSensor(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                            grpc::ByteBuffer* bytes) {
  return Serve<v1::RemoveSensorRequest, v1::RemoveSensorResponse>(ctx, "RemoveSensor", in, bytes, [this](const std::string& tenant, const v1::RemoveSensorRequest* req, v1::RemoveSensorResponse* /*out*/) -> grpc::Status {
    return WithScene(*deps_.registry, tenant, req->scene(), [&](SceneEntry& entry) {
      scene::Scene& scene = *entry.scene;
      SensorId id;
      if (req->sensor_case() == v1::RemoveSensorRequest::kName) {
        const sensors::Sensor* s = scene.FindSensor(req->name());
        if (s == nullptr) {
          return grpc::Status(grpc::StatusCode::NOT_FOUND, absl::StrCat("name: no sensor named '", req->name(), "'"));
        }
        id = s->id();
      } else if (req->sensor_case() == v1::RemoveSensorRequest::kSensorId) {
        id = SensorId(req->sensor_id());
      } else {
        return ToGrpcStatus(absl::InvalidArgumentError("sensor: expected sensor_id or name"));
      }
      if (auto s = scene.RemoveSensor(id); !s.ok()) return ToGrpcStatus(s);
      deps_.registry->UpdateSceneBytes(entry);
      UpdateGauges();
      return grpc::Status::OK;
    });
  });
}

grpc::Status TaxelService::StepOnce(const std::string& tenant, const v1::StepRequest& req, grpc::ByteBuffer* response,
                                    Clock::time_point queued_at, double parse_seconds) {
  return WithScene(*deps_.registry, tenant, req.scene(), [&](SceneEntry& entry) {
    scene::Scene& scene = *entry.scene;
    const auto t0 = Clock::now();
    DecodedStep step;
    if (auto s = DecodeStep(req, scene, &step); !s.ok()) return ToGrpcStatus(s);
    auto plan = PlanRead(req.read(), scene, "read");
    if (!plan.ok()) return ToGrpcStatus(plan.status());
    if (req.read().contact_matrix() && scene.contact_matrix() == nullptr) {
      return ToGrpcStatus(absl::FailedPreconditionError(
          "read.contact_matrix: this scene has no contact matrix (set SceneSpec.contact_matrix.bodies)"));
    }
    const int64_t n_envs = step.env_ids.empty() ? scene.num_envs() : static_cast<int64_t>(step.env_ids.size());
    const int64_t matrix_bytes = req.read().contact_matrix() ? EstimateContactMatrixBytes(scene, n_envs) : 0;
    if (auto s = CheckResponseSize(*plan, n_envs, matrix_bytes, deps_.options->limits.max_message_bytes); !s.ok()) {
      return ToGrpcStatus(s);
    }
    scene::StepStats stats;
    Reservation budget(deps_.registry, tenant);  // a shorter dt may grow the delay rings
    if (auto s = scene.Step(step.input, *deps_.eval_pool, &stats, budget); !s.ok()) return ToGrpcStatus(s);
    if (budget.reserved() > 0) deps_.registry->UpdateSceneBytes(entry);
    const auto t2 = Clock::now();
    auto envs = scene.ResolveEnvIds(step.env_ids);  // validated by Step
    // The response in field order (server/step_wire.h): head and readings as slices, then the tail.
    v1::StepResponse head, tail;
    head.set_scene(req.scene());
    head.set_sequence(req.sequence());
    head.set_step(stats.step);
    head.mutable_env_ids()->Assign(envs->begin(), envs->end());
    const ReadingsWireWriter readings(*plan, *envs, scene.num_envs(), deps_.eval_pool);
    std::vector<grpc::Slice> slices = readings.Slices(head.SerializeAsString());
    if (req.read().contact_matrix()) {
      const google::protobuf::RepeatedPtrField<std::string> all;
      EncodeContactMatrix(scene, *envs, all, all, scene.contact_matrix()->matrix().has_friction(),
                          tail.mutable_contact_matrix())
          .IgnoreError();  // checked above: the scene has a matrix
    }
    const auto t3 = Clock::now();
    const double decode = parse_seconds + Seconds(t0, t2) - stats.evaluate_seconds;
    const double queue = std::max(0.0, Seconds(queued_at, t0) - parse_seconds);
    auto* timing = tail.mutable_timing();
    timing->set_queue_us(1e6 * queue);
    timing->set_decode_us(1e6 * decode);
    timing->set_evaluate_us(1e6 * stats.evaluate_seconds);
    timing->set_encode_us(1e6 * Seconds(t2, t3));
    slices.push_back(SerializeToSlice(tail));
    grpc::ByteBuffer bytes(slices.data(), slices.size());
    response->Swap(&bytes);
    Metrics& m = *deps_.metrics;
    m.StepPhaseSeconds(StepPhase::kQueue, queue);
    m.StepPhaseSeconds(StepPhase::kDecode, decode);
    m.StepPhaseSeconds(StepPhase::kEvaluate, stats.evaluate_seconds);
    m.StepPhaseSeconds(StepPhase::kEncode, Seconds(t2, t3));
    for (int k = 0; k < 5; ++k) {
      if (stats.probe_evaluations[k] > 0) {
        m.ProbeEvaluations(sensors::SensorKindName(static_cast<sensors::SensorKind>(k)), stats.probe_evaluations[k]);
      }
    }
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* TaxelService::Step(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* req,
                                             grpc::ByteBuffer* out) {
  return RunUnary(ctx, "Step", [this, req, out](const std::string& tenant, Clock::time_point queued) {
    v1::StepRequest request;
    double parse_seconds = 0;
    if (grpc::Status s = ParseStepRequest(*req, &request, &parse_seconds); !s.ok()) return s;
    return StepOnce(tenant, request, out, queued, parse_seconds);
  });
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
    return new Refused(!auth.ok() ? auth
                                  : grpc::Status(grpc::StatusCode::UNAVAILABLE, "server is shutting down"));
  }
  auto* stream = new StepStreamReactor(this, tenant);
  std::lock_guard<std::mutex> lock(streams_mu_);
  streams_.insert(stream);
  // Drain() may have run between the check above and the insert; it sets draining_ before it
  // takes streams_mu_, so a stream it missed sees the flag here.
  if (draining_) stream->Abort(grpc::Status(grpc::StatusCode::UNAVAILABLE, "server is shutting down"));
  return stream;
}

void TaxelService::Unregister(StepStreamReactor* stream) {
  std::lock_guard<std::mutex> lock(streams_mu_);
  streams_.erase(stream);
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

grpc::ServerUnaryReactor* TaxelService::UpdateSensor(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                            grpc::ByteBuffer* bytes) {
  return Serve<v1::UpdateSensorRequest, v1::SensorInfo>(ctx, "UpdateSensor", in, bytes, [this](const std::string& tenant, const v1::UpdateSensorRequest* req, v1::SensorInfo* out) -> grpc::Status {
    return WithScene(*deps_.registry, tenant, req->scene(), [&](SceneEntry& entry) {
      auto update = DecodeSensorUpdate(*req, *entry.scene);
      if (!update.ok()) return ToGrpcStatus(update.status());
      ApplySensorUpdate(*update);
      EncodeSensorInfo(*entry.scene, *update->sensor, out);
      return grpc::Status::OK;
    });
  });
}

grpc::ServerUnaryReactor* TaxelService::ReadSensors(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                            grpc::ByteBuffer* bytes) {
  return Serve<v1::ReadSensorsRequest, v1::ReadSensorsResponse>(ctx, "ReadSensors", in, bytes, [this](const std::string& tenant, const v1::ReadSensorsRequest* req, v1::ReadSensorsResponse* out) -> grpc::Status {
    return WithScene(*deps_.registry, tenant, req->scene(), [&](SceneEntry& entry) {
      const scene::Scene& scene = *entry.scene;
      const std::vector<int32_t> requested(req->env_ids().begin(), req->env_ids().end());
      auto envs = scene.ResolveEnvIds(requested);
      if (!envs.ok()) return ToGrpcStatus(envs.status());
      auto plan = PlanRead(req->read(), scene, "read");
      if (!plan.ok()) return ToGrpcStatus(plan.status());
      const int64_t n_envs = static_cast<int64_t>(envs->size());
      if (auto s = CheckResponseSize(*plan, n_envs, 0, deps_.options->limits.max_message_bytes); !s.ok()) {
        return ToGrpcStatus(s);
      }
      out->set_step(scene.step_count());
      out->mutable_env_ids()->Assign(envs->begin(), envs->end());
      if (req->history() != 0) {
        if (auto s = CheckHistory(*plan, req->history(), "history"); !s.ok()) return ToGrpcStatus(s);
        EncodeHistory(*plan, req->history(), *envs, out->mutable_readings());
        return grpc::Status::OK;
      }
      EncodeReadings(*plan, *envs, scene.num_envs(), out->mutable_readings());
      return grpc::Status::OK;
    });
  });
}

grpc::ServerUnaryReactor* TaxelService::ResetEnvs(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                            grpc::ByteBuffer* bytes) {
  return Serve<v1::ResetEnvsRequest, v1::ResetEnvsResponse>(ctx, "ResetEnvs", in, bytes, [this](const std::string& tenant, const v1::ResetEnvsRequest* req, v1::ResetEnvsResponse* /*out*/) -> grpc::Status {
    return WithScene(*deps_.registry, tenant, req->scene(), [&](SceneEntry& entry) {
      const std::vector<int32_t> envs(req->env_ids().begin(), req->env_ids().end());
      return ToGrpcStatus(entry.scene->Reset(envs));
    });
  });
}

grpc::ServerUnaryReactor* TaxelService::GetContactMatrix(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                            grpc::ByteBuffer* bytes) {
  return Serve<v1::GetContactMatrixRequest, v1::GetContactMatrixResponse>(ctx, "GetContactMatrix", in, bytes, [this](const std::string& tenant, const v1::GetContactMatrixRequest* req, v1::GetContactMatrixResponse* out) -> grpc::Status {
    return WithScene(*deps_.registry, tenant, req->scene(), [&](SceneEntry& entry) {
      const scene::Scene& scene = *entry.scene;
      const std::vector<int32_t> requested(req->env_ids().begin(), req->env_ids().end());
      auto envs = scene.ResolveEnvIds(requested);
      if (!envs.ok()) return ToGrpcStatus(envs.status());
      return ToGrpcStatus(EncodeContactMatrix(scene, *envs, req->rows(), req->columns(), req->friction(), out));
    });
  });
}

}  // namespace taxel::server
