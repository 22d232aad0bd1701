#include "server/handlers.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/common/field_error.h"
#include "core/common/status_macros.h"
#include "core/contact/contact_matrix.h"
#include "core/geometry/shape.h"
#include "grpcpp/grpcpp.h"
#include "server/call_support.h"
#include "server/codec.h"
#include "server/grpc_status.h"
#include "server/log.h"
#include "server/response_buffers.h"
#include "server/step_wire.h"
#include "server/version.h"

namespace taxel::server {
namespace {

// A response the transport would refuse to send must be refused before the step changes state.
absl::Status CheckResponseSize(const ReadPlan& plan, int64_t num_envs, int64_t matrix_bytes,
                               int64_t max_message_bytes) {
  const int64_t bytes = EstimateResponseBytes(plan, num_envs) + matrix_bytes;
  if (bytes <= max_message_bytes) return absl::OkStatus();
  return FieldError(
      absl::StatusCode::kResourceExhausted, "read",
      absl::StrCat("the readings of ", num_envs, " envs take about ", bytes, " bytes",
                   matrix_bytes > 0 ? absl::StrCat(" (", matrix_bytes, " of them the contact matrix)") : "",
                   ", over the message limit of ", max_message_bytes,
                   " bytes; read fewer sensors, channels or envs, set read.none, or raise the server's "
                   "--max_message_bytes (the Python, C++ and Node clients split steps and reads by envs themselves)"));
}

// A protobuf message serialised into a response slice.
grpc::Slice SerializeToSlice(const google::protobuf::MessageLite& message) {
  const size_t size = message.ByteSizeLong();
  char* data = nullptr;
  grpc::Slice slice = NewResponseSlice(size, &data);
  message.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(data));
  return slice;
}

// ---- Step, in stages: plan (decode and every check) → evaluate → encode → metrics.

// Everything a step needs, decoded and checked against the scene and the limits before anything
// changes.
struct StepPlan {
  DecodedStep step;
  ReadPlan read;
  bool contact_matrix = false;
};

absl::Status PlanStep(const v1::StepRequest& request, const scene::Scene& scene, const Limits& limits, StepPlan* plan) {
  TAXEL_RETURN_IF_ERROR(DecodeStep(request, scene, &plan->step));
  TAXEL_ASSIGN_OR_RETURN(plan->read, PlanRead(request.read(), scene, "read"));
  plan->step.input.gradients = plan->read.gradients;  // computed by this step for its readings
  plan->contact_matrix = request.read().contact_matrix();
  if (plan->contact_matrix && scene.contact_matrix() == nullptr) {
    return FieldError(absl::StatusCode::kFailedPrecondition, "read.contact_matrix",
                      "this scene has no contact matrix (set SceneSpec.contact_matrix.bodies)");
  }
  const std::vector<int32_t>& env_ids = plan->step.env_ids;
  const int64_t n_envs = env_ids.empty() ? scene.num_envs() : static_cast<int64_t>(env_ids.size());
  const int64_t matrix_bytes = plan->contact_matrix ? EstimateContactMatrixBytes(scene, n_envs) : 0;
  return CheckResponseSize(plan->read, n_envs, matrix_bytes, limits.max_message_bytes);
}

// Where the time of one step went (seconds).
struct StepTiming {
  double queue = 0, decode = 0, evaluate = 0, encode = 0;
};

// The StepResponse in field order (server/step_wire.h): head and readings as slices, then the
// tail (contact matrix, timing).
std::vector<grpc::Slice> EncodeStepResponse(const v1::StepRequest& request, const scene::Scene& scene,
                                            const StepPlan& plan, const scene::StepStats& stats,
                                            absl::Span<const int32_t> envs, Executor* pool,
                                            const StepTiming& timing_so_far, Clock::time_point encode_start) {
  v1::StepResponse head, tail;
  head.set_scene(request.scene());
  head.set_sequence(request.sequence());
  head.set_step(stats.step);
  head.mutable_env_ids()->Assign(envs.begin(), envs.end());
  const ReadingsWireWriter readings(plan.read, envs, scene.num_envs(), pool);
  std::vector<grpc::Slice> slices = readings.Slices(head.SerializeAsString());
  if (plan.contact_matrix) {
    const google::protobuf::RepeatedPtrField<std::string> all;
    const contact::ContactMatrix& M = scene.contact_matrix()->matrix();
    EncodeContactMatrix(scene, envs, all, all, M.has_friction(), M.has_gradient(), tail.mutable_contact_matrix())
        .IgnoreError();  // PlanStep checked that the scene has a matrix
  }
  auto* timing = tail.mutable_timing();
  timing->set_queue_us(1e6 * timing_so_far.queue);
  timing->set_decode_us(1e6 * timing_so_far.decode);
  timing->set_evaluate_us(1e6 * timing_so_far.evaluate);
  timing->set_encode_us(1e6 * Seconds(encode_start, Clock::now()));
  slices.push_back(SerializeToSlice(tail));
  return slices;
}

void RecordStep(Metrics& m, const StepTiming& t, const scene::StepStats& stats) {
  m.StepPhaseSeconds(StepPhase::kQueue, t.queue);
  m.StepPhaseSeconds(StepPhase::kDecode, t.decode);
  m.StepPhaseSeconds(StepPhase::kEvaluate, t.evaluate);
  m.StepPhaseSeconds(StepPhase::kEncode, t.encode);
  for (sensors::SensorKind kind : sensors::kSensorKinds) {
    const int64_t n = stats.probe_evaluations[static_cast<int>(kind)];
    if (n > 0) m.ProbeEvaluations(sensors::SensorKindName(kind), n);
  }
}

}  // namespace

