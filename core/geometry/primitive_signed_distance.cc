#include "core/geometry/primitive_signed_distance.h"

#include <cmath>

namespace taxel::geometry {
namespace {

// Unit radial direction of p in the xy-plane (+x on the axis) and the radial distance.
Eigen::Vector3d RadialDirection(const Eigen::Vector3d& p, double* rho) {
  *rho = std::hypot(p.x(), p.y());
  if (*rho > 0) return Eigen::Vector3d(p.x() / *rho, p.y() / *rho, 0);
  return Eigen::Vector3d::UnitX();
}

}  // namespace

SignedDistanceResult SphereSignedDistance(double radius, const Eigen::Vector3d& p) {
  SignedDistanceResult r;
  const double len = p.norm();
  r.normal = len > 0 ? Eigen::Vector3d(p / len) : Eigen::Vector3d::UnitZ();
  r.distance = len - radius;
  r.closest = radius * r.normal;
  return r;
}

SignedDistanceResult BoxSignedDistance(const Eigen::Vector3d& h, const Eigen::Vector3d& p) {
  SignedDistanceResult r;
  const Eigen::Vector3d q = p.cwiseAbs() - h;
  if ((q.array() > 0).any()) {
    // Outside: the clamped point is the closest one.
    r.closest = p.cwiseMax(-h).cwiseMin(h);
    const Eigen::Vector3d v = p - r.closest;
    r.distance = v.norm();
    r.normal = v / r.distance;
    return r;
  }
  // Inside or on the surface: the nearest face.
  int axis = 0;
  for (int a = 1; a < 3; ++a) {
    if (q[a] > q[axis]) axis = a;
  }
  const double side = p[axis] >= 0 ? 1.0 : -1.0;
  r.distance = q[axis];
  r.closest = p;
  r.closest[axis] = side * h[axis];
  r.normal = Eigen::Vector3d::Zero();
  r.normal[axis] = side;
  return r;
}

SignedDistanceResult CapsuleSignedDistance(double radius, double half_length, const Eigen::Vector3d& p) {
  SignedDistanceResult r;
  const Eigen::Vector3d s(0, 0, std::clamp(p.z(), -half_length, half_length));
  const Eigen::Vector3d v = p - s;
  const double len = v.norm();
  r.normal = len > 0 ? Eigen::Vector3d(v / len) : Eigen::Vector3d::UnitX();
  r.distance = len - radius;
  r.closest = s + radius * r.normal;
  return r;
}

SignedDistanceResult CylinderSignedDistance(double radius, double half_length, const Eigen::Vector3d& p) {
  SignedDistanceResult r;
  double rho;
  const Eigen::Vector3d radial = RadialDirection(p, &rho);
  const double dr = rho - radius;
  const double dz = std::abs(p.z()) - half_length;
  const double zs = p.z() >= 0 ? 1.0 : -1.0;
  if (dr > 0 && dz > 0) {  // beyond the rim circle
    r.closest = radius * radial + Eigen::Vector3d(0, 0, zs * half_length);
    const Eigen::Vector3d v = p - r.closest;
    r.distance = v.norm();
    r.normal = v / r.distance;
  } else if (dr >= dz) {  // the side is nearest (outside beside it, or inside with side ≥ cap)
    r.distance = dr;
    r.closest = radius * radial + Eigen::Vector3d(0, 0, p.z());
    r.normal = radial;
  } else {  // a cap is nearest
    r.distance = dz;
    r.closest = Eigen::Vector3d(p.x(), p.y(), zs * half_length);
    r.normal = Eigen::Vector3d(0, 0, zs);
  }
  return r;
}

SignedDistanceResult HalfSpaceSignedDistance(const Eigen::Vector3d& p) {
  SignedDistanceResult r;
  r.distance = p.z();
  r.closest = Eigen::Vector3d(p.x(), p.y(), 0);
  r.normal = Eigen::Vector3d::UnitZ();
  return r;
}

}  // namespace taxel::geometry
