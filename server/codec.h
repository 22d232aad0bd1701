// All conversion between the wire (taxel.v1 protos) and the core types. Validation of wire-level
// structure (dtypes, shapes, byte lengths, enums) happens here; semantic validation stays in core.
// Error messages name the field path relative to the request message being decoded.
#ifndef TAXEL_SERVER_CODEC_H_
#define TAXEL_SERVER_CODEC_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/common/pose.h"
#include "core/geometry/mesh_sdf_grid.h"
#include "core/scene/scene.h"
#include "core/scene/scene_spec.h"
#include "core/sensors/sensor.h"
#include "taxel/v1/service.pb.h"

namespace taxel::server {

// ------------------------------------------------------------------------------------------
// Tensors

/// A validated view of a wire tensor (no copy).
struct TensorView {
  v1::DType dtype = v1::DTYPE_UNSPECIFIED;
  std::vector<int64_t> shape;
  int64_t num_elements = 1;
  absl::string_view bytes;
};

/// Bytes per element of a dtype (0 for UNSPECIFIED).
size_t DTypeSize(v1::DType dtype);
/// "[1024, 6, 7]".
std::string ShapeString(absl::Span<const int64_t> shape);

/// Checks dtype, shape (non-negative, no overflow) and that the data holds exactly
/// prod(shape)·itemsize bytes. Errors: INVALID_ARGUMENT naming `field`.
absl::StatusOr<TensorView> ViewTensor(const v1::Tensor& tensor, absl::string_view field);

/// A real array (FLOAT32 or FLOAT64) as doubles. For an aligned FLOAT64 tensor the returned span
/// points into the tensor's bytes (zero copy) and `storage` is untouched; otherwise the values
/// are converted into `storage`.
absl::StatusOr<absl::Span<const double>> RealValues(const TensorView& view, absl::string_view field,
                                                    std::vector<double>* storage);

/// Fills a wire tensor; `data` holds prod(shape) elements of dtype.
void EncodeTensor(v1::DType dtype, absl::Span<const int64_t> shape, const void* data, size_t bytes, v1::Tensor* out);
/// Convenience for tests and clients: a FLOAT64 tensor from values.
void EncodeDoubles(absl::Span<const int64_t> shape, absl::Span<const double> values, v1::Tensor* out);

// ------------------------------------------------------------------------------------------
// Poses and specs

QuatOrder FromProto(v1::QuatOrder order);
v1::QuatOrder ToProto(QuatOrder order);

/// An absent pose is the identity; see taxel.v1.Pose.
absl::StatusOr<RigidTransform> DecodePose(const v1::Pose& pose, absl::string_view field);
void EncodePose(const RigidTransform& X, v1::Pose* out);

/// Field paths relative to the SceneSpec message ("entities[0].links[1].shapes[0].sphere.radius").
absl::StatusOr<scene::SceneSpec> DecodeSceneSpec(const v1::SceneSpec& spec);
absl::StatusOr<sensors::SensorSpec> DecodeSensorSpec(const v1::SensorSpec& spec, absl::string_view field);

/// The inverse (mesh ids are passed through): used by the tests and fuzzers that build core specs
/// and send them as requests, and to check that a decoded spec survives a round trip.
void EncodeSceneSpec(const scene::SceneSpec& spec, v1::SceneSpec* out);
/// The wire values of the core's entity and sensor kinds and SDF backends.
v1::EntityKind EncodeEntityKind(scene::EntityKind kind);
v1::SensorKind EncodeSensorKind(sensors::SensorKind kind);
v1::SdfBackend EncodeSdfBackend(geometry::SdfBackend backend);
void EncodeSensorSpec(const sensors::SensorSpec& spec, v1::SensorSpec* out);

// ------------------------------------------------------------------------------------------
// Mesh uploads and sensor updates

/// The arrays of an UploadMeshRequest, before TriangleMesh::Create validates them.
struct DecodedMesh {
  std::vector<Eigen::Vector3d> vertices;         ///< mesh frame, metres
  std::vector<geometry::Triangle> triangles;     ///< vertex indices (range-checked by TriangleMesh::Create)
  std::optional<geometry::SdfGridOptions> grid;  ///< build the narrow-band grid now (request.grid set)
};
/// Checks dtypes and shapes (INVALID_ARGUMENT naming vertices/triangles) and the triangle count
/// (RESOURCE_EXHAUSTED above `max_triangles`) before copying anything; the grid options
/// (INVALID_ARGUMENT naming grid.max_error / grid.band unless finite and ≥ 0; 0 = default).
absl::StatusOr<DecodedMesh> DecodeMeshUpload(const v1::UploadMeshRequest& request, int64_t max_triangles);

/// A validated UpdateSensorRequest: what ApplySensorUpdate will set. Holds pointers into `scene`.
struct SensorUpdate {
  sensors::Sensor* sensor = nullptr;
  sensors::MeasuredPipeline* pipeline = nullptr;
  std::vector<int32_t> env_ids;  ///< resolved (all envs when the request names none)
  std::vector<double> gains;     ///< empty: gains unchanged; else n or len(env_ids)·n values
  bool gains_per_env = false;
  double noise = 0, random_walk = 0, bias = 0;  ///< the new levels (the configured ones where not given)
};
/// NOT_FOUND (sensor), FAILED_PRECONDITION (no imperfections), OUT_OF_RANGE (env ids) or
/// INVALID_ARGUMENT naming the field; changes nothing.
absl::StatusOr<SensorUpdate> DecodeSensorUpdate(const v1::UpdateSensorRequest& request, scene::Scene& scene);
/// Sets what `update` holds; cannot fail.
void ApplySensorUpdate(const SensorUpdate& update);

// ------------------------------------------------------------------------------------------
// Scene info

void EncodeSensorInfo(const scene::Scene& scene, const sensors::Sensor& sensor, v1::SensorInfo* out);
/// What a built grid measured (UploadMeshResponse.grid).
void EncodeGridInfo(const geometry::SdfGridStats& stats, v1::MeshGridInfo* out);
void EncodeSceneInfo(const scene::Scene& scene, v1::SceneInfo* out);

// ------------------------------------------------------------------------------------------
// Steps and readings

/// A decoded step: the core input plus the storage its spans may point into.
struct DecodedStep {
  std::vector<int32_t> env_ids;
  std::vector<double> pose_storage, twist_storage;
  std::vector<int32_t> contact_env, contact_body, contact_partner;
  std::vector<double> contact_force_storage, contact_friction_storage;
  scene::StepInput input;
};

/// Decodes poses/twists/env_ids/dt/quat_order with shape checks against the scene ("poses:
/// expected shape [1024, 6, 7], got [1024, 5, 7]"). `request` must outlive `out` (zero-copy).
absl::Status DecodeStep(const v1::StepRequest& request, const scene::Scene& scene, DecodedStep* out);

/// What a read returns: the sensors, channels and branches, resolved and validated.
struct ReadPlan {
  struct Item {
    const sensors::Sensor* sensor;
    std::vector<sensors::Channel> channels;
  };
  std::vector<Item> items;
  std::vector<sensors::Branch> branches;
  bool sparse = false;     // ReadSpec.sparse: tensors in their nonzero-mask form
  bool gradients = false;  // ReadSpec.gradients: the readings' gradients ride with them
};

/// Errors: NOT_FOUND for an unknown sensor name, INVALID_ARGUMENT for an unknown channel name or
/// branch, naming `field` ("read.sensors[1]"), and for gradients a planned sensor cannot carry
/// (ReadSpec.gradients: its kind has none, its gradient's channel is not read, or it has
/// imperfections and GROUND_TRUTH is not read).
absl::StatusOr<ReadPlan> PlanRead(const v1::ReadSpec& read, const scene::Scene& scene, absl::string_view field);

/// Upper estimate of the bytes a response carrying the readings of `plan` for `num_envs` envs
/// takes on the wire (tensor data, per-tensor and per-reading framing, the env id list), so that
/// a read that cannot fit the message limit is refused before any work is done.
int64_t EstimateResponseBytes(const ReadPlan& plan, int64_t num_envs);
/// Upper estimate of the bytes the whole contact matrix of `num_envs` envs takes in a response
/// (normal and, when kept, friction, with the row and column names); 0 without a matrix.
int64_t EstimateContactMatrixBytes(const scene::Scene& scene, int64_t num_envs);

/// INVALID_ARGUMENT naming the field ("spec.sensors[0].kinematic_taxel.force_law: 5 is not a
/// value of taxel.v1.ForceLaw") when any enum field of `message`, at any depth, holds a number
/// its enum does not declare (proto3 keeps such numbers rather than rejecting them).
absl::Status CheckEnumValues(const google::protobuf::Message& message);

/// One output channel of a sensor as a reading carries it: the core array of all envs (env-major,
/// `bytes_per_env` bytes each) and the wire dtype. The tensor's shape is [len(envs)] followed by
/// `probe_shape` (the layout, then 3 for vector channels).
struct ChannelArray {
  v1::DType dtype = v1::DTYPE_UNSPECIFIED;
  std::vector<int64_t> probe_shape;
  const char* data = nullptr;  // env e's block at data + e·bytes_per_env; null when copy_env gives it
  /// When set, copies env e's block (bytes_per_env bytes) to dst: for readings not kept in one
  /// contiguous array (a measured force or torque still in the delay ring, Sensor::CopyMeasured).
  std::function<void(int32_t env, char* dst)> copy_env;
  size_t bytes_per_env = 0;
  size_t item_size = 4;    // bytes per element
  absl::string_view name;  // the reading's channel name; empty: ChannelName(channel)
};
ChannelArray ChannelOutput(const sensors::Sensor& sensor, sensors::Branch branch, sensors::Channel channel);
/// The gradient of `channel` (sensors::GradientChannelOf) of the ground truth, named
/// GradientName(channel): probe_shape is the layout, then 3 for a force, then 2, 6.
/// @pre the sensor's gradients are enabled.
ChannelArray GradientOutput(const sensors::Sensor& sensor, sensors::Channel channel);

/// Copies the blocks of `envs` (in that order) of `array` to `dst`, which holds
/// len(envs)·bytes_per_env bytes: one memcpy when `envs` is 0, 1, ..., num_envs − 1 (and the
/// array is contiguous), else one copy per env.
void GatherEnvs(const ChannelArray& array, absl::Span<const int32_t> envs, int num_envs, char* dst);
/// True when `envs` is 0, 1, ..., num_envs − 1 (the env blocks are one contiguous run).
bool IsAllEnvsInOrder(absl::Span<const int32_t> envs, int num_envs);

/// One SensorReading of a response: its sensor and branch, and the array behind each channel
/// (written by ReadingsWireWriter, server/step_wire.h).
struct ReadingArrays {
  const sensors::Sensor* sensor = nullptr;
  v1::Branch branch = v1::BRANCH_UNSPECIFIED;
  std::vector<std::pair<sensors::Channel, ChannelArray>> channels;
};
/// The current readings of `plan`: one per (sensor, branch) in plan order, with the planned
/// channels, reading the sensors' output arrays (no copy).
std::vector<ReadingArrays> PlannedReadings(const ReadPlan& plan);

/// A slice of the scene's contact matrix: `envs` in that order, rows/columns by name (empty = all,
/// in canonical order), with the friction matrix and the gradient when asked. FAILED_PRECONDITION
/// when the scene has none (or does not keep the friction or gradient asked for), INVALID_ARGUMENT
/// naming rows[i]/columns[i] for unknown names.
absl::Status EncodeContactMatrix(const scene::Scene& scene, absl::Span<const int32_t> envs,
                                 const google::protobuf::RepeatedPtrField<std::string>& rows,
                                 const google::protobuf::RepeatedPtrField<std::string>& columns, bool friction,
                                 bool gradients, v1::GetContactMatrixResponse* out);

/// History reads: INVALID_ARGUMENT (naming `field`) when a planned sensor keeps fewer samples.
absl::Status CheckHistory(const ReadPlan& plan, int history, absl::string_view field);
/// History reads: one MEASURED reading per planned sensor with the planned channels it keeps a
/// history of, shaped [len(envs), history, <layout>, <channel>], index 0 the newest. The samples
/// are copied into `storage` (one FLOAT32 array per channel, the blocks of `envs` in that order),
/// so the arrays' env axis is the position in `envs`: write them with envs 0..len(envs)−1.
std::vector<ReadingArrays> HistoryReadings(const ReadPlan& plan, int history, absl::Span<const int32_t> envs,
                                           std::vector<std::vector<float>>* storage);

}  // namespace taxel::server

#endif  // TAXEL_SERVER_CODEC_H_
