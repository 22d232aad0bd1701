#include "core/sensors/probe_kernels.h"

#include <algorithm>
#include <cmath>

namespace taxel::sensors {
namespace {

constexpr double kPi = 3.141592653589793;

inline void Store3(float* out, const Eigen::Vector3d& v) {
  out[0] = static_cast<float>(v.x());
  out[1] = static_cast<float>(v.y());
  out[2] = static_cast<float>(v.z());
}

}  // namespace

ProbeContact DeepestContact(const Eigen::Vector3d& o_W, double radius, absl::Span<const ProbeCandidate> candidates) {
  ProbeContact best;
  const double r2 = radius * radius;
  for (size_t c = 0; c < candidates.size(); ++c) {
    const ProbeCandidate& cand = candidates[c];
    // The probe sphere must reach the shape's bounds to touch the shape.
    if (cand.bounds_W.SquaredDistance(o_W) > r2) continue;
    const geometry::SignedDistanceResult sd = cand.shape->SignedDistance(cand.X_SW * o_W, radius);
    if (!sd.found()) continue;
    const double depth = radius - sd.distance;
    if (depth > best.depth) {
      best.depth = depth;
      best.normal_W = cand.R_WS * sd.normal;
      best.candidate = static_cast<int>(c);
    }
  }
  return best;
}

void EvaluateProbeRange(Sensor& sensor, int env, int begin, int end, const LinkKinematics& link,
                        absl::Span<const ProbeCandidate> candidates) {
  const ProbeLayout& layout = sensor.layout();
  const SensorSpec& spec = sensor.spec();
  SensorOutputs& out = sensor.mutable_truth();
  const size_t base = static_cast<size_t>(env) * layout.size();
  const Eigen::Matrix3d R_LW = link.X_WL.R.transpose();
  for (int k = begin; k < end; ++k) {
    const size_t slot = base + k;
    const double radius = layout.radius(k);
    ProbeContact contact;
    Eigen::Vector3d o_W = Eigen::Vector3d::Zero();
    if (radius > 0) {  // fillers (radius 0) read 0
      o_W = link.X_WL * layout.position(k);
      contact = DeepestContact(o_W, radius, candidates);
    }
    switch (sensor.kind()) {
      case SensorKind::kContactProbe: {
        // Schmitt trigger: on at depth ≥ contact_threshold, off below release_threshold.
        uint8_t& on = sensor.latch()[slot];
        if (contact.depth >= spec.contact_threshold) {
          on = 1;
        } else if (contact.depth < sensor.release_threshold()) {
          on = 0;
        }
        if (radius == 0) on = 0;
        out.contact[slot] = on;
        out.depth[slot] = static_cast<float>(contact.depth);
        break;
      }
      case SensorKind::kContactDepthProbe: {
        out.depth[slot] = static_cast<float>(contact.depth);
        if (contact.candidate >= 0) {
          const double d = std::min(contact.depth, 2 * radius);
          out.area[slot] = static_cast<float>(kPi * (2 * radius * d - d * d));
          Store3(&out.normal[3 * slot], R_LW * contact.normal_W);
          out.partner[slot] = candidates[contact.candidate].link.value();
        } else {
          out.area[slot] = 0.f;
          Store3(&out.normal[3 * slot], Eigen::Vector3d::Zero());
          out.partner[slot] = -1;
        }
        break;
      }
      case SensorKind::kKinematicTaxel: {
        if (contact.candidate < 0) {
          Store3(&out.force[3 * slot], Eigen::Vector3d::Zero());
          Store3(&out.torque[3 * slot], Eigen::Vector3d::Zero());
          break;
        }
        const ProbeCandidate& cand = candidates[contact.candidate];
        const Eigen::Vector3d& n = contact.normal_W;
        // Velocity of the partner relative to the sensor, both evaluated at the probe centre.
        const Eigen::Vector3d v_rel = cand.partner->PointVelocity(o_W) - link.PointVelocity(o_W);
        const double w_n = (cand.partner->w_W - link.w_W).dot(n);
        const Eigen::Vector3d F_L = R_LW * contact::SpringDamperForce(spec.spring_damper, contact.depth, n, v_rel);
        const Eigen::Vector3d n_L = R_LW * n;
        const Eigen::Vector3d T_L = layout.position(k).cross(F_L) - spec.spring_damper.twist_damping * w_n * n_L;
        Store3(&out.force[3 * slot], F_L);
        Store3(&out.torque[3 * slot], T_L);
        break;
      }
      default:
        break;
    }
  }
}

}  // namespace taxel::sensors
