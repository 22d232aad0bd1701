#include "core/geometry/mesh_sdf_grid.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "absl/strings/str_cat.h"
#include "core/common/check.h"
#include "core/common/field_error.h"
#include "core/common/rng.h"
#include "core/common/status_macros.h"
#include "core/geometry/mesh_sdf_grid_cost.h"

namespace taxel::geometry {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr float kFloatInf = std::numeric_limits<float>::infinity();
constexpr double kSqrt3 = 1.7320508075688772;
// The search aims below the request so that the independent check of the built grid passes.
constexpr double kSearchSafety = 0.7;
constexpr int kSearchSteps = 16;
constexpr int kRebuilds = 2;
constexpr int64_t kChunk = 512;  // points or bricks per parallel task

// Runs fn(begin, end) over [0, n) in chunks on the executor.
template <typename Fn>
void ParallelChunks(Executor& executor, int64_t n, int64_t chunk, const Fn& fn) {
  const int64_t tasks = (n + chunk - 1) / chunk;
  executor.ParallelFor(tasks, [&](int64_t task, int /*worker*/) { fn(task * chunk, std::min(n, (task + 1) * chunk)); });
}

// Node value: the exact signed distance rounded to float, ±inf beyond ±limit.
float NodeValue(const MeshSignedDistance& mesh, const Eigen::Vector3d& p, double limit) {
  const SignedDistanceResult r = mesh.Query(p, limit);
  if (!(r.distance <= limit)) return kFloatInf;
  if (r.distance < -limit) return -kFloatInf;
  return static_cast<float>(r.distance);
}

// Trilinear interpolation of corners c[bit0 x | bit1 y | bit2 z] at fractions f ∈ [0, 1]³, and its
// gradient in lattice units.
double Trilinear(const float* c, const Eigen::Vector3d& f, Eigen::Vector3d* grad) {
  const double x = f.x(), y = f.y(), z = f.z();
  const double c00 = c[0] + x * (c[1] - c[0]), c10 = c[2] + x * (c[3] - c[2]);
  const double c01 = c[4] + x * (c[5] - c[4]), c11 = c[6] + x * (c[7] - c[6]);
  const double c0 = c00 + y * (c10 - c00), c1 = c01 + y * (c11 - c01);
  if (grad != nullptr) {
    const double dx00 = c[1] - c[0], dx10 = c[3] - c[2], dx01 = c[5] - c[4], dx11 = c[7] - c[6];
    const double dx0 = dx00 + y * (dx10 - dx00), dx1 = dx01 + y * (dx11 - dx01);
    grad->x() = dx0 + z * (dx1 - dx0);
    grad->y() = (c10 - c00) + z * ((c11 - c01) - (c10 - c00));
    grad->z() = c1 - c0;
  }
  return c0 + z * (c1 - c0);
}

struct CheckSet {
  std::vector<Eigen::Vector3d> points;
  std::vector<double> exact;  // exact signed distance, |exact| ≤ band
};

// Check points of the band: `n_random` surface points (area-weighted triangle, uniform barycentric
// coordinates) moved along the face normal by U(−band, band), and up to `n_features` vertices and
// as many edge midpoints (evenly strided), each on the surface and moved along its pseudo-normal by
// U(−band, band). Only points with |sd| ≤ band are kept. Deterministic for a seed.
CheckSet MakeCheckSet(const MeshSignedDistance& sdf, double band, const SdfGridSampling& sampling, uint64_t seed,
                      Executor& executor) {
  const int n_random = sampling.random;
  const TriangleMesh& m = sdf.mesh();
  const Philox4x32 rng(seed, 301);
  std::vector<double> cumulative(m.num_triangles());
  double total = 0;
  for (int t = 0; t < m.num_triangles(); ++t) cumulative[t] = total += m.face_area(t);
  CheckSet set;
  std::vector<Eigen::Vector3d>& pts = set.points;
  for (int i = 0; i < n_random; ++i) {
    const auto b = rng(static_cast<uint32_t>(i), 0, 0, 0);
    const double u = UniformFromBits(b[0]) * total;
    const int t = static_cast<int>(std::min<ptrdiff_t>(
        std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin(), m.num_triangles() - 1));
    double s = UniformFromBits(b[1]), r = UniformFromBits(b[2]);
    if (s + r > 1) s = 1 - s, r = 1 - r;
    const Triangle& tri = m.triangle(t);
    const Eigen::Vector3d q =
        m.vertex(tri[0]) + s * (m.vertex(tri[1]) - m.vertex(tri[0])) + r * (m.vertex(tri[2]) - m.vertex(tri[0]));
    pts.push_back(q + (2 * UniformFromBits(b[3]) - 1) * band * m.face_normal(t));
  }
  auto add_feature = [&](const Eigen::Vector3d& q, const Eigen::Vector3d& n, uint32_t key) {
    pts.push_back(q);
    const auto b = rng(key, 1, 0, 0);
    pts.push_back(q + (2 * UniformFromBits(b[0]) - 1) * band * n);
  };
  const SdfGridFeatureStrides stride = FeatureStrides(m, sampling.features);  // as SdfGridSampleCount counts
  const int nv = m.num_vertices();
  for (int v = 0; v < nv; v += stride.vertex) {
    add_feature(m.vertex(v), m.vertex_pseudo_normal(v), static_cast<uint32_t>(v));
  }
  const int nt = m.num_triangles();
  for (int t = 0; t < nt; t += stride.triangle) {
    const Triangle& tri = m.triangle(t);
    for (int k = 0; k < 3; ++k) {
      if (tri[k] > tri[(k + 1) % 3]) continue;  // each shared edge once
      add_feature(0.5 * (m.vertex(tri[k]) + m.vertex(tri[(k + 1) % 3])), m.edge_pseudo_normal(t, k),
                  static_cast<uint32_t>(nv + 3 * t + k));
    }
  }
  std::vector<double> exact(pts.size());
  ParallelChunks(executor, static_cast<int64_t>(pts.size()), kChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) exact[i] = sdf.Query(pts[i], 2 * band).distance;
  });
  CheckSet kept;
  for (size_t i = 0; i < pts.size(); ++i) {
    if (std::abs(exact[i]) <= band) {
      kept.points.push_back(pts[i]);
      kept.exact.push_back(exact[i]);
    }
  }
  return kept;
}

