// Axis-aligned bounding boxes.
#ifndef TAXEL_CORE_GEOMETRY_AABB_H_
#define TAXEL_CORE_GEOMETRY_AABB_H_

#include <algorithm>
#include <limits>

#include "Eigen/Core"
#include "core/common/pose.h"

namespace taxel::geometry {

/// An axis-aligned box [lo, hi] (metres). Empty when lo > hi on any axis; bounds may be infinite.
struct Aabb {
  Eigen::Vector3d lo = Eigen::Vector3d::Constant(std::numeric_limits<double>::infinity());
  Eigen::Vector3d hi = Eigen::Vector3d::Constant(-std::numeric_limits<double>::infinity());

  static Aabb Empty() { return {}; }
  static Aabb Infinite() {
    const double inf = std::numeric_limits<double>::infinity();
    return {Eigen::Vector3d::Constant(-inf), Eigen::Vector3d::Constant(inf)};
  }
  static Aabb FromCenterHalf(const Eigen::Vector3d& c, const Eigen::Vector3d& h) { return {c - h, c + h}; }

  bool is_empty() const { return (lo.array() > hi.array()).any(); }
  bool is_finite() const { return lo.allFinite() && hi.allFinite(); }
  void Extend(const Eigen::Vector3d& p) {
    lo = lo.cwiseMin(p);
    hi = hi.cwiseMax(p);
  }
  void Extend(const Aabb& b) {
    lo = lo.cwiseMin(b.lo);
    hi = hi.cwiseMax(b.hi);
  }
  Aabb Inflated(double margin) const { return {lo.array() - margin, hi.array() + margin}; }
  bool Overlaps(const Aabb& b) const {
    return (lo.array() <= b.hi.array()).all() && (b.lo.array() <= hi.array()).all();
  }
  bool Contains(const Eigen::Vector3d& p) const {
    return (lo.array() <= p.array()).all() && (p.array() <= hi.array()).all();
  }
  /// Squared distance from p to the box (0 inside).
  double SquaredDistance(const Eigen::Vector3d& p) const {
    const Eigen::Vector3d d = (lo - p).cwiseMax(p - hi).cwiseMax(0.0);
    return d.squaredNorm();
  }
  Eigen::Vector3d center() const { return 0.5 * (lo + hi); }
  Eigen::Vector3d half_extents() const { return 0.5 * (hi - lo); }

  /// Bounds of this box after the rigid transform X_AB (this box expressed in B). A box with an
  /// infinite bound maps to the infinite box unless X is a pure translation.
  Aabb Transformed(const RigidTransform& X_AB) const {
    if (is_empty()) return Empty();
    if (!is_finite()) {
      if (X_AB.R.isIdentity(0.0)) return {lo + X_AB.p, hi + X_AB.p};
      return Infinite();
    }
    const Eigen::Vector3d c = X_AB * center();
    const Eigen::Vector3d h = X_AB.R.cwiseAbs() * half_extents();
    return {c - h, c + h};
  }
};

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_AABB_H_
