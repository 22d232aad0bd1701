#include "core/scene/scene.h"

#include <chrono>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/common/field_error.h"
#include "core/common/status_macros.h"
#include "core/geometry/surface_sampling.h"
#include "core/sensors/tracked_geometry.h"

namespace taxel::scene {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Scene>> Scene::Create(const SceneSpec& spec, const geometry::MeshLookup& meshes,
                                                     MemoryBudget& budget) {
  TAXEL_ASSIGN_OR_RETURN(auto model, SceneModel::Build(spec, meshes, budget));
  std::unique_ptr<Scene> scene(new Scene());
  scene->model_ = std::move(model);
  const SceneModel& m = *scene->model_;
  const double per_env = static_cast<double>(m.num_moving_links()) * sizeof(sensors::LinkKinematics) + sizeof(uint8_t) +
                         sizeof(uint32_t) + 2 * sizeof(uint64_t);
  TAXEL_RETURN_IF_ERROR(
      budget.Reserve(per_env * m.num_envs(), "num_envs", absl::StrCat("the link state of ", m.num_envs(), " envs")));
  scene->kinematics_.resize(static_cast<size_t>(m.num_envs()) * m.num_moving_links());
  scene->static_kinematics_.resize(m.num_links());
  for (int l = 0; l < m.num_links(); ++l) scene->static_kinematics_[l].X_WL = m.links()[l].X_WL;
  scene->has_pose_.assign(m.num_envs(), 0);
  scene->env_steps_.assign(m.num_envs(), 0);
  scene->env_steps_since_reset_.assign(m.num_envs(), 0);
  scene->reset_count_.assign(m.num_envs(), 0);
  // Two sensors of one spec with the same name are a bad spec (INVALID_ARGUMENT), not a clash
  // with an existing sensor (AddSensor's ALREADY_EXISTS).
  std::map<std::string, size_t> first_with_name;
  for (size_t s = 0; s < spec.sensors.size(); ++s) {
    const auto [it, added] = first_with_name.emplace(spec.sensors[s].name, s);
    if (!added) {
      return InvalidFieldError(
          absl::StrCat("sensors[", s, "].name"),
          absl::StrCat("'", spec.sensors[s].name, "' is already the name of sensors[", it->second, "]"));
    }
  }
  for (size_t s = 0; s < spec.sensors.size(); ++s) {
    TAXEL_RETURN_IF_ERROR(
        scene->AddSensor(spec.sensors[s], absl::StrCat("sensors[", s, "]"), budget, &meshes).status());
  }
  if (spec.contact_matrix.enabled()) {
    TAXEL_ASSIGN_OR_RETURN(scene->contacts_,
                           ContactEstimation::Create(spec.contact_matrix, m, "contact_matrix", budget, &meshes));
  }
  scene->UpdateNeedsVelocity();
  return scene;
}

absl::StatusOr<SensorId> Scene::AddSensor(const sensors::SensorSpec& spec, absl::string_view field,
                                          MemoryBudget& budget, const geometry::MeshLookup* meshes) {
  if (spec.name.empty()) {
    return InvalidFieldError(absl::StrCat(field, ".name"), "expected a non-empty name");
  }
  if (FindSensor(spec.name) != nullptr) {
    return FieldError(absl::StatusCode::kAlreadyExists, absl::StrCat(field, ".name"),
                      absl::StrCat("a sensor named '", spec.name, "' already exists"));
  }
  TAXEL_ASSIGN_OR_RETURN(LinkIndex link, model_->FindLink(spec.link, absl::StrCat(field, ".link")));
  std::vector<LinkIndex> ignored;
  for (size_t i = 0; i < spec.filter_links.size(); ++i) {
    TAXEL_ASSIGN_OR_RETURN(LinkIndex l,
                           model_->FindLink(spec.filter_links[i], absl::StrCat(field, ".filter_links[", i, "]")));
    ignored.push_back(l);
  }
  // Outputs, imperfection state and history; tracked sensors also sample the tracked surfaces
  // (8 candidates per kept point, kept points and their index).
  double bytes = static_cast<double>(sensors::Sensor::EstimateBytes(spec, model_->num_envs(), model_->has_implicit_shapes()));
  if (sensors::TraitsOf(spec.kind).tracks_links) {
    // (Validated by Sensor::Create below; a negative count must not make a negative size here.)
    bytes += 10.0 * std::max(0, spec.n_sample_points) * sizeof(Eigen::Vector3d) *
             static_cast<double>(spec.track_links.size());
  }
  TAXEL_RETURN_IF_ERROR(budget.Reserve(bytes, field, absl::StrCat("sensor '", spec.name, "'")));
  const SensorId id(next_sensor_id_);
  TAXEL_ASSIGN_OR_RETURN(auto sensor,
                         sensors::Sensor::Create(id, spec, link, ignored, model_->num_links(), model_->num_envs(),
                                                 model_->seed(), field, static_cast<uint32_t>(model_->env_offset())));
  if (sensors::TraitsOf(spec.kind).tracks_links) {
    std::vector<LinkIndex> tracked;
    for (size_t i = 0; i < spec.track_links.size(); ++i) {
      TAXEL_ASSIGN_OR_RETURN(LinkIndex l,
                             model_->FindLink(spec.track_links[i], absl::StrCat(field, ".track_links[", i, "]")));
      if (l == link) {
        return InvalidFieldError(absl::StrCat(field, ".track_links[", i, "]"), "a sensor cannot track its own link");
      }
      tracked.push_back(l);
    }
    sensor->set_tracked(BuildTrackedGeometry(*sensor, tracked));
  }
  if (model_->has_implicit_shapes()) sensor->EnableWarmStarts();  // reserved with the sensor
  std::map<const geometry::Shape*, std::shared_ptr<const geometry::MeshSdfGrid>> grids;
  if (spec.sdf_backend == sensors::SdfBackend::kGrid) {
    // The probe spheres of the measured branch reach R + σ_R: the band must too.
    const double reach = sensor->layout().max_radius() + std::max(0.0, spec.imperfections.probe_radius_noise);
    TAXEL_RETURN_IF_ERROR(FindGrids(reach, meshes, absl::StrCat(field, ".sdf_backend"), budget, &grids));
  }
  for (auto& [shape, grid] : grids) grids_[shape] = std::move(grid);
  ++next_sensor_id_;
  sensors_.emplace(id.value(), std::move(sensor));
  UpdateNeedsVelocity();
  return id;
}

absl::Status Scene::FindGrids(
    double reach, const geometry::MeshLookup* meshes, const std::string& field, MemoryBudget& budget,
    std::map<const geometry::Shape*, std::shared_ptr<const geometry::MeshSdfGrid>>* out) const {
  for (const LinkModel& link : model_->links()) {
    for (const std::vector<ShapeInstance>& asset : link.assets) {
      for (const ShapeInstance& si : asset) {
        if (si.shape.kind() != geometry::ShapeKind::kMesh || si.scaled_mesh) continue;  // scaled: exact
        if (auto it = grids_.find(&si.shape); it != grids_.end() && it->second->band() >= reach) continue;
        if (meshes == nullptr) {
          return FieldError(absl::StatusCode::kFailedPrecondition, field, "no mesh store to build grids from");
        }
        TAXEL_ASSIGN_OR_RETURN((*out)[&si.shape], meshes->Grid(si.mesh_id, reach, budget, field));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Scene::RemoveSensor(SensorId id) {
  if (sensors_.erase(id.value()) == 0) {
    return FieldError(absl::StatusCode::kNotFound, "sensor_id", absl::StrCat("no sensor with id ", id.value()));
  }
  UpdateNeedsVelocity();
  return absl::OkStatus();
}

const sensors::Sensor* Scene::FindSensor(SensorId id) const {
  auto it = sensors_.find(id.value());
  return it == sensors_.end() ? nullptr : it->second.get();
}

const sensors::Sensor* Scene::FindSensor(absl::string_view name) const {
  for (const auto& [id, s] : sensors_) {
    if (s->spec().name == name) return s.get();
  }
  return nullptr;
}

sensors::Sensor* Scene::FindMutableSensor(absl::string_view name) {
  for (auto& [id, s] : sensors_) {
    if (s->spec().name == name) return s.get();
  }
  return nullptr;
}

std::vector<const sensors::Sensor*> Scene::sensors() const {
  std::vector<const sensors::Sensor*> out;
  for (const auto& [id, s] : sensors_) out.push_back(s.get());
  return out;
}

int Scene::num_probes() const {
  int n = 0;
  for (const auto& [id, s] : sensors_) n += s->num_probes();
  return n;
}

absl::StatusOr<std::vector<int32_t>> Scene::ResolveEnvIds(absl::Span<const int32_t> env_ids,
                                                          absl::string_view field) const {
  const int num_envs = model_->num_envs();
  std::vector<int32_t> envs;
  if (env_ids.empty()) {
    envs.resize(num_envs);
    for (int e = 0; e < num_envs; ++e) envs[e] = e;
    return envs;
  }
  std::vector<uint8_t> seen(num_envs, 0);
  for (size_t i = 0; i < env_ids.size(); ++i) {
    const int32_t e = env_ids[i];
    if (e < 0 || e >= num_envs) {
      return FieldError(absl::StatusCode::kOutOfRange, absl::StrCat(field, "[", i, "]"),
                        absl::StrCat("env id ", e, " out of range [0, ", num_envs, ")"));
    }
    if (seen[e]) {
      return InvalidFieldError(absl::StrCat(field, "[", i, "]"), absl::StrCat("env id ", e, " appears more than once"));
    }
    seen[e] = 1;
  }
  envs.assign(env_ids.begin(), env_ids.end());
  return envs;
}

absl::Status Scene::Step(const StepInput& in, Executor& executor, StepStats* stats, MemoryBudget& budget) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<int32_t> envs;
  TAXEL_RETURN_IF_ERROR(ValidateStep(in, executor, budget, &envs));  // the only stage that may fail
  const auto t1 = std::chrono::steady_clock::now();
  CommitPoses(in, envs);
  for (auto& [id, s] : sensors_) {
    if (in.gradients) s->EnableGradients();  // reserved by ValidateStep
    s->set_compute_gradients(in.gradients);
  }
  std::array<int64_t, sensors::kNumSensorKinds> evaluations{};
  EvaluateSensors(executor, envs, in.dt, &evaluations);
  UpdateContactMatrix(in, envs, executor);
  FinishMeasuredBranches(executor, envs, in.dt);
  if (stats != nullptr) {
    stats->step = step_count_;
    stats->validate_seconds = std::chrono::duration<double>(t1 - t0).count();
    stats->evaluate_seconds = SecondsSince(t1);
    stats->probe_evaluations = evaluations;
  }
  return absl::OkStatus();
}

// Everything about the input, checked before any state changes: env ids, dt, quaternion order,
// array sizes, every pose (decoded into decoded_) and twist, reported contacts, jitter against dt,
// and the memory of delay rings a shorter dt grows (reserved from `budget`).
absl::Status Scene::ValidateStep(const StepInput& in, Executor& executor, MemoryBudget& budget,
                                 std::vector<int32_t>* envs_out) {
  const SceneModel& m = *model_;
  const int L = m.num_moving_links();
  TAXEL_ASSIGN_OR_RETURN(*envs_out, ResolveEnvIds(in.env_ids));
  const std::vector<int32_t>& envs = *envs_out;
  const size_t n = envs.size();
  if (!(in.dt > 0) || !std::isfinite(in.dt)) {
    return InvalidFieldError("dt", absl::StrCat("expected a finite value > 0, got ", in.dt));
  }
  TAXEL_RETURN_IF_ERROR(CheckQuatOrder(in.quat_order, "quat_order"));
  if (in.poses.size() != n * L * 7) {
    return InvalidFieldError("poses", absl::StrCat("expected shape [", n, ", ", L, ", 7] (", n * L * 7,
                                                   " values), got ", in.poses.size(), " values"));
  }
  if (!in.twists.empty() && in.twists.size() != n * L * 6) {
    return InvalidFieldError("twists", absl::StrCat("expected shape [", n, ", ", L, ", 6] (", n * L * 6,
                                                    " values), got ", in.twists.size(), " values"));
  }
  decoded_.resize(n * L);
  {
    // Decode in parallel (chunks of envs); on failure report the first bad pose in order.
    constexpr size_t kChunk = 256;
    const size_t chunks = (n + kChunk - 1) / kChunk;
    std::vector<int64_t> first_bad(chunks, -1);
    executor.ParallelFor(static_cast<int64_t>(chunks), [&](int64_t c, int) {
      const size_t end = std::min(n, (c + 1) * kChunk) * L;
      for (size_t k = c * kChunk * L; k < end; ++k) {
        if (!TryPoseFromArray(&in.poses[k * 7], in.quat_order, &decoded_[k])) {
          first_bad[c] = static_cast<int64_t>(k);
          return;
        }
      }
    });
    for (int64_t k : first_bad) {
      if (k >= 0) {
        return PoseFromArray(&in.poses[k * 7], in.quat_order, absl::StrCat("poses[", k / L, "][", k % L, "]")).status();
      }
    }
  }
  for (size_t k = 0; k < in.twists.size(); ++k) {
    if (!std::isfinite(in.twists[k])) {
      return InvalidFieldError(absl::StrCat("twists[", k / (6 * L), "][", (k / 6) % L, "][", k % 6, "]"),
                               absl::StrCat("expected a finite number, got ", in.twists[k]));
    }
  }
  if (in.contacts.size() > 0 || !in.contacts.body.empty() || !in.contacts.force.empty()) {
    if (contacts_ == nullptr || contacts_->spec().source != contact::ContactSource::kReported) {
      return InvalidFieldError("contacts", "reported contacts need a contact matrix with source REPORTED in the scene");
    }
    TAXEL_RETURN_IF_ERROR(contacts_->ValidateReported(in.contacts, envs));
  }
  for (const auto& [id, sensor] : sensors_) {
    const double jitter = sensor->spec().imperfections.jitter;
    if (jitter > in.dt) {
      return InvalidFieldError("dt", absl::StrCat("sensor '", sensor->spec().name, "' has a jitter of ", jitter,
                                                  " s, which must not exceed dt (", in.dt, " s)"));
    }
  }
  // A shorter dt than any before grows the delay rings: reserve them now, before any state changes.
  for (const auto& [id, sensor] : sensors_) {
    const sensors::MeasuredPipeline* pipe = sensor->pipeline();
    const double grow = pipe == nullptr ? 0 : pipe->RingGrowthBytes(in.dt);
    if (grow == 0) continue;
    const double slots = pipe->RingSlotsFor(in.dt);
    const std::string what =
        absl::StrCat("the delay ring of sensor '", sensor->spec().name, "' (", absl::StrFormat("%.0f", slots),
                     " samples per probe for a delay of ", pipe->spec().delay, " s at dt = ", in.dt, " s)");
    if (slots > std::numeric_limits<int32_t>::max()) {
      return MemoryRefusal(grow, "dt", what, "a ring holds at most 2^31 - 1 samples; use a larger dt");
    }
    TAXEL_RETURN_IF_ERROR(budget.Reserve(grow, "dt", what));
  }
  // The first step with gradients allocates the sensors' gradient buffers.
  for (const auto& [id, sensor] : sensors_) {
    const size_t bytes = in.gradients ? sensor->GradientBytes() : 0;
    if (bytes == 0) continue;
    TAXEL_RETURN_IF_ERROR(budget.Reserve(static_cast<double>(bytes), "read.gradients",
                                         absl::StrCat("the gradients of sensor '", sensor->spec().name, "'")));
  }
  return absl::OkStatus();
}

// Poses (decoded by ValidateStep) and velocities (the twists given, or finite differences when a
// sensor or the contact model needs them) of the stepped envs; step counters; pipelines prepared
// for dt.
void Scene::CommitPoses(const StepInput& in, absl::Span<const int32_t> envs) {
  const int L = model_->num_moving_links();
  const size_t n = envs.size();
  for (size_t i = 0; i < n; ++i) {
    const int e = envs[i];
    for (int l = 0; l < L; ++l) {
      sensors::LinkKinematics& k = kinematics_[static_cast<size_t>(e) * L + l];
      const RigidTransform& X = decoded_[i * L + l];
      if (!in.twists.empty()) {
        const double* t = &in.twists[(i * L + l) * 6];
        k.v_W = Eigen::Vector3d(t[0], t[1], t[2]);
        k.w_W = Eigen::Vector3d(t[3], t[4], t[5]);
      } else if (!needs_velocity_) {
        // No sensor or contact model reads velocities: skip the finite differences.
      } else if (has_pose_[e]) {
        k.v_W = (X.p - k.X_WL.p) / in.dt;
        k.w_W = AngularVelocityFromRotations(k.X_WL.R, X.R, in.dt);
      } else {
        k.v_W.setZero();
        k.w_W.setZero();
      }
      k.X_WL = X;
    }
    has_pose_[e] = 1;
    ++env_steps_[e];
    ++env_steps_since_reset_[e];
  }
  if (!in.continues_step || step_count_ == 0) ++step_count_;
  for (auto& [id, sensor] : sensors_) {
    sensor->PrepareMeasured(in.dt);
  }
}

// The sensor kernels: tasks of (env, sensor, probe range) over the executor. A sensor evaluated
// in one task per env runs its measured branch in the same task. Counts the active probes
// evaluated per sensor kind.
void Scene::EvaluateSensors(Executor& executor, absl::Span<const int32_t> envs, double dt,
                            std::array<int64_t, sensors::kNumSensorKinds>* evaluations) {
  const size_t n = envs.size();
  struct Task {
    int env;
    sensors::Sensor* sensor;
    int begin, end;
  };
  std::vector<Task> tasks;
  for (int e : envs) {
    for (auto& [id, s] : sensors_) {
      const int np = s->num_probes();
      const int chunk = s->probes_per_task();
      for (int b = 0; b < np; b += chunk) tasks.push_back({e, s.get(), b, std::min(np, b + chunk)});
    }
  }
  for (auto& [id, s] : sensors_) (*evaluations)[static_cast<int>(s->kind())] += int64_t{s->layout().num_active()} * n;
  ReserveWorkers(executor);
  executor.ParallelFor(static_cast<int64_t>(tasks.size()), [&](int64_t t, int worker) {
    const Task& task = tasks[t];
    sensors::Sensor& sensor = *task.sensor;
    const sensors::LinkKinematics& link = kinematics(task.env, sensor.link());
    const uint64_t step = env_steps_[task.env];
    WorkerScratch& w = worker_scratch(worker);
    Workspace::Scope scope(w.ws);
    float* raw = sensor.pipeline() != nullptr ? sensor.raw_measured(task.env, w.ws) : nullptr;
    switch (sensors::TraitsOf(sensor.kind()).evaluator) {
      case sensors::Evaluator::kElastomer:
        GatherCandidates(sensor, task.env, &w.candidates);
        GatherGel(sensor, task.env, &w.gel);
        TrackedInEnv(sensor, task.env, &w.tracked);
        sensors::EvaluateElastomer(sensor, task.env, link, w.candidates, w.gel, w.tracked, raw, w.ws);
        break;
      case sensors::Evaluator::kProximity:
        TrackedInEnv(sensor, task.env, &w.tracked);
        sensors::EvaluateProximity(sensor, task.env, task.begin, task.end, step, link, w.tracked, raw, w.ws);
        break;
      case sensors::Evaluator::kProbeRange:
        GatherCandidates(sensor, task.env, &w.candidates);
        sensors::EvaluateProbeRange(sensor, task.env, task.begin, task.end, step, link, w.candidates, raw, w.ws);
        break;
    }
    // A task that covers the whole sensor runs its measured branch right away, while the kernel's
    // raw output (in this task's workspace) is still in cache.
    if (sensor.pipeline() && sensor.one_task_per_env()) {
      sensor.FinishMeasured(task.env, step, env_steps_since_reset_[task.env], dt, raw, w.ws);
    }
  });
}

void Scene::ReserveWorkers(const Executor& executor) {
  while (workers_.size() < static_cast<size_t>(std::max(1, executor.num_workers()))) {
    workers_.push_back(std::make_unique<WorkerScratch>());
  }
}

size_t Scene::WorkerScratch::capacity_bytes() const {
  return sizeof(*this) + ws.capacity_bytes() +
         (candidates.capacity() + gel.capacity()) * sizeof(sensors::ProbeCandidate) +
         tracked.capacity() * sizeof(sensors::TrackedLinkInEnv);
}

// The contact matrix of the stepped envs: the reported contacts applied, or estimated per env.
void Scene::UpdateContactMatrix(const StepInput& in, absl::Span<const int32_t> envs, Executor& executor) {
  if (contacts_ != nullptr) {
    if (contacts_->spec().source == contact::ContactSource::kReported) {
      contacts_->ApplyReported(in.contacts, envs);
    } else {
      const auto kin = [this](int env, LinkIndex l) -> const sensors::LinkKinematics& { return kinematics(env, l); };
      ReserveWorkers(executor);
      executor.ParallelFor(static_cast<int64_t>(envs.size()), [&](int64_t i, int worker) {
        contacts_->EstimateEnv(envs[i], *model_, kin, worker_scratch(worker).ws);
      });
    }
  }
}

// The measured branch of the sensors split over several tasks: the imperfection pipeline per
// (env, sensor), after all kernels.
void Scene::FinishMeasuredBranches(Executor& executor, absl::Span<const int32_t> envs, double dt) {
  std::vector<std::pair<int, sensors::Sensor*>> measured;
  for (int e : envs) {
    for (auto& [id, s] : sensors_) {
      if (s->pipeline() && !s->one_task_per_env()) measured.push_back({e, s.get()});
    }
  }
  ReserveWorkers(executor);
  executor.ParallelFor(static_cast<int64_t>(measured.size()), [&](int64_t t, int worker) {
    const auto [e, s] = measured[t];
    Workspace& ws = worker_scratch(worker).ws;
    Workspace::Scope scope(ws);
    s->FinishMeasured(e, env_steps_[e], env_steps_since_reset_[e], dt, s->raw_measured(e, ws), ws);
  });
}

void Scene::GatherCandidates(const sensors::Sensor& sensor, int env, std::vector<sensors::ProbeCandidate>* out) const {
  out->clear();
  const SceneModel& m = *model_;
  // Probe spheres of the measured branch reach R + σ_R (radius noise): the broad phase must too.
  const double noise = sensor.spec().imperfections.probe_radius_noise;
  const geometry::Aabb& bounds_L = sensor.layout().local_bounds();
  const geometry::Aabb local = noise > 0 ? bounds_L.Inflated(noise) : bounds_L;
  const geometry::Aabb sensor_W = local.Transformed(kinematics(env, sensor.link()).X_WL);
  const sensors::TrackedGeometry* tracked = sensor.tracked();
  const bool grid_backend = sensor.spec().sdf_backend == sensors::SdfBackend::kGrid;
  for (int li = 0; li < m.num_links(); ++li) {
    const LinkIndex l(li);
    if (sensor.ignores(l)) continue;
    if (tracked != nullptr && !IsTracked(*tracked, l)) continue;  // elastomers sense their tracked links only
    const int asset = m.AssetIn(l, env);
    if (asset < 0) continue;  // empty object slot
    const LinkModel& link = m.link(l);
    const sensors::LinkKinematics& k = kinematics(env, l);
    if (!link.asset_bounds_L[asset].Transformed(k.X_WL).Overlaps(sensor_W)) continue;
    for (const ShapeInstance& si : link.assets[asset]) {
      const RigidTransform X_WS = k.X_WL * si.X_LS;
      const geometry::Aabb bounds_W = si.shape.local_bounds().Transformed(X_WS);
      if (!bounds_W.Overlaps(sensor_W)) continue;
      out->push_back({&si.shape, X_WS.Inverse(), X_WS.R, bounds_W, l, &k});
      if (grid_backend && si.shape.kind() == geometry::ShapeKind::kMesh) {
        auto it = grids_.find(&si.shape);
        if (it != grids_.end()) out->back().grid = it->second.get();
      }
    }
  }
}

absl::Status Scene::Reset(absl::Span<const int32_t> env_ids) {
  TAXEL_ASSIGN_OR_RETURN(const std::vector<int32_t> envs, ResolveEnvIds(env_ids));
  for (int e : envs) {
    has_pose_[e] = 0;
    ++reset_count_[e];
    env_steps_since_reset_[e] = 0;
    for (auto& [id, s] : sensors_) s->ResetEnv(e, reset_count_[e]);
    if (contacts_ != nullptr) contacts_->ResetEnv(e);
  }
  return absl::OkStatus();
}

void Scene::UpdateNeedsVelocity() {
  needs_velocity_ = contacts_ != nullptr && contacts_->spec().source == contact::ContactSource::kEstimated;
  for (const auto& [id, s] : sensors_) {
    needs_velocity_ |= sensors::TraitsOf(s->kind()).needs_velocities;
  }
}

bool Scene::IsTracked(const sensors::TrackedGeometry& tracked, LinkIndex l) {
  for (const sensors::TrackedLink& t : tracked.links()) {
    if (t.link == l) return true;
  }
  return false;
}

void Scene::GatherGel(const sensors::Sensor& sensor, int env, std::vector<sensors::ProbeCandidate>* out) const {
  out->clear();
  const int asset = model_->AssetIn(sensor.link(), env);
  if (asset < 0) return;
  const sensors::LinkKinematics& k = kinematics(env, sensor.link());
  for (const ShapeInstance& si : model_->link(sensor.link()).assets[asset]) {
    const RigidTransform X_WS = k.X_WL * si.X_LS;
    out->push_back({&si.shape, X_WS.Inverse(), X_WS.R, si.shape.local_bounds().Transformed(X_WS), sensor.link(), &k});
  }
}

void Scene::TrackedInEnv(const sensors::Sensor& sensor, int env, std::vector<sensors::TrackedLinkInEnv>* out) const {
  out->clear();
  for (const sensors::TrackedLink& t : sensor.tracked()->links()) {
    out->push_back({&t, model_->AssetIn(t.link, env), &kinematics(env, t.link)});
  }
}

std::unique_ptr<sensors::TrackedGeometry> Scene::BuildTrackedGeometry(const sensors::Sensor& sensor,
                                                                      const std::vector<LinkIndex>& links) const {
  const SceneModel& m = *model_;
  const sensors::SensorSpec& spec = sensor.spec();
  // The sample budget is split across the tracked links by the area of their default asset; every
  // asset of a link gets that link's budget. Within a link, across its shapes by area, then
  // thinned by farthest-point sampling. Fixed seed: the same points for the same geometry.
  std::vector<double> areas;
  double total = 0;
  for (LinkIndex l : links) {
    double a = 0;
    for (const ShapeInstance& si : m.link(l).assets[0]) a += geometry::SurfaceArea(si.shape);
    areas.push_back(a);
    total += a;
  }
  constexpr uint64_t kSampleSeed = 0x7a7e1;
  std::vector<sensors::TrackedLink> tracked;
  for (size_t t = 0; t < links.size(); ++t) {
    const LinkModel& link = m.link(links[t]);
    const int budget =
        total > 0 ? std::max(1, static_cast<int>(std::lround(spec.n_sample_points * areas[t] / total))) : 0;
    sensors::TrackedLink tl;
    tl.link = links[t];
    for (const auto& shapes : link.assets) {
      // Areas once per shape (an implicit shape's is a numerical integral).
      std::vector<double> shape_areas;
      double link_area = 0;
      for (const ShapeInstance& si : shapes) link_area += shape_areas.emplace_back(geometry::SurfaceArea(si.shape));
      std::vector<Eigen::Vector3d> candidates;
      for (size_t s = 0; s < shapes.size(); ++s) {
        const double a = shape_areas[s];
        if (a <= 0 || link_area <= 0) continue;
        const int n = std::max(1, static_cast<int>(std::lround(8.0 * budget * a / link_area)));
        for (const Eigen::Vector3d& p : geometry::RandomSurfacePoints(shapes[s].shape, n, kSampleSeed + s)) {
          candidates.push_back(shapes[s].X_LS * p);
        }
      }
      tl.points.push_back(geometry::FarthestPointSample(candidates, budget));
    }
    tracked.push_back(std::move(tl));
  }
  std::vector<std::vector<int>> per_env(m.num_envs(), std::vector<int>(links.size(), 0));
  for (int e = 0; e < m.num_envs(); ++e) {
    for (size_t t = 0; t < links.size(); ++t) {
      const int asset = m.AssetIn(links[t], e);
      per_env[e][t] = asset < 0 ? 0 : static_cast<int>(tracked[t].points[asset].size());
    }
  }
  auto g = std::make_unique<sensors::TrackedGeometry>(std::move(tracked), m.num_envs(), per_env);
  const sensors::Evaluator evaluator = sensors::TraitsOf(spec.kind).evaluator;
  if (evaluator == sensors::Evaluator::kProximity) g->BuildIndices();
  if (evaluator == sensors::Evaluator::kElastomer) g->PrepareDilation(sensor.layout(), spec.elastomer);
  return g;
}

size_t Scene::memory_bytes() const {
  size_t total = sizeof(*this) + model_->memory_bytes() +
                 (kinematics_.capacity() + static_kinematics_.capacity()) * sizeof(sensors::LinkKinematics) +
                 has_pose_.capacity() + reset_count_.capacity() * sizeof(uint32_t) +
                 decoded_.capacity() * sizeof(RigidTransform);
  for (const auto& [id, s] : sensors_) total += s->memory_bytes();
  if (contacts_ != nullptr) total += contacts_->memory_bytes();
  for (const auto& w : workers_) total += w->capacity_bytes();
  return total;
}

}  // namespace taxel::scene
