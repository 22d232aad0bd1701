// ElastomerTaxel: marker displacement of a gel skin = dilation + shear (docs/reference.md#sensors; in the spirit
// of HydroShear-style gel models — no deformation is simulated).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "core/sensors/sensor.h"
#include "core/sensors/tracked_geometry.h"

namespace taxel::sensors {
namespace {

// In-plane weight w of the dilation (the marker moves by d·h·w(r²), d the in-plane offset, r = |d|):
// a blend of the local Gaussian g = e^(−λ_d r²) and the incompressible 1/(r² + ε²), each divided
// by the peak of its radial profile r·kernel so that compressibility c mixes two kernels of equal
// height (Genesis' definition):
//   c = 1:  w = g (plain, not normalised: the default keeps its historic scale);
//   c < 1:  w = c·g/N_g + (1 − c)·(1/(r² + ε²))/N_i,
//           N_g = e^(−1/2)/√(2λ_d)  (peak of r·g, at r = 1/√(2λ_d)),
//           N_i = 1/(2ε)            (peak of r/(r² + ε²), at r = ε).
// The weight jumps at c → 1 by the factor 1/N_g (e.g. ×61.6 for λ_d = 700 m⁻²). On a regular grid
// the incompressible term is the bonded layer's kernel instead (LayerKernel): then `incompressible`
// is 0 here and the layer's vector kernel, of unit peak, enters with the weight 1 − c.
struct InPlaneBlend {
  InPlaneBlend(const ElastomerParams& p, bool layer)
      : lambda(p.lambda_d), eps2(p.elastomer_thickness * p.elastomer_thickness) {
    if (p.compressibility >= 1) {
      gauss = 1, incompressible = 0;
    } else {
      gauss = p.compressibility * std::sqrt(2 * p.lambda_d) * std::exp(0.5);
      incompressible = layer ? 0 : (1 - p.compressibility) * 2 * p.elastomer_thickness;
    }
  }
  double operator()(double r2) const {
    double w = gauss * std::exp(-lambda * r2);
    if (incompressible != 0) w += incompressible / (r2 + eps2);
    return w;
  }
  double lambda, eps2, gauss, incompressible;
};

// The lattice of a regular grid layout with one shared normal: probe (i, j) at o + j·cs + i·rs.
struct GridLattice {
  int rows = 0, cols = 0;
  Eigen::Vector3d origin, col_step, row_step, normal;
};

// The lattice when the layout is a grid regular to 1e-12 of its extent (the FFT path must equal
// the direct sum) with one normal; nullopt otherwise.
std::optional<GridLattice> RegularLattice(const ProbeLayout& layout) {
  if (!layout.is_grid()) return std::nullopt;
  GridLattice g;
  g.rows = layout.rows(), g.cols = layout.cols();
  g.normal = layout.normal(0);
  double extent = 0;
  for (int k = 0; k < layout.size(); ++k) {
    if ((layout.normal(k) - g.normal).norm() > 1e-12) return std::nullopt;
    extent = std::max(extent, layout.position(k).norm());
  }
  auto steps = RegularGrid(layout, "probe_local_pos", 1e-12 * (1 + 2 * extent * (g.rows + g.cols)), "the FFT path");
  if (!steps.ok()) return std::nullopt;
  g.origin = layout.position(0);
  g.col_step = steps->col_step, g.row_step = steps->row_step;
  return g;
}

// The padded transform size of a lattice: every offset −(n − 1)..n − 1 fits without wrapping.
int PaddedSize(int n) { return Fft2d::NextPowerOfTwo(2 * n - 1); }

// Circular index of lattice offset (di, dj) in a prows × pcols array.
size_t Circular(int di, int dj, int prows, int pcols) {
  return static_cast<size_t>((di + prows) % prows) * pcols + (dj + pcols) % pcols;
}

}  // namespace

double BondedLayerTransfer(double q) {
  q = std::clamp(q, 1e-3, 30.0);
  const double x = 2 * q;
  if (x < 1) {
    // sinh x − x = (x³/6)·Σ_{n≥0} 6·x^(2n)/(2n + 3)!  = (x³/6)·(1 + x²/20 + x⁴/840 + x⁶/60480 + …),
    // term n+1 = term n · x²/((2n + 4)(2n + 5)): the closed form loses digits to cancellation here
    // (all of them as q → 1e-3). Terms to x¹⁶ leave < 1e-17 relative at x = 1.
    const double x2 = x * x;
    double series = 1;
    for (int m = 8; m >= 1; --m) series = 1 + x2 / ((2 * m + 2) * (2 * m + 3)) * series;
    return 2 * q * q / (x * x2 / 6 * series);
  }
  return 2 * q * q / (std::sinh(x) - x);
}

// The in-plane dilation kernel of an incompressible elastic layer of thickness h bonded to a rigid
// base, on a regular grid: K̂(k) = −i·(k/|k|)·S(|k|·h) at the discrete frequencies of the padded
// grid (K̂(0) = 0; the Nyquist rows and columns, which have no sign, are 0 too, so the kernel is
// real), transformed back to the lattice offsets and divided by its largest magnitude there (Genesis'
// blend normaliser N_i). It points away from the indentation (−i·k̂ is the transform of an outward
// field) and, for offsets well beyond h, falls as 1/r like 1/(r² + ε²)·r.
TrackedGeometry::LayerKernel::LayerKernel(int rows, int cols, const Eigen::Vector3d& col_step,
                                          const Eigen::Vector3d& row_step, double h)
    : rows_(rows), cols_(cols) {
  const int prows = PaddedSize(rows_), pcols = PaddedSize(cols_);
  // Dual basis of the lattice in its plane: f_c·cs = 1, f_c·rs = 0, f_r·rs = 1, f_r·cs = 0, so
  // that frequency (a, b) is k = 2π·(a/prows·f_r + b/pcols·f_c) and k·x = 2π(a·i/prows + b·j/pcols).
  Eigen::Vector3d f_c = Eigen::Vector3d::Zero(), f_r = Eigen::Vector3d::Zero();
  if (rows_ > 1 && cols_ > 1) {
    Eigen::Matrix2d gram;
    gram << col_step.squaredNorm(), col_step.dot(row_step), col_step.dot(row_step), row_step.squaredNorm();
    const Eigen::Matrix2d inv = gram.inverse();
    f_c = inv(0, 0) * col_step + inv(0, 1) * row_step;
    f_r = inv(1, 0) * col_step + inv(1, 1) * row_step;
  } else if (cols_ > 1) {
    f_c = col_step / col_step.squaredNorm();
  } else if (rows_ > 1) {
    f_r = row_step / row_step.squaredNorm();
  }
  const size_t N = static_cast<size_t>(prows) * pcols;
  std::vector<std::complex<double>> c[3];
  for (auto& v : c) v.assign(N, 0.0);
  const double two_pi = 2 * M_PI;
  for (int a = 0; a < prows; ++a) {
    if (prows > 1 && 2 * a == prows) continue;  // Nyquist
    const int sa = a <= prows / 2 ? a : a - prows;
    for (int b = 0; b < pcols; ++b) {
      if (pcols > 1 && 2 * b == pcols) continue;
      const int sb = b <= pcols / 2 ? b : b - pcols;
      const Eigen::Vector3d k =
          two_pi * (static_cast<double>(sa) / prows * f_r + static_cast<double>(sb) / pcols * f_c);
      const double kn = k.norm();
      if (kn == 0) continue;
      const double s = BondedLayerTransfer(kn * h) / kn;
      const size_t idx = static_cast<size_t>(a) * pcols + b;
      for (int d = 0; d < 3; ++d) c[d][idx] = {0.0, -k[d] * s};
    }
  }
  Fft2d fft(prows, pcols);
  Workspace ws;  // once, at creation
  for (auto& v : c) fft.Inverse(v.data(), ws);
  // Keep the offsets a probe pair can have; normalise by the largest magnitude among them.
  k_.resize(static_cast<size_t>(2 * rows_ - 1) * (2 * cols_ - 1));
  double peak = 0;
  for (int di = -(rows_ - 1); di <= rows_ - 1; ++di) {
    for (int dj = -(cols_ - 1); dj <= cols_ - 1; ++dj) {
      const size_t src = Circular(di, dj, prows, pcols);
      Eigen::Vector3d v(c[0][src].real(), c[1][src].real(), c[2][src].real());
      peak = std::max(peak, v.norm());
      k_[Index(di, dj)] = v;
    }
  }
  if (peak > 0) {
    for (auto& v : k_) v /= peak;
  }
}

void DilationDirect(const ProbeLayout& layout, const ElastomerParams& p, const double* h, double* u,
                    const TrackedGeometry* geometry) {
  const int n = layout.size();
  const TrackedGeometry::LayerKernel* layer = geometry != nullptr ? geometry->layer_kernel() : nullptr;
  const InPlaneBlend weight(p, layer != nullptr);
  const double layer_weight = 1 - p.compressibility;
  const int cols = layout.cols();
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
      ui += d * (h[j] * weight(r2)) + ni * (std::pow(h[j], p.normal_exponent) * std::exp(-p.lambda_d * r2));
      if (layer != nullptr) ui += (h[j] * layer_weight) * layer->at(i / cols - j / cols, i % cols - j % cols);
    }
    ui *= p.dilate_scale;
    u[3 * i] = ui.x(), u[3 * i + 1] = ui.y(), u[3 * i + 2] = ui.z();
  }
}

