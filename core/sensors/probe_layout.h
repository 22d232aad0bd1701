// Probe layouts shared by every sensor kind: where the probes sit on their link, how big they are.
#ifndef TAXEL_CORE_SENSORS_PROBE_LAYOUT_H_
#define TAXEL_CORE_SENSORS_PROBE_LAYOUT_H_

#include <vector>

#include "Eigen/Core"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/geometry/aabb.h"

namespace taxel::sensors {

/// A validated probe layout in the sensor link's frame L.
///
/// Probes are a flat list of n points p_LP, or a regular grid of rows × cols points flattened
/// row-major (probe k = row·cols + col). Each probe has a radius (metres); a radius of exactly 0
/// marks a filler: it is skipped and always reads 0 (lets a grid have holes). Normals (unit, in
/// L) are optional for the SDF-query sensors and used by ElastomerTaxel / ProximityTaxel.
class ProbeLayout {
 public:
  /// Builds a layout. `radii` holds 1 value (shared) or n; `normals` 0, 1 (shared) or n (they are
  /// normalised). A grid is declared with rows·cols == n (rows, cols > 0); rows = cols = 0 is a
  /// flat list. Errors (INVALID_ARGUMENT, naming `field`.probe_local_pos / .probe_radius /
  /// .probe_local_normal and the index): no probes, non-finite coordinate, radius negative or
  /// non-finite, wrong count of radii or normals, zero-length normal, rows·cols ≠ n.
  static absl::StatusOr<ProbeLayout> Create(std::vector<Eigen::Vector3d> positions, std::vector<double> radii,
                                            std::vector<Eigen::Vector3d> normals, int rows, int cols,
                                            absl::string_view field = "sensor");

  int size() const { return static_cast<int>(positions_.size()); }
  bool is_grid() const { return rows_ > 0; }
  /// The probe axes of a reading: {rows, cols} for a grid, {size} for a flat layout.
  std::vector<int64_t> shape() const {
    return is_grid() ? std::vector<int64_t>{rows_, cols_} : std::vector<int64_t>{size()};
  }
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  const std::vector<Eigen::Vector3d>& positions() const { return positions_; }
  const Eigen::Vector3d& position(int k) const { return positions_[k]; }
  double radius(int k) const { return radii_[k]; }
  double max_radius() const { return max_radius_; }
  bool has_normals() const { return !normals_.empty(); }
  /// Unit normal of probe k in L (the shared one if a single normal was given; +z if none).
  Eigen::Vector3d normal(int k) const {
    if (normals_.empty()) return Eigen::Vector3d::UnitZ();
    return normals_.size() == 1 ? normals_[0] : normals_[k];
  }
  /// Bounds of the probe spheres in L (probe centres inflated by max_radius()).
  const geometry::Aabb& local_bounds() const { return bounds_; }
  /// Number of probes with radius > 0.
  int num_active() const { return num_active_; }

  /// An empty layout (no probes); use Create() for a real one.
  ProbeLayout() = default;

 private:
  std::vector<Eigen::Vector3d> positions_;
  std::vector<double> radii_;
  std::vector<Eigen::Vector3d> normals_;
  int rows_ = 0, cols_ = 0;
  double max_radius_ = 0;
  int num_active_ = 0;
  geometry::Aabb bounds_;
};

/// A ny × nx grid of points on the plane through lo and hi with the given normal, returned
/// row-major (point (i, j) at index i·nx + j), matching the (ny, nx, 3) layout of Genesis'
/// `generate_grid_points_on_plane`.
///
/// Tangent basis: Gram–Schmidt of the two world axes least aligned with the normal, taken in
/// x, y, z order — for an axis-aligned normal simply the two other axes in increasing order
/// (normal ±z: u = x, v = y; ±y: u = x, v = z; ±x: u = y, v = z), whatever the normal's sign.
/// Point (i, j) = c·n̂ + u·lerp(lo·u, hi·u, j/(nx−1)) + v·lerp(lo·v, hi·v, i/(ny−1)) with
/// c = ½(lo + hi)·n̂ (a single row or column sits at lo). Errors: nx or ny < 1, zero or
/// non-finite normal, non-finite lo/hi.
absl::StatusOr<std::vector<Eigen::Vector3d>> GridPointsOnPlane(const Eigen::Vector3d& lo, const Eigen::Vector3d& hi,
                                                               const Eigen::Vector3d& normal, int nx, int ny);

/// Steps of a regular probe grid: probe (i, j) = p00 + j·col_step + i·row_step.
struct GridGeometry {
  Eigen::Vector3d col_step = Eigen::Vector3d::Zero();
  Eigen::Vector3d row_step = Eigen::Vector3d::Zero();
};

/// The grid's steps, or INVALID_ARGUMENT (naming `field`; the message says what needs the grid,
/// `purpose`, e.g. "crosstalk") when the layout is not a grid or a probe is more than `tolerance`
/// (m) off the regular lattice.
absl::StatusOr<GridGeometry> RegularGrid(const ProbeLayout& layout, absl::string_view field, double tolerance = 1e-5,
                                         absl::string_view purpose = "crosstalk");

}  // namespace taxel::sensors

#endif  // TAXEL_CORE_SENSORS_PROBE_LAYOUT_H_
