// What a narrow-band grid build (mesh_sdf_grid.h) costs, known before it is made: the cell sizes
// a requested error allows, the nodes of a grid of a given cell size, and the exact signed-distance
// queries (MeshSignedDistance::Query or ClosestPoint, "queries") of the whole build — the unit its
// work is bounded in.
//
// Queries of one build (Q_s, Q_c: points of the search and check sets, SdfGridSampleCount):
//
// | stage                                   | queries                                         |
// |-----------------------------------------|-------------------------------------------------|
// | the search set                          | Q_s                                             |
// | each step of the cell-size search       | 8 Q_s (the eight corners of every point's cell) |
// | the check set                           | Q_c                                             |
// | each (re)build at cell h                | 1 per marked brick + 729 per kept brick         |
// | each measure of the built grid          | none (band points interpolate)                  |
//
// The cell size is known only once the search has run, so the build is bounded in two ways: before
// any work, by the least any build for the request can cost (SdfGridLeastQueries, at the coarsest
// cell the error allows); during it, by a SdfGridQueryMeter that refuses each stage before it runs
// when it, with the least of what must follow, would pass the limit. Either way the refusal comes
// before the queries it refuses, and the build never makes more than the limit.
#ifndef TAXEL_CORE_GEOMETRY_MESH_SDF_GRID_COST_H_
#define TAXEL_CORE_GEOMETRY_MESH_SDF_GRID_COST_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/geometry/mesh_sdf_grid.h"
#include "core/geometry/triangle_mesh.h"

namespace taxel::geometry {

/// How many points a sample set of the build draws: `random` band points, and up to `features`
/// vertices and as many edge midpoints, each on the surface and off it.
struct SdfGridSampling {
  int random = 0;
  int features = 0;
};
inline constexpr SdfGridSampling kSdfGridSearchSampling{8192, 4096};
inline constexpr SdfGridSampling kSdfGridCheckSampling{32768, 16384};

/// Every how many vertices and triangles a sample set takes one (both ≥ 1).
struct SdfGridFeatureStrides {
  int vertex = 1;
  int triangle = 1;
};
SdfGridFeatureStrides FeatureStrides(const TriangleMesh& mesh, int features);

/// Points a sample set draws before keeping those with |sd| ≤ band: random + 2 per strided vertex
/// + 2 per strided edge (each shared edge once). O(triangles / stride).
int64_t SdfGridSampleCount(const TriangleMesh& mesh, const SdfGridSampling& sampling);

/// The cell size (m) the search starts from, the coarsest it tries: min(band/2, max(extent, band)/4),
/// extent the largest side of the mesh bounds.
double SdfGridStartCell(const TriangleMesh& mesh, double band);

/// The coarsest cell (m) a build for `options` can end with: min(start cell, 3·√(e·(ρ + band))),
/// e = max_error, ρ = half the diagonal of the mesh bounds. Why: a closed surface inside the ball
/// of radius ρ about the bounds' centre touches it somewhere, and there curves at least 1/ρ; the
/// trilinear interpolant of its distance field errs by h²/8 · tr(Hessian) ≥ h²/(4(ρ + band)) at a
/// cell centre there, so the search (which stops at 0.7 e) cannot keep a cell above √(2.8 e(ρ +
/// band)) ≈ 1.7 √(e(ρ + band)); the factor 3 allows for band samples that miss cell centres.
/// A model for open meshes (no enclosed curvature), whose signs (winding numbers) make cells finer.
double SdfGridCoarsestCell(const TriangleMesh& mesh, const SdfGridOptions& options);

/// Bricks of a grid of cell h (m) over `band` (m). A kept brick (one with a node block) has its
/// centre within band + its half-diagonal of the surface, so it lies within r = band + √3·8h, and
/// the kept bricks cover every point within the band.
struct SdfGridBricks {
  /// Every brick of the lattice over the bounds grown by band + 2h.
  double lattice = 0;
  /// Upper estimate of the kept bricks: the volume within r of a closed convex surface is at most
  /// 2rA + 2πD·r² + (8π/3)·r³ (Steiner: the outer shell rA + r²·∫H + (4π/3)r³ with ∫H ≤ 2π·mean
  /// width ≤ 2πD, the inner at most rA; A area, D bounds diagonal), over the brick volume (8h)³,
  /// at most `lattice`. Within 1× to 2.5× of built grids (mesh_sdf_grid_cost_test).
  double kept = 0;
  /// Lower estimate: half the band's volume 2·band·A over (8h)³ (the outer half of the band of a
  /// closed convex surface alone holds band·A), at least 1. At most the built count in the tests.
  double kept_least = 0;
};
SdfGridBricks EstimateSdfGridBricks(const TriangleMesh& mesh, double band, double h);

/// The fewest queries one (re)build at cell h makes: (1 + 729) per brick of kept_least (its test
/// and its nodes).
double SdfGridFillQueries(const TriangleMesh& mesh, double band, double h);

/// The fewest queries a build for `options` makes: the search set, the check set, and one build
/// at SdfGridCoarsestCell. Refusing above this refuses only what no build could do.
double SdfGridLeastQueries(const TriangleMesh& mesh, const SdfGridOptions& options);

/// Counts one build's queries against `limit`.
class SdfGridQueryMeter {
 public:
  /// `field` names the request field refusals start with ("grid.max_error").
  SdfGridQueryMeter(double limit, std::string field) : limit_(limit), field_(std::move(field)) {}

  /// Charges `queries` for the stage about to run. RESOURCE_EXHAUSTED (naming the field, the
  /// queries needed and the limit; nothing charged) when they, with `still_needed` more for the
  /// stages that must follow, pass the limit. `what` describes the grid ("a grid of cell 1e-4 m").
  absl::Status Charge(double queries, double still_needed, absl::string_view what);

  double spent() const { return spent_; }
  double limit() const { return limit_; }

 private:
  double limit_;
  std::string field_;
  double spent_ = 0;
};

/// "a signed-distance grid of cell 0.0001 m over a 0.005 m band": the `what` of refusals.
std::string DescribeSdfGrid(double h, double band);

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_MESH_SDF_GRID_COST_H_
