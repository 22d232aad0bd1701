#include "core/geometry/mesh_sdf_grid_cost.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/common/field_error.h"

namespace taxel::geometry {
namespace {

constexpr double kSqrt3 = 1.7320508075688772;
constexpr double kPi = 3.14159265358979323846;

}  // namespace

SdfGridFeatureStrides FeatureStrides(const TriangleMesh& mesh, int features) {
  const int n = std::max(1, features);
  return {std::max(1, mesh.num_vertices() / n), std::max(1, 3 * mesh.num_triangles() / 2 / n)};
}

int64_t SdfGridSampleCount(const TriangleMesh& mesh, const SdfGridSampling& sampling) {
  const SdfGridFeatureStrides stride = FeatureStrides(mesh, sampling.features);
  int64_t features = (mesh.num_vertices() + stride.vertex - 1) / stride.vertex;
  for (int t = 0; t < mesh.num_triangles(); t += stride.triangle) {
    const Triangle& tri = mesh.triangle(t);
    for (int k = 0; k < 3; ++k) features += tri[k] < tri[(k + 1) % 3] ? 1 : 0;
  }
  return sampling.random + 2 * features;
}

double SdfGridStartCell(const TriangleMesh& mesh, double band) {
  const double extent = (mesh.bounds().hi - mesh.bounds().lo).maxCoeff();
  return std::min(band / 2, std::max(extent, band) / 4);
}

double SdfGridCoarsestCell(const TriangleMesh& mesh, const SdfGridOptions& options) {
  const double rho = 0.5 * (mesh.bounds().hi - mesh.bounds().lo).norm();
  return std::min(SdfGridStartCell(mesh, options.band), 3 * std::sqrt(options.max_error * (rho + options.band)));
}

SdfGridBricks EstimateSdfGridBricks(const TriangleMesh& mesh, double band, double h) {
  const Aabb& b = mesh.bounds();
  const double brick = MeshSdfGrid::kBrickCells * h;
  SdfGridBricks out;
  out.lattice = 1;
  for (int a = 0; a < 3; ++a) {
    const double cells = std::ceil((b.hi[a] - b.lo[a] + 2 * (band + 2 * h)) / h);
    out.lattice *= std::ceil(cells / MeshSdfGrid::kBrickCells);
  }
  const double r = band + kSqrt3 * brick, d = (b.hi - b.lo).norm();
  const double volume = 2 * r * mesh.total_area() + 2 * kPi * d * r * r + (8 * kPi / 3) * r * r * r;
  const double brick_volume = brick * brick * brick;
  out.kept = std::min(out.lattice, std::ceil(volume / brick_volume));
  out.kept_least = std::clamp(std::floor(band * mesh.total_area() / brick_volume), 1.0, out.lattice);
  return out;
}

double SdfGridFillQueries(const TriangleMesh& mesh, double band, double h) {
  return (1.0 + MeshSdfGrid::kBrickValues) * EstimateSdfGridBricks(mesh, band, h).kept_least;
}

double SdfGridLeastQueries(const TriangleMesh& mesh, const SdfGridOptions& options) {
  const double search = static_cast<double>(SdfGridSampleCount(mesh, kSdfGridSearchSampling));
  const double check = static_cast<double>(SdfGridSampleCount(mesh, kSdfGridCheckSampling));
  return search + check + SdfGridFillQueries(mesh, options.band, SdfGridCoarsestCell(mesh, options));
}

absl::Status SdfGridQueryMeter::Charge(double queries, double still_needed, absl::string_view what) {
  const double needed = spent_ + queries + still_needed;
  if (needed > limit_) {
    return FieldError(absl::StatusCode::kResourceExhausted, field_,
                      absl::StrFormat("%s needs %.3g exact distance queries to build, over the limit of %.3g per "
                                      "grid build; ask for a larger error or a narrower band",
                                      what, needed, limit_));
  }
  spent_ += queries;
  return absl::OkStatus();
}

std::string DescribeSdfGrid(double h, double band) {
  return absl::StrFormat("a signed-distance grid of cell %.3g m over a %.3g m band", h, band);
}

}  // namespace taxel::geometry
