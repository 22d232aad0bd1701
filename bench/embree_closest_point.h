// The Embree 3 peer of MeshSignedDistance::ClosestPoint, for side-by-side benchmarks.
//
// Embree owns the BVH (built from a float32 copy of the vertices, as Embree requires) and its
// traversal (rtcPointQuery with a sphere of the search radius); the per-triangle work is ours and
// identical to Taxel's: ClosestPointOnTriangle in double on the original double vertices. The
// callback shrinks the query radius to the best distance so far (rounded up to float, so that
// Embree's float culling never drops an equally close triangle).
//
// Only built when CMake finds Embree 3 (TAXEL_BENCH_HAVE_EMBREE).
#ifndef TAXEL_BENCH_EMBREE_CLOSEST_POINT_H_
#define TAXEL_BENCH_EMBREE_CLOSEST_POINT_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "Eigen/Core"
#include "core/geometry/triangle_mesh.h"
#include <embree3/rtcore.h>

namespace taxel::bench {

class EmbreeClosestPoint {
 public:
  struct Result {
    double squared_distance = std::numeric_limits<double>::infinity();  ///< metres²
    Eigen::Vector3d point = Eigen::Vector3d::Zero();                    ///< p_MC
    int32_t triangle = -1;
    int64_t callbacks = 0;  ///< point-query callbacks = triangles tested by this query
  };

  /// Builds an Embree scene with one triangle geometry over the mesh. Ends the process if Embree
  /// reports an error (the bench has no way to go on without its peer).
  explicit EmbreeClosestPoint(const geometry::TriangleMesh& mesh);
  ~EmbreeClosestPoint();
  EmbreeClosestPoint(const EmbreeClosestPoint&) = delete;
  EmbreeClosestPoint& operator=(const EmbreeClosestPoint&) = delete;

  /// Closest point on the mesh to p_MQ within max_distance (metres, inclusive; same tie rule as
  /// MeshSignedDistance::ClosestPoint); false when there is none. Thread-safe (the scene is only
  /// read); one RTCPointQueryContext per call; no allocation.
  bool ClosestPoint(const Eigen::Vector3d& p_MQ, double max_distance, Result* out) const;

 private:
  RTCDevice device_ = nullptr;
  RTCScene scene_ = nullptr;
  std::vector<Eigen::Vector3d> triangle_vertices_;  // 3 per triangle, in triangle order (double)
};

}  // namespace taxel::bench

#endif  // TAXEL_BENCH_EMBREE_CLOSEST_POINT_H_
