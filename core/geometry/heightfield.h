// Heightfield terrain: exact signed distance to a triangulated height grid.
#ifndef TAXEL_CORE_GEOMETRY_HEIGHTFIELD_H_
#define TAXEL_CORE_GEOMETRY_HEIGHTFIELD_H_

#include <limits>
#include <memory>
#include <vector>

#include "Eigen/Core"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/geometry/aabb.h"
#include "core/geometry/signed_distance_result.h"

namespace taxel::geometry {

/// A height grid in its frame S (metres), centred like MuJoCo's hfield:
///
///   sample (i, j), i ∈ [0, rows) along y, j ∈ [0, cols) along x, stored row-major, sits at
///   x_j = (j − (cols − 1)/2)·dx,  y_i = (i − (rows − 1)/2)·dy,  z = heights[i·cols + j].
///
/// Interpolation: each cell is split into two triangles along the diagonal from sample (i, j) to
/// sample (i+1, j+1) — [(i,j), (i,j+1), (i+1,j+1)] and [(i,j), (i+1,j+1), (i+1,j)] — so the
/// surface is piecewise linear and continuous (the same surface MuJoCo and Bullet collide with).
///
/// Solid: every point whose (x, y) lies in the footprint [x_0, x_{cols−1}] × [y_0, y_{rows−1}] and
/// whose z is at or below the surface; it extends down to z = −∞. Its boundary is the top surface
/// plus four vertical side walls, so points beside the footprint have exact (positive) distances
/// too. Triangle index of cell (i, j): 2·(i·(cols−1) + j) + {0, 1} for the two halves above.
class Heightfield {
 public:
  /// Errors (INVALID_ARGUMENT, prefixed by `field`): rows or cols < 2, dx or dy not > 0,
  /// heights.size() != rows·cols, a non-finite height.
  static absl::StatusOr<std::shared_ptr<const Heightfield>> Create(int rows, int cols, double dx, double dy,
                                                                   std::vector<double> heights,
                                                                   absl::string_view field = "heightfield");

  /// Signed distance at p_SQ with the bounded semantics of SignedDistanceResult. Cost is
  /// proportional to the cells within min(max_distance, an upper bound on |sd|) of Q.
  SignedDistanceResult Query(const Eigen::Vector3d& p_SQ,
                             double max_distance = std::numeric_limits<double>::infinity()) const;

  /// Surface height at (x, y) inside the footprint (clamped to it outside), by the triangulation.
  double HeightAt(double x, double y) const;

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  double dx() const { return dx_; }
  double dy() const { return dy_; }
  double height(int i, int j) const { return heights_[static_cast<size_t>(i) * cols_ + j]; }
  /// Bounds of the solid: lo.z = −∞.
  const Aabb& bounds() const { return bounds_; }
  size_t memory_bytes() const { return sizeof(*this) + heights_.capacity() * sizeof(double) * 2; }

 private:
  Heightfield() = default;
  Eigen::Vector3d Sample(int i, int j) const { return {x0_ + j * dx_, y0_ + i * dy_, height(i, j)}; }

  int rows_ = 0, cols_ = 0;
  double dx_ = 0, dy_ = 0, x0_ = 0, y0_ = 0;
  std::vector<double> heights_;
  std::vector<double> cell_min_, cell_max_;  // per cell height range, for pruning
  Aabb bounds_;
};

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_HEIGHTFIELD_H_
