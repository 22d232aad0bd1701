// The force laws' derivatives (SpringDamperForceJacobian, NonlinearLawJacobian) against central
// differences of the laws themselves, at random contacts in every regime of each law.
#include <random>

#include "core/contact/nonlinear_law.h"
#include "core/contact/spring_damper_law.h"
#include "gtest/gtest.h"
#include "tests/support/test_support.h"

namespace taxel::contact {
namespace {

template <typename Force>
void ExpectJacobian(const Force& force, const LawJacobian& j, double depth, const Eigen::Vector3d& n,
                    const std::string& where) {
  const double hd = 1e-9, hn = 1e-7;
  const Eigen::Vector3d fd_depth = (force(depth + hd, n) - force(depth - hd, n)) / (2 * hd);
  Eigen::Matrix3d fd_normal;
  for (int c = 0; c < 3; ++c) {
    const Eigen::Vector3d e = hn * Eigen::Vector3d::Unit(c);
    fd_normal.col(c) = (force(depth, n + e) - force(depth, n - e)) / (2 * hn);
  }
  const double sd = std::max(fd_depth.norm(), 1.0), sn = std::max(fd_normal.norm(), 1e-3);
  EXPECT_LE((j.d_depth - fd_depth).norm(), 1e-6 * sd) << where << "\n"
                                                      << j.d_depth.transpose() << "\n"
                                                      << fd_depth.transpose();
  EXPECT_LE((j.d_normal - fd_normal).norm(), 1e-6 * sn) << where << "\n" << j.d_normal << "\n" << fd_normal;
}

TEST(LawJacobianTest, SpringDamperMatchesCentralDifferences) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (double exponent : {1.0, 1.5, 2.0}) {
    SpringDamperParams k;
    k.normal_stiffness = 800, k.normal_damping = 3, k.exponent = exponent, k.shear_damping = 2;
    for (int i = 0; i < 50; ++i) {
      const double depth = 1e-3 * (1.1 + u(rng));
      const Eigen::Vector3d n = testing::Draw<3>(u, rng).normalized();
      const Eigen::Vector3d v(0.2 * u(rng), 0.2 * u(rng), 0.2 * u(rng));
      auto force = [&](double d, const Eigen::Vector3d& m) { return SpringDamperForce(k, d, m, v); };
      ExpectJacobian(force, SpringDamperForceJacobian(k, depth, n, v), depth, n, "spring-damper");
    }
  }
}

// Slip speeds in the stiction ramp (s < v_s = 0.01), the transition (0.01 < s < 0.05) and the
// dynamic regime; depths below and above d_max (1 mm) so the damping ramp S is exercised.
TEST(LawJacobianTest, NonlinearLawMatchesCentralDifferencesInEveryRegime) {
  NonlinearLawParams p;
  p.static_friction = 0.8;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  int regimes[3] = {0, 0, 0};
  for (int i = 0; i < 300; ++i) {
    const double depth = 1e-3 * (1.05 + u(rng));
    const Eigen::Vector3d n = testing::Draw<3>(u, rng).normalized();
    const double speed = std::pow(10.0, -2.5 + 1.5 * (u(rng) + 1) / 2 * 1.5);
    const Eigen::Vector3d v = speed * testing::Draw<3>(u, rng).normalized();
    const Eigen::Vector3d slip = v - v.dot(n) * n;
    const double s = slip.norm();
    // Stay away from the regime boundaries, where μ'' jumps (the differences would straddle them).
    if (std::abs(s - p.stiction_speed) < 1e-5 || std::abs(s - p.transition_speed) < 1e-5 || s < 1e-5) continue;
    if (NormalForce(p, depth, -v.dot(n)) <= 1e-3) continue;  // clamped F_n: not differentiable
    regimes[s < p.stiction_speed ? 0 : s < p.transition_speed ? 1 : 2]++;
    auto force = [&](double d, const Eigen::Vector3d& m) { return EvaluateNonlinearLaw(p, d, m, v).force; };
    ExpectJacobian(force, NonlinearLawJacobian(p, depth, n, v), depth, n, "nonlinear, slip " + std::to_string(s));
  }
  for (int r = 0; r < 3; ++r) EXPECT_GT(regimes[r], 10) << "regime " << r;
}

TEST(LawJacobianTest, NonlinearLawClampedForceHasZeroDerivative) {
  // Separating fast at shallow depth: k_p·δ^1.5 + k_c·S·v_n < 0, F_n = 0 (δ = 0.5 mm, v_n = −10 m/s:
  // 1e5·1.118e-5 = 1.118 N against 100·0.5·(−10) = −500 N).
  NonlinearLawParams p;
  const Eigen::Vector3d n = Eigen::Vector3d::UnitZ();
  const LawJacobian j = NonlinearLawJacobian(p, 5e-4, n, Eigen::Vector3d(0.3, 0, 10));
  EXPECT_EQ(j.d_depth, Eigen::Vector3d::Zero());
  EXPECT_EQ(j.d_normal, Eigen::Matrix3d::Zero());
}

}  // namespace
}  // namespace taxel::contact