std::vector<std::string> TaxelHandlers::Capabilities() {
  std::vector<std::string> caps;
  for (sensors::SensorKind k : sensors::kSensorKinds)
    caps.push_back(absl::StrCat("sensor:", sensors::SensorKindName(k)));
  for (const char* feature : {"imperfections", "history", "step_stream", "object_slots"}) caps.emplace_back(feature);
  for (contact::ContactSource s : contact::kContactSources) {
    caps.push_back(absl::StrCat("contact_matrix:", contact::ContactSourceName(s)));
  }
  for (sensors::SensorSpec::ForceLaw law : sensors::SensorSpec::kForceLaws) {
    caps.push_back(absl::StrCat("force_law:", sensors::SensorSpec::ForceLawName(law)));
  }
  for (geometry::ShapeKind k : geometry::kShapeKinds)
    caps.push_back(absl::StrCat("shape:", geometry::ShapeKindName(k)));
  for (geometry::ImplicitKind k : geometry::kImplicitKinds)
    caps.push_back(absl::StrCat("implicit:", geometry::ImplicitKindName(k)));
  for (QuatOrder q : {QuatOrder::kXyzw, QuatOrder::kWxyz}) {
    caps.push_back(absl::StrCat("quat_order:", absl::AsciiStrToLower(QuatOrderName(q))));
  }
  return caps;
}

void TaxelHandlers::UpdateGauges() {
  deps_.metrics->SetScenes(deps_.registry->size());
  deps_.metrics->SetMemoryBytes(deps_.registry->memory_bytes());
}

absl::Status TaxelHandlers::GetServerInfo(const Call& call, const v1::GetServerInfoRequest& /*request*/,
                                          v1::ServerInfo* out) {
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
  lim->set_max_grid_build_queries(l.max_grid_build_queries);
  static const std::vector<std::string> kCapabilities = Capabilities();  // fixed for the process
  for (const std::string& cap : kCapabilities) out->add_capabilities(cap);
  out->set_threads(deps_.eval_pool->num_workers());
  const TenantUsage usage = deps_.registry->usage(call.tenant);
  out->set_num_scenes(usage.num_scenes);
  out->set_num_meshes(usage.num_meshes);
  out->set_memory_bytes(usage.memory_bytes);
  out->set_replica_id(deps_.options->replica_id);
  return absl::OkStatus();
}