// Lattice origin (node 0) for cell size h: the mesh bounds grown by band + 2h on every side.
Eigen::Vector3d LatticeOrigin(const MeshSignedDistance& sdf, double band, double h) {
  return sdf.mesh().bounds().lo - Eigen::Vector3d::Constant(band + 2 * h);
}

// Largest error of the trilinear interpolant of exact node values (the grid a cell size h would
// build, without building it) over the check set.
double VirtualGridError(const MeshSignedDistance& sdf, double band, double h, const CheckSet& set, Executor& executor) {
  const Eigen::Vector3d origin = LatticeOrigin(sdf, band, h);
  const double limit = band + kSqrt3 * h;
  std::vector<double> err(set.points.size());
  ParallelChunks(executor, static_cast<int64_t>(err.size()), kChunk / 8, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const Eigen::Vector3d t = (set.points[i] - origin) / h;
      const Eigen::Vector3d g = t.array().floor();
      float c[8];
      bool finite = true;
      for (int k = 0; k < 8; ++k) {
        const Eigen::Vector3d node = g + Eigen::Vector3d(k & 1, (k >> 1) & 1, (k >> 2) & 1);
        c[k] = NodeValue(sdf, origin + h * node, limit);
        finite &= std::isfinite(c[k]);
      }
      err[i] = finite ? std::abs(Trilinear(c, t - g, nullptr) - set.exact[i]) : kInf;
    }
  });
  double worst = 0;
  for (double e : err) worst = std::max(worst, e);
  return worst;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const MeshSdfGrid>> MeshSdfGrid::Build(std::shared_ptr<const MeshSignedDistance> mesh,
                                                                      const SdfGridOptions& options, Executor& executor,
                                                                      MemoryBudget& budget, double max_queries,
                                                                      absl::string_view field,
                                                                      absl::string_view refusal_field) {
  TAXEL_DCHECK(options.max_error > 0 && std::isfinite(options.max_error));
  TAXEL_DCHECK(options.band > 0 && std::isfinite(options.band));
  const std::string refused_as =
      refusal_field.empty() ? absl::StrCat(field, field.empty() ? "" : ".", "max_error") : std::string(refusal_field);
  std::shared_ptr<MeshSdfGrid> grid(new MeshSdfGrid());
  grid->mesh_ = std::move(mesh);
  const MeshSignedDistance& sdf = *grid->mesh_;
  const TriangleMesh& m = sdf.mesh();
  const double band = options.band, target = options.max_error;
  const double extent = (m.bounds().hi - m.bounds().lo).maxCoeff();

  // Before any query: the least any build for this error costs, at the coarsest cell it allows.
  SdfGridQueryMeter meter(max_queries, refused_as);
  const double check_queries = static_cast<double>(SdfGridSampleCount(m, kSdfGridCheckSampling));
  TAXEL_RETURN_IF_ERROR(meter.Charge(
      0, SdfGridLeastQueries(m, options),
      absl::StrCat(DescribeSdfGrid(SdfGridCoarsestCell(m, options), band), " (the coarsest this error allows)")));

  // Cell size: the largest h (from band/2 down) whose interpolant meets the target with margin.
  // Each step is charged before it runs, with the check set and a build at the current h still to
  // come (h only shrinks: the grid will be at least this fine).
  double h = SdfGridStartCell(m, band);
  TAXEL_RETURN_IF_ERROR(meter.Charge(static_cast<double>(SdfGridSampleCount(m, kSdfGridSearchSampling)),
                                     check_queries + SdfGridFillQueries(m, band, h), DescribeSdfGrid(h, band)));
  const CheckSet search = MakeCheckSet(sdf, band, kSdfGridSearchSampling, 1, executor);
  const double h_floor = 1e-7 * std::max(extent, band);
  for (int step = 0; step < kSearchSteps && h > h_floor; ++step) {
    TAXEL_RETURN_IF_ERROR(meter.Charge(8.0 * static_cast<double>(search.points.size()),
                                       check_queries + SdfGridFillQueries(m, band, h), DescribeSdfGrid(h, band)));
    const double err = VirtualGridError(sdf, band, h, search, executor);
    if (err <= kSearchSafety * target) break;
    h *= std::clamp(0.9 * kSearchSafety * target / err, 0.25, 0.8);  // as if the error were linear in h
  }

  // Build, then check the built grid on independent points; shrink and rebuild if it misses.
  TAXEL_RETURN_IF_ERROR(meter.Charge(check_queries, SdfGridFillQueries(m, band, h), DescribeSdfGrid(h, band)));
  const CheckSet check = MakeCheckSet(sdf, band, kSdfGridCheckSampling, 2, executor);
  std::vector<double> err(check.points.size());
  for (int attempt = 0;; ++attempt) {
    grid->stats_ = SdfGridStats{};
    grid->stats_.requested_max_error = target;
    grid->stats_.band = band;
    grid->SetLattice(h);
    TAXEL_RETURN_IF_ERROR(grid->Fill(executor, budget, meter, refused_as));
    ParallelChunks(executor, static_cast<int64_t>(err.size()), kChunk, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const double d = grid->Query(check.points[i]).distance;
        err[i] = std::isfinite(d) ? std::abs(d - check.exact[i]) : kInf;
      }
    });
    double worst = 0;
    for (double e : err) worst = std::max(worst, e);
    if (worst <= target || attempt == kRebuilds) break;
    h *= std::clamp(0.9 * target / worst, 0.25, 0.8);
  }
  SdfGridStats& s = grid->stats_;
  s.cell_size = h;
  s.num_check_points = static_cast<int64_t>(err.size());
  if (!err.empty()) {
    std::vector<double> sorted = err;
    const size_t k99 = std::min(sorted.size() - 1, static_cast<size_t>(std::ceil(0.99 * sorted.size())) - 1);
    std::nth_element(sorted.begin(), sorted.begin() + k99, sorted.end());
    s.p99_error = sorted[k99];
    s.max_error = *std::max_element(err.begin(), err.end());
  }
  s.bytes = grid->memory_bytes();
  s.num_queries = meter.spent();
  return std::shared_ptr<const MeshSdfGrid>(std::move(grid));
}

