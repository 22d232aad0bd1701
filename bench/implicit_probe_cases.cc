// Probe signed distance against implicit shapes (docs/reference.md#implicit-shapes):
//   implicit_probe/<shape>_cold  ImplicitSignedDistance(q) from the radial projection
//   implicit_probe/<shape>_warm  the same points in path order, each warm-started from the previous
//                                point's foot point (a probe moving 1e-4·R_out per step)
//   implicit_probe/<shape>_batch four points at a time through ImplicitSignedDistanceBatch (cold),
//                                as the probe kernels call it: the lock-step in AVX2 registers where
//                                the CPU has them; _batch_portable: the lock-step on scalar registers
// Points: 10⁴ probe centres within ±2 mm of the surface (a contact sensor's working range; about half
// inside), along a smooth path over the surface. Unit us: the median over repeats of the mean time
// per query, one thread. Extra fields: mean Newton iterations and starts per query.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "bench/bench_registry.h"
#include "core/geometry/implicit_shape.h"
#include "core/geometry/implicit_signed_distance.h"
#include "core/geometry/implicit_surface.h"

namespace taxel::bench {
namespace {

using geometry::ImplicitShape;

constexpr int kPoints = 10000;

ImplicitShape MakeShape(const std::string& name) {
  if (name == "sphere") return *ImplicitShape::Sphere(0.02);
  if (name == "se4") return *ImplicitShape::Superellipsoid(4, {0.03, 0.02, 0.015});
  if (name == "sec4") return *ImplicitShape::SuperellipticCylinder(4, 0.01, 0.025);
  if (name == "cone") return *ImplicitShape::TruncatedCone(10, 0.02, 0.01, 0.03, 0.02);
  std::vector<Eigen::Vector3d> normals = {
      Eigen::Vector3d::UnitX(), -Eigen::Vector3d::UnitX(), Eigen::Vector3d::UnitY(), -Eigen::Vector3d::UnitY(),
      Eigen::Vector3d::UnitZ(), -Eigen::Vector3d::UnitZ(), Eigen::Vector3d(1, 1, 1)};
  return *ImplicitShape::SmoothPolytope(normals, {0.02, 0.02, 0.02, 0.02, 0.02, 0.02, 0.025 * std::sqrt(3.0)}, 20);
}

// A spiral over the sphere of directions, each point moved ±2 mm (slowly varying) off the surface
// along its ray: consecutive points are about 1e-4·R_out apart.
std::vector<Eigen::Vector3d> PathNearSurface(const ImplicitShape& shape) {
  std::vector<Eigen::Vector3d> points;
  for (int i = 0; i < kPoints; ++i) {
    const double t = static_cast<double>(i) / kPoints;
    const double z = 1 - 2 * t, r = std::sqrt(1 - z * z), phi = 40 * 3.141592653589793 * t;
    const Eigen::Vector3d u(r * std::cos(phi), r * std::sin(phi), z);
    const Eigen::Vector3d p = geometry::ImplicitSurfacePoint(shape, u);
    points.push_back(p + 0.002 * std::sin(30 * phi) * u);
  }
  return points;
}

void Run(Context& ctx, const std::string& shape_name, bool warm) {
  const ImplicitShape shape = MakeShape(shape_name);
  const std::vector<Eigen::Vector3d> points = PathNearSurface(shape);
  double sink = 0;
  long iterations = 0, starts = 0;
  auto pass = [&] {
    Eigen::Vector3d previous;
    iterations = starts = 0;
    for (int i = 0; i < kPoints; ++i) {
      geometry::ImplicitProbeStats stats;
      const auto r = geometry::ImplicitSignedDistance(shape, points[i], std::numeric_limits<double>::infinity(),
                                                      warm && i > 0 ? &previous : nullptr, &stats);
      previous = r.closest;
      sink += r.distance;
      iterations += stats.iterations;
      starts += stats.starts;
    }
  };
  Record rec = ctx.NewRecord(1, "us");
  rec.samples = TimeRepeats(ctx.repeats(), pass);
  ScaleSamples(&rec, 1e6 / kPoints);
  rec.AddInt("queries", kPoints);
  rec.AddNumber("mean_iterations", static_cast<double>(iterations) / kPoints);
  rec.AddNumber("mean_starts", static_cast<double>(starts) / kPoints);
  rec.AddNumber("checksum", sink);
  ctx.Emit(rec);
}

// Four points at a time (the last batch may be shorter), the fastest (AVX2) or the portable lock-step.
void RunBatch(Context& ctx, const std::string& shape_name, bool portable) {
  const ImplicitShape shape = MakeShape(shape_name);
  const std::vector<Eigen::Vector3d> points = PathNearSurface(shape);
  const double max_distance[geometry::kImplicitBatch] = {
      std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(),
      std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  double sink = 0;
  auto pass = [&] {
    for (int i = 0; i < kPoints; i += geometry::kImplicitBatch) {
      const int count = std::min(geometry::kImplicitBatch, kPoints - i);
      geometry::SignedDistanceResult r[geometry::kImplicitBatch];
      geometry::internal::ImplicitSignedDistanceBatchWith(portable, shape, &points[i], count, max_distance, nullptr,
                                                          r);
      for (int l = 0; l < count; ++l) sink += r[l].distance;
    }
  };
  Record rec = ctx.NewRecord(1, "us");
  rec.samples = TimeRepeats(ctx.repeats(), pass);
  ScaleSamples(&rec, 1e6 / kPoints);
  rec.AddInt("queries", kPoints);
  rec.AddString("lock_step", portable ? "portable" : "fastest");
  rec.AddNumber("checksum", sink);
  ctx.Emit(rec);
}

TAXEL_BENCH_CASE("implicit_probe/sphere_cold", [](Context& c) { Run(c, "sphere", false); });
TAXEL_BENCH_CASE("implicit_probe/se4_cold", [](Context& c) { Run(c, "se4", false); });
TAXEL_BENCH_CASE("implicit_probe/se4_warm", [](Context& c) { Run(c, "se4", true); });
TAXEL_BENCH_CASE("implicit_probe/sec4_cold", [](Context& c) { Run(c, "sec4", false); });
TAXEL_BENCH_CASE("implicit_probe/sec4_warm", [](Context& c) { Run(c, "sec4", true); });
TAXEL_BENCH_CASE("implicit_probe/se4_batch", [](Context& c) { RunBatch(c, "se4", false); });
TAXEL_BENCH_CASE("implicit_probe/se4_batch_portable", [](Context& c) { RunBatch(c, "se4", true); });
TAXEL_BENCH_CASE("implicit_probe/sec4_batch", [](Context& c) { RunBatch(c, "sec4", false); });
TAXEL_BENCH_CASE("implicit_probe/sec4_batch_portable", [](Context& c) { RunBatch(c, "sec4", true); });
TAXEL_BENCH_CASE("implicit_probe/polytope_cold", [](Context& c) { Run(c, "polytope", false); });
TAXEL_BENCH_CASE("implicit_probe/polytope_warm", [](Context& c) { Run(c, "polytope", true); });
TAXEL_BENCH_CASE("implicit_probe/cone_cold", [](Context& c) { Run(c, "cone", false); });
TAXEL_BENCH_CASE("implicit_probe/cone_warm", [](Context& c) { Run(c, "cone", true); });

}  // namespace
}  // namespace taxel::bench
