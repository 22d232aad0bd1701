#include "core/geometry/point_cloud_index.h"

namespace taxel::geometry {

PointCloudIndex::PointCloudIndex(std::vector<Eigen::Vector3d> points) {
  cloud_.points = std::move(points);
  tree_ = std::make_unique<Tree>(3, cloud_, nanoflann::KDTreeSingleIndexAdaptorParams(10));
  if (!cloud_.points.empty()) tree_->buildIndex();
}

}  // namespace taxel::geometry