void MeshSdfGrid::SetLattice(double h) {
  h_ = h;
  inv_h_ = 1.0 / h;
  const double band = stats_.band;
  origin_ = LatticeOrigin(*mesh_, band, h);
  const Aabb& b = mesh_->mesh().bounds();
  for (int a = 0; a < 3; ++a) {
    const double cells = std::ceil((b.hi[a] - b.lo[a] + 2 * (band + 2 * h)) / h);
    // (A lattice too large for int indices is refused by the budget before anything is made.)
    const double bricks = std::ceil(cells / kBrickCells);
    bricks_[a] = bricks < 1e9 ? static_cast<int>(bricks) : 1000000000;
    cells_[a] = static_cast<double>(bricks_[a]) * kBrickCells;
  }
}

absl::Status MeshSdfGrid::Fill(Executor& executor, MemoryBudget& budget, SdfGridQueryMeter& meter,
                               absl::string_view field) {
  const double n_top_d = static_cast<double>(bricks_.x()) * bricks_.y() * bricks_.z();
  const std::string what = DescribeSdfGrid(h_, stats_.band);
  TAXEL_RETURN_IF_ERROR(budget.Reserve(n_top_d * sizeof(int32_t), field, absl::StrCat(what, " (its brick index)")));
  if (n_top_d * kBrickCells * kBrickCells * kBrickCells >= 2e9) {  // int cell indices
    return FieldError(absl::StatusCode::kResourceExhausted, field,
                      absl::StrCat(what, " needs more than 2^31 cells; ask for a larger error"));
  }
  const size_t n_top = static_cast<size_t>(n_top_d);
  const double band = stats_.band, brick = kBrickCells * h_;
  auto top_index = [&](int i, int j, int k) { return (static_cast<size_t>(k) * bricks_.y() + j) * bricks_.x() + i; };

  // Bricks a triangle's bounds grown by the band touch may hold band points (a superset).
  constexpr int32_t kUnlabelled = -3, kMarked = -4;
  std::vector<int32_t> top(n_top, kUnlabelled);
  const TriangleMesh& m = mesh_->mesh();
  for (int t = 0; t < m.num_triangles(); ++t) {
    Aabb tb;
    for (int k = 0; k < 3; ++k) tb.Extend(m.vertex(m.triangle(t)[k]));
    const Eigen::Vector3d lo = (tb.lo.array() - band - origin_.array()) / brick;
    const Eigen::Vector3d hi = (tb.hi.array() + band - origin_.array()) / brick;
    const int i0 = std::max(0, static_cast<int>(lo.x())), i1 = std::min(bricks_.x() - 1, static_cast<int>(hi.x()));
    const int j0 = std::max(0, static_cast<int>(lo.y())), j1 = std::min(bricks_.y() - 1, static_cast<int>(hi.y()));
    const int k0 = std::max(0, static_cast<int>(lo.z())), k1 = std::min(bricks_.z() - 1, static_cast<int>(hi.z()));
    for (int k = k0; k <= k1; ++k)
      for (int j = j0; j <= j1; ++j)
        for (int i = i0; i <= i1; ++i) top[top_index(i, j, k)] = kMarked;
  }
  std::vector<size_t> marked;
  for (size_t b = 0; b < n_top; ++b) {
    if (top[b] == kMarked) marked.push_back(b);
  }
  // One query per marked brick, then the nodes of the kept ones: each charged before it is made.
  TAXEL_RETURN_IF_ERROR(meter.Charge(static_cast<double>(marked.size()), 0, what));
  // Keep a marked brick only if a surface is within band + its half-diagonal of its centre.
  std::vector<uint8_t> keep(marked.size());
  const double reach = band + 0.5 * kSqrt3 * brick;
  auto brick_lo = [&](size_t b) {
    const size_t i = b % bricks_.x(), j = (b / bricks_.x()) % bricks_.y(), k = b / bricks_.x() / bricks_.y();
    const Eigen::Vector3i g(static_cast<int>(i) * kBrickCells, static_cast<int>(j) * kBrickCells,
                            static_cast<int>(k) * kBrickCells);
    return g;
  };
  ParallelChunks(executor, static_cast<int64_t>(marked.size()), kChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const Eigen::Vector3d centre =
          origin_ + h_ * (brick_lo(marked[i]).cast<double>() + Eigen::Vector3d::Constant(0.5 * kBrickCells));
      ClosestPointResult c;
      keep[i] = mesh_->ClosestPoint(centre, reach, &c) ? 1 : 0;
    }
  });
  int64_t blocks = 0;
  for (uint8_t k : keep) blocks += k;
  TAXEL_RETURN_IF_ERROR(meter.Charge(static_cast<double>(blocks) * kBrickValues, 0,
                                     absl::StrCat(what, " (", blocks, " bricks of ", kBrickValues, " nodes)")));
  TAXEL_RETURN_IF_ERROR(
      budget.Reserve(static_cast<double>(blocks) * (kBrickValues * sizeof(float) + kMaskWords * sizeof(uint64_t)),
                     field, absl::StrCat(what, " (", blocks, " bricks of ", kBrickValues, " nodes)")));
  std::vector<size_t> block_brick;
  block_brick.reserve(blocks);
  for (size_t i = 0; i < marked.size(); ++i) {
    top[marked[i]] = keep[i] ? static_cast<int32_t>(block_brick.size()) : kUnlabelled;
    if (keep[i]) block_brick.push_back(marked[i]);
  }
  LabelEmptyBricks(&top);
  top_ = std::move(top);

  // Node values, brick by brick (each task writes only its own blocks).
  values_.assign(static_cast<size_t>(blocks) * kBrickValues, 0.f);
  masks_.assign(static_cast<size_t>(blocks) * kMaskWords, 0);
  const double limit = band + kSqrt3 * h_;
  ParallelChunks(executor, blocks, 4, [&](int64_t begin, int64_t end) {
    for (int64_t blk = begin; blk < end; ++blk) {
      const Eigen::Vector3i g0 = brick_lo(block_brick[blk]);
      float* v = &values_[static_cast<size_t>(blk) * kBrickValues];
      for (int k = 0; k < kBrickNodes; ++k)
        for (int j = 0; j < kBrickNodes; ++j)
          for (int i = 0; i < kBrickNodes; ++i) {
            const Eigen::Vector3d node(g0.x() + i, g0.y() + j, g0.z() + k);
            *v++ = NodeValue(*mesh_, origin_ + h_ * node, limit);
          }
      MaskCells(blk);
    }
  });
  stats_.num_bricks = blocks;
  return absl::OkStatus();
}