bool TrackedGeometry::PrepareDilation(const ProbeLayout& layout, const ElastomerParams& p) {
  fft_.reset();
  layer_.reset();
  const std::optional<GridLattice> grid = RegularLattice(layout);
  if (!grid) return false;
  if (p.compressibility < 1) {
    // The lattice steps projected onto the gel's plane (the kernel is in-plane); a lattice that
    // collapses there (steps along the normal) keeps the 1/(r² + ε²) kernel.
    const Eigen::Vector3d n = grid->normal;
    const Eigen::Vector3d cs = grid->col_step - grid->col_step.dot(n) * n,
                          rs = grid->row_step - grid->row_step.dot(n) * n;
    const double area = cs.cross(rs).norm(), c2 = cs.squaredNorm(), r2 = rs.squaredNorm();
    const bool spans = grid->rows > 1 && grid->cols > 1
                           ? area > 1e-9 * std::sqrt(c2 * r2)
                           : (grid->cols > 1 ? c2 > 0 : r2 > 0) || grid->rows * grid->cols == 1;
    if (spans) layer_ = std::make_unique<LayerKernel>(grid->rows, grid->cols, cs, rs, p.elastomer_thickness);
  }
  if (!p.use_fft) return false;
  const int rows = grid->rows, cols = grid->cols;
  const Eigen::Vector3d n0 = grid->normal, cs = grid->col_step, rs = grid->row_step;
  auto f = std::make_unique<FftKernels>();
  f->rows = rows, f->cols = cols;
  f->prows = PaddedSize(rows);
  f->pcols = PaddedSize(cols);
  f->fft = std::make_unique<Fft2d>(f->prows, f->pcols);
  const size_t N = static_cast<size_t>(f->prows) * f->pcols;
  f->kx.assign(N, 0.0), f->ky.assign(N, 0.0), f->kz.assign(N, 0.0), f->kn.assign(N, 0.0);
  // K(Δ) at offsets Δ = di·row_step + dj·col_step, stored circularly.
  const InPlaneBlend weight(p, layer_ != nullptr);
  for (int di = -(rows - 1); di <= rows - 1; ++di) {
    for (int dj = -(cols - 1); dj <= cols - 1; ++dj) {
      Eigen::Vector3d d = di * rs + dj * cs;
      d -= d.dot(n0) * n0;
      const double r2 = d.squaredNorm();
      Eigen::Vector3d kv = d * weight(r2);
      if (layer_) kv += (1 - p.compressibility) * layer_->at(di, dj);
      const size_t idx = Circular(di, dj, f->prows, f->pcols);
      f->kx[idx] = kv.x(), f->ky[idx] = kv.y(), f->kz[idx] = kv.z();
      f->kn[idx] = std::exp(-p.lambda_d * r2);
    }
  }
  Workspace ws;  // once, at creation
  for (auto* k : {&f->kx, &f->ky, &f->kz, &f->kn}) f->fft->Forward(k->data(), ws);
  fft_ = std::move(f);
  return true;
}

