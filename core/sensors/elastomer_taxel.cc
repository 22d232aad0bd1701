// ElastomerTaxel: marker displacement of a gel skin = dilation + shear (DESIGN §4; in the spirit
// of HydroShear-style gel models — no deformation is simulated).
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/sensors/sensor.h"
#include "core/sensors/tracked_geometry.h"

namespace taxel::sensors {
namespace {

// In-plane weight of the dilation: blend of the local Gaussian (compressibility 1) and the
// incompressible 1/(r² + ε²) (compressibility 0).
inline double InPlaneWeight(const ElastomerParams& p, double r2) {
  return p.compressibility * std::exp(-p.lambda_d * r2) +
         (1 - p.compressibility) / (r2 + p.elastomer_thickness * p.elastomer_thickness);
}

}  // namespace

void DilationDirect(const ProbeLayout& layout, const ElastomerParams& p, const double* h, double* u) {
  const int n = layout.size();
  for (int i = 0; i < n; ++i) {
    Eigen::Vector3d ui = Eigen::Vector3d::Zero();
    if (layout.radius(i) == 0 && layout.max_radius() > 0) {  // fillers read 0
      u[3 * i] = u[3 * i + 1] = u[3 * i + 2] = 0;
      continue;
    }
    const Eigen::Vector3d ni = layout.normal(i);
    for (int j = 0; j < n; ++j) {
      if (h[j] <= 0) continue;
      Eigen::Vector3d d = layout.position(i) - layout.position(j);
      d -= d.dot(ni) * ni;  // tangential offset in i's plane
      const double r2 = d.squaredNorm();
      ui += d * (h[j] * InPlaneWeight(p, r2)) + ni * (std::pow(h[j], p.normal_exponent) * std::exp(-p.lambda_d * r2));
    }
    ui *= p.dilate_scale;
    u[3 * i] = ui.x(), u[3 * i + 1] = ui.y(), u[3 * i + 2] = ui.z();
  }
}

bool TrackedGeometry::PrepareFft(const ProbeLayout& layout, const ElastomerParams& p) {
  fft_.reset();
  if (!p.use_fft || !layout.is_grid()) return false;
  const int rows = layout.rows(), cols = layout.cols();
  // One shared normal and a regular lattice.
  const Eigen::Vector3d n0 = layout.normal(0);
  for (int k = 0; k < layout.size(); ++k) {
    if ((layout.normal(k) - n0).norm() > 1e-12) return false;
  }
  const Eigen::Vector3d o = layout.position(0);
  const Eigen::Vector3d cs = cols > 1 ? Eigen::Vector3d(layout.position(1) - o) : Eigen::Vector3d::Zero();
  const Eigen::Vector3d rs = rows > 1 ? Eigen::Vector3d(layout.position(cols) - o) : Eigen::Vector3d::Zero();
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      if ((layout.position(i * cols + j) - (o + j * cs + i * rs)).norm() > 1e-12 * (1 + o.norm() + cs.norm() * cols + rs.norm() * rows)) {
        return false;
      }
    }
  }
  auto f = std::make_unique<FftKernels>();
  f->rows = rows, f->cols = cols;
  f->prows = Fft2d::NextPowerOfTwo(2 * rows - 1);
  f->pcols = Fft2d::NextPowerOfTwo(2 * cols - 1);
  f->fft = std::make_unique<Fft2d>(f->prows, f->pcols);
  const size_t N = static_cast<size_t>(f->prows) * f->pcols;
  f->kx.assign(N, 0.0), f->ky.assign(N, 0.0), f->kz.assign(N, 0.0), f->kn.assign(N, 0.0);
  // K(Δ) at offsets Δ = di·row_step + dj·col_step, stored circularly.
  for (int di = -(rows - 1); di <= rows - 1; ++di) {
    for (int dj = -(cols - 1); dj <= cols - 1; ++dj) {
      Eigen::Vector3d d = di * rs + dj * cs;
      d -= d.dot(n0) * n0;
      const double r2 = d.squaredNorm();
      const Eigen::Vector3d kv = d * InPlaneWeight(p, r2);
      const size_t idx = static_cast<size_t>((di + f->prows) % f->prows) * f->pcols + (dj + f->pcols) % f->pcols;
      f->kx[idx] = kv.x(), f->ky[idx] = kv.y(), f->kz[idx] = kv.z();
      f->kn[idx] = std::exp(-p.lambda_d * r2);
    }
  }
  for (auto* k : {&f->kx, &f->ky, &f->kz, &f->kn}) f->fft->Forward(k->data());
  fft_ = std::move(f);
  return true;
}

