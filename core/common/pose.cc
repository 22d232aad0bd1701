#include "core/common/pose.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/common/field_error.h"

namespace taxel {

Eigen::Quaterniond QuaternionFromArray(const double* q, QuatOrder order) {
  if (order == QuatOrder::kWxyz) return Eigen::Quaterniond(q[0], q[1], q[2], q[3]);
  return Eigen::Quaterniond(q[3], q[0], q[1], q[2]);  // xyzw
}

absl::StatusOr<RigidTransform> PoseFromArray(const double* v, QuatOrder order, absl::string_view field) {
  if (absl::Status s = CheckQuatOrder(order, field); !s.ok()) return s;
  for (int i = 0; i < 7; ++i) {
    if (!std::isfinite(v[i])) {
      return InvalidFieldError(absl::StrCat(field, "[", i, "]"), absl::StrCat("expected a finite number, got ", v[i]));
    }
  }
  Eigen::Quaterniond q = QuaternionFromArray(v + 3, order);
  const double norm = q.norm();
  if (!(norm >= kMinQuaternionNorm)) {
    return InvalidFieldError(field, absl::StrCat("quaternion norm must be at least 1e-6, got ", norm));
  }
  if (!std::isfinite(norm)) {  // finite components whose squares overflow (|q| > 1e154)
    return InvalidFieldError(field, "quaternion norm overflows a double; normalise it first");
  }
  q.coeffs() /= norm;
  return RigidTransform::FromQuaternion(q, Eigen::Vector3d(v[0], v[1], v[2]));
}

bool TryPoseFromArray(const double* v, QuatOrder order, RigidTransform* out) {
  if (order != QuatOrder::kXyzw && order != QuatOrder::kWxyz) return false;
  for (int i = 0; i < 7; ++i) {
    if (!std::isfinite(v[i])) return false;
  }
  Eigen::Quaterniond q = QuaternionFromArray(v + 3, order);
  const double norm = q.norm();
  if (!(norm >= kMinQuaternionNorm) || !std::isfinite(norm)) return false;
  q.coeffs() /= norm;
  *out = RigidTransform::FromQuaternion(q, Eigen::Vector3d(v[0], v[1], v[2]));
  return true;
}

void PoseToArray(const RigidTransform& X, QuatOrder order, double* out) {
  const Eigen::Quaterniond q(X.R);
  out[0] = X.p.x();
  out[1] = X.p.y();
  out[2] = X.p.z();
  if (order == QuatOrder::kWxyz) {
    out[3] = q.w(), out[4] = q.x(), out[5] = q.y(), out[6] = q.z();
  } else {
    out[3] = q.x(), out[4] = q.y(), out[5] = q.z(), out[6] = q.w();
  }
}

Eigen::Vector3d AngularVelocityFromRotations(const Eigen::Matrix3d& R_prev, const Eigen::Matrix3d& R_now, double dt) {
  // R_now = R_delta * R_prev, with R_delta = exp(dt [w]x) in the parent frame. The axis comes
  // from the skew part of R_delta, the angle from its trace; near π the skew part vanishes and
  // the general (slower) angle-axis extraction takes over.
  const Eigen::Matrix3d R = R_now * R_prev.transpose();
  const Eigen::Vector3d vee(R(2, 1) - R(1, 2), R(0, 2) - R(2, 0), R(1, 0) - R(0, 1));  // 2 sinθ · axis
  const double c = std::clamp(0.5 * (R.trace() - 1), -1.0, 1.0);
  if (c > -0.9) {
    const double s = 0.5 * vee.norm();  // sinθ
    const double theta = std::atan2(s, c);
    const double k = s > 1e-12 ? theta / (2 * s) : 0.5 * (1 + theta * theta / 6);
    return vee * (k / dt);
  }
  const Eigen::AngleAxisd aa(R);
  return aa.axis() * (aa.angle() / dt);
}

absl::Status CheckQuatOrder(QuatOrder order, absl::string_view field) {
  if (order == QuatOrder::kXyzw || order == QuatOrder::kWxyz) return absl::OkStatus();
  return InvalidFieldError(field, absl::StrCat("expected XYZW or WXYZ, got ", QuatOrderName(QuatOrder::kUnspecified)));
}

absl::string_view QuatOrderName(QuatOrder order) {
  switch (order) {
    case QuatOrder::kXyzw: return "XYZW";
    case QuatOrder::kWxyz: return "WXYZ";
    default: return "QUAT_ORDER_UNSPECIFIED";
  }
}

}  // namespace taxel
