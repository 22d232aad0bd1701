// Requests that change stored state outside a step: mesh uploads and run-time sensor updates.
#include <cmath>
#include <cstring>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "core/common/field_error.h"
#include "core/common/status_macros.h"
#include "server/codec.h"

namespace taxel::server {

absl::StatusOr<DecodedMesh> DecodeMeshUpload(const v1::UploadMeshRequest& request, int64_t max_triangles) {
  TAXEL_ASSIGN_OR_RETURN(TensorView v, ViewTensor(request.vertices(), "vertices"));
  if (v.shape.size() != 2 || v.shape[1] != 3) {
    return InvalidFieldError("vertices", absl::StrCat("expected shape [V, 3], got ", ShapeString(v.shape)));
  }
  TAXEL_ASSIGN_OR_RETURN(TensorView t, ViewTensor(request.triangles(), "triangles"));
  if (t.shape.size() != 2 || t.shape[1] != 3 || t.dtype != v1::INT32) {
    return InvalidFieldError("triangles", absl::StrCat("expected INT32 of shape [T, 3], got ", v1::DType_Name(t.dtype),
                                                       " ", ShapeString(t.shape)));
  }
  if (t.shape[0] > max_triangles) {
    return FieldError(absl::StatusCode::kResourceExhausted, "triangles",
                      absl::StrCat(t.shape[0], " triangles exceed the limit of ", max_triangles));
  }
  std::vector<double> storage;
  TAXEL_ASSIGN_OR_RETURN(absl::Span<const double> xyz, RealValues(v, "vertices", &storage));
  DecodedMesh out;
  out.vertices.resize(static_cast<size_t>(v.shape[0]));
  for (size_t i = 0; i < out.vertices.size(); ++i) {
    out.vertices[i] = Eigen::Vector3d(xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]);
  }
  out.triangles.resize(static_cast<size_t>(t.shape[0]));
  if (!t.bytes.empty()) std::memcpy(out.triangles.data(), t.bytes.data(), t.bytes.size());
  if (request.has_grid()) {
    // The one check of grid options (MeshSdfGrid::Build takes them as a precondition).
    geometry::SdfGridOptions g;
    const double max_error = request.grid().max_error(), band = request.grid().band();
    if (!(max_error >= 0) || !std::isfinite(max_error)) {
      return InvalidFieldError("grid.max_error", absl::StrCat("expected a finite error >= 0 (m; 0 = default ",
                                                              g.max_error, "), got ", max_error));
    }
    if (!(band >= 0) || !std::isfinite(band)) {
      return InvalidFieldError("grid.band",
                               absl::StrCat("expected a finite band >= 0 (m; 0 = default ", g.band, "), got ", band));
    }
    if (max_error > 0) g.max_error = max_error;
    if (band > 0) g.band = band;
    out.grid = g;
  }
  return out;
}

void EncodeGridInfo(const geometry::SdfGridStats& s, v1::MeshGridInfo* out) {
  out->set_requested_max_error(s.requested_max_error);
  out->set_max_error(s.max_error);
  out->set_p99_error(s.p99_error);
  out->set_cell_size(s.cell_size);
  out->set_band(s.band);
  out->set_bytes(static_cast<int64_t>(s.bytes));
  out->set_num_check_points(s.num_check_points);
  out->set_num_bricks(s.num_bricks);
}

absl::StatusOr<SensorUpdate> DecodeSensorUpdate(const v1::UpdateSensorRequest& request, scene::Scene& scene) {
  SensorUpdate u;
  u.sensor = scene.FindMutableSensor(request.sensor());
  if (u.sensor == nullptr) {
    return FieldError(absl::StatusCode::kNotFound, "sensor", absl::StrCat("no sensor named '", request.sensor(), "'"));
  }
  u.pipeline = u.sensor->pipeline();
  if (u.pipeline == nullptr) {
    return FieldError(absl::StatusCode::kFailedPrecondition, "sensor",
                      absl::StrCat("'", request.sensor(),
                                   "' has no imperfections; configure them when adding it (e.g. a probe_gain)"));
  }
  const std::vector<int32_t> requested(request.env_ids().begin(), request.env_ids().end());
  TAXEL_ASSIGN_OR_RETURN(u.env_ids, scene.ResolveEnvIds(requested));
  const int64_t n = u.sensor->num_probes();
  if (request.has_probe_gain()) {
    TAXEL_ASSIGN_OR_RETURN(TensorView view, ViewTensor(request.probe_gain(), "probe_gain"));
    const int64_t ne = static_cast<int64_t>(u.env_ids.size());
    if (view.num_elements == n) {
      u.gains_per_env = false;
    } else if (view.num_elements == ne * n && !view.shape.empty() && view.shape[0] == ne) {
      u.gains_per_env = true;
    } else {
      return InvalidFieldError("probe_gain", absl::StrCat("expected ", n, " values (one per probe) or [", ne, ", ", n,
                                                          "], got ", ShapeString(view.shape)));
    }
    std::vector<double> storage;
    TAXEL_ASSIGN_OR_RETURN(absl::Span<const double> values, RealValues(view, "probe_gain", &storage));
    for (double g : values) {
      if (!std::isfinite(g)) return InvalidFieldError("probe_gain", "expected finite values");
    }
    u.gains.assign(values.begin(), values.end());
  }
  for (const auto& [name, has, value] :
       {std::make_tuple("noise", request.has_noise(), request.noise()),
        std::make_tuple("random_walk", request.has_random_walk(), request.random_walk())}) {
    if (has && !(value >= 0 && std::isfinite(value))) {
      return InvalidFieldError(name, absl::StrCat("expected a finite value >= 0, got ", value));
    }
  }
  if (request.has_bias() && !std::isfinite(request.bias())) {
    return InvalidFieldError("bias", "expected a finite value");
  }
  const sensors::ImperfectionSpec& spec = u.pipeline->spec();
  u.noise = request.has_noise() ? request.noise() : spec.noise;
  u.random_walk = request.has_random_walk() ? request.random_walk() : spec.random_walk;
  u.bias = request.has_bias() ? request.bias() : spec.bias;
  return u;
}

void ApplySensorUpdate(const SensorUpdate& update) {
  const int64_t n = update.sensor->num_probes();
  if (!update.gains.empty()) {
    for (size_t i = 0; i < update.env_ids.size(); ++i) {
      update.pipeline->SetGains(update.env_ids[i], &update.gains[update.gains_per_env ? i * n : 0]);
    }
  }
  update.pipeline->SetNoise(update.noise, update.random_walk, update.bias);
}

}  // namespace taxel::server
