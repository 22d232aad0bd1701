// implicit_pair/{se_se,poly_poly,poly_se,tc_sec}_{cold,warm,warm_derivatives}: the iDCOL shape–shape solve
// (core/geometry/implicit_pair.h), unit us, median over 10⁵ ergodic relative poses of the time of
// one solve, with the mean number of Newton steps ("mean_iterations"), the mean time and the
// number of solves that did not converge ("failures").
//
// Poses: shape 2's centre at distance d(t) ∈ [0.1·min R_in, 2·max R_out] (R_in, R_out the shapes'
// inner and outer radial bounds) in direction u(t), orientation q(t), all quasi-periodic in t with
// incommensurate frequencies (√2, √3, ...), so that t ↦ pose is ergodic over distances, directions
// and orientations. Cold: t_k = k (poses unrelated), each solve from scratch. Warm: 100 runs of 1000
// consecutive poses 1e-4 apart in t (runs 1 apart), each solve warm-started from the previous one
// of its run (the first of a run is cold). Warm derivatives: the warm runs asking for the
// PairDerivatives too. Shapes: geometry::ImplicitPairTypes(), as in the tests.
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "Eigen/Geometry"
#include "bench/bench_registry.h"
#include "core/geometry/implicit_generators.h"
#include "core/geometry/implicit_pair.h"

namespace taxel::bench {
namespace {

using geometry::ImplicitShape;

constexpr int kPoses = 100000;
constexpr int kRunLength = 1000;
constexpr double kWarmStep = 1e-4;

/// The ergodic pose of shape 2 in frame 1 at parameter t.
RigidTransform PoseAt(double t, double lo, double hi) {
  const double d = lo + (hi - lo) * (0.5 + 0.5 * std::sin(std::sqrt(2.0) * t));
  const double polar = std::acos(std::cos(std::sqrt(3.0) * t)), azimuth = std::sqrt(5.0) * t;
  RigidTransform X;
  X.p = d * Eigen::Vector3d(std::sin(polar) * std::cos(azimuth), std::sin(polar) * std::sin(azimuth), std::cos(polar));
  X.R = Eigen::Quaterniond(std::cos(std::sqrt(7.0) * t), std::sin(std::sqrt(11.0) * t), std::cos(std::sqrt(13.0) * t),
                           std::sin(std::sqrt(17.0) * t))
            .normalized()
            .toRotationMatrix();
  return X;
}

void Run(Context& ctx, int type, bool warm, bool derivatives = false) {
  const geometry::ImplicitPairType pair = geometry::ImplicitPairTypes()[type];
  const ImplicitShape &a = pair.shape1, &b = pair.shape2;
  const double lo = 0.1 * std::min(a.inner_radius(), b.inner_radius());
  const double hi = 2 * std::max(a.outer_radius(), b.outer_radius());
  const int poses = ctx.quick() ? kPoses / 10 : kPoses;
  std::vector<RigidTransform> path(poses);
  for (int k = 0; k < poses; ++k) {
    path[k] = PoseAt(warm ? (k / kRunLength) + kWarmStep * (k % kRunLength) : k, lo, hi);
  }
  Record r = ctx.NewRecord(1, "us");
  r.samples.resize(poses);
  long iterations = 0;
  int failures = 0;
  geometry::PairWarmStart state;
  geometry::PairDerivatives d;
  // One untimed pass to warm caches and branch predictors, then the timed one.
  for (int pass = 0; pass < 2; ++pass) {
    iterations = 0;
    failures = 0;
    for (int k = 0; k < poses; ++k) {
      if (k % kRunLength == 0) state = geometry::PairWarmStart();
      const auto start = std::chrono::steady_clock::now();
      const geometry::PairSolution s =
          geometry::SolveImplicitPair(a, b, path[k], warm ? &state : nullptr, derivatives ? &d : nullptr);
      const auto stop = std::chrono::steady_clock::now();
      r.samples[k] = std::chrono::duration<double, std::micro>(stop - start).count();
      iterations += s.iterations;
      failures += !s.converged || (derivatives && !d.valid);
    }
  }
  double total = 0;
  for (double v : r.samples) total += v;
  r.AddInt("poses", poses);
  r.AddNumber("mean_iterations", static_cast<double>(iterations) / poses);
  r.AddNumber("mean_us", total / poses);
  r.AddInt("failures", failures);
  if (ctx.quick()) r.AddString("note", "quick: 1e4 poses");
  ctx.Emit(r);
}

TAXEL_BENCH_CASE("implicit_pair/se_se_cold", [](Context& ctx) { Run(ctx, 0, false); });
TAXEL_BENCH_CASE("implicit_pair/se_se_warm", [](Context& ctx) { Run(ctx, 0, true); });
TAXEL_BENCH_CASE("implicit_pair/se_se_warm_derivatives", [](Context& ctx) { Run(ctx, 0, true, true); });
TAXEL_BENCH_CASE("implicit_pair/poly_poly_cold", [](Context& ctx) { Run(ctx, 1, false); });
TAXEL_BENCH_CASE("implicit_pair/poly_poly_warm", [](Context& ctx) { Run(ctx, 1, true); });
TAXEL_BENCH_CASE("implicit_pair/poly_poly_warm_derivatives", [](Context& ctx) { Run(ctx, 1, true, true); });
TAXEL_BENCH_CASE("implicit_pair/poly_se_cold", [](Context& ctx) { Run(ctx, 2, false); });
TAXEL_BENCH_CASE("implicit_pair/poly_se_warm", [](Context& ctx) { Run(ctx, 2, true); });
TAXEL_BENCH_CASE("implicit_pair/poly_se_warm_derivatives", [](Context& ctx) { Run(ctx, 2, true, true); });
TAXEL_BENCH_CASE("implicit_pair/tc_sec_cold", [](Context& ctx) { Run(ctx, 3, false); });
TAXEL_BENCH_CASE("implicit_pair/tc_sec_warm", [](Context& ctx) { Run(ctx, 3, true); });
TAXEL_BENCH_CASE("implicit_pair/tc_sec_warm_derivatives", [](Context& ctx) { Run(ctx, 3, true, true); });

}  // namespace
}  // namespace taxel::bench
