// Spatial crosstalk of the measured branch: the Gaussian kernel, the general odd-kernel
// cross-correlation (one kernel per channel class, zero or renormalised borders) and the
// separable Gaussian blur of every channel at once.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/sensors/imperfections.h"

namespace taxel::sensors {

// Effective Gaussian kernel with strength: (1 − s)·δ + s·G.
std::vector<double> BlendWithIdentity(std::vector<double> g, int rows, int cols, double strength) {
  for (double& v : g) v *= strength;
  g[(rows / 2) * cols + cols / 2] += 1 - strength;
  return g;
}

// True when K (rows × cols, odd) is the discrete delta: 1 at the centre, 0 elsewhere.
bool IsIdentityKernel(const std::vector<double>& K, int rows, int cols) {
  for (int a = 0; a < rows; ++a) {
    for (int b = 0; b < cols; ++b) {
      const bool centre = a == rows / 2 && b == cols / 2;
      if (K[a * cols + b] != (centre ? 1.0 : 0.0)) return false;
    }
  }
  return true;
}

absl::StatusOr<std::vector<double>> GaussianCrosstalkKernel(int rows, int cols, double sigma, double row_spacing,
                                                            double col_spacing) {
  if (rows < 1 || cols < 1 || rows % 2 == 0 || cols % 2 == 0) {
    return absl::InvalidArgumentError(absl::StrCat("kernel size must be odd and positive, got ", rows, "x", cols));
  }
  if (!(sigma > 0) || !std::isfinite(sigma)) {
    return absl::InvalidArgumentError(absl::StrCat("sigma must be finite and > 0, got ", sigma));
  }
  if (!(row_spacing > 0) || !(col_spacing > 0) || !std::isfinite(row_spacing) || !std::isfinite(col_spacing)) {
    return absl::InvalidArgumentError("spacing must be finite and > 0");
  }
  std::vector<double> k(static_cast<size_t>(rows) * cols);
  double sum = 0;
  for (int a = 0; a < rows; ++a) {
    for (int b = 0; b < cols; ++b) {
      const double y = (a - rows / 2) * row_spacing, x = (b - cols / 2) * col_spacing;
      k[a * cols + b] = std::exp(-(x * x + y * y) / (2 * sigma * sigma));
      sum += k[a * cols + b];
    }
  }
  for (double& v : k) v /= sum;
  return k;
}

void MeasuredPipeline::CrossCorrelate(const float* x, int stride, int offset, const std::vector<double>& K, float* y,
                                      int y_stride, int y_offset, Workspace& ws) const {
  // y[i,j] = Σ_ab K[a,b]·x[i + a − kr/2, j + b − kc/2] (each source / its weight in renormalize
  // mode). The source goes into a zero-padded buffer first, so that the taps need no bounds tests.
  const int rows = layout_->rows(), cols = layout_->cols();
  const std::vector<double>* w = nullptr;
  if (spec_.crosstalk_border == CrosstalkBorder::kRenormalize) {
    w = &K == &kernel_normal_  ? &source_weight_normal_
        : &K == &kernel_shear_ ? &source_weight_shear_
                               : &source_weight_torque_;
  }
  const int pr = kr_ / 2, pc = kc_ / 2, pcols = cols + 2 * pc;
  Workspace::Scope scope(ws);
  double* pad = ws.TakeZeroed<double>(static_cast<size_t>(rows + 2 * pr) * pcols);
  for (int i = 0; i < rows; ++i) {
    double* row = &pad[static_cast<size_t>(i + pr) * pcols + pc];
    for (int j = 0; j < cols; ++j) {
      const int src = i * cols + j;
      const double v = x[static_cast<size_t>(src) * stride + offset];
      row[j] = w == nullptr ? v : ((*w)[src] > 0 ? v / (*w)[src] : 0.0);
    }
  }
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      double s = 0;
      if (active_[i * cols + j]) {
        for (int a = 0; a < kr_; ++a) {
          const double* src = &pad[static_cast<size_t>(i + a) * pcols + j];
          const double* k = &K[static_cast<size_t>(a) * kc_];
          for (int b = 0; b < kc_; ++b) s += k[b] * src[b];
        }
      }
      y[static_cast<size_t>(i * cols + j) * y_stride + y_offset] = static_cast<float>(s);
    }
  }
}