void DilationFft(const TrackedGeometry& g, const ProbeLayout& layout, const ElastomerParams& p, const double* h,
                 double* u) {
  const auto& f = g.fft();
  const size_t N = static_cast<size_t>(f.prows) * f.pcols;
  thread_local std::vector<std::complex<double>> z, w1, w2;
  z.assign(N, 0.0);
  // Two real inputs in one transform: z = h + i·h^p.
  for (int i = 0; i < f.rows; ++i) {
    for (int j = 0; j < f.cols; ++j) {
      const double hv = h[i * f.cols + j];
      z[static_cast<size_t>(i) * f.pcols + j] = {hv, hv > 0 ? std::pow(hv, p.normal_exponent) : 0.0};
    }
  }
  f.fft->Forward(z.data(), f.rows);  // rows ≥ f.rows are the zero padding
  w1.resize(N), w2.resize(N);
  const std::complex<double> I(0, 1);
  for (int a = 0; a < f.prows; ++a) {
    for (int b = 0; b < f.pcols; ++b) {
      const size_t k = static_cast<size_t>(a) * f.pcols + b;
      const size_t mk = static_cast<size_t>((f.prows - a) % f.prows) * f.pcols + (f.pcols - b) % f.pcols;
      // Spectra of the two real inputs from the Hermitian symmetry of real signals.
      const std::complex<double> H = 0.5 * (z[k] + std::conj(z[mk]));
      const std::complex<double> Hp = -0.5 * I * (z[k] - std::conj(z[mk]));
      // Two real outputs per inverse transform: (ux, uy) and (uz, un).
      w1[k] = H * f.kx[k] + I * (H * f.ky[k]);
      w2[k] = H * f.kz[k] + I * (Hp * f.kn[k]);
    }
  }
  f.fft->Inverse(w1.data(), f.rows);  // only the unpadded rows are read
  f.fft->Inverse(w2.data(), f.rows);
  const Eigen::Vector3d n0 = layout.normal(0);
  for (int i = 0; i < f.rows; ++i) {
    for (int j = 0; j < f.cols; ++j) {
      const int k = i * f.cols + j;
      const size_t idx = static_cast<size_t>(i) * f.pcols + j;
      if (layout.radius(k) == 0 && layout.max_radius() > 0) {
        u[3 * k] = u[3 * k + 1] = u[3 * k + 2] = 0;
        continue;
      }
      const Eigen::Vector3d v = p.dilate_scale * (Eigen::Vector3d(w1[idx].real(), w1[idx].imag(), w2[idx].real()) +
                                                  n0 * w2[idx].imag());
      u[3 * k] = v.x(), u[3 * k + 1] = v.y(), u[3 * k + 2] = v.z();
    }
  }
}

