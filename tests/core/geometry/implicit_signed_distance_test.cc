#include "core/geometry/implicit_signed_distance.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/test_support.h"

namespace taxel::geometry {
namespace {

constexpr double kPi = 3.14159265358979323846;

/// Uniform points in the shape's bounding box inflated by `inflate` (0.2 = 20 % each side).
std::vector<Eigen::Vector3d> PointsAround(const ImplicitShape& shape, int count, uint32_t seed, double inflate = 0.2) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(-1, 1);
  const Eigen::Vector3d center = 0.5 * (shape.local_bounds().lo + shape.local_bounds().hi);
  const Eigen::Vector3d half = (0.5 + inflate) * (shape.local_bounds().hi - shape.local_bounds().lo);
  std::vector<Eigen::Vector3d> points;
  for (int i = 0; i < count; ++i) {
    points.push_back(center + half.cwiseProduct(testing::Draw<3>(unit, rng)));
  }
  return points;
}

/// The surface point along the unit direction u from the origin, by plain bisection on φ(t·u)
/// (independent of the solver and of Gamma).
Eigen::Vector3d SurfaceByBisection(const ImplicitShape& shape, const Eigen::Vector3d& u) {
  double lo = 0, hi = 1.01 * shape.outer_radius();
  for (int i = 0; i < 64; ++i) {
    const double mid = 0.5 * (lo + hi);
    (shape.Phi(mid * u) <= 0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi) * u;
}

/// Brute force: the 5 nearest of `samples` surface points (a spherical Fibonacci lattice of
/// directions), each refined by a pattern search over the direction u in its tangent plane.
double BruteForceDistance(const ImplicitShape& shape, const std::vector<Eigen::Vector3d>& samples,
                          const Eigen::Vector3d& q) {
  std::vector<std::pair<double, size_t>> order;
  for (size_t i = 0; i < samples.size(); ++i) order.push_back({(samples[i] - q).squaredNorm(), i});
  std::partial_sort(order.begin(), order.begin() + 5, order.end());
  double overall = std::numeric_limits<double>::infinity();
  for (int k = 0; k < 5; ++k) {
    const Eigen::Vector3d u0 = samples[order[k].second].normalized();
    const Eigen::Vector3d e1 = u0.unitOrthogonal(), e2 = u0.cross(e1);
    auto distance_at = [&](double s, double t) {
      return (SurfaceByBisection(shape, (u0 + s * e1 + t * e2).normalized()) - q).norm();
    };
    double s = 0, t = 0, best = distance_at(0, 0);
    for (double step = 0.02; step > 1e-11;) {
      bool improved = false;
      for (const auto& [ds, dt] : {std::pair{step, 0.0}, {-step, 0.0}, {0.0, step}, {0.0, -step}}) {
        const double d = distance_at(s + ds, t + dt);
        if (d < best) best = d, s += ds, t += dt, improved = true;
      }
      if (!improved) step *= 0.5;
    }
    overall = std::min(overall, best);
  }
  return overall;
}

std::vector<Eigen::Vector3d> FibonacciSurface(const ImplicitShape& shape, int count) {
  std::vector<Eigen::Vector3d> samples;
  const double golden = kPi * (3 - std::sqrt(5.0));
  for (int i = 0; i < count; ++i) {
    const double z = 1 - (2 * i + 1.0) / count, r = std::sqrt(1 - z * z);
    samples.push_back(
        SurfaceByBisection(shape, Eigen::Vector3d(r * std::cos(golden * i), r * std::sin(golden * i), z)));
  }
  return samples;
}

TEST(ImplicitSignedDistanceTest, SphereIsExact) {
  // |q| − R, foot R·q/|q|, normal q/|q|, inside and outside.
  const double radius = 0.02;
  const ImplicitShape sphere = *ImplicitShape::Sphere(radius);
  for (const Eigen::Vector3d& q : PointsAround(sphere, 500, 1, 1.0)) {
    const SignedDistanceResult r = ImplicitSignedDistance(sphere, q);
    EXPECT_NEAR(r.distance, q.norm() - radius, 1e-15);
    EXPECT_LT((r.closest - radius * q.normalized()).norm(), 1e-15);
    EXPECT_LT((r.normal - q.normalized()).norm(), 1e-12);
  }
}

/// The closest point of the ellipsoid Σ y_i²/a_i² = 1 to q by its secular equation (Eberly,
/// "Distance from a point to an ellipse, an ellipsoid, or a hyperellipsoid"): y_i = q_i a_i²/(a_i² + t)
/// with t the unique root in (−min a_i², ∞) of Σ (a_i q_i/(a_i² + t))² = 1, found by bisection.
Eigen::Vector3d EllipsoidFoot(const Eigen::Vector3d& a, const Eigen::Vector3d& q) {
  const Eigen::Vector3d a2 = a.cwiseProduct(a);
  auto f = [&](double t) {
    double sum = 0;
    for (int i = 0; i < 3; ++i) sum += std::pow(a[i] * q[i] / (a2[i] + t), 2);
    return sum - 1;  // decreasing in t
  };
  double lo = -a2.minCoeff(), hi = q.norm() * a.maxCoeff();
  for (int i = 0; i < 300; ++i) {
    const double mid = 0.5 * (lo + hi);
    (f(mid) > 0 ? lo : hi) = mid;
  }
  const double t = 0.5 * (lo + hi);
  return Eigen::Vector3d(q[0] * a2[0] / (a2[0] + t), q[1] * a2[1] / (a2[1] + t), q[2] * a2[2] / (a2[2] + t));
}

TEST(ImplicitSignedDistanceTest, EllipsoidMatchesItsSecularEquation) {
  // SE n = 1 is the ellipsoid up to ε = 1e-12 (a shift of ~1e-14 m).
  const Eigen::Vector3d a(0.03, 0.02, 0.012);
  const ImplicitShape ellipsoid = *ImplicitShape::Superellipsoid(1, a);
  int inside = 0;
  for (const Eigen::Vector3d& q : PointsAround(ellipsoid, 2000, 2, 0.5)) {
    const Eigen::Vector3d foot = EllipsoidFoot(a, q);
    const double outside = q.cwiseQuotient(a).squaredNorm() > 1 ? 1 : -1;
    inside += outside < 0;
    const SignedDistanceResult r = ImplicitSignedDistance(ellipsoid, q);
    ASSERT_NEAR(r.distance, outside * (q - foot).norm(), 1e-9) << q.transpose();
    EXPECT_LT((r.closest - foot).norm(), 1e-8) << q.transpose();
  }
  EXPECT_GT(inside, 100);  // both sides covered
}

TEST(ImplicitSignedDistanceTest, LargeExponentApproachesTheBox) {
  // SE(n = 32) lies in the box |y_i| ≤ a_i and contains the box scaled by s, s² = 3^(−1/n) − ε
  // (there Σ (u_i² + ε)ⁿ ≤ 3(s² + ε)ⁿ = 1), so the two distances differ by at most
  // H = (1 − s)·|a| (Hausdorff bound). Along an axis, the foot is (x*, 0, 0) with
  // (x*²/a² + ε)ⁿ + 2εⁿ + 1e-16 = 1: exact.
  const Eigen::Vector3d a(0.03, 0.02, 0.015);
  const int n = 32;
  const ImplicitShape se = *ImplicitShape::Superellipsoid(n, a);
  const double eps = SuperquadricEpsilon(n);
  const double s = std::sqrt(std::pow(3.0, -1.0 / n) - eps);
  const double hausdorff = (1 - s) * a.norm();
  for (const Eigen::Vector3d& q : PointsAround(se, 2000, 3, 0.5)) {
    const Eigen::Vector3d outside = (q.cwiseAbs() - a).cwiseMax(0.0);
    const double box = outside.norm() > 0 ? outside.norm() : (q.cwiseAbs() - a).maxCoeff();
    EXPECT_NEAR(ImplicitSignedDistance(se, q).distance, box, hausdorff) << q.transpose();
  }
  const double x_star = a[0] * std::sqrt(std::pow(1 - 2 * std::pow(eps, n) - 1e-16, 1.0 / n) - eps);
  for (double x : {0.02, 0.0299, 0.031, 0.05}) {
    EXPECT_NEAR(ImplicitSignedDistance(se, Eigen::Vector3d(x, 0, 0)).distance, x - x_star, 1e-12) << x;
  }
}

struct NamedShape {
  std::string name;
  ImplicitShape shape;
};

std::vector<NamedShape> EveryKind() {
  std::vector<NamedShape> shapes;
  shapes.push_back({"sphere", *ImplicitShape::Sphere(0.02)});
  shapes.push_back({"se1", *ImplicitShape::Superellipsoid(1, {0.03, 0.02, 0.015})});
  shapes.push_back({"se4", *ImplicitShape::Superellipsoid(4, {0.03, 0.02, 0.015})});
  shapes.push_back({"se32", *ImplicitShape::Superellipsoid(32, {0.03, 0.02, 0.015})});
  shapes.push_back({"sec4", *ImplicitShape::SuperellipticCylinder(4, 0.01, 0.025)});
  // A cube of half-size 2 cm with one corner cut off.
  std::vector<Eigen::Vector3d> normals = {
      Eigen::Vector3d::UnitX(), -Eigen::Vector3d::UnitX(), Eigen::Vector3d::UnitY(), -Eigen::Vector3d::UnitY(),
      Eigen::Vector3d::UnitZ(), -Eigen::Vector3d::UnitZ(), Eigen::Vector3d(1, 1, 1)};
  std::vector<double> offsets = {0.02, 0.02, 0.02, 0.02, 0.02, 0.02, 0.025 * std::sqrt(3.0)};
  shapes.push_back({"polytope", *ImplicitShape::SmoothPolytope(normals, offsets, 20)});
  shapes.push_back({"cone_narrowing", *ImplicitShape::TruncatedCone(10, 0.02, 0.01, 0.03, 0.02)});
  shapes.push_back({"cone_widening", *ImplicitShape::TruncatedCone(30, 0.008, 0.015, 0.01, 0.03)});
  return shapes;
}

TEST(ImplicitSignedDistanceTest, MatchesBruteForceOnRandomPoints) {
  // The solver's distance against the minimum over a dense surface sampling refined by a pattern
  // search (both found without the solver), inside and outside.
  for (const NamedShape& named : EveryKind()) {
    SCOPED_TRACE(named.name);
    const std::vector<Eigen::Vector3d> samples = FibonacciSurface(named.shape, 4000);
    for (const Eigen::Vector3d& q : PointsAround(named.shape, 150, 4)) {
      const SignedDistanceResult r = ImplicitSignedDistance(named.shape, q);
      const double brute = BruteForceDistance(named.shape, samples, q);
      ASSERT_NEAR(std::abs(r.distance), brute, 1e-9 * named.shape.outer_radius() / 0.02) << q.transpose();
      EXPECT_EQ(r.distance < 0, named.shape.Phi(q) < 0);
    }
  }
}

TEST(ImplicitSignedDistanceTest, ConvergesOnRandomPointsOfEveryKind) {
  // 10⁵ points per shape in its box inflated by 20 % (about half inside); every solve must
  // converge to a foot point on the surface whose normal is along q − y.
  for (const NamedShape& named : EveryKind()) {
    if (named.name == "se1" || named.name == "se32" || named.name == "cone_widening") continue;  // one per kind
    SCOPED_TRACE(named.name);
    int converged = 0;
    long iterations = 0, starts = 0, inside = 0;
    const std::vector<Eigen::Vector3d> points = PointsAround(named.shape, 100000, 5);
    for (const Eigen::Vector3d& q : points) {
      ImplicitProbeStats stats;
      const SignedDistanceResult r =
          ImplicitSignedDistance(named.shape, q, std::numeric_limits<double>::infinity(), nullptr, &stats);
      converged += stats.converged;
      iterations += stats.iterations;
      starts += stats.starts;
      inside += r.distance < 0;
      ASSERT_LT(std::abs(named.shape.Phi(r.closest)), 1e-10) << q.transpose();
      ASSERT_NEAR((q - r.closest).norm(), std::abs(r.distance), 1e-15);
      if (std::abs(r.distance) > 1e-9) {
        ASSERT_LT(((q - r.closest) / r.distance - r.normal).norm(), 1e-6);
      }
    }
    std::printf("%-16s converged %d/%zu, %.2f iterations and %.2f starts per point, %.1f %% inside\n",
                named.name.c_str(), converged, points.size(), static_cast<double>(iterations) / points.size(),
                static_cast<double>(starts) / points.size(), 100.0 * inside / points.size());
    EXPECT_EQ(converged, static_cast<int>(points.size()));
  }
}

TEST(ImplicitSignedDistanceTest, InsidePointWhereEveryStartOnPsiStalls) {
  // Inside SE(4) near the diagonal between the −x and −y faces (x/a = −0.85, y/b = −0.74): every
  // start of the solve on the polynomial ψ stalled there (ψ grows as y^8), and the answer was an
  // unconverged point 1.3e-4 off the surface. The solve on φ from the same starts converges; the
  // distance is checked against the dense surface sampling refined by pattern search.
  const ImplicitShape se4 = *ImplicitShape::Superellipsoid(4, {0.03, 0.02, 0.015});
  const Eigen::Vector3d q(-0.025362492042369102, -0.014879687271203703, 0.00039595739703135544);
  ImplicitProbeStats stats;
  const SignedDistanceResult r =
      ImplicitSignedDistance(se4, q, std::numeric_limits<double>::infinity(), nullptr, &stats);
  EXPECT_TRUE(stats.converged);
  EXPECT_LT(std::abs(se4.Phi(r.closest)), 1e-10);
  EXPECT_LT(r.distance, 0);
  EXPECT_NEAR(std::abs(r.distance), BruteForceDistance(se4, FibonacciSurface(se4, 4000), q), 1e-9);
}

TEST(ImplicitSignedDistanceTest, BatchEqualsOneAtATimeBitForBit) {
  // Batches of 1–4 centres of every kind (and superellipsoids of exponents 2, 3 and 5: 3 and 5 take
  // std::pow for their root), by the portable lock-step and by the fastest one of this CPU (AVX2
  // registers for superellipsoids): points in the inflated box (inside, outside, far), and points
  // within 2 mm of the surface (the tactile case, the lock-step path of SE and SEC), each with its
  // own max_distance (unbounded, 2 mm, 0.1 mm: some culled) and, for some, a warm start. Every
  // result must equal the single-centre solve's exactly.
  std::vector<NamedShape> shapes = EveryKind();
  for (int n : {2, 3, 5}) {
    shapes.push_back({"se" + std::to_string(n), *ImplicitShape::Superellipsoid(n, {0.02, 0.035, 0.015})});
  }
  for (const NamedShape& named : shapes) {
    SCOPED_TRACE(named.name);
    std::vector<Eigen::Vector3d> points = PointsAround(named.shape, 2000, 17);
    for (const Eigen::Vector3d& y : FibonacciSurface(named.shape, 2000)) {
      Eigen::Vector3d g;
      named.shape.Evaluate(y, &g, nullptr);
      points.push_back(y + (0.002 * std::sin(7.0 * points.size())) * g.normalized());
    }
    const double bounds[] = {std::numeric_limits<double>::infinity(), 0.002, 1e-4};
    for (bool portable : {true, false}) {
      SCOPED_TRACE(portable ? "portable" : "fastest");
      int found = 0;
      for (size_t first = 0; first < points.size();) {
        const int count = 1 + static_cast<int>(first % kImplicitBatch);
        if (first + count > points.size()) break;
        double max_distance[kImplicitBatch];
        Eigen::Vector3d warm[kImplicitBatch];
        const Eigen::Vector3d* warm_ptr[kImplicitBatch];
        for (int i = 0; i < count; ++i) {
          max_distance[i] = bounds[(first + i) % 3];
          warm[i] = 0.9 * points[first + i];
          warm_ptr[i] = (first + i) % 2 == 0 ? &warm[i] : nullptr;
        }
        SignedDistanceResult batch[kImplicitBatch];
        internal::ImplicitSignedDistanceBatchWith(portable, named.shape, &points[first], count, max_distance, warm_ptr,
                                                  batch);
        for (int i = 0; i < count; ++i) {
          const SignedDistanceResult one =
              ImplicitSignedDistance(named.shape, points[first + i], max_distance[i], warm_ptr[i]);
          ASSERT_EQ(batch[i].distance, one.distance) << points[first + i].transpose();
          ASSERT_EQ(std::signbit(batch[i].distance), std::signbit(one.distance));
          if (!one.found()) continue;
          ++found;
          ASSERT_EQ(batch[i].closest, one.closest);
          ASSERT_EQ(batch[i].normal, one.normal);
        }
        first += count;
      }
      EXPECT_GT(found, 1000);
    }
  }
}

TEST(ImplicitSignedDistanceTest, WarmStartSavesIterations) {
  // A probe moving 1e-4·R_out per step outside the shape: warm-started from the previous foot
  // point, the same answers in fewer iterations.
  for (const NamedShape& named : EveryKind()) {
    SCOPED_TRACE(named.name);
    const double length = named.shape.outer_radius();
    long cold = 0, warm = 0;
    Eigen::Vector3d previous;
    bool have_previous = false;
    for (int step = 0; step < 2000; ++step) {
      const double angle = 1e-4 * step / 1.3;
      const Eigen::Vector3d q = 1.3 * length * Eigen::Vector3d(std::cos(angle), std::sin(angle), 0.3).normalized();
      ImplicitProbeStats cold_stats, warm_stats;
      const SignedDistanceResult a =
          ImplicitSignedDistance(named.shape, q, std::numeric_limits<double>::infinity(), nullptr, &cold_stats);
      const SignedDistanceResult b = ImplicitSignedDistance(named.shape, q, std::numeric_limits<double>::infinity(),
                                                            have_previous ? &previous : nullptr, &warm_stats);
      ASSERT_NEAR(a.distance, b.distance, 1e-12 * length);
      cold += cold_stats.iterations;
      warm += warm_stats.iterations;
      previous = b.closest;
      have_previous = true;
    }
    std::printf("%-16s iterations per step: cold %.2f, warm %.2f\n", named.name.c_str(), cold / 2000.0, warm / 2000.0);
    if (named.shape.kind() == ImplicitKind::kSphere) {
      EXPECT_EQ(warm, 0);  // the radial start is exact and always used
    } else {
      EXPECT_LT(warm, cold * 0.7);
    }
  }
}

TEST(ImplicitSignedDistanceTest, BoundedQueryStopsEarlyFarAway) {
  // Outer radius of the sphere is R: a point 2R from the surface with max_distance R is not found;
  // with max_distance 3R it gets its exact distance.
  const ImplicitShape sphere = *ImplicitShape::Sphere(0.01);
  const Eigen::Vector3d q(0.03, 0, 0);
  ImplicitProbeStats stats;
  EXPECT_FALSE(ImplicitSignedDistance(sphere, q, 0.01, nullptr, &stats).found());
  EXPECT_EQ(stats.starts, 0);
  EXPECT_NEAR(ImplicitSignedDistance(sphere, q, 0.03).distance, 0.02, 1e-15);
  // Inside points are always found.
  EXPECT_NEAR(ImplicitSignedDistance(sphere, Eigen::Vector3d(0.002, 0, 0), 0).distance, -0.008, 1e-15);
}

TEST(ImplicitSignedDistanceTest, FirstOrderDistanceBoundsConvexFunctionsFromBelow) {
  // Where φ is a convex function, its tangent plane at q lies below it: every outside point has
  // φ(q)/|∇φ(q)| ≤ its distance (the solver's, checked against brute force above). The query culls
  // on that bound, so asking with max_distance = the true distance (+1e-12) must still find every
  // point; a point beyond max_distance but inside the outer ball is refused without a start.
  for (const NamedShape& named : EveryKind()) {
    SCOPED_TRACE(named.name);
    if (!named.shape.convex_function()) continue;  // the cone: culled by the outer ball only
    int culled = 0, outside = 0;
    for (const Eigen::Vector3d& q : PointsAround(named.shape, 4000, 11, 0.5)) {
      Eigen::Vector3d g;
      const double phi = named.shape.Evaluate(q, &g, nullptr);
      if (phi <= 0) continue;
      ++outside;
      const double d = ImplicitSignedDistance(named.shape, q).distance;
      ASSERT_LE(phi / g.norm(), d * (1 + 1e-12)) << q.transpose();
      ASSERT_NEAR(ImplicitSignedDistance(named.shape, q, d + 1e-12).distance, d, 1e-15) << q.transpose();
      // Below the distance: either culled (not found, no start) or the exact distance.
      ImplicitProbeStats stats;
      const double cut = 0.5 * d;
      const SignedDistanceResult r = ImplicitSignedDistance(named.shape, q, cut, nullptr, &stats);
      if (r.found()) {
        EXPECT_NEAR(r.distance, d, 1e-15);
      } else if (q.norm() - named.shape.outer_radius() <= cut) {
        EXPECT_EQ(stats.starts, 0);
        ++culled;
      }
    }
    // The tangent-plane cull does work on points the outer ball alone lets through (not for the
    // sphere, whose outer ball is the shape itself).
    if (named.shape.kind() != ImplicitKind::kSphere) {
      EXPECT_GT(culled, 0) << outside;
    }
  }
}

TEST(ImplicitSignedDistanceTest, CentreOfAnEllipsoidGoesToTheNearestSide) {
  // At the origin (on the medial axis) the nearest surface points are (0, 0, ±c).
  const ImplicitShape ellipsoid = *ImplicitShape::Superellipsoid(1, {0.03, 0.02, 0.01});
  const SignedDistanceResult r = ImplicitSignedDistance(ellipsoid, Eigen::Vector3d::Zero());
  EXPECT_NEAR(r.distance, -0.01, 1e-12);
  EXPECT_NEAR(std::abs(r.normal.z()), 1, 1e-9);
}

}  // namespace
}  // namespace taxel::geometry
