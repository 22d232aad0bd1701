// A scene at run time: the model, its sensors, per-env state, and the step that evaluates them.
#ifndef TAXEL_CORE_SCENE_SCENE_H_
#define TAXEL_CORE_SCENE_SCENE_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/common/executor.h"
#include "core/common/ids.h"
#include "core/common/workspace.h"
#include "core/common/memory_budget.h"
#include "core/common/pose.h"
#include "core/geometry/mesh_store.h"
#include "core/scene/contact_estimation.h"
#include "core/scene/scene_model.h"
#include "core/scene/scene_spec.h"
#include "core/sensors/probe_kernels.h"
#include "core/sensors/sensor.h"
#include "core/sensors/tracked_geometry.h"

namespace taxel::scene {

/// One simulation step as the client sends it.
struct StepInput {
  /// Envs this step updates, in the order of the poses' first axis; empty means all envs in order.
  absl::Span<const int32_t> env_ids;
  /// Poses of the moving links, [n_envs_in_step, num_moving_links, 7]: position (m, world) then
  /// quaternion in `quat_order`.
  absl::Span<const double> poses;
  QuatOrder quat_order = QuatOrder::kUnspecified;
  /// Optional twists, [n_envs_in_step, num_moving_links, 6]: linear velocity of the link origin
  /// then angular velocity (m/s, rad/s, world axes). Empty: finite differences of the poses over
  /// dt (zero on an env's first step and after its reset; not computed at all when no sensor or
  /// contact model of the scene reads velocities).
  absl::Span<const double> twists;
  /// Step duration (s), finite and > 0.
  double dt = 0;
  /// REPORTED contact matrix only: the simulator's contacts of this step.
  ReportedContacts contacts;
  /// A later part of one logical step split by env ranges (clients split a step whose request or
  /// readings exceed the message limit): its envs are stepped as usual, but the scene's step
  /// count does not advance again.
  bool continues_step = false;
  /// Also compute the gradients of the readings that have one (sensors::GradientChannelOf) for
  /// the stepped envs (core/sensors/probe_gradients.h). A sensor's gradient buffer is allocated
  /// (and reserved from the step's budget) on the first step that asks.
  bool gradients = false;
};

/// What a step cost and did.
struct StepStats {
  int64_t step = 0;             ///< scene step number after this step (1 for the first)
  double validate_seconds = 0;  ///< decoding and validating the input
  double evaluate_seconds = 0;  ///< state update, broad phase and sensor kernels
  /// Active probes evaluated, per sensors::SensorKind (indexed by its value).
  std::array<int64_t, sensors::kNumSensorKinds> probe_evaluations{};
};

/// Not thread-safe: callers serialise Step/Reset/AddSensor/RemoveSensor on one scene (the server
/// does, per scene). Different scenes are independent.
class Scene {
 public:
  /// Builds the model (SceneModel::Build) and adds spec.sensors in order ("sensors[i]" in errors).
  /// Every allocation the spec sizes (per-env state, sensor buffers, scaled meshes, surface
  /// samples, the contact matrix) is reserved from `budget` first: RESOURCE_EXHAUSTED naming the
  /// field that asked for it. GRID sensors and a GRID contact matrix take the grids of the meshes
  /// from `meshes` (built there when needed; AddSensor and ContactEstimation::Create).
  static absl::StatusOr<std::unique_ptr<Scene>> Create(const SceneSpec& spec, const geometry::MeshLookup& meshes,
                                                       MemoryBudget& budget = MemoryBudget::Unlimited());

  const SceneModel& model() const { return *model_; }
  int num_envs() const { return model_->num_envs(); }

  /// Validates and adds a sensor; ids are never reused. Errors: INVALID_ARGUMENT (spec, with the
  /// option named), ALREADY_EXISTS (name taken), NOT_FOUND (link or filter link unknown),
  /// RESOURCE_EXHAUSTED when its buffers (or a mesh grid it needs) do not fit `budget`.
  /// A sensor with sdf_backend GRID gets, from `meshes`, the grid of every unscaled mesh of the
  /// scene with a band covering its largest probe radius (plus radius noise), built now if no
  /// grid has such a band (MeshLookup::Grid; errors name "<field>.sdf_backend");
  /// FAILED_PRECONDITION without `meshes`.
  absl::StatusOr<SensorId> AddSensor(const sensors::SensorSpec& spec, absl::string_view field = "sensor",
                                     MemoryBudget& budget = MemoryBudget::Unlimited(),
                                     const geometry::MeshLookup* meshes = nullptr);
  /// NOT_FOUND when no such sensor.
  absl::Status RemoveSensor(SensorId id);
  const sensors::Sensor* FindSensor(SensorId id) const;
  const sensors::Sensor* FindSensor(absl::string_view name) const;
  /// For run-time changes of a sensor's imperfections (gains, noise levels).
  sensors::Sensor* FindMutableSensor(absl::string_view name);
  /// Sensors in id order.
  std::vector<const sensors::Sensor*> sensors() const;
  int num_probes() const;

  /// Validates `input` completely, then (only if valid) updates the stepped envs' poses and
  /// velocities and evaluates every sensor for them on `executor`. A failed step changes nothing.
  /// Errors: INVALID_ARGUMENT (sizes, non-finite numbers, quaternion order or norm, dt, repeated
  /// env id) and OUT_OF_RANGE (env id), each naming the field and index; RESOURCE_EXHAUSTED
  /// ("dt") when a shorter dt would grow a delay ring beyond `budget`.
  absl::Status Step(const StepInput& input, Executor& executor, StepStats* stats = nullptr,
                    MemoryBudget& budget = MemoryBudget::Unlimited());

