#include "core/geometry/mesh_signed_distance.h"

#include <algorithm>
#include <cmath>

namespace taxel::geometry {
namespace {

// Primitives per leaf of the closest-point tree: its leaves are pre-tested with float slabs
// four at a time, which costs less than the cache misses of the deeper tree smaller leaves need.
// 24 with the partial prefetch below (one run of ten alternations per size in one binary, paired
// ratio to Embree: torus50k 1.91× with 16, 2.02× with 24, 2.03× with 32, 1.92× with 48; ico20k
// 2.00×, 2.14×, 2.19×; ico200k, whose arrays exceed the cache, 2.63×, 2.65×, 2.53×). The binary
// BVH (and the winding-number tree on it) keeps leaves of at most 4. Leaf masks are 32-bit.
constexpr int kClosestPointLeafSize = 24;
static_assert(kClosestPointLeafSize % 4 == 0 && kClosestPointLeafSize + 3 <= 32,
              "leaf masks are 32-bit and start up to 3 slots into a group of 4");
// Cache lines of slabs prefetched of a leaf child when its parent finds it in reach. Many
// such leaves are pruned before they are entered, and an entered leaf's pre-tests read its slabs
// in order, which the hardware prefetcher follows; prefetching whole leaves spent memory
// bandwidth on lines never read (leaves of 16, torus50k: +6 % queries per second with 8 lines
// against 16, ten alternated runs; 4, 6, 10 and 12 lines did no better than 8; with leaves of 32,
// 4, 12 or 16 lines no better than 8 either). With the slabs in groups of four (TriangleSlabGroup),
// 8 lines are the leaf's first two groups, eight triangles as before; 4 and 12 were no better.
constexpr size_t kLeafPrefetchLines = 8;
constexpr double kFourPi = 12.566370614359172;
constexpr double kWindingBeta = 2.0;  // far-field accuracy parameter of Barill et al.
constexpr int kSignGridCells = 64;    // cells along the longest axis of the mesh bounds
constexpr double kPseudoNormalCells = 4;  // Query: the sign by pseudo-normal closer than this many cells

constexpr uint8_t kOutside = 0, kInside = 1, kSurface = 2, kUnknown = 255;

/// Signed solid angle of triangle (a, b, c) seen from the origin (Van Oosterom & Strackee, IEEE
/// Trans. Biomed. Eng. 30(2), 1983): positive when the triangle's normal points away from it.
double SolidAngle(const Eigen::Vector3d& a, const Eigen::Vector3d& b, const Eigen::Vector3d& c) {
  const double la = a.norm(), lb = b.norm(), lc = c.norm();
  const double det = a.dot(b.cross(c));
  const double denom = la * lb * lc + a.dot(b) * lc + b.dot(c) * la + c.dot(a) * lb;
  return 2.0 * std::atan2(det, denom);
}

}  // namespace

std::shared_ptr<const MeshSignedDistance> MeshSignedDistance::Build(std::shared_ptr<const TriangleMesh> mesh) {
  std::shared_ptr<MeshSignedDistance> sdf(new MeshSignedDistance());
  sdf->mesh_ = std::move(mesh);
  const TriangleMesh& m = *sdf->mesh_;
  std::vector<Aabb> bounds(m.num_triangles());
  for (int t = 0; t < m.num_triangles(); ++t) {
    for (int k = 0; k < 3; ++k) bounds[t].Extend(m.vertex(m.triangle(t)[k]));
  }
  sdf->bvh_ = Bvh::Build(bounds, 4);
  sdf->closest_tree_ = ClosestPointTree::FromBinary(sdf->bvh_, kClosestPointLeafSize);
  const auto& order = sdf->bvh_.primitive_order();
  sdf->leaf_vertices_.resize(kLeafStride * order.size());
  sdf->leaf_triangle_.resize(order.size());
  for (size_t s = 0; s < order.size(); ++s) {
    const Triangle& tri = m.triangle(order[s]);
    for (int k = 0; k < 3; ++k) sdf->leaf_vertices_[kLeafStride * s + k] = m.vertex(tri[k]);
    sdf->leaf_vertices_[kLeafStride * s + 3] = m.face_normal(static_cast<int>(order[s]));
    sdf->leaf_triangle_[s] = static_cast<int32_t>(order[s]);
  }
  sdf->leaf_slabs_.assign((order.size() + 3) / 4, TriangleSlabGroup{});
  for (size_t s = 0; s < order.size(); ++s) {
    const Eigen::Vector3d* v = &sdf->leaf_vertices_[kLeafStride * s];
    SetSlabLane(&sdf->leaf_slabs_[s / 4], static_cast<int>(s % 4), MakeTriangleSlab(v[0], v[1], v[2]));
  }
  sdf->tiny_distance_ = 1e-10 * (m.bounds().hi - m.bounds().lo).norm();
  for (const Eigen::Vector3d& v : m.vertices()) {
    sdf->coordinate_bound_ = std::max(sdf->coordinate_bound_, v.cwiseAbs().maxCoeff());
  }
  sdf->BuildWindingTree();
  if (m.is_watertight()) sdf->BuildSignGrid();
  return sdf;
}

bool MeshSignedDistance::ClosestPoint(const Eigen::Vector3d& p, double max_distance, ClosestPointResult* out) const {
  return ClosestPointImpl<false>(p, max_distance, out, nullptr);
}

bool MeshSignedDistance::ClosestPointCounted(const Eigen::Vector3d& p, double max_distance, ClosestPointResult* out,
                                             TraversalStats* stats) const {
  return ClosestPointImpl<true>(p, max_distance, out, stats);
}

namespace {

constexpr double kFloatEps = 1.0 / (1 << 24);

// The float limit that squared float distances (node boxes, triangle slab bounds) are compared
// with when searching radius sqrt(b2): (sqrt(b2)·(1 + 8 eps) + slack)²·(1 + 4 eps), which covers
// the rounding of the float distances (see ClosestPointImpl and triangle_slab.h) and of this
// conversion to float. +inf for an unbounded search.
float FloatLimit(double b2, double slack) {
  if (!(b2 < std::numeric_limits<double>::infinity())) return std::numeric_limits<float>::infinity();
  const double t = std::sqrt(b2) * (1 + 8 * kFloatEps) + slack;
  return static_cast<float>(t * t * (1 + 4 * kFloatEps));
}

// FloatLimit for a finite b2 whose padded root sqrt(b2)·(1 + 8 eps) is `root` (the same value,
// one square root shared by the node and slab limits).
float FloatLimitFromRoot(double root, double slack) {
  const double t = root + slack;
  return static_cast<float>(t * t * (1 + 4 * kFloatEps));
}

// The cache lines of a leaf slot: the triangle's three vertices and its face normal (96 bytes:
// two lines).
inline void PrefetchTriangle(const Eigen::Vector3d* v) {
  __builtin_prefetch(v);
  __builtin_prefetch(reinterpret_cast<const char*>(v + 4) - 1);
}

// Fetches `lines` cache lines from the line-aligned `p` ahead of use.
inline void PrefetchLines(const void* p, size_t lines) {
  const char* c = static_cast<const char*>(p);
  for (size_t l = 0; l < lines; ++l) __builtin_prefetch(c + kCacheLineBytes * l);
}

}  // namespace

template <bool kCount>
bool MeshSignedDistance::ClosestPointImpl(const Eigen::Vector3d& p, double max_distance, ClosestPointResult* out,
                                          TraversalStats* stats) const {
  // Box tests run in float, a node's 16 children at once (BvhChildrenWithin16). The bounds are
  // float values rounded outwards; the query point rounded to float moves by at most eps·M (M =
  // its largest coordinate) and the float arithmetic loses a few eps relative. A node is pruned
  // only when its float distance exceeds (b·(1 + 8 eps) + 2·eps·M)² for the current best distance
  // b, which any node holding a point within b satisfies: pruning stays exact wherever p is.
  // Triangles in reach are pre-tested the same way with their float slab bounds (triangle_slab.h)
  // and only those that may beat b get the exact double test.
  const ClosestPointTree::NodeArray& nodes = closest_tree_.nodes();
  const float px = static_cast<float>(p.x()), py = static_cast<float>(p.y()), pz = static_cast<float>(p.z());
  const double p_max = p.cwiseAbs().maxCoeff();
  const double node_slack = 2 * kFloatEps * p_max;
  const double slab_slack = TriangleSlabSlack(p_max, coordinate_bound_);
  const bool use_slabs = p_max <= kTriangleSlabMaxCoordinate;
  double best = max_distance * max_distance;
  float limit = FloatLimit(best, node_slack);
  float slab_limit = FloatLimit(best, slab_slack);
  struct Entry {
    uint32_t index, count;  // count > 0: a leaf's primitive range; 0: an inner node
    float d2;
  };
  Entry stack[ClosestPointTree::kStackSize];
  int sp = 0;
  bool found = false;
  int best_slot = -1;
  TriangleFeature best_feature = TriangleFeature::kFace;
  Eigen::Vector3d best_point;
  auto test_slot = [&](uint32_t s) {
    if constexpr (kCount) ++stats->triangles;
    TriangleFeature f;
    const Eigen::Vector3d c =
        ClosestPointOnTriangle(p, leaf_vertices_[kLeafStride * s], leaf_vertices_[kLeafStride * s + 1],
                               leaf_vertices_[kLeafStride * s + 2], &f);
    const double d2 = (p - c).squaredNorm();
    if (d2 < best || (!found && d2 <= best)) {
      best = d2;
      const double root = std::sqrt(best) * (1 + 8 * kFloatEps);
      limit = FloatLimitFromRoot(root, node_slack);
      slab_limit = FloatLimitFromRoot(root, slab_slack);
      found = true;
      best_slot = static_cast<int>(s);
      best_feature = f;
      best_point = c;
      PrefetchFeatureNormal(s, f);
      __builtin_prefetch(&leaf_triangle_[s]);
    }
  };
  // Pre-tests a leaf's triangles with their float slabs, then tests exactly those that may beat
  // the best, nearest bound first; each success shrinks the limit the rest must meet. Leaves
  // larger than kClosestPointLeafSize (possible only at the binary build's depth limit) go in
  // blocks of that size.
  auto test_leaf = [&](uint32_t first, uint32_t count) {
    if (!use_slabs) {
      for (uint32_t s = first, end = first + count; s < end; ++s) test_slot(s);
      return;
    }
    for (uint32_t end = first + count; first < end; first += kClosestPointLeafSize) {
      const uint32_t n = std::min<uint32_t>(kClosestPointLeafSize, end - first);
      // Slots base + j in whole groups of four; the leaf's own are j in [o, o + n), o ≤ 3.
      const uint32_t o = first % 4, base = first - o;
      float lb2[kClosestPointLeafSize + 4];  // up to (3 + n + 3) / 4 groups
      uint32_t live = TriangleSlabGroupsWithin(&leaf_slabs_[base / 4], SlabGroupsSpanning(first, n), px, py, pz,
                                               slab_limit, lb2) &
                      (((1u << n) - 1) << o);
      if constexpr (kCount) {
        stats->pretests += n;
        stats->pretest_passes += __builtin_popcount(live);
      }
      for (uint32_t m = live; m != 0; m &= m - 1) {
        const uint32_t slot = base + __builtin_ctz(m);
        PrefetchTriangle(&leaf_vertices_[kLeafStride * slot]);
      }
      // Nearest bound first (ties: lowest slot). Once the nearest remaining bound exceeds the
      // limit, so do all the others: stop there rather than scanning them one by one.
      while (live != 0) {
        uint32_t k = __builtin_ctz(live);
        for (uint32_t m = live & (live - 1); m != 0; m &= m - 1) {
          const uint32_t j = __builtin_ctz(m);
          if (lb2[j] < lb2[k]) k = j;
        }
        if (lb2[k] > slab_limit) break;
        live &= ~(1u << k);
        test_slot(base + k);
      }
    }
  };
  // Depth-first, nearest child first. `hit` holds the children of the current node within
  // reach; all but the nearest go on the stack (farthest deepest). Their data is prefetched as
  // soon as they are known to be in reach, so that the cache misses of siblings overlap.
  auto visit = [&](const Entry& e) -> bool {  // true: descend into e (an inner node)
    if (e.count > 0) {
      test_leaf(e.index, e.count);
      return false;
    }
    return true;
  };
  uint32_t node = 0;
  while (true) {
    const ClosestPointTree::Node& n = nodes[node];
    if constexpr (kCount) ++stats->nodes;
    float d2[kClosestPointWidth];
    unsigned mask = BvhChildrenWithin16(n, px, py, pz, limit, d2);
    bool descend = false;
    if (mask != 0) {
      if ((mask & (mask - 1)) == 0) {  // one child in reach: no sorting, no stack
        const int c = __builtin_ctz(mask);
        const Entry e{n.index[c], n.count[c], d2[c]};
        descend = visit(e);
        if (descend) node = e.index;
      } else {
        Entry hits[kClosestPointWidth];
        int nh = 0;
        for (; mask != 0; mask &= mask - 1) {
          const int c = __builtin_ctz(mask);
          const Entry e{n.index[c], n.count[c], d2[c]};
          if (e.count > 0) {
            const size_t groups = SlabGroupsSpanning(e.index, e.count);
            PrefetchLines(&leaf_slabs_[e.index / 4],
                          std::min(groups * (sizeof(TriangleSlabGroup) / kCacheLineBytes), kLeafPrefetchLines));
          } else {
            PrefetchLines(&nodes[e.index], sizeof(ClosestPointTree::Node) / kCacheLineBytes);
          }
          int k = nh++;
          while (k > 0 && hits[k - 1].d2 > e.d2) {
            hits[k] = hits[k - 1];
            --k;
          }
          hits[k] = e;
        }
        for (int k = nh - 1; k >= 1; --k) stack[sp++] = hits[k];
        descend = visit(hits[0]);
        if (descend) node = hits[0].index;
      }
    }
    if (descend) continue;
    // Pop the nearest remaining entry still in reach: test leaves, descend into an inner node.
    while (sp > 0) {
      const Entry e = stack[--sp];
      if (e.d2 > limit) continue;
      if (visit(e)) {
        node = e.index;
        descend = true;
        break;
      }
    }
    if (!descend) break;
  }
  if (found) {
    out->squared_distance = best;
    out->point = best_point;
    out->triangle = leaf_triangle_[best_slot];
    out->feature = best_feature;
    out->face_normal = leaf_vertices_[kLeafStride * best_slot + 3];
  }
  return found;
}

void MeshSignedDistance::PrefetchFeatureNormal(uint32_t slot, TriangleFeature f) const {
  // A face's normal is in the leaf slot, next to the vertices (ClosestPointResult::face_normal).
  if (f == TriangleFeature::kFace) return;
  const int32_t t = leaf_triangle_[slot];
  if (IsEdge(f)) {
    __builtin_prefetch(&mesh_->edge_pseudo_normal(t, FeatureLocalIndex(f)));
  } else {
    __builtin_prefetch(&mesh_->triangle(t));  // the vertex index, then its normal
  }
}

Eigen::Vector3d MeshSignedDistance::FeatureNormal(const ClosestPointResult& c) const {
  if (c.feature == TriangleFeature::kFace) return c.face_normal;
  const int k = FeatureLocalIndex(c.feature);
  if (IsEdge(c.feature)) return mesh_->edge_pseudo_normal(c.triangle, k);
  return mesh_->vertex_pseudo_normal(mesh_->triangle(c.triangle)[k]);
}

bool MeshSignedDistance::InsideByPseudoNormal(const Eigen::Vector3d& p, const ClosestPointResult& c) const {
  return (p - c.point).dot(FeatureNormal(c)) < 0;
}

bool MeshSignedDistance::IsInside(const Eigen::Vector3d& p) const {
  if (!mesh_->is_watertight()) return WindingNumber(p) >= 0.5;
  const int side = GridSide(p);
  if (side != 2) return side == 1;
  ClosestPointResult c;
  ClosestPoint(p, std::numeric_limits<double>::infinity(), &c);
  return InsideByPseudoNormal(p, c);
}

SignedDistanceResult MeshSignedDistance::Query(const Eigen::Vector3d& p, double max_distance) const {
  SignedDistanceResult r;
  ClosestPointResult c;
  bool inside;
  if (ClosestPoint(p, max_distance, &c)) {
    if (mesh_->is_watertight()) {
      // Near the surface (closer than kPseudoNormalCells sign-grid cells, 1/16 of the mesh's
      // longest side) the pseudo-normal of the closest feature decides: there the closest feature
      // is found to within rounding of the mesh's scale, and a near-tie feature gives the same
      // sign (the test's dot product is of the order of the distance, not of the rounding).
      // Farther away, the sign grid where it is decided (as IsInside does): the pseudo-normal
      // test needs the true closest feature, which rounding can no longer single out once |p|
      // dwarfs the mesh.
      const double near = kPseudoNormalCells * grid_cell_;
      const int side = c.squared_distance < near * near ? 2 : GridSide(p);
      inside = side == 2 ? InsideByPseudoNormal(p, c) : side == 1;
    } else {
      inside = WindingNumber(p) >= 0.5;
    }
  } else {
    // No surface within reach: decide the side cheaply, and only inside pay for the exact depth.
    if (mesh_->is_watertight()) {
      const int side = GridSide(p);
      if (side == 0) return r;
      ClosestPoint(p, std::numeric_limits<double>::infinity(), &c);
      inside = side == 1 || InsideByPseudoNormal(p, c);
    } else {
      if (WindingNumber(p) < 0.5) return r;
      ClosestPoint(p, std::numeric_limits<double>::infinity(), &c);
      inside = true;
    }
  }
  const double d = std::sqrt(c.squared_distance);
  r.distance = inside ? -d : d;
  r.closest = c.point;
  r.triangle = c.triangle;
  r.feature = c.feature;
  // The gradient is (Q − C)/|Q − C| (negated inside); on the surface use the feature's normal.
  // In a face region of a closed mesh it is exactly the outward face normal, which is also the
  // more accurate value (Q − C loses digits to cancellation when |Q| dwarfs |Q − C|).
  if (d > tiny_distance_ && !(mesh_->is_watertight() && c.feature == TriangleFeature::kFace)) {
    r.normal = (p - c.point) / (inside ? -d : d);
  } else {
    r.normal = FeatureNormal(c);
  }
  return r;
}

void MeshSignedDistance::BuildWindingTree() {
  const auto& nodes = bvh_.nodes();
  const double orientation = mesh_->was_inside_out() ? -1.0 : 1.0;
  winding_.resize(nodes.size());
  // Children always follow their parent in the array, so a reverse sweep is bottom-up.
  for (size_t i = nodes.size(); i-- > 0;) {
    const BvhNode& n = nodes[i];
    WindingNode& w = winding_[i];
    w.normal_sum.setZero();
    w.centroid.setZero();
    double area = 0;
    if (n.is_leaf()) {
      for (uint32_t s = n.index; s < n.index + n.count; ++s) {
        const Eigen::Vector3d& a = leaf_vertices_[kLeafStride * s];
        const Eigen::Vector3d& b = leaf_vertices_[kLeafStride * s + 1];
        const Eigen::Vector3d& c = leaf_vertices_[kLeafStride * s + 2];
        const Eigen::Vector3d an = 0.5 * orientation * (b - a).cross(c - a);
        const double ta = an.norm();
        w.normal_sum += an;
        w.centroid += ta * (a + b + c) / 3.0;
        area += ta;
      }
      w.centroid /= area;
      w.area = area;
      w.radius = 0;
      for (uint32_t s = n.index; s < n.index + n.count; ++s) {
        for (int k = 0; k < 3; ++k) w.radius = std::max(w.radius, (leaf_vertices_[kLeafStride * s + k] - w.centroid).norm());
      }
    } else {
      const WindingNode& l = winding_[n.index];
      const WindingNode& r = winding_[n.index + 1];
      w.normal_sum = l.normal_sum + r.normal_sum;
      area = l.area + r.area;
      w.centroid = (l.area * l.centroid + r.area * r.centroid) / area;
      w.area = area;
      w.radius = std::max((l.centroid - w.centroid).norm() + l.radius, (r.centroid - w.centroid).norm() + r.radius);
    }
  }
}

double MeshSignedDistance::WindingNumber(const Eigen::Vector3d& q) const {
  const auto& nodes = bvh_.nodes();
  const double orientation = mesh_->was_inside_out() ? -1.0 : 1.0;
  double w = 0;
  uint32_t stack[2 * kBvhMaxDepth];
  int sp = 0;
  stack[sp++] = 0;
  while (sp > 0) {
    const uint32_t i = stack[--sp];
    const WindingNode& wn = winding_[i];
    const Eigen::Vector3d d = wn.centroid - q;
    const double dist = d.norm();
    if (dist > kWindingBeta * wn.radius) {
      w += d.dot(wn.normal_sum) / (kFourPi * dist * dist * dist);  // dipole far field
      continue;
    }
    const BvhNode& n = nodes[i];
    if (n.is_leaf()) {
      for (uint32_t s = n.index; s < n.index + n.count; ++s) {
        w += orientation *
             SolidAngle(leaf_vertices_[kLeafStride * s] - q, leaf_vertices_[kLeafStride * s + 1] - q,
                        leaf_vertices_[kLeafStride * s + 2] - q) /
             kFourPi;
      }
    } else {
      stack[sp++] = n.index + 1;
      stack[sp++] = n.index;
    }
  }
  return w;
}

int MeshSignedDistance::GridSide(const Eigen::Vector3d& p) const {
  const Eigen::Vector3d t = (p - grid_origin_) / grid_cell_;
  // Range check in double before the conversion: a far point would overflow int (undefined).
  if (!(t.x() >= 0 && t.y() >= 0 && t.z() >= 0 && t.x() < grid_dims_.x() && t.y() < grid_dims_.y() &&
        t.z() < grid_dims_.z())) {
    return 0;
  }
  const int i = static_cast<int>(t.x()), j = static_cast<int>(t.y()), k = static_cast<int>(t.z());
  return grid_[(static_cast<size_t>(k) * grid_dims_.y() + j) * grid_dims_.x() + i];
}

void MeshSignedDistance::BuildSignGrid() {
  const Aabb& b = mesh_->bounds();
  const Eigen::Vector3d extent = b.hi - b.lo;
  grid_cell_ = std::max(extent.maxCoeff() / kSignGridCells, 1e-9);
  grid_origin_ = b.lo - Eigen::Vector3d::Constant(grid_cell_);  // one free layer all round
  for (int a = 0; a < 3; ++a) grid_dims_[a] = static_cast<int>(std::ceil(extent[a] / grid_cell_)) + 3;
  const int nx = grid_dims_.x(), ny = grid_dims_.y(), nz = grid_dims_.z();
  const size_t n_cells = static_cast<size_t>(nx) * ny * nz;
  grid_.assign(n_cells, kUnknown);
  auto index = [&](int i, int j, int k) { return (static_cast<size_t>(k) * ny + j) * nx + i; };

  // Mark every cell a triangle's bounding box touches (conservative: may over-mark).
  const double pad = 1e-9 * extent.maxCoeff();
  for (int t = 0; t < mesh_->num_triangles(); ++t) {
    Aabb tb;
    for (int k = 0; k < 3; ++k) tb.Extend(mesh_->vertex(mesh_->triangle(t)[k]));
    const Eigen::Vector3d lo = (tb.lo.array() - pad - grid_origin_.array()) / grid_cell_;
    const Eigen::Vector3d hi = (tb.hi.array() + pad - grid_origin_.array()) / grid_cell_;
    const int i0 = std::max(0, static_cast<int>(lo.x())), i1 = std::min(nx - 1, static_cast<int>(hi.x()));
    const int j0 = std::max(0, static_cast<int>(lo.y())), j1 = std::min(ny - 1, static_cast<int>(hi.y()));
    const int k0 = std::max(0, static_cast<int>(lo.z())), k1 = std::min(nz - 1, static_cast<int>(hi.z()));
    for (int k = k0; k <= k1; ++k)
      for (int j = j0; j <= j1; ++j)
        for (int i = i0; i <= i1; ++i) grid_[index(i, j, k)] = kSurface;
  }

  // Label each connected free region with the side of one of its cell centres: the region that
  // touches the grid border is outside; enclosed regions (the interior, or cavities) are asked.
  std::vector<size_t> queue;
  for (size_t seed = 0; seed < n_cells; ++seed) {
    if (grid_[seed] != kUnknown) continue;
    const int si = static_cast<int>(seed % nx), sj = static_cast<int>((seed / nx) % ny),
              sk = static_cast<int>(seed / (static_cast<size_t>(nx) * ny));
    uint8_t label = kOutside;
    if (seed != 0) {
      const Eigen::Vector3d center = grid_origin_ + grid_cell_ * Eigen::Vector3d(si + 0.5, sj + 0.5, sk + 0.5);
      ClosestPointResult c;
      ClosestPoint(center, std::numeric_limits<double>::infinity(), &c);
      label = InsideByPseudoNormal(center, c) ? kInside : kOutside;
    }
    queue.clear();
    queue.push_back(seed);
    grid_[seed] = label;
    while (!queue.empty()) {
      const size_t cell = queue.back();
      queue.pop_back();
      const int i = static_cast<int>(cell % nx), j = static_cast<int>((cell / nx) % ny),
                k = static_cast<int>(cell / (static_cast<size_t>(nx) * ny));
      const int nbr[6][3] = {{i - 1, j, k}, {i + 1, j, k}, {i, j - 1, k}, {i, j + 1, k}, {i, j, k - 1}, {i, j, k + 1}};
      for (const auto& q : nbr) {
        if (q[0] < 0 || q[1] < 0 || q[2] < 0 || q[0] >= nx || q[1] >= ny || q[2] >= nz) continue;
        const size_t qi = index(q[0], q[1], q[2]);
        if (grid_[qi] == kUnknown) {
          grid_[qi] = label;
          queue.push_back(qi);
        }
      }
    }
  }
}

double MeshSignedDistance::HugePageRoundingBound(int64_t num_triangles) {
  const double t = static_cast<double>(num_triangles);
  auto rounding = [](double bytes) {
    return static_cast<double>(HugePageAllocatedBytes(static_cast<size_t>(bytes))) - bytes;
  };
  // The leaf arrays have exact sizes. The wide BVH's node count is known only after the build;
  // BvhWide::MaxNodes bounds it, and its array loses under one page.
  const double max_node_bytes =
      static_cast<double>(ClosestPointTree::MaxNodes(num_triangles, kClosestPointLeafSize)) *
      sizeof(ClosestPointTree::Node);
  return rounding(std::ceil(t / 4) * sizeof(TriangleSlabGroup)) + rounding(t * kLeafStride * sizeof(Eigen::Vector3d)) +
         rounding(t * sizeof(int32_t)) + (max_node_bytes >= kHugePageMinBytes ? kHugePageBytes : 0.0);
}

size_t MeshSignedDistance::memory_bytes() const {
  return sizeof(*this) + bvh_.memory_bytes() + closest_tree_.memory_bytes() +
         HugePageVectorBytes(leaf_vertices_) + HugePageVectorBytes(leaf_triangle_) + HugePageVectorBytes(leaf_slabs_) +
         winding_.capacity() * sizeof(WindingNode) + grid_.capacity();
}

}  // namespace taxel::geometry
