#include "core/geometry/implicit_surface.h"

#include <algorithm>
#include <cmath>

namespace taxel::geometry {
namespace {

constexpr double kPi = 3.141592653589793;

}  // namespace

Eigen::Vector3d ImplicitSurfacePoint(const ImplicitShape& shape, const Eigen::Vector3d& u) {
  // γ is exact for the sphere and within ~ε·size for SE/SEC; Newton along the ray from there,
  // kept within the radial bounds (φ increases along the ray: convex, origin inside).
  double t = std::clamp(1 / shape.Gamma(u), shape.inner_radius(), shape.outer_radius());
  for (int iteration = 0; iteration < 20; ++iteration) {
    Eigen::Vector3d grad;
    const double f = shape.Evaluate(t * u, &grad, nullptr);
    const double slope = grad.dot(u);
    if (!(slope > 0)) break;
    const double next = std::clamp(t - f / slope, shape.inner_radius(), shape.outer_radius());
    const bool done = std::abs(next - t) <= 1e-12 * shape.outer_radius();
    t = next;
    if (done) break;
  }
  return t * u;
}

Eigen::Vector3d FibonacciDirection(int i, int count) {
  const double golden = kPi * (3 - std::sqrt(5.0));  // the golden angle
  const double z = 1 - (2 * i + 1.0) / count, r = std::sqrt(std::max(0.0, 1 - z * z));
  return {r * std::cos(golden * i), r * std::sin(golden * i), z};
}

double ImplicitSampleCount(const ImplicitShape& shape, double spacing) {
  const double r = shape.outer_radius();
  return std::max(32.0, std::ceil(4 * kPi * r * r / (spacing * spacing)));
}

double ImplicitAreaWeight(const ImplicitShape& shape, const Eigen::Vector3d& u, Eigen::Vector3d* point) {
  *point = ImplicitSurfacePoint(shape, u);
  Eigen::Vector3d grad;
  shape.Evaluate(*point, &grad, nullptr);
  const double cosine = grad.normalized().dot(u);
  return point->squaredNorm() / std::max(cosine, shape.inner_radius() / shape.outer_radius());
}

void SampleImplicitSurface(const ImplicitShape& shape, int count, std::vector<Eigen::Vector3d>* points,
                           std::vector<double>* areas) {
  const double solid_angle = 4 * kPi / count;
  for (int i = 0; i < count; ++i) {
    Eigen::Vector3d p;
    const double weight = ImplicitAreaWeight(shape, FibonacciDirection(i, count), &p);
    points->push_back(p);
    areas->push_back(weight * solid_angle);
  }
}

double ImplicitSurfaceArea(const ImplicitShape& shape) {
  constexpr int kCount = 4096;
  double total = 0;
  for (int i = 0; i < kCount; ++i) {
    Eigen::Vector3d p;
    total += ImplicitAreaWeight(shape, FibonacciDirection(i, kCount), &p);
  }
  return total * 4 * kPi / kCount;
}

}  // namespace taxel::geometry
