#include "core/sensors/probe_kernels.h"

#include <algorithm>
#include <cmath>
#include <new>

#include "core/geometry/implicit_signed_distance.h"
#include "core/geometry/signed_distance_hessian.h"
#include "core/sensors/probe_gradients.h"

namespace taxel::sensors {
namespace {

inline void Store3(float* out, const Eigen::Vector3d& v) {
  out[0] = static_cast<float>(v.x());
  out[1] = static_cast<float>(v.y());
  out[2] = static_cast<float>(v.z());
}

}  // namespace

void KeepWarmStart(const ProbeContact& contact, absl::Span<const ProbeCandidate> candidates, ProbeWarmStart* warm) {
  const ProbeCandidate* cand = contact.candidate >= 0 ? &candidates[contact.candidate] : nullptr;
  if (cand == nullptr || cand->grid != nullptr || cand->shape->kind() != geometry::ShapeKind::kImplicit) {
    warm->link = -1;
    return;
  }
  warm->link = cand->link.value();
  for (int a = 0; a < 3; ++a) warm->foot_S[a] = static_cast<float>(contact.result_S.closest[a]);
}

ProbeContact DeepestContact(const Eigen::Vector3d& o_W, double reach, absl::Span<const ProbeCandidate> candidates,
                            const ProbeWarmStart* warm) {
  ProbeContact best;
  const double r2 = reach * reach;
  const Eigen::Vector3d warm_S =
      warm != nullptr ? Eigen::Vector3d(warm->foot_S[0], warm->foot_S[1], warm->foot_S[2]) : Eigen::Vector3d::Zero();
  for (size_t c = 0; c < candidates.size(); ++c) {
    const ProbeCandidate& cand = candidates[c];
    // The probe sphere must reach the shape's bounds to touch the shape.
    if (cand.bounds_W.SquaredDistance(o_W) > r2) continue;
    const Eigen::Vector3d o_S = cand.X_SW * o_W;
    const bool warm_here = warm != nullptr && warm->link == cand.link.value();
    const geometry::SignedDistanceResult sd = cand.SignedDistance(o_S, reach, warm_here ? &warm_S : nullptr);
    if (!sd.found() || !(sd.distance < reach)) continue;
    if (sd.distance < best.sd) {
      best.sd = sd.distance;
      best.normal_W = cand.R_WS * sd.normal;
      best.candidate = static_cast<int>(c);
      best.result_S = sd;
      best.o_S = o_S;
    }
  }
  best.depth = best.DepthFor(reach);
  return best;
}

namespace {

// DeepestContact for probe centres p_L in the sensor link frame L, with X_SL[c] = X_SW · X_WL of
// each candidate: the centre reaches a shape's frame in one transform, and the bounds test runs
// there, against the shape's own bounds (which the probe sphere must reach to touch the shape).
// The same contact as DeepestContact(X_WL · p_L, ...) but for the rounding of o_S; the kernel's
// probe loop uses it so that a probe that touches nothing never goes to world.
// Up to kImplicitBatch probes at once (p_L, reach and warm per probe; reach 0: a filler, no
// contact): per candidate, the probes an implicit shape may touch are solved together
// (ImplicitSignedDistanceBatch: for superellipsoids and superelliptic cylinders their solves
// overlap; the same bits as one at a time), the others one by one as before. Candidates are taken in order for every probe,
// so ties resolve as in DeepestContact.
void DeepestContactsFromLink(const Eigen::Vector3d* p_L, const double* reach, ProbeWarmStart* const* warm, int count,
                             absl::Span<const ProbeCandidate> candidates, const RigidTransform* X_SL,
                             ProbeContact* best) {
  for (int i = 0; i < count; ++i) best[i] = ProbeContact{};
  for (size_t c = 0; c < candidates.size(); ++c) {
    const ProbeCandidate& cand = candidates[c];
    // Implicit shapes go through the batch (which takes the kinds without a lock-step path one by
    // one); grids and other shapes one by one here.
    const bool batched = cand.grid == nullptr && cand.shape->kind() == geometry::ShapeKind::kImplicit;
    Eigen::Vector3d o_S[geometry::kImplicitBatch], warm_S[geometry::kImplicitBatch];
    const Eigen::Vector3d* warm_ptr[geometry::kImplicitBatch];
    double max_distance[geometry::kImplicitBatch];
    int lane_of[geometry::kImplicitBatch];
    int lanes = 0;
    geometry::SignedDistanceResult sd[geometry::kImplicitBatch];
    for (int i = 0; i < count; ++i) {
      if (!(reach[i] > 0)) continue;
      const Eigen::Vector3d o = X_SL[c] * p_L[i];
      if (cand.shape->local_bounds().SquaredDistance(o) > reach[i] * reach[i]) continue;
      const bool warm_here = warm[i] != nullptr && warm[i]->link == cand.link.value();
      const int l = lanes++;
      o_S[l] = o;
      warm_S[l] = warm_here ? Eigen::Vector3d(warm[i]->foot_S[0], warm[i]->foot_S[1], warm[i]->foot_S[2])
                            : Eigen::Vector3d::Zero();
      warm_ptr[l] = warm_here ? &warm_S[l] : nullptr;
      max_distance[l] = reach[i];
      lane_of[l] = i;
      if (!batched) sd[l] = cand.SignedDistance(o_S[l], reach[i], warm_ptr[l]);
    }
    if (batched && lanes > 0) {
      geometry::ImplicitSignedDistanceBatch(*cand.shape->implicit(), o_S, lanes, max_distance, warm_ptr, sd);
    }
    for (int l = 0; l < lanes; ++l) {
      ProbeContact& b = best[lane_of[l]];
      if (!(sd[l].distance < max_distance[l]) || !(sd[l].distance < b.sd)) continue;  // (+inf: not found)
      b.sd = sd[l].distance;
      b.candidate = static_cast<int>(c);
      b.result_S = sd[l];
      b.o_S = o_S[l];
    }
  }
  for (int i = 0; i < count; ++i) {
    // The winner's normal in world (the losers' are never needed).
    if (best[i].candidate >= 0) best[i].normal_W = candidates[best[i].candidate].R_WS * best[i].result_S.normal;
    best[i].depth = best[i].DepthFor(reach[i]);
  }
}

// Force and torque of a KinematicTaxel probe (link frame) for a contact of each of the
// `count` depths (the velocities are evaluated once).
void KinematicForce(const SensorSpec& spec, const ProbeCandidate& cand, const LinkKinematics& link,
                    const Eigen::Matrix3d& R_LW, const Eigen::Vector3d& p_L, const Eigen::Vector3d& o_W,
                    const Eigen::Vector3d& n, const double* depth, int count, Eigen::Vector3d* F_L,
                    Eigen::Vector3d* T_L) {
  // Velocity of the partner relative to the sensor, both evaluated at the probe centre.
  const Eigen::Vector3d v_rel = cand.partner->PointVelocity(o_W) - link.PointVelocity(o_W);
  const double w_n = (cand.partner->w_W - link.w_W).dot(n);
  const Eigen::Vector3d twist_L = spec.spring_damper.twist_damping * w_n * (R_LW * n);
  for (int i = 0; i < count; ++i) {
    if (spec.force_law == SensorSpec::ForceLaw::kNonlinear) {
      // The law sees the sensor as the body: its velocity relative to the partner is −v_rel, and
      // n pushes it out of the partner.
      F_L[i] = R_LW * contact::EvaluateNonlinearLaw(spec.nonlinear, depth[i], n, -v_rel).force;
    } else {
      F_L[i] = R_LW * contact::SpringDamperForce(spec.spring_damper, depth[i], n, v_rel);
    }
    T_L[i] = p_L.cross(F_L[i]) - twist_L;
  }
}

// The world geometry of a probe's contact for its gradients; the normal's Hessian only when asked
// (forces), as it costs a little more than the depth's gradient.
ContactGeometry GeometryOf(const ProbeContact& contact, const ProbeCandidate& cand, const Eigen::Vector3d& o_W,
                           const LinkKinematics& link, bool hessian) {
  ContactGeometry g;
  g.o_W = o_W;
  g.n_W = contact.normal_W;
  g.p_WL = link.X_WL.p;
  g.p_WP = cand.partner->X_WL.p;
  if (hessian) {
    const Eigen::Matrix3d H_S = geometry::SignedDistanceHessian(*cand.shape, contact.o_S, contact.result_S);
    g.H_W = cand.R_WS * H_S * cand.R_WS.transpose();
  }
  return g;
}

// Writes one probe's gradient (a row of 12 per component) as floats; zeros without contact.
template <int Rows>
void StoreGradient(float* out, const Eigen::Matrix<double, Rows, 12>* J) {
  for (int r = 0; r < Rows; ++r) {
    for (int c = 0; c < 12; ++c) out[12 * r + c] = J != nullptr ? static_cast<float>((*J)(r, c)) : 0.f;
  }
}

// ∂depth/∂(sensor, partner) twist of a probe's ground-truth depth into dst[12]; zeros without
// contact.
void StoreDepthGradient(const ProbeContact& contact, double depth, absl::Span<const ProbeCandidate> candidates,
                        const Eigen::Vector3d& o_W, const LinkKinematics& link, float* dst) {
  if (!(depth > 0)) return StoreGradient<1>(dst, nullptr);
  const PoseGradient d = DepthPoseGradient(GeometryOf(contact, candidates[contact.candidate], o_W, link, false));
  StoreGradient<1>(dst, &d);
}

// ∂force_L/∂(sensor, partner) twist of a KinematicTaxel probe's ground-truth force F_L into
// dst[36]; zeros without contact.
void StoreForceGradient(const SensorSpec& spec, const ProbeContact& contact, double depth,
                        absl::Span<const ProbeCandidate> candidates, const Eigen::Vector3d& o_W,
                        const LinkKinematics& link, const Eigen::Matrix3d& R_LW, const Eigen::Vector3d& F_L,
                        float* dst) {
  if (!(depth > 0)) return StoreGradient<3>(dst, nullptr);
  const ProbeCandidate& cand = candidates[contact.candidate];
  const PoseJacobian3 J =
      KinematicForcePoseJacobian(spec, GeometryOf(contact, cand, o_W, link, true), depth,
                                 cand.partner->PointVelocity(o_W) - link.PointVelocity(o_W), R_LW, link.X_WL.R * F_L);
  StoreGradient<3>(dst, &J);
}

}  // namespace

void EvaluateProbeRange(Sensor& sensor, int env, int begin, int end, uint64_t step, const LinkKinematics& link,
                        absl::Span<const ProbeCandidate> candidates, float* raw_measured, Workspace& ws) {
  const ProbeLayout& layout = sensor.layout();
  const SensorSpec& spec = sensor.spec();
  SensorOutputs& out = sensor.mutable_truth();
  MeasuredPipeline* pipe = sensor.pipeline();
  float* raw = pipe != nullptr ? raw_measured : nullptr;
  const int W = pipe != nullptr ? sensor.measured_width() : 0;
  const size_t base = static_cast<size_t>(env) * layout.size();
  const Eigen::Matrix3d R_LW = link.X_WL.R.transpose();
  const double* measured_radius = pipe != nullptr ? pipe->MeasuredRadii(env, begin, end, step, ws) : nullptr;
  ProbeWarmStart* warm_starts = sensor.warm_starts(env);
  // Each candidate's frame S relative to the sensor link L, once per range (see
  // DeepestContactsFromLink). (Workspace memory: uninitialised, hence placement new.)
  RigidTransform* X_SL = ws.Take<RigidTransform>(candidates.size());
  for (size_t c = 0; c < candidates.size(); ++c) new (&X_SL[c]) RigidTransform(candidates[c].X_SW * link.X_WL);
  // Probes in blocks of kImplicitBatch: their contacts first (DeepestContactsFromLink), then each
  // probe's reading.
  constexpr int kBlock = geometry::kImplicitBatch;
  Eigen::Vector3d p_L[kBlock];
  double reach[kBlock];
  ProbeWarmStart* warms[kBlock];
  ProbeContact contacts[kBlock];
  for (int k = begin; k < end; ++k) {
    const int lane = (k - begin) % kBlock;
    if (lane == 0) {
      const int n = std::min(kBlock, end - k);
      for (int i = 0; i < n; ++i) {
        const double r = layout.radius(k + i);
        const double r_m = measured_radius != nullptr ? measured_radius[k + i - begin] : r;
        p_L[i] = layout.position(k + i);
        reach[i] = r > 0 ? std::max(r, r_m) : 0.0;  // fillers (radius 0): no contact, read 0
        warms[i] = warm_starts != nullptr && r > 0 ? &warm_starts[k + i] : nullptr;
      }
      DeepestContactsFromLink(p_L, reach, warms, n, candidates, X_SL, contacts);
    }
    const size_t slot = base + k;
    const double radius = layout.radius(k);
    const double radius_m = measured_radius != nullptr ? measured_radius[k - begin] : radius;
    const double gain = pipe != nullptr ? pipe->gain(env, k) : 1.0;
    ProbeWarmStart* warm = warms[lane];
    const ProbeContact& contact = contacts[lane];
    // The centre in world, for the force law and the gradients of a probe in contact.
    const Eigen::Vector3d o_W =
        contact.candidate >= 0 ? link.X_WL * layout.position(k) : Eigen::Vector3d::Zero().eval();
    if (warm != nullptr) KeepWarmStart(contact, candidates, warm);
    const double depth = radius > 0 ? contact.DepthFor(radius) : 0.0;
    const double depth_m = radius > 0 ? contact.DepthFor(radius_m) : 0.0;
    switch (sensor.kind()) {
      case SensorKind::kContactProbe: {
        // Schmitt trigger: on at depth ≥ contact_threshold, off below release_threshold.
        uint8_t& on = sensor.latch()[slot];
        if (depth >= spec.contact_threshold) {
          on = 1;
        } else if (depth < sensor.release_threshold()) {
          on = 0;
        }
        if (radius == 0) on = 0;
        out.contact[slot] = on;
        out.depth[slot] = static_cast<float>(depth);
        if (raw != nullptr) raw[k * W] = static_cast<float>(gain * depth_m);
        if (sensor.compute_gradients()) {
          StoreDepthGradient(contact, depth, candidates, o_W, link, &out.depth_gradient[12 * slot]);
        }
        break;
      }
      case SensorKind::kContactDepthProbe: {
        out.depth[slot] = static_cast<float>(depth);
        if (depth > 0) {
          out.area[slot] = static_cast<float>(SphericalCapArea(radius, out.depth[slot]));
          Store3(&out.normal[3 * slot], R_LW * contact.normal_W);
          out.partner[slot] = candidates[contact.candidate].link.value();
        } else {
          out.area[slot] = 0.f;
          Store3(&out.normal[3 * slot], Eigen::Vector3d::Zero());
          out.partner[slot] = -1;
        }
        if (raw != nullptr) raw[k * W] = static_cast<float>(gain * depth_m);
        if (sensor.compute_gradients()) {
          StoreDepthGradient(contact, depth, candidates, o_W, link, &out.depth_gradient[12 * slot]);
        }
        break;
      }
      case SensorKind::kKinematicTaxel: {
        if (contact.candidate < 0) {
          // Nothing within reach (most probes of a grasp): zero force and torque, no law to run;
          // the measured branch reads gain·0 (−0 for a negative gain, as the general path gives).
          std::fill_n(&out.force[3 * slot], 3, 0.f);
          std::fill_n(&out.torque[3 * slot], 3, 0.f);
          if (sensor.compute_gradients()) StoreGradient<3>(&out.force_gradient[36 * slot], nullptr);
          // (W is 6 here: force and torque; a constant count lets the fill become six stores.)
          if (raw != nullptr) std::fill_n(&raw[k * W], 6, static_cast<float>(gain * 0.0));
          break;
        }
        // F[0], T[0]: ground truth; F[1], T[1]: the measured branch's radius.
        Eigen::Vector3d F[2] = {Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero()};
        Eigen::Vector3d T[2] = {Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero()};
        const bool second = raw != nullptr && depth_m > 0 && depth_m != depth;
        if (depth > 0 || second) {
          // Depth 0 gives zero force and torque (no contact), like the zero-initialised values.
          const double depths[2] = {depth, depth_m};
          const int first = depth > 0 ? 0 : 1, count = second ? 2 - first : 1;
          KinematicForce(spec, candidates[contact.candidate], link, R_LW, layout.position(k), o_W, contact.normal_W,
                         depths + first, count, F + first, T + first);
        }
        if (raw != nullptr && depth_m > 0 && depth_m == depth) F[1] = F[0], T[1] = T[0];
        if (sensor.compute_gradients()) {
          StoreForceGradient(spec, contact, depth, candidates, o_W, link, R_LW, F[0], &out.force_gradient[36 * slot]);
        }
        Store3(&out.force[3 * slot], F[0]);
        Store3(&out.torque[3 * slot], T[0]);
        if (raw != nullptr) {
          for (int a = 0; a < 3; ++a) {
            raw[k * W + a] = static_cast<float>(gain * F[1][a]);
            raw[k * W + 3 + a] = static_cast<float>(gain * T[1][a]);
          }
        }
        break;
      }
      default: break;
    }
  }
}

}  // namespace taxel::sensors