void MeshSdfGrid::MaskCells(int64_t blk) {
  constexpr int kY = kBrickNodes, kZ = kBrickNodes * kBrickNodes;
  const float* v = &values_[static_cast<size_t>(blk) * kBrickValues];
  uint64_t* mask = &masks_[static_cast<size_t>(blk) * kMaskWords];
  for (int z = 0; z < kBrickCells; ++z) {
    for (int y = 0; y < kBrickCells; ++y) {
      for (int x = 0; x < kBrickCells; ++x) {
        const float* c = v + z * kZ + y * kY + x;
        const float corners[8] = {c[0], c[1], c[kY], c[kY + 1], c[kZ], c[kZ + 1], c[kZ + kY], c[kZ + kY + 1]};
        bool finite = true, minus_inf = false, plus_inf = false;
        for (float f : corners) {
          finite &= std::isfinite(f);
          minus_inf |= f == -kFloatInf;
          plus_inf |= f == kFloatInf;
        }
        const uint64_t bit = uint64_t{1} << (kBrickCells * y + x);
        if (finite) mask[z] |= bit;
        // Both signs in one cell (which the 1-Lipschitz distance rules out) read as outside.
        if (minus_inf && !plus_inf) mask[kBrickCells + z] |= bit;
      }
    }
  }
}

