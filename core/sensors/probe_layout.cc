#include "core/sensors/probe_layout.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/common/field_error.h"

namespace taxel::sensors {

absl::StatusOr<ProbeLayout> ProbeLayout::Create(std::vector<Eigen::Vector3d> positions, std::vector<double> radii,
                                                std::vector<Eigen::Vector3d> normals, int rows, int cols,
                                                absl::string_view field) {
  const size_t n = positions.size();
  if (n == 0) {
    return InvalidFieldError(absl::StrCat(field, ".probe_local_pos"), "expected at least one probe");
  }
  for (size_t k = 0; k < n; ++k) {
    if (!positions[k].allFinite()) {
      return InvalidFieldError(absl::StrCat(field, ".probe_local_pos[", k, "]"), "expected finite coordinates");
    }
  }
  if (rows != 0 || cols != 0) {
    if (rows <= 0 || cols <= 0 || static_cast<size_t>(rows) * static_cast<size_t>(cols) != n) {
      return InvalidFieldError(absl::StrCat(field, ".probe_local_pos"),
                               absl::StrCat("grid ", rows, "x", cols, " does not match ", n, " probes"));
    }
  }
  if (radii.size() != 1 && radii.size() != n) {
    return InvalidFieldError(absl::StrCat(field, ".probe_radius"),
                             absl::StrCat("expected 1 or ", n, " values, got ", radii.size()));
  }
  for (size_t k = 0; k < radii.size(); ++k) {
    if (!(radii[k] >= 0) || !std::isfinite(radii[k])) {
      return InvalidFieldError(absl::StrCat(field, ".probe_radius[", k, "]"),
                               absl::StrCat("expected a finite value >= 0, got ", radii[k]));
    }
  }
  if (normals.size() > 1 && normals.size() != n) {
    return InvalidFieldError(absl::StrCat(field, ".probe_local_normal"),
                             absl::StrCat("expected 0, 1 or ", n, " normals, got ", normals.size()));
  }
  for (size_t k = 0; k < normals.size(); ++k) {
    const double len = normals[k].norm();
    if (!std::isfinite(len) || len < 1e-12) {
      return InvalidFieldError(absl::StrCat(field, ".probe_local_normal[", k, "]"),
                               "expected a finite, non-zero vector");
    }
    normals[k] /= len;
  }
  ProbeLayout layout;
  if (radii.size() == 1) radii.assign(n, radii[0]);
  layout.positions_ = std::move(positions);
  layout.radii_ = std::move(radii);
  layout.normals_ = std::move(normals);
  layout.rows_ = rows;
  layout.cols_ = cols;
  layout.max_radius_ = *std::max_element(layout.radii_.begin(), layout.radii_.end());
  layout.num_active_ =
      static_cast<int>(std::count_if(layout.radii_.begin(), layout.radii_.end(), [](double r) { return r > 0; }));
  for (const auto& p : layout.positions_) layout.bounds_.Extend(p);
  layout.bounds_ = layout.bounds_.Inflated(layout.max_radius_);
  return layout;
}

absl::StatusOr<std::vector<Eigen::Vector3d>> GridPointsOnPlane(const Eigen::Vector3d& lo, const Eigen::Vector3d& hi,
                                                               const Eigen::Vector3d& normal, int nx, int ny) {
  if (nx < 1 || ny < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("grid_points_on_plane: nx and ny must be >= 1, got nx=", nx, " ny=", ny));
  }
  if (!lo.allFinite() || !hi.allFinite()) {
    return absl::InvalidArgumentError("grid_points_on_plane: lo and hi must be finite");
  }
  const double len = normal.norm();
  if (!std::isfinite(len) || len < 1e-12) {
    return absl::InvalidArgumentError("grid_points_on_plane: normal must be a finite, non-zero vector");
  }
  const Eigen::Vector3d n = normal / len;
  // The most aligned axis is dropped; the other two, in order, are orthonormalised against n.
  int drop = 0;
  for (int a = 1; a < 3; ++a) {
    if (std::abs(n[a]) > std::abs(n[drop])) drop = a;
  }
  Eigen::Vector3d axes[2];
  int m = 0;
  for (int a = 0; a < 3; ++a) {
    if (a != drop) axes[m++] = Eigen::Vector3d::Unit(a);
  }
  Eigen::Vector3d u = axes[0] - axes[0].dot(n) * n;
  u.normalize();
  Eigen::Vector3d v = axes[1] - axes[1].dot(n) * n - axes[1].dot(u) * u;
  v.normalize();
  const double c = 0.5 * (lo + hi).dot(n);
  const double u0 = lo.dot(u), u1 = hi.dot(u), v0 = lo.dot(v), v1 = hi.dot(v);
  std::vector<Eigen::Vector3d> points;
  points.reserve(static_cast<size_t>(nx) * ny);
  for (int i = 0; i < ny; ++i) {
    const double tv = ny > 1 ? static_cast<double>(i) / (ny - 1) : 0.0;
    for (int j = 0; j < nx; ++j) {
      const double tu = nx > 1 ? static_cast<double>(j) / (nx - 1) : 0.0;
      points.push_back(c * n + (u0 + tu * (u1 - u0)) * u + (v0 + tv * (v1 - v0)) * v);
    }
  }
  return points;
}

absl::StatusOr<GridGeometry> RegularGrid(const ProbeLayout& layout, absl::string_view field, double tolerance,
                                         absl::string_view purpose) {
  if (!layout.is_grid()) {
    return InvalidFieldError(
        field,
        absl::StrCat(purpose, " needs a grid layout (probe_local_pos of shape [rows, cols, 3]), got a flat list"));
  }
  const int rows = layout.rows(), cols = layout.cols();
  GridGeometry g;
  const Eigen::Vector3d& p00 = layout.position(0);
  if (cols > 1) g.col_step = layout.position(1) - p00;
  if (rows > 1) g.row_step = layout.position(cols) - p00;
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      const Eigen::Vector3d expected = p00 + j * g.col_step + i * g.row_step;
      if ((layout.position(i * cols + j) - expected).norm() > tolerance) {
        return InvalidFieldError(field, absl::StrCat(purpose, " needs a regular grid; probe [", i, ", ", j, "] is ",
                                                     (layout.position(i * cols + j) - expected).norm(),
                                                     " m off the lattice (tolerance ", tolerance, " m)"));
      }
    }
  }
  return g;
}

}  // namespace taxel::sensors
