#include "core/sensors/tracked_geometry.h"

#include <algorithm>

#include "core/geometry/point_cloud_index.h"

namespace taxel::sensors {

TrackedGeometry::TrackedGeometry(std::vector<TrackedLink> links, int num_envs,
                                 const std::vector<std::vector<int>>& points_per_env)
    : links_(std::move(links)) {
  env_offsets_.resize(static_cast<size_t>(num_envs) * links_.size());
  env_counts_.resize(env_offsets_.size());
  size_t total = 0;
  for (int e = 0; e < num_envs; ++e) {
    for (size_t t = 0; t < links_.size(); ++t) {
      env_offsets_[e * links_.size() + t] = total;
      env_counts_[e * links_.size() + t] = points_per_env[e][t];
      total += points_per_env[e][t];
    }
  }
  anchored_.assign(total, 0);
  anchors_.assign(total, Eigen::Vector3d::Zero());
}

TrackedGeometry::~TrackedGeometry() = default;

void TrackedGeometry::BuildIndices() {
  for (TrackedLink& t : links_) {
    t.index.clear();
    for (const auto& pts : t.points) t.index.push_back(std::make_shared<const geometry::PointCloudIndex>(pts));
  }
}

void TrackedGeometry::ResetEnv(int env) {
  for (size_t t = 0; t < links_.size(); ++t) {
    const size_t o = env_offsets_[env * links_.size() + t], n = env_counts_[env * links_.size() + t];
    std::fill(anchored_.begin() + o, anchored_.begin() + o + n, 0);
  }
}

size_t TrackedGeometry::memory_bytes() const {
  size_t total = sizeof(*this) + anchored_.capacity() + anchors_.capacity() * sizeof(Eigen::Vector3d) +
                 (env_offsets_.capacity() + env_counts_.capacity()) * sizeof(size_t);
  for (const TrackedLink& t : links_) {
    for (const auto& pts : t.points) total += pts.capacity() * sizeof(Eigen::Vector3d) * 2;  // points + index
  }
  if (fft_) total += (fft_->kx.size() * 4) * sizeof(std::complex<double>);
  if (layer_) total += layer_->memory_bytes();
  return total;
}

}  // namespace taxel::sensors