void MeshSdfGrid::LabelEmptyBricks(std::vector<int32_t>* top_ptr) const {
  constexpr int32_t kUnlabelled = -3;
  std::vector<int32_t>& top = *top_ptr;
  const int nx = bricks_.x(), ny = bricks_.y(), nz = bricks_.z();
  std::vector<size_t> queue;
  for (size_t seed = 0; seed < top.size(); ++seed) {
    if (top[seed] != kUnlabelled) continue;
    // No surface is within the band of this brick: its centre's side is the region's side.
    const int si = static_cast<int>(seed % nx), sj = static_cast<int>((seed / nx) % ny),
              sk = static_cast<int>(seed / (static_cast<size_t>(nx) * ny));
    const Eigen::Vector3d centre = origin_ + h_ * kBrickCells * Eigen::Vector3d(si + 0.5, sj + 0.5, sk + 0.5);
    const int32_t label = mesh_->IsInside(centre) ? kInsideBrick : kOutsideBrick;
    top[seed] = label;
    queue.assign(1, seed);
    while (!queue.empty()) {
      const size_t b = queue.back();
      queue.pop_back();
      const int i = static_cast<int>(b % nx), j = static_cast<int>((b / nx) % ny),
                k = static_cast<int>(b / (static_cast<size_t>(nx) * ny));
      const int nbr[6][3] = {{i - 1, j, k}, {i + 1, j, k}, {i, j - 1, k}, {i, j + 1, k}, {i, j, k - 1}, {i, j, k + 1}};
      for (const auto& q : nbr) {
        if (q[0] < 0 || q[1] < 0 || q[2] < 0 || q[0] >= nx || q[1] >= ny || q[2] >= nz) continue;
        const size_t qi = (static_cast<size_t>(q[2]) * ny + q[1]) * nx + q[0];
        if (top[qi] == kUnlabelled) {
          top[qi] = label;
          queue.push_back(qi);
        }
      }
    }
  }
}