absl::Status TaxelHandlers::UploadMesh(const Call& call, const v1::UploadMeshRequest& request,
                                       v1::UploadMeshResponse* out) {
  TAXEL_ASSIGN_OR_RETURN(DecodedMesh decoded, DecodeMeshUpload(request, deps_.options->limits.max_triangles_per_mesh));
  auto added_or =
      deps_.registry->AddMesh(call.tenant, std::move(decoded.vertices), std::move(decoded.triangles), decoded.grid);
  if (!added_or.ok()) return added_or.status();  // "vertices"/"triangles": top-level fields of this request
  const auto& added = added_or->result;
  out->set_mesh_id(added.id);
  out->set_newly_added(added_or->newly_added);
  const auto& m = added.mesh->mesh();
  out->set_num_vertices(m.num_vertices());
  out->set_num_triangles(m.num_triangles());
  out->set_watertight(m.is_watertight());
  out->set_was_inside_out(m.was_inside_out());
  if (added.grid != nullptr) EncodeGridInfo(added.grid->stats(), out->mutable_grid());
  if (added_or->newly_added) {
    Log(LogLevel::kInfo, "mesh_uploaded",
        {{"mesh", added.id.substr(0, 16)},
         {"triangles", std::to_string(m.num_triangles())},
         {"watertight", m.is_watertight() ? "true" : "false"}});
  }
  UpdateGauges();
  return absl::OkStatus();
}

absl::Status TaxelHandlers::CreateScene(const Call& call, const v1::CreateSceneRequest& request, v1::SceneInfo* out) {
  if (deps_.draining->load()) return absl::UnavailableError("server is shutting down; no new scenes");
  auto spec = DecodeSceneSpec(request.spec());
  if (!spec.ok()) return PrefixField(spec.status(), "spec.");
  const auto start = Clock::now();
  const absl::Status created = deps_.registry->Create(call.tenant, *std::move(spec),
                                                      [&](SceneEntry& entry) { EncodeSceneInfo(entry.scene(), out); });
  if (!created.ok()) {
    Log(LogLevel::kInfo, "scene_create_failed",
        {{"scene", request.spec().name()}, {"error", std::string(created.message())}});
    return PrefixField(created, "spec.");
  }
  Log(LogLevel::kInfo, "scene_created",
      {{"scene", out->name()},
       {"tenant", call.tenant},
       {"envs", std::to_string(out->num_envs())},
       {"links", std::to_string(out->links_size())},
       {"sensors", std::to_string(out->sensors_size())},
       {"bytes", std::to_string(out->memory_bytes())},
       {"ms", std::to_string(1e3 * Seconds(start, Clock::now()))}});
  UpdateGauges();
  return absl::OkStatus();
}

absl::Status TaxelHandlers::GetScene(const Call& call, const v1::GetSceneRequest& request, v1::SceneInfo* out) {
  return deps_.registry->WithScene(call.tenant, request.scene(), [&](SceneEntry& entry) {
    EncodeSceneInfo(entry.scene(), out);
    return absl::OkStatus();
  });
}

absl::Status TaxelHandlers::ListScenes(const Call& call, const v1::ListScenesRequest& /*request*/,
                                       v1::ListScenesResponse* out) {
  deps_.registry->ForEachScene(call.tenant,
                               [&](const SceneEntry& entry) { EncodeSceneInfo(entry.scene(), out->add_scenes()); });
  return absl::OkStatus();
}

absl::Status TaxelHandlers::DeleteMesh(const Call& call, const v1::DeleteMeshRequest& request,
                                       v1::DeleteMeshResponse* /*out*/) {
  TAXEL_RETURN_IF_ERROR(deps_.registry->DeleteMesh(call.tenant, request.mesh_id()));
  Log(LogLevel::kInfo, "mesh_deleted", {{"mesh", request.mesh_id().substr(0, 16)}, {"tenant", call.tenant}});
  UpdateGauges();
  return absl::OkStatus();
}

absl::Status TaxelHandlers::DeleteScene(const Call& call, const v1::DeleteSceneRequest& request,
                                        v1::DeleteSceneResponse* /*out*/) {
  TAXEL_RETURN_IF_ERROR(deps_.registry->Delete(call.tenant, request.scene()));
  Log(LogLevel::kInfo, "scene_deleted", {{"scene", request.scene()}, {"tenant", call.tenant}});
  UpdateGauges();
  return absl::OkStatus();
}

