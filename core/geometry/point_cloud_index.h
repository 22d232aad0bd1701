// A KD-tree over a fixed set of 3D points (nanoflann 1.4), with an allocation-free ball query.
#ifndef TAXEL_CORE_GEOMETRY_POINT_CLOUD_INDEX_H_
#define TAXEL_CORE_GEOMETRY_POINT_CLOUD_INDEX_H_

#include <cmath>
#include <memory>
#include <vector>

#include "Eigen/Core"
#include "nanoflann.hpp"

namespace taxel::geometry {

class PointCloudIndex {
 public:
  explicit PointCloudIndex(std::vector<Eigen::Vector3d> points);
  const std::vector<Eigen::Vector3d>& points() const { return cloud_.points; }

  /// Calls fn(index, distance) for every point within `radius` (m) of q, in tree order.
  template <typename Fn>
  void ForEachWithin(const Eigen::Vector3d& q, double radius, Fn&& fn) const {
    if (cloud_.points.empty()) return;
    Visitor<Fn> v{radius * radius, &fn};
    const double query[3] = {q.x(), q.y(), q.z()};
    tree_->findNeighbors(v, query, nanoflann::SearchParams(32, 0, false));
  }

 private:
  struct Cloud {
    std::vector<Eigen::Vector3d> points;
    size_t kdtree_get_point_count() const { return points.size(); }
    double kdtree_get_pt(size_t i, size_t dim) const { return points[i][static_cast<int>(dim)]; }
    template <class Box>
    bool kdtree_get_bbox(Box&) const {
      return false;
    }
  };
  // nanoflann result-set interface: every point within the radius is reported.
  template <typename Fn>
  struct Visitor {
    double radius2;
    Fn* fn;
    size_t count = 0;
    void init() {}
    void clear() {}
    size_t size() const { return count; }
    bool full() const { return true; }
    bool addPoint(double d2, size_t index) {
      if (d2 < radius2) {
        ++count;
        (*fn)(index, std::sqrt(d2));
      }
      return true;
    }
    double worstDist() const { return radius2; }
  };
  using Tree = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<double, Cloud>, Cloud, 3, size_t>;
  Cloud cloud_;
  std::unique_ptr<Tree> tree_;
};

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_POINT_CLOUD_INDEX_H_