SignedDistanceResult MeshSdfGrid::Query(const Eigen::Vector3d& p, double max_distance) const {
  const Eigen::Vector3d t = (p - origin_) * inv_h_;
  // Off the lattice (range-checked in double: a far point would overflow int): outside, far.
  if (!(t.x() >= 0 && t.y() >= 0 && t.z() >= 0 && t.x() < cells_.x() && t.y() < cells_.y() && t.z() < cells_.z())) {
    return {};
  }
  const int ix = static_cast<int>(t.x()), iy = static_cast<int>(t.y()), iz = static_cast<int>(t.z());
  // The cell (ix, iy, iz) is cell (ix & 7, iy & 7, iz & 7) of brick (ix >> 3, iy >> 3, iz >> 3).
  // (Int arithmetic: Fill refuses lattices of 2^31 cells.)
  static_assert(kBrickCells == 8, "the shifts and masks below assume bricks of 8 cells");
  const int32_t block = top_[((iz >> 3) * bricks_.y() + (iy >> 3)) * bricks_.x() + (ix >> 3)];
  if (block < 0) return block == kOutsideBrick ? SignedDistanceResult{} : mesh_->Query(p, max_distance);
  // Outside the band the masks answer without the corners: a +inf corner, sd > band (far); a
  // −inf corner, sd < −band (the exact depth).
  const uint64_t* mask = &masks_[static_cast<size_t>(block) * kMaskWords + (iz & 7)];
  const int bit = 8 * (iy & 7) + (ix & 7);
  if (((mask[0] >> bit) & 1) == 0) {
    return ((mask[kBrickCells] >> bit) & 1) != 0 ? mesh_->Query(p, max_distance) : SignedDistanceResult{};
  }
  constexpr int kY = kBrickNodes, kZ = kBrickNodes * kBrickNodes;
  const float* v = &values_[static_cast<size_t>(block) * kBrickValues + ((iz & 7) * kZ + (iy & 7) * kY + (ix & 7))];
  const float c[8] = {v[0], v[1], v[kY], v[kY + 1], v[kZ], v[kZ + 1], v[kZ + kY], v[kZ + kY + 1]};
  Eigen::Vector3d grad;
  SignedDistanceResult r;
  r.distance = Trilinear(c, Eigen::Vector3d(t.x() - ix, t.y() - iy, t.z() - iz), &grad);
  const double g = grad.norm();
  if (g > 0) {
    r.normal = grad / g;
  } else {
    r.normal = mesh_->Query(p).normal;  // a flat interpolant (a cell on the medial axis): rare
  }
  r.closest = p - r.distance * r.normal;
  return r;
}

size_t MeshSdfGrid::memory_bytes() const {
  return sizeof(*this) + top_.capacity() * sizeof(int32_t) + values_.capacity() * sizeof(float) +
         masks_.capacity() * sizeof(uint64_t);
}

}  // namespace taxel::geometry
