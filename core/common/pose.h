// Rigid poses and quaternion utilities for both quaternion orders in use by simulators.
//
// Frames follow Drake's monogram notation: X_WL is the pose of frame L in frame W, p_LP the
// position of point P in L, R_WL the rotation; X_WL * p_LP = p_WP.
#ifndef TAXEL_CORE_COMMON_POSE_H_
#define TAXEL_CORE_COMMON_POSE_H_

#include "Eigen/Core"
#include "Eigen/Geometry"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace taxel {

/// Component order of a quaternion on the wire or in a user array.
///  - kXyzw: Newton, Warp, PhysX, Isaac Lab >= 3.0, PyBullet.
///  - kWxyz: MuJoCo, Isaac Lab 2.x, Genesis.
/// kUnspecified is never accepted as input: every pose message must state its order.
enum class QuatOrder { kUnspecified = 0, kXyzw = 1, kWxyz = 2 };

/// Smallest quaternion norm accepted before normalisation.
inline constexpr double kMinQuaternionNorm = 1e-6;

/// A rigid transform X_AB: rotation R_AB (orthonormal, det +1) and translation p_AB (metres).
struct RigidTransform {
  Eigen::Matrix3d R = Eigen::Matrix3d::Identity();
  Eigen::Vector3d p = Eigen::Vector3d::Zero();

  static RigidTransform Identity() { return {}; }
  static RigidTransform FromQuaternion(const Eigen::Quaterniond& q_unit, const Eigen::Vector3d& p) {
    return {q_unit.toRotationMatrix(), p};
  }
  /// X_AB * p_BQ = p_AQ.
  Eigen::Vector3d operator*(const Eigen::Vector3d& p_BQ) const { return R * p_BQ + p; }
  /// X_AB * X_BC = X_AC.
  RigidTransform operator*(const RigidTransform& X_BC) const { return {R * X_BC.R, R * X_BC.p + p}; }
  /// X_BA from X_AB.
  RigidTransform Inverse() const {
    RigidTransform X;
    X.R = R.transpose();
    X.p = -(X.R * p);
    return X;
  }
  /// Rotates a free vector: R_AB * v_B = v_A.
  Eigen::Vector3d Rotate(const Eigen::Vector3d& v_B) const { return R * v_B; }
  /// Applies the inverse: X_AB^-1 * p_AQ = p_BQ.
  Eigen::Vector3d InverseApply(const Eigen::Vector3d& p_AQ) const { return R.transpose() * (p_AQ - p); }
};

/// The cross-product matrix [v]×: [v]×·w = v × w.
inline Eigen::Matrix3d Skew(const Eigen::Vector3d& v) {
  Eigen::Matrix3d m;
  m << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
  return m;
}

/// Reads a 7-vector pose `v` = position (3) followed by a quaternion (4) in `order`, validates it
/// and normalises the quaternion.
/// Errors (INVALID_ARGUMENT, message prefixed with `field`): unspecified order, any non-finite
/// number, quaternion norm below kMinQuaternionNorm.
absl::StatusOr<RigidTransform> PoseFromArray(const double* v, QuatOrder order, absl::string_view field);

/// Allocation-free fast path of PoseFromArray for hot loops: false when PoseFromArray would fail
/// (call it then for the message).
bool TryPoseFromArray(const double* v, QuatOrder order, RigidTransform* out);

/// Quaternion (unit, Eigen's w,x,y,z storage) from 4 numbers in the given order; no validation.
Eigen::Quaterniond QuaternionFromArray(const double* q, QuatOrder order);

/// Writes X as position + quaternion in `order` into out[0..6].
void PoseToArray(const RigidTransform& X, QuatOrder order, double* out);

/// Angular velocity w (rad/s, in the frame of R_now/R_prev's parent) that rotates R_prev into
/// R_now in `dt` seconds at constant rate: exp(dt·[w]×)·R_prev = R_now. Uses the shortest path.
/// @pre dt > 0.
Eigen::Vector3d AngularVelocityFromRotations(const Eigen::Matrix3d& R_prev, const Eigen::Matrix3d& R_now, double dt);

/// "XYZW" / "WXYZ" / "QUAT_ORDER_UNSPECIFIED" (the wire names).
absl::string_view QuatOrderName(QuatOrder order);

/// The one check (and wording) of a quaternion order, for every decoder and Scene::Step:
/// INVALID_ARGUMENT "<field>: expected XYZW or WXYZ, got QUAT_ORDER_UNSPECIFIED" unless `order`
/// is XYZW or WXYZ.
absl::Status CheckQuatOrder(QuatOrder order, absl::string_view field);

}  // namespace taxel

#endif  // TAXEL_CORE_COMMON_POSE_H_
