// ProximityTaxel: point-cloud sphere taxels that read before touch (docs/reference.md#sensors).
#include <cmath>

#include "core/geometry/point_cloud_index.h"
#include "core/sensors/sensor.h"
#include "core/sensors/tracked_geometry.h"

namespace taxel::sensors {

void EvaluateProximity(Sensor& sensor, int env, int begin, int end, uint64_t step, const LinkKinematics& link,
                       absl::Span<const TrackedLinkInEnv> tracked, float* raw_measured, Workspace& ws) {
  const ProbeLayout& layout = sensor.layout();
  const ProximityParams& p = sensor.spec().proximity;
  SensorOutputs& out = sensor.mutable_truth();
  MeasuredPipeline* pipe = sensor.pipeline();
  const size_t base = static_cast<size_t>(env) * layout.size();
  const Eigen::Matrix3d R_LW = link.X_WL.R.transpose();
  const double* measured_radius = pipe != nullptr ? pipe->MeasuredRadii(env, begin, end, step, ws) : nullptr;
  for (int k = begin; k < end; ++k) {
    const double R = layout.radius(k);
    const double R_m = measured_radius != nullptr ? measured_radius[k - begin] : R;
    // Evaluate for the true radius and (when it differs) the measured one.
    Eigen::Vector3d F_L[2] = {Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero()};
    Eigen::Vector3d T_L[2] = {Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero()};
    // The twist term of T_L: the spin average ΣP·ω/ΣP, which the probe gain leaves unchanged (the
    // gain scales ΣP and ΣP·v_t, i.e. the force and its moment, as in Genesis).
    Eigen::Vector3d twist_L[2] = {Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero()};
    const int branches = (pipe != nullptr && R_m != R) ? 2 : 1;
    if (R > 0) {
      const Eigen::Vector3d o_W = link.X_WL * layout.position(k);
      const Eigen::Vector3d a_W = link.X_WL.R * layout.normal(k);
      for (int b = 0; b < branches; ++b) {
        const double radius = b == 0 ? R : R_m;
        if (radius <= 0) continue;
        Eigen::Vector3d F = Eigen::Vector3d::Zero();
        double sum_p = 0, sum_p_w = 0;
        for (const TrackedLinkInEnv& te : tracked) {
          if (te.asset < 0) continue;
          const geometry::PointCloudIndex& index = *te.tracked->index[te.asset];
          const int n_points = static_cast<int>(index.points().size());
          if (n_points == 0) continue;
          const double rho = p.density_scalar / n_points;
          const LinkKinematics& kin = *te.kinematics;
          // Query in the tracked link's frame.
          const Eigen::Vector3d o_T = kin.X_WL.InverseApply(o_W);
          const double w_a = (kin.w_W - link.w_W).dot(a_W);  // relative spin about the probe normal
          double link_p = 0;
          Eigen::Vector3d link_pv = Eigen::Vector3d::Zero();
          index.ForEachWithin(o_T, radius, [&](size_t i, double dist) {
            const double P = radius - dist;
            link_p += P;
            if (p.shear_coupling != 0) {
              const Eigen::Vector3d x_W = kin.X_WL * index.points()[i];
              Eigen::Vector3d v = kin.PointVelocity(x_W) - link.PointVelocity(o_W);
              v -= v.dot(a_W) * a_W;  // tangential part
              link_pv += P * v;
            }
          });
          F += p.stiffness * rho * link_p * a_W + p.shear_coupling * rho * link_pv;
          sum_p += link_p;
          sum_p_w += link_p * w_a;
        }
        const Eigen::Vector3d Fl = R_LW * F;
        if (sum_p > 0) twist_L[b] = -p.twist_scalar * (sum_p_w / sum_p) * layout.normal(k);
        F_L[b] = Fl;
        T_L[b] = layout.position(k).cross(Fl) + twist_L[b];
      }
    }
    for (int a = 0; a < 3; ++a) {
      out.force[(base + k) * 3 + a] = static_cast<float>(F_L[0][a]);
      out.torque[(base + k) * 3 + a] = static_cast<float>(T_L[0][a]);
    }
    if (pipe != nullptr) {
      const int m = branches - 1;
      const double gain = pipe->gain(env, k);
      float* raw = raw_measured + static_cast<size_t>(k) * 6;
      for (int a = 0; a < 3; ++a) {
        raw[a] = static_cast<float>(gain * F_L[m][a]);
        raw[3 + a] = static_cast<float>(gain * (T_L[m][a] - twist_L[m][a]) + twist_L[m][a]);
      }
    }
  }
}

}  // namespace taxel::sensors