void DilationFft(const TrackedGeometry& g, const ProbeLayout& layout, const ElastomerParams& p, const double* h,
                 double* u, Workspace& ws) {
  const auto& f = g.fft();
  const size_t N = static_cast<size_t>(f.prows) * f.pcols;
  Workspace::Scope scope(ws);
  auto* z = ws.TakeZeroed<std::complex<double>>(N);
  // Two real inputs in one transform: z = h + i·h^p.
  for (int i = 0; i < f.rows; ++i) {
    for (int j = 0; j < f.cols; ++j) {
      const double hv = h[i * f.cols + j];
      z[static_cast<size_t>(i) * f.pcols + j] = {hv, hv > 0 ? std::pow(hv, p.normal_exponent) : 0.0};
    }
  }
  f.fft->Forward(z, ws, f.rows);  // rows ≥ f.rows are the zero padding
  auto* w1 = ws.Take<std::complex<double>>(N);
  auto* w2 = ws.Take<std::complex<double>>(N);
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
  f.fft->Inverse(w1, ws, f.rows);  // only the unpadded rows are read
  f.fft->Inverse(w2, ws, f.rows);
  const Eigen::Vector3d n0 = layout.normal(0);
  for (int i = 0; i < f.rows; ++i) {
    for (int j = 0; j < f.cols; ++j) {
      const int k = i * f.cols + j;
      const size_t idx = static_cast<size_t>(i) * f.pcols + j;
      if (layout.radius(k) == 0 && layout.max_radius() > 0) {
        u[3 * k] = u[3 * k + 1] = u[3 * k + 2] = 0;
        continue;
      }
      const Eigen::Vector3d v =
          p.dilate_scale * (Eigen::Vector3d(w1[idx].real(), w1[idx].imag(), w2[idx].real()) + n0 * w2[idx].imag());
      u[3 * k] = v.x(), u[3 * k + 1] = v.y(), u[3 * k + 2] = v.z();
    }
  }
}

void EvaluateElastomer(Sensor& sensor, int env, const LinkKinematics& link, absl::Span<const ProbeCandidate> candidates,
                       absl::Span<const ProbeCandidate> gel, absl::Span<const TrackedLinkInEnv> tracked,
                       float* raw_measured, Workspace& ws) {
  const ProbeLayout& layout = sensor.layout();
  const ElastomerParams& p = sensor.spec().elastomer;
  TrackedGeometry& g = *sensor.tracked();
  const int n = layout.size();
  Workspace::Scope scope(ws);
  double* h = ws.TakeZeroed<double>(n);
  double* u = ws.TakeZeroed<double>(static_cast<size_t>(3) * n);
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
      DilationFft(g, layout, p, h, u, ws);
    } else {
      DilationDirect(layout, p, h, u, &g);
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
        const auto sd = c.SignedDistance(c.X_SW * P_W, reach);
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
    float* raw = raw_measured;
    for (int k = 0; k < n; ++k) {
      const double gain = pipe->gain(env, k);
      for (int a = 0; a < 3; ++a) raw[3 * k + a] = static_cast<float>(gain * u[3 * k + a]);
    }
  }
}

}  // namespace taxel::sensors