  /// Clears the per-env state of `env_ids` (all envs if empty): sensor outputs read 0, triggers
  /// off, velocity history dropped. Errors as for env_ids in Step; on error nothing is reset.
  absl::Status Reset(absl::Span<const int32_t> env_ids);

  /// Validates a list of env ids against num_envs (OUT_OF_RANGE / INVALID_ARGUMENT for repeats)
  /// and returns it, or 0..num_envs−1 when empty.
  absl::StatusOr<std::vector<int32_t>> ResolveEnvIds(absl::Span<const int32_t> env_ids,
                                                     absl::string_view field = "env_ids") const;

  /// The contact matrix, or nullptr when the scene has none.
  const ContactEstimation* contact_matrix() const { return contacts_.get(); }

  /// Kinematics of link l in env e as of the last step (identity/zero before the first).
  const sensors::LinkKinematics& kinematics(int env, LinkIndex l) const {
    const int m = model_->link(l).moving_index;
    return m < 0 ? static_kinematics_[l.value()]
                 : kinematics_[static_cast<size_t>(env) * model_->num_moving_links() + m];
  }
  int64_t step_count() const { return step_count_; }
  uint32_t reset_count(int env) const { return reset_count_[env]; }
  size_t memory_bytes() const;

 private:
  Scene() = default;
  // Step's stages, in order. Only ValidateStep may fail, and it changes no state.
  absl::Status ValidateStep(const StepInput& in, Executor& executor, MemoryBudget& budget, std::vector<int32_t>* envs);
  void CommitPoses(const StepInput& in, absl::Span<const int32_t> envs);
  void EvaluateSensors(Executor& executor, absl::Span<const int32_t> envs, double dt,
                       std::array<int64_t, sensors::kNumSensorKinds>* evaluations);
  void UpdateContactMatrix(const StepInput& in, absl::Span<const int32_t> envs, Executor& executor);
  void FinishMeasuredBranches(Executor& executor, absl::Span<const int32_t> envs, double dt);
  void GatherCandidates(const sensors::Sensor& sensor, int env, std::vector<sensors::ProbeCandidate>* out) const;
  void GatherGel(const sensors::Sensor& sensor, int env, std::vector<sensors::ProbeCandidate>* out) const;
  void TrackedInEnv(const sensors::Sensor& sensor, int env, std::vector<sensors::TrackedLinkInEnv>* out) const;
  std::unique_ptr<sensors::TrackedGeometry> BuildTrackedGeometry(const sensors::Sensor& sensor,
                                                                 const std::vector<LinkIndex>& links) const;
  static bool IsTracked(const sensors::TrackedGeometry& tracked, LinkIndex l);
  void UpdateNeedsVelocity();
  // The grids a GRID sensor of reach `reach` needs that grids_ lacks (or has with a smaller band).
  absl::Status FindGrids(double reach, const geometry::MeshLookup* meshes, const std::string& field,
                         MemoryBudget& budget,
                         std::map<const geometry::Shape*, std::shared_ptr<const geometry::MeshSdfGrid>>* out) const;

  std::shared_ptr<const SceneModel> model_;
  std::unique_ptr<ContactEstimation> contacts_;
  std::map<int32_t, std::unique_ptr<sensors::Sensor>> sensors_;
  // Narrow-band grids of the scene's unscaled mesh shapes, for GRID sensors: the widest band any
  // of them needed (the grids belong to the mesh store; held here while the scene lives).
  std::map<const geometry::Shape*, std::shared_ptr<const geometry::MeshSdfGrid>> grids_;
  int32_t next_sensor_id_ = 0;
  std::vector<sensors::LinkKinematics> kinematics_;         // [env][moving link]
  std::vector<sensors::LinkKinematics> static_kinematics_;  // [link] (terrain/static links)
  std::vector<uint8_t> has_pose_;                           // [env]: a pose arrived since reset
  std::vector<uint32_t> reset_count_;                       // [env]
  std::vector<uint64_t> env_steps_;                         // [env]: steps since creation (random keys)
  std::vector<uint64_t> env_steps_since_reset_;             // [env]: steps since the last reset
  int64_t step_count_ = 0;
  bool needs_velocity_ = false;  // some sensor or the contact model reads link velocities
  // Scratch reused across steps (not state), counted in memory_bytes().
  std::vector<RigidTransform> decoded_;
  // Per executor worker (the `worker` of ParallelFor): the kernels' workspace and the broad
  // phase's lists. No scratch lives in thread_local storage.
  struct WorkerScratch {
    Workspace ws;
    std::vector<sensors::ProbeCandidate> candidates, gel;
    std::vector<sensors::TrackedLinkInEnv> tracked;
    size_t capacity_bytes() const;
  };
  WorkerScratch& worker_scratch(int worker) { return *workers_[static_cast<size_t>(worker)]; }
  void ReserveWorkers(const Executor& executor);
  std::vector<std::unique_ptr<WorkerScratch>> workers_;
};

}  // namespace taxel::scene

#endif  // TAXEL_CORE_SCENE_SCENE_H_