absl::Status TaxelHandlers::AddSensor(const Call& call, const v1::AddSensorRequest& request, v1::SensorInfo* out) {
  return deps_.registry->WithScene(call.tenant, request.scene(), [&](SceneEntry& entry) -> absl::Status {
    TAXEL_ASSIGN_OR_RETURN(sensors::SensorSpec spec, DecodeSensorSpec(request.sensor(), "sensor"));
    scene::Scene& scene = entry.scene();
    TAXEL_RETURN_IF_ERROR(deps_.registry->CheckAddSensor(scene, spec));
    Reservation budget(deps_.registry, call.tenant);
    const auto meshes = deps_.registry->TenantMeshLookup(call.tenant);
    TAXEL_ASSIGN_OR_RETURN(SensorId id, scene.AddSensor(spec, "sensor", budget, meshes.get()));
    EncodeSensorInfo(scene, *scene.FindSensor(id), out);
    deps_.registry->UpdateSceneBytes(entry);
    Log(LogLevel::kInfo, "sensor_added", {{"scene", request.scene()}, {"sensor", spec.name}});
    UpdateGauges();
    return absl::OkStatus();
  });
}

absl::Status TaxelHandlers::RemoveSensor(const Call& call, const v1::RemoveSensorRequest& request,
                                         v1::RemoveSensorResponse* /*out*/) {
  return deps_.registry->WithScene(call.tenant, request.scene(), [&](SceneEntry& entry) -> absl::Status {
    scene::Scene& scene = entry.scene();
    SensorId id;
    if (request.sensor_case() == v1::RemoveSensorRequest::kName) {
      const sensors::Sensor* s = scene.FindSensor(request.name());
      if (s == nullptr) {
        return FieldError(absl::StatusCode::kNotFound, "name", absl::StrCat("no sensor named '", request.name(), "'"));
      }
      id = s->id();
    } else if (request.sensor_case() == v1::RemoveSensorRequest::kSensorId) {
      id = SensorId(request.sensor_id());
    } else {
      return InvalidFieldError("sensor", "expected sensor_id or name");
    }
    TAXEL_RETURN_IF_ERROR(scene.RemoveSensor(id));
    deps_.registry->UpdateSceneBytes(entry);
    UpdateGauges();
    return absl::OkStatus();
  });
}

absl::Status TaxelHandlers::UpdateSensor(const Call& call, const v1::UpdateSensorRequest& request,
                                         v1::SensorInfo* out) {
  return deps_.registry->WithScene(call.tenant, request.scene(), [&](SceneEntry& entry) -> absl::Status {
    TAXEL_ASSIGN_OR_RETURN(SensorUpdate update, DecodeSensorUpdate(request, entry.scene()));
    ApplySensorUpdate(update);
    EncodeSensorInfo(entry.scene(), *update.sensor, out);
    return absl::OkStatus();
  });
}

absl::Status TaxelHandlers::ReadSensors(const Call& call, const v1::ReadSensorsRequest& request,
                                        std::vector<grpc::Slice>* response) {
  return deps_.registry->WithScene(call.tenant, request.scene(), [&](SceneEntry& entry) -> absl::Status {
    const scene::Scene& scene = entry.scene();
    const std::vector<int32_t> requested(request.env_ids().begin(), request.env_ids().end());
    TAXEL_ASSIGN_OR_RETURN(std::vector<int32_t> envs, scene.ResolveEnvIds(requested));
    if (request.read().gradients()) {
      return InvalidFieldError("read.gradients",
                               "gradients are computed by a step: set StepRequest.read.gradients instead");
    }
    TAXEL_ASSIGN_OR_RETURN(ReadPlan plan, PlanRead(request.read(), scene, "read"));
    if (request.history() != 0) TAXEL_RETURN_IF_ERROR(CheckHistory(plan, request.history(), "history"));
    // A history read returns `history` measured samples of each env's history channels: its size
    // is that of those channels for envs × history.
    ReadPlan sized = plan;
    if (request.history() != 0) {
      sized.branches = {sensors::Branch::kMeasured};
      for (ReadPlan::Item& item : sized.items) {
        const auto& kept = item.sensor->history_channels();
        item.channels.erase(
            std::remove_if(item.channels.begin(), item.channels.end(),
                           [&](sensors::Channel c) { return std::find(kept.begin(), kept.end(), c) == kept.end(); }),
            item.channels.end());
      }
    }
    const int64_t samples = std::max<int64_t>(1, request.history());
    TAXEL_RETURN_IF_ERROR(CheckResponseSize(sized, static_cast<int64_t>(envs.size()) * samples, 0,
                                            deps_.options->limits.max_message_bytes));
    v1::ReadSensorsResponse head;  // fields 1–2; the readings (field 3) follow
    head.set_step(scene.step_count());
    head.mutable_env_ids()->Assign(envs.begin(), envs.end());
    constexpr int kReadings = v1::ReadSensorsResponse::kReadingsFieldNumber;
    if (request.history() == 0) {
      const ReadingsWireWriter readings(kReadings, PlannedReadings(plan), plan.sparse, envs, scene.num_envs(),
                                        deps_.eval_pool);
      *response = readings.Slices(head.SerializeAsString());
      return absl::OkStatus();
    }
    // The history is copied out of the rings, env by env in request order: those copies are the
    // arrays the writer reads, indexed by position.
    std::vector<std::vector<float>> storage;
    std::vector<ReadingArrays> history = HistoryReadings(plan, request.history(), envs, &storage);
    std::vector<int32_t> positions(envs.size());
    std::iota(positions.begin(), positions.end(), 0);
    const ReadingsWireWriter readings(kReadings, std::move(history), plan.sparse, positions,
                                      static_cast<int>(positions.size()), deps_.eval_pool);
    *response = readings.Slices(head.SerializeAsString());
    return absl::OkStatus();
  });
}