void EvaluateElastomer(Sensor& sensor, int env, const LinkKinematics& link, absl::Span<const ProbeCandidate> candidates,
                       absl::Span<const ProbeCandidate> gel, absl::Span<const TrackedLinkInEnv> tracked) {
  const ProbeLayout& layout = sensor.layout();
  const ElastomerParams& p = sensor.spec().elastomer;
  TrackedGeometry& g = *sensor.tracked();
  const int n = layout.size();
  thread_local std::vector<double> h, u;
  h.assign(n, 0.0);
  u.assign(static_cast<size_t>(3) * n, 0.0);
  // Indentation of each marker into the tracked shapes (no radius offset).
  bool any = false;
  for (int k = 0; k < n; ++k) {
    if (layout.radius(k) == 0 && layout.max_radius() > 0) continue;
    const ProbeContact c = DeepestContact(link.X_WL * layout.position(k), 0.0, candidates);
    h[k] = c.depth;
    any |= c.depth > 0;
  }
  if (any) {
    if (g.has_fft()) {
      DilationFft(g, layout, p, h.data(), u.data());
    } else {
      DilationDirect(layout, p, h.data(), u.data());
    }
  }
  // Shear: tracked surface points anchor in the gel and drag the markers near them.
  const RigidTransform X_LW = link.X_WL.Inverse();
  // How far outside the gel a point's state still matters: an anchored point stays anchored up to
  // a separation of −release_threshold, so the gel query must look at least that far (a point
  // beyond it reads e = −∞ and releases).
  const double reach = std::max(1e-3, -p.release_threshold);
  for (size_t t = 0; t < tracked.size(); ++t) {
    const TrackedLinkInEnv& te = tracked[t];
    if (te.asset < 0) continue;
    const std::vector<Eigen::Vector3d>& pts = te.tracked->points[te.asset];
    uint8_t* anchored = g.anchored(env, static_cast<int>(t));
    Eigen::Vector3d* anchors = g.anchors(env, static_cast<int>(t));
    const RigidTransform X_LT = X_LW * te.kinematics->X_WL;
    for (size_t q = 0; q < pts.size(); ++q) {
      const Eigen::Vector3d P_W = te.kinematics->X_WL * pts[q];
      // Penetration into the gel (the sensor link's own shapes); −inf when far outside.
      double e = -std::numeric_limits<double>::infinity();
      for (const ProbeCandidate& c : gel) {
        if (c.bounds_W.SquaredDistance(P_W) > reach * reach) continue;
        const auto sd = c.shape->SignedDistance(c.X_SW * P_W, reach);
        if (sd.found()) e = std::max(e, -sd.distance);
      }
      const Eigen::Vector3d P_L = X_LT * pts[q];
      if (!anchored[q]) {
        if (e > p.contact_threshold) {
          anchored[q] = 1;
          anchors[q] = P_L;
        }
        continue;
      }
      if (e < p.release_threshold) {
        anchored[q] = 0;
        continue;
      }
      const Eigen::Vector3d slip = P_L - anchors[q];
      if (slip.squaredNorm() == 0 || e <= 0) continue;
      for (int k = 0; k < n; ++k) {
        if (layout.radius(k) == 0 && layout.max_radius() > 0) continue;
        const Eigen::Vector3d nk = layout.normal(k);
        Eigen::Vector3d ts = slip - slip.dot(nk) * nk;
        Eigen::Vector3d off = layout.position(k) - P_L;
        off -= off.dot(nk) * nk;
        const double wgt = p.shear_scale * e * std::exp(-p.lambda_s * off.squaredNorm());
        u[3 * k] += wgt * ts.x(), u[3 * k + 1] += wgt * ts.y(), u[3 * k + 2] += wgt * ts.z();
      }
    }
  }
  SensorOutputs& out = sensor.mutable_truth();
  const size_t base = static_cast<size_t>(env) * n * 3;
  for (int k = 0; k < 3 * n; ++k) out.displacement[base + k] = static_cast<float>(u[k]);
  if (MeasuredPipeline* pipe = sensor.pipeline()) {
    float* raw = sensor.raw_measured(env);
    for (int k = 0; k < n; ++k) {
      const double gain = pipe->gain(env, k);
      for (int a = 0; a < 3; ++a) raw[3 * k + a] = static_cast<float>(gain * u[3 * k + a]);
    }
  }
}

}  // namespace taxel::sensors
