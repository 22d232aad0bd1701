// Tests for core/common/pose.h: quaternion orders, validation, transform algebra and the angular
// velocity between two rotations. Expected rotation matrices are worked out by hand below.
#include "core/common/pose.h"

#include <cmath>
#include <limits>

#include "core/common/rng.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace taxel {
namespace {

using ::testing::HasSubstr;

constexpr double kPi = 3.14159265358979323846;
const double kHalfSqrt2 = std::sqrt(0.5);

// Rotation by `angle` about z, written out: [[c, -s, 0], [s, c, 0], [0, 0, 1]].
Eigen::Matrix3d Rz(double angle) {
  const double c = std::cos(angle), s = std::sin(angle);
  Eigen::Matrix3d R;
  R << c, -s, 0, s, c, 0, 0, 0, 1;
  return R;
}
// Rotation by `angle` about x: [[1, 0, 0], [0, c, -s], [0, s, c]].
Eigen::Matrix3d Rx(double angle) {
  const double c = std::cos(angle), s = std::sin(angle);
  Eigen::Matrix3d R;
  R << 1, 0, 0, 0, c, -s, 0, s, c;
  return R;
}

// The quaternion (w, x, y, z) = (1, 2, 3, 4)/sqrt(30). With n² = 30, the usual formula
// R = I + ... gives, entry by entry (hand calculation):
//   1 − 2(y²+z²)/n² = 1 − 50/30 = −2/3     2(xy − wz)/n² = 4/30 = 2/15    2(xz + wy)/n² = 22/30 = 11/15
//   2(xy + wz)/n² = 20/30 = 2/3            1 − 2(x²+z²)/n² = −1/3          2(yz − wx)/n² = 20/30 = 2/3
//   2(xz − wy)/n² = 10/30 = 1/3            2(yz + wx)/n² = 28/30 = 14/15   1 − 2(x²+y²)/n² = 4/30 = 2/15
Eigen::Matrix3d R1234() {
  Eigen::Matrix3d R;
  R << -2.0 / 3, 2.0 / 15, 11.0 / 15, 2.0 / 3, -1.0 / 3, 2.0 / 3, 1.0 / 3, 14.0 / 15, 2.0 / 15;
  return R;
}

TEST(PoseFromArrayTest, BothOrdersGiveTheSameRotationForTheSameQuaternion) {
  // 90° about x: q = (w, x, y, z) = (√½, √½, 0, 0); R = [[1,0,0],[0,0,−1],[0,1,0]].
  const double xyzw[7] = {0.1, -0.2, 0.3, kHalfSqrt2, 0, 0, kHalfSqrt2};
  const double wxyz[7] = {0.1, -0.2, 0.3, kHalfSqrt2, kHalfSqrt2, 0, 0};
  Eigen::Matrix3d expected;
  expected << 1, 0, 0, 0, 0, -1, 0, 1, 0;
  auto a = PoseFromArray(xyzw, QuatOrder::kXyzw, "pose");
  auto b = PoseFromArray(wxyz, QuatOrder::kWxyz, "pose");
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_TRUE(a->R.isApprox(expected, 1e-15)) << a->R;
  EXPECT_TRUE(b->R.isApprox(expected, 1e-15)) << b->R;
  EXPECT_EQ(a->p, Eigen::Vector3d(0.1, -0.2, 0.3));
  EXPECT_EQ(b->p, Eigen::Vector3d(0.1, -0.2, 0.3));
  // Reading the XYZW array as WXYZ is a different rotation (90° about z): the order matters.
  auto wrong = PoseFromArray(xyzw, QuatOrder::kWxyz, "pose");
  ASSERT_TRUE(wrong.ok());
  EXPECT_TRUE(wrong->R.isApprox(Rz(kPi / 2), 1e-15)) << wrong->R;
}

TEST(PoseFromArrayTest, NormalisesNonUnitQuaternions) {
  // Quaternion (w, x, y, z) = (1, 2, 3, 4), norm sqrt(30); rotation R1234() above.
  const double xyzw[7] = {0, 0, 0, 2, 3, 4, 1};
  const double wxyz[7] = {0, 0, 0, 1, 2, 3, 4};
  for (auto [v, order] : {std::pair{xyzw, QuatOrder::kXyzw}, std::pair{wxyz, QuatOrder::kWxyz}}) {
    auto X = PoseFromArray(v, order, "pose");
    ASSERT_TRUE(X.ok()) << X.status();
    EXPECT_TRUE(X->R.isApprox(R1234(), 1e-14)) << X->R;
    EXPECT_NEAR((X->R * X->R.transpose() - Eigen::Matrix3d::Identity()).norm(), 0, 1e-14);
    EXPECT_NEAR(X->R.determinant(), 1, 1e-14);
  }
  // −q is the same rotation; a scale of 1e5 changes nothing either.
  const double neg_scaled[7] = {0, 0, 0, -2e5, -3e5, -4e5, -1e5};
  auto X = PoseFromArray(neg_scaled, QuatOrder::kXyzw, "pose");
  ASSERT_TRUE(X.ok());
  EXPECT_TRUE(X->R.isApprox(R1234(), 1e-14));
}

TEST(PoseFromArrayTest, TinyButAcceptedNormIsNormalised) {
  // norm 2e-6 >= 1e-6: accepted; (x, y, z, w) = (0, 0, 0, 2e-6) is the identity rotation.
  const double v[7] = {1, 2, 3, 0, 0, 0, 2e-6};
  auto X = PoseFromArray(v, QuatOrder::kXyzw, "pose");
  ASSERT_TRUE(X.ok()) << X.status();
  EXPECT_TRUE(X->R.isApprox(Eigen::Matrix3d::Identity(), 1e-15));
}

TEST(PoseFromArrayTest, UnspecifiedOrderIsInvalid) {
  const double v[7] = {0, 0, 0, 0, 0, 0, 1};
  auto X = PoseFromArray(v, QuatOrder::kUnspecified, "link_poses");
  ASSERT_FALSE(X.ok());
  EXPECT_EQ(X.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(X.status().message(), HasSubstr("link_poses"));
  EXPECT_THAT(X.status().message(), HasSubstr("UNSPECIFIED"));
  // An out-of-range enum value is rejected the same way.
  auto Y = PoseFromArray(v, static_cast<QuatOrder>(7), "link_poses");
  ASSERT_FALSE(Y.ok());
  EXPECT_EQ(Y.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PoseFromArrayTest, NonFiniteNumbersNameFieldAndIndex) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 7; ++i) {
    for (double bad : {nan, inf, -inf}) {
      double v[7] = {0, 0, 0, 0, 0, 0, 1};
      v[i] = bad;
      for (QuatOrder order : {QuatOrder::kXyzw, QuatOrder::kWxyz}) {
        auto X = PoseFromArray(v, order, "step.poses");
        ASSERT_FALSE(X.ok()) << "index " << i;
        EXPECT_EQ(X.status().code(), absl::StatusCode::kInvalidArgument);
        EXPECT_THAT(X.status().message(), HasSubstr("step.poses[" + std::to_string(i) + "]"));
        EXPECT_THAT(X.status().message(), HasSubstr("finite"));
      }
    }
  }
}

TEST(PoseFromArrayTest, QuaternionNormBelowThresholdIsInvalid) {
  for (double s : {0.0, 1e-7, 9.9e-7}) {
    const double v[7] = {0, 0, 0, s, 0, 0, 0};
    auto X = PoseFromArray(v, QuatOrder::kWxyz, "pose");
    ASSERT_FALSE(X.ok()) << s;
    EXPECT_EQ(X.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(X.status().message(), HasSubstr("pose"));
    EXPECT_THAT(X.status().message(), HasSubstr("norm"));
  }
}

TEST(PoseToArrayTest, RoundTripsBothOrders) {
  // Random quaternions (4 normal draws, seeded) -> pose -> array -> pose. The written quaternion
  // equals the normalised input up to the sign (q and −q are the same rotation).
  const Philox4x32 rng(7, 0);
  for (uint32_t i = 0; i < 200; ++i) {
    const auto b0 = rng(i, 0, 0, 0), b1 = rng(i, 1, 0, 0);
    const Eigen::Vector4d q(NormalFromBits(b0[0], b0[1]), NormalFromBits(b0[2], b0[3]), NormalFromBits(b1[0], b1[1]),
                            NormalFromBits(b1[2], b1[3]));  // x y z w
    const Eigen::Vector4d qn = q / q.norm();
    for (QuatOrder order : {QuatOrder::kXyzw, QuatOrder::kWxyz}) {
      double in[7] = {0.5 * i, -1.0, 2.5};
      if (order == QuatOrder::kXyzw) {
        in[3] = q[0], in[4] = q[1], in[5] = q[2], in[6] = q[3];
      } else {
        in[3] = q[3], in[4] = q[0], in[5] = q[1], in[6] = q[2];
      }
      auto X = PoseFromArray(in, order, "pose");
      ASSERT_TRUE(X.ok());
      double out[7];
      PoseToArray(*X, order, out);
      for (int k = 0; k < 3; ++k) EXPECT_EQ(out[k], in[k]);
      Eigen::Vector4d got;  // back to x y z w
      if (order == QuatOrder::kXyzw) {
        got << out[3], out[4], out[5], out[6];
      } else {
        got << out[4], out[5], out[6], out[3];
      }
      EXPECT_NEAR(got.norm(), 1.0, 1e-14);
      EXPECT_NEAR(std::abs(got.dot(qn)), 1.0, 1e-14) << "i=" << i;
      auto Y = PoseFromArray(out, order, "pose");
      ASSERT_TRUE(Y.ok());
      EXPECT_TRUE(Y->R.isApprox(X->R, 1e-14));
    }
  }
}

TEST(RigidTransformTest, ApplyComposeInverse) {
  // X_AB: 90° about z, origin of B at (1, 2, 3) in A. p_BQ = (1, 0, 0) -> R (1,0,0) = (0, 1, 0),
  // plus (1, 2, 3): p_AQ = (1, 3, 3).
  const RigidTransform X_AB{Rz(kPi / 2), Eigen::Vector3d(1, 2, 3)};
  EXPECT_TRUE((X_AB * Eigen::Vector3d(1, 0, 0)).isApprox(Eigen::Vector3d(1, 3, 3), 1e-15));
  EXPECT_TRUE(X_AB.Rotate(Eigen::Vector3d(1, 0, 0)).isApprox(Eigen::Vector3d(0, 1, 0), 1e-15));
  EXPECT_TRUE(X_AB.InverseApply(Eigen::Vector3d(1, 3, 3)).isApprox(Eigen::Vector3d(1, 0, 0), 1e-15));
  EXPECT_TRUE((X_AB.Inverse() * Eigen::Vector3d(1, 3, 3)).isApprox(Eigen::Vector3d(1, 0, 0), 1e-15));

  // X_BC: 90° about x, origin (0, 0, 1). p_CQ = (0, 1, 0) -> Rx (0,1,0) = (0, 0, 1), + (0, 0, 1):
  // p_BQ = (0, 0, 2) -> Rz (0,0,2) = (0, 0, 2), + (1, 2, 3): p_AQ = (1, 2, 5).
  const RigidTransform X_BC{Rx(kPi / 2), Eigen::Vector3d(0, 0, 1)};
  const RigidTransform X_AC = X_AB * X_BC;
  EXPECT_TRUE((X_AC * Eigen::Vector3d(0, 1, 0)).isApprox(Eigen::Vector3d(1, 2, 5), 1e-15));
  // Origin of C in A: Rz (0, 0, 1) + (1, 2, 3) = (1, 2, 4).
  EXPECT_TRUE(X_AC.p.isApprox(Eigen::Vector3d(1, 2, 4), 1e-15));

  const RigidTransform I = X_AC * X_AC.Inverse();
  EXPECT_TRUE(I.R.isApprox(Eigen::Matrix3d::Identity(), 1e-15));
  EXPECT_NEAR(I.p.norm(), 0, 1e-15);
  const RigidTransform J = X_AC.Inverse() * X_AC;
  EXPECT_TRUE(J.R.isApprox(Eigen::Matrix3d::Identity(), 1e-15));
  EXPECT_NEAR(J.p.norm(), 0, 1e-15);
  // (X_AB X_BC)^-1 = X_BC^-1 X_AB^-1.
  const RigidTransform X_CA = X_BC.Inverse() * X_AB.Inverse();
  EXPECT_TRUE(X_CA.R.isApprox(X_AC.Inverse().R, 1e-15));
  EXPECT_TRUE(X_CA.p.isApprox(X_AC.Inverse().p, 1e-15));
  // Identity() leaves points alone.
  EXPECT_EQ(RigidTransform::Identity() * Eigen::Vector3d(4, 5, 6), Eigen::Vector3d(4, 5, 6));
}

TEST(AngularVelocityTest, TenthOfARadianAboutZInTenMilliseconds) {
  // R_now = Rz(0.1) R_prev in the parent frame: w = 0.1 rad / 0.01 s = 10 rad/s about z. R_prev is
  // a rotation about x so that a body-frame answer (R_prevᵀ z) would differ.
  const Eigen::Matrix3d R_prev = Rx(0.3);
  const Eigen::Vector3d w = AngularVelocityFromRotations(R_prev, Rz(0.1) * R_prev, 0.01);
  EXPECT_NEAR(w.x(), 0, 1e-10);
  EXPECT_NEAR(w.y(), 0, 1e-10);
  EXPECT_NEAR(w.z(), 10, 1e-10);
}

TEST(AngularVelocityTest, GeneralAxisAndShortestPath) {
  // Axis (1, 2, 2)/3, angle 0.7, dt 0.5: w = 1.4 · axis. Rodrigues: R = I + s K + (1 − c) K².
  const Eigen::Vector3d axis = Eigen::Vector3d(1, 2, 2) / 3;
  Eigen::Matrix3d K;
  K << 0, -axis.z(), axis.y(), axis.z(), 0, -axis.x(), -axis.y(), axis.x(), 0;
  const Eigen::Matrix3d R = Eigen::Matrix3d::Identity() + std::sin(0.7) * K + (1 - std::cos(0.7)) * K * K;
  const Eigen::Matrix3d R_prev = Rz(-1.2) * Rx(0.4);
  EXPECT_TRUE(AngularVelocityFromRotations(R_prev, R * R_prev, 0.5).isApprox(1.4 * axis, 1e-12));
  // 1.5π about z is the same as −π/2 about z: the shortest path gives −(π/2)/dt about z.
  const Eigen::Vector3d w = AngularVelocityFromRotations(R_prev, Rz(1.5 * kPi) * R_prev, 0.1);
  EXPECT_TRUE(w.isApprox(Eigen::Vector3d(0, 0, -kPi / 2 / 0.1), 1e-12)) << w.transpose();
  // No rotation: zero.
  EXPECT_NEAR(AngularVelocityFromRotations(R_prev, R_prev, 0.01).norm(), 0, 1e-12);
}

TEST(QuatOrderNameTest, Names) {
  EXPECT_EQ(QuatOrderName(QuatOrder::kXyzw), "XYZW");
  EXPECT_EQ(QuatOrderName(QuatOrder::kWxyz), "WXYZ");
  EXPECT_EQ(QuatOrderName(QuatOrder::kUnspecified), "QUAT_ORDER_UNSPECIFIED");
}

}  // namespace
}  // namespace taxel