namespace {

// out[j] = Σ_t g[t]·src[t][j] for j < len, summed from +0 in tap order. Three vectors of 16
// outputs stay in registers over the taps (one store per output), so that three independent sums
// are in flight (one would wait for the latency of each add); then single vectors, then single
// values. The order of the sum is the same for every j, so the result does not depend on the
// blocking or the instruction set.
typedef float Float16 __attribute__((vector_size(64)));
inline __attribute__((always_inline)) Float16 LoadFloat16(const float* p) {
  Float16 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline __attribute__((always_inline)) void WeightedSum(const float* const* src, const float* g, int taps, size_t len,
                                                       float* out) {
  constexpr size_t kW = 16;
  size_t j = 0;
  for (; j + 3 * kW <= len; j += 3 * kW) {
    Float16 a0 = {}, a1 = {}, a2 = {};
    for (int t = 0; t < taps; ++t) {
      const float w = g[t];
      const float* s = src[t] + j;
      a0 += w * LoadFloat16(s);
      a1 += w * LoadFloat16(s + kW);
      a2 += w * LoadFloat16(s + 2 * kW);
    }
    std::memcpy(out + j, &a0, sizeof(a0));
    std::memcpy(out + j + kW, &a1, sizeof(a1));
    std::memcpy(out + j + 2 * kW, &a2, sizeof(a2));
  }
  for (; j + kW <= len; j += kW) {
    Float16 a = {};
    for (int t = 0; t < taps; ++t) a += g[t] * LoadFloat16(src[t] + j);
    std::memcpy(out + j, &a, sizeof(a));
  }
  for (; j < len; ++j) {
    float acc = 0.f;
    for (int t = 0; t < taps; ++t) acc += g[t] * src[t][j];
    out[j] = acc;
  }
}

// The separable Gaussian crosstalk of SeparableCorrelate on a rows × cols grid of C interleaved
// channels, in float. `inv_w` (per source value, rows·cols·C, or nullptr) divides the sources in
// renormalize mode.
// Element-wise loops only (each output sums its taps in a fixed order), so every clone gives the
// same bits.
__attribute__((target_clones("avx512f", "avx2", "default"))) void SeparableBlur(const float* x, const float* inv_w,
                                                                     const uint8_t* active, int rows, int cols, int C,
                                                                     const float* g_rows, int hr, const float* g_cols,
                                                                     int hc, float strength, float* y, Workspace& ws) {
  const size_t row_len = static_cast<size_t>(cols) * C, pad = static_cast<size_t>(hc) * C;
  Workspace::Scope scope(ws);
  const size_t n_taps_max = 2 * static_cast<size_t>(std::max(hr, hc)) + 1;
  const float** taps = ws.Take<const float*>(n_taps_max);
  float* weights = ws.Take<float>(n_taps_max);
  // Rows whose source is all ±0 contribute nothing to the sums (leaving them out gives the same
  // bits: a sum started at +0 never becomes −0), and an output row whose (2hr + 1)-row window is
  // all ±0 reads +0: both skipped — pads are mostly out of contact.
  uint8_t* row_any = ws.TakeZeroed<uint8_t>(rows);
  bool any = false;
  for (int i = 0; i < rows; ++i) {
    const float* xr = x + i * row_len;
    uint8_t row = 0;
    for (size_t jc = 0; jc < row_len; ++jc) row |= xr[jc] != 0;
    row_any[i] = row;
    any |= row != 0;
  }
  if (!any) {  // nothing to spread (a pad out of contact)
    std::fill(y, y + rows * row_len, 0.f);
    return;
  }
  // Per non-zero row: the source (divided by its weight in renormalize mode) zero-padded by hc
  // columns each side, src[i], and its row pass tmp[i] = Σ_b g_cols[b]·src[i][j + b − hc].
  const size_t prow_len = row_len + 2 * pad;
  float* src = ws.Take<float>(static_cast<size_t>(rows) * prow_len);
  float* tmp = ws.Take<float>(static_cast<size_t>(rows) * row_len);
  for (int i = 0; i < rows; ++i) {
    if (!row_any[i]) continue;
    const float* xr = x + i * row_len;
    float* s_row = &src[i * prow_len];
    std::fill(s_row, s_row + pad, 0.f);
    std::fill(s_row + pad + row_len, s_row + prow_len, 0.f);
    if (inv_w == nullptr) {
      std::copy(xr, xr + row_len, s_row + pad);
    } else {
      const float* iw = inv_w + i * row_len;
      for (size_t jc = 0; jc < row_len; ++jc) s_row[pad + jc] = xr[jc] * iw[jc];
    }
    for (int b = 0; b <= 2 * hc; ++b) taps[b] = s_row + static_cast<size_t>(b) * C;  // column j + b − hc, padded
    WeightedSum(taps, g_cols, 2 * hc + 1, row_len, &tmp[i * row_len]);
  }
  // Column pass and the blend with the identity.
  float* acc = ws.Take<float>(row_len);
  for (int i = 0; i < rows; ++i) {
    float* y_row = y + i * row_len;
    bool window = false;
    for (int a = std::max(0, i - hr); a <= std::min(rows - 1, i + hr); ++a) window |= row_any[a] != 0;
    if (!window) {
      std::fill(y_row, y_row + row_len, 0.f);
      continue;
    }
    int n_taps = 0;
    for (int a = 0; a <= 2 * hr; ++a) {
      const int r = i + a - hr;
      if (r < 0 || r >= rows || !row_any[r]) continue;
      taps[n_taps] = &tmp[r * row_len];
      weights[n_taps++] = g_rows[a];
    }
    WeightedSum(taps, weights, n_taps, row_len, acc);
    if (row_any[i]) {
      const float* s_row = &src[i * prow_len + pad];
      for (size_t jc = 0; jc < row_len; ++jc) y_row[jc] = (1 - strength) * s_row[jc] + strength * acc[jc];
    } else {  // source row all ±0: (1 − s)·(±0) + s·acc = s·acc (+0 when acc is +0)
      for (size_t jc = 0; jc < row_len; ++jc) y_row[jc] = 0.f + strength * acc[jc];
    }
    for (int j = 0; j < cols; ++j) {
      if (!active[i * cols + j]) std::fill(y_row + j * C, y_row + (j + 1) * C, 0.f);
    }
  }
}

}  // namespace

void MeasuredPipeline::SeparableCorrelate(const float* x, float* y, Workspace& ws) const {
  // All C channels at once (they share the kernel), channel-interleaved like x and y so that the
  // innermost loops run over contiguous channels.
  SeparableBlur(x, inv_source_weight_.empty() ? nullptr : inv_source_weight_.data(), active_.data(), layout_->rows(),
                layout_->cols(), channels_, g_rows_.data(), kr_ / 2, g_cols_.data(), kc_ / 2,
                static_cast<float>(spec_.crosstalk_strength), y, ws);
}

void MeasuredPipeline::Crosstalk(const float* x, float* y, Workspace& ws) const {
  // Split force-like vectors into the normal component (along the probe normal) and the
  // tangential part, filter each with its kernel, and recombine.
  const int C = channels_;
  if (separable_) {  // one kernel for every channel: filter the components directly
    SeparableCorrelate(x, y, ws);
    return;
  }
  int c0 = 0;
  for (ChannelGroup g : groups_) {
    if (g == ChannelGroup::kScalar) {
      CrossCorrelate(x, C, c0, kernel_normal_, y, C, c0, ws);
    } else if (g == ChannelGroup::kTorque) {
      for (int a = 0; a < 3; ++a) CrossCorrelate(x, C, c0 + a, kernel_torque_, y, C, c0 + a, ws);
    } else if (kernel_shear_ == kernel_normal_) {
      // One kernel for both parts: filtering is linear, so filter the components directly (exact
      // same result as splitting along the probe normal, without the rounding of the split).
      for (int a = 0; a < 3; ++a) CrossCorrelate(x, C, c0 + a, kernel_normal_, y, C, c0 + a, ws);
    } else {
      Workspace::Scope scope(ws);
      float* normal_in = ws.TakeZeroed<float>(n_);
      float* normal_out = ws.TakeZeroed<float>(n_);
      float* tangent = ws.TakeZeroed<float>(static_cast<size_t>(n_) * 3);
      for (int k = 0; k < n_; ++k) {
        const Eigen::Vector3d nrm = layout_->normal(k);
        const Eigen::Vector3d v(x[k * C + c0], x[k * C + c0 + 1], x[k * C + c0 + 2]);
        const double vn = v.dot(nrm);
        normal_in[k] = static_cast<float>(vn);
        const Eigen::Vector3d t = v - vn * nrm;
        for (int a = 0; a < 3; ++a) tangent[k * 3 + a] = static_cast<float>(t[a]);
      }
      CrossCorrelate(normal_in, 1, 0, kernel_normal_, normal_out, 1, 0, ws);
      float* tangent_out = ws.TakeZeroed<float>(static_cast<size_t>(n_) * 3);
      for (int a = 0; a < 3; ++a) CrossCorrelate(tangent, 3, a, kernel_shear_, tangent_out, 3, a, ws);
      for (int k = 0; k < n_; ++k) {
        const Eigen::Vector3d nrm = layout_->normal(k);
        for (int a = 0; a < 3; ++a) {
          y[k * C + c0 + a] = static_cast<float>(normal_out[k] * nrm[a] + tangent_out[k * 3 + a]);
        }
      }
    }
    c0 += GroupWidth(g);
  }
}

}  // namespace taxel::sensors