absl::Status TaxelHandlers::ResetEnvs(const Call& call, const v1::ResetEnvsRequest& request,
                                      v1::ResetEnvsResponse* /*out*/) {
  return deps_.registry->WithScene(call.tenant, request.scene(), [&](SceneEntry& entry) {
    const std::vector<int32_t> envs(request.env_ids().begin(), request.env_ids().end());
    return entry.scene().Reset(envs);
  });
}

absl::Status TaxelHandlers::GetContactMatrix(const Call& call, const v1::GetContactMatrixRequest& request,
                                             v1::GetContactMatrixResponse* out) {
  return deps_.registry->WithScene(call.tenant, request.scene(), [&](SceneEntry& entry) -> absl::Status {
    const scene::Scene& scene = entry.scene();
    const std::vector<int32_t> requested(request.env_ids().begin(), request.env_ids().end());
    TAXEL_ASSIGN_OR_RETURN(std::vector<int32_t> envs, scene.ResolveEnvIds(requested));
    return EncodeContactMatrix(scene, envs, request.rows(), request.columns(), request.friction(),
                               request.gradients(), out);
  });
}

absl::Status TaxelHandlers::Step(const Call& call, const v1::StepRequest& request, std::vector<grpc::Slice>* response) {
  return deps_.registry->WithScene(call.tenant, request.scene(), [&](SceneEntry& entry) -> absl::Status {
    scene::Scene& scene = entry.scene();
    const auto t0 = Clock::now();
    StepPlan plan;
    TAXEL_RETURN_IF_ERROR(PlanStep(request, scene, deps_.options->limits, &plan));
    scene::StepStats stats;
    Reservation budget(deps_.registry, call.tenant);  // a shorter dt may grow the delay rings
    TAXEL_RETURN_IF_ERROR(scene.Step(plan.step.input, *deps_.eval_pool, &stats, budget));
    if (budget.reserved() > 0) deps_.registry->UpdateSceneBytes(entry);
    const auto t_encode = Clock::now();
    TAXEL_ASSIGN_OR_RETURN(std::vector<int32_t> envs, scene.ResolveEnvIds(plan.step.env_ids));  // checked by Step
    StepTiming timing;
    timing.queue = std::max(0.0, Seconds(call.received, t0) - call.parse_seconds);
    timing.decode = call.parse_seconds + Seconds(t0, t_encode) - stats.evaluate_seconds;
    timing.evaluate = stats.evaluate_seconds;
    *response = EncodeStepResponse(request, scene, plan, stats, envs, deps_.eval_pool, timing, t_encode);
    timing.encode = Seconds(t_encode, Clock::now());
    RecordStep(*deps_.metrics, timing, stats);
    return absl::OkStatus();
  });
}

}  // namespace taxel::server
