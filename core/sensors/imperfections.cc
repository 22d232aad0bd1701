#include "core/sensors/imperfections.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"

namespace taxel::sensors {
namespace {

absl::Status Invalid(absl::string_view field, absl::string_view name, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(field, ".", name, ": ", message));
}

absl::Status NonNegative(absl::string_view field, absl::string_view name, double v) {
  if (!(v >= 0) || !std::isfinite(v)) return Invalid(field, name, absl::StrCat("expected a finite value >= 0, got ", v));
  return absl::OkStatus();
}

int GroupWidth(ChannelGroup g) { return g == ChannelGroup::kScalar ? 1 : 3; }

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

}  // namespace

bool ImperfectionSpec::any() const {
  const bool unit_gain = std::all_of(probe_gain.begin(), probe_gain.end(), [](double g) { return g == 1.0; });
  return probe_radius_noise != 0 || !unit_gain || probe_gain_resample_range.has_value() || crosstalk_strength != 0 ||
         !crosstalk_kernel.empty() || hysteresis_strength != 0 || random_walk != 0 || noise != 0 || bias != 0 ||
         resolution != 0 || dead_taxel_probability != 0 || delay != 0 || jitter != 0 || history_length != 0 ||
         update_period != 1;
}

absl::StatusOr<GridGeometry> RegularGrid(const ProbeLayout& layout, absl::string_view field, double tolerance) {
  if (!layout.is_grid()) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": crosstalk needs a grid layout (probe_local_pos of shape [rows, cols, 3]), got a flat list"));
  }
  const int rows = layout.rows(), cols = layout.cols();
  GridGeometry g;
  const Eigen::Vector3d& p00 = layout.position(0);
  if (cols > 1) g.col_step = layout.position(1) - p00;
  if (rows > 1) g.row_step = layout.position(cols) - p00;
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      const Eigen::Vector3d expected = p00 + j * g.col_step + i * g.row_step;
      if ((layout.position(i * cols + j) - expected).norm() > tolerance) {
        return absl::InvalidArgumentError(absl::StrCat(field, ": crosstalk needs a regular grid; probe [", i, ", ", j,
                                                       "] is ", (layout.position(i * cols + j) - expected).norm(),
                                                       " m off the lattice (tolerance ", tolerance, " m)"));
      }
    }
  }
  return g;
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

absl::Status ValidateImperfections(const ImperfectionSpec& s, const ProbeLayout& layout, absl::string_view f_in) {
  const std::string f = absl::StrCat(f_in, ".imperfections");
  TAXEL_RETURN_IF_ERROR(NonNegative(f, "probe_radius_noise", s.probe_radius_noise));
  if (s.probe_gain.size() != 1 && static_cast<int>(s.probe_gain.size()) != layout.size()) {
    return Invalid(f, "probe_gain", absl::StrCat("expected 1 or ", layout.size(), " values, got ", s.probe_gain.size()));
  }
  for (size_t k = 0; k < s.probe_gain.size(); ++k) {
    if (!std::isfinite(s.probe_gain[k])) return Invalid(f, absl::StrCat("probe_gain[", k, "]"), "expected a finite value");
  }
  if (s.probe_gain_resample_range) {
    const auto [lo, hi] = *s.probe_gain_resample_range;
    if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi) {
      return Invalid(f, "probe_gain_resample_range", absl::StrCat("expected finite [lo, hi] with lo <= hi, got [", lo, ", ", hi, "]"));
    }
  }
  TAXEL_RETURN_IF_ERROR(NonNegative(f, "crosstalk_strength", s.crosstalk_strength));
  if (s.crosstalk_strength > 1) {
    return Invalid(f, "crosstalk_strength", absl::StrCat("expected a value in [0, 1], got ", s.crosstalk_strength));
  }
  TAXEL_RETURN_IF_ERROR(NonNegative(f, "crosstalk_sigma", s.crosstalk_sigma));
  if (s.crosstalk_strength > 0 && s.crosstalk_kernel.empty() && !(s.crosstalk_sigma > 0)) {
    return Invalid(f, "crosstalk_sigma", "expected a value > 0 when crosstalk_strength > 0");
  }
  if (!s.crosstalk_kernel.empty()) {
    const int L = s.crosstalk_kernel_layers, r = s.crosstalk_kernel_rows, c = s.crosstalk_kernel_cols;
    if (L < 1 || L > 3 || r < 1 || c < 1 || r % 2 == 0 || c % 2 == 0) {
      return Invalid(f, "crosstalk_kernel", absl::StrCat("expected an odd-sized kernel of shape (N, M), (2, N, M) or (3, N, M), got (",
                                                       L, ", ", r, ", ", c, ")"));
    }
    if (s.crosstalk_kernel.size() != static_cast<size_t>(L) * r * c) {
      return Invalid(f, "crosstalk_kernel", "value count does not match its shape");
    }
    for (double v : s.crosstalk_kernel) {
      if (!std::isfinite(v)) return Invalid(f, "crosstalk_kernel", "expected finite values");
    }
  }
  if (s.crosstalk_strength > 0 || !s.crosstalk_kernel.empty()) {
    TAXEL_RETURN_IF_ERROR(RegularGrid(layout, f + ".crosstalk").status());
  }
  TAXEL_RETURN_IF_ERROR(NonNegative(f, "hysteresis_strength", s.hysteresis_strength));
  TAXEL_RETURN_IF_ERROR(NonNegative(f, "hysteresis_tau", s.hysteresis_tau));
  if (s.hysteresis_strength > 0 && !(s.hysteresis_tau > 0)) {
    return Invalid(f, "hysteresis_tau", "expected a value > 0 when hysteresis_strength > 0");
  }
  TAXEL_RETURN_IF_ERROR(NonNegative(f, "random_walk", s.random_walk));
  TAXEL_RETURN_IF_ERROR(NonNegative(f, "noise", s.noise));
  if (!std::isfinite(s.bias)) return Invalid(f, "bias", "expected a finite value");
  TAXEL_RETURN_IF_ERROR(NonNegative(f, "resolution", s.resolution));
  if (!(s.dead_taxel_probability >= 0 && s.dead_taxel_probability <= 1)) {
    return Invalid(f, "dead_taxel_probability", absl::StrCat("expected a value in [0, 1], got ", s.dead_taxel_probability));
  }
  const auto [dlo, dhi] = s.dead_taxel_value_range;
  if (!std::isfinite(dlo) || !std::isfinite(dhi) || dlo > dhi) {
    return Invalid(f, "dead_taxel_value_range", absl::StrCat("expected finite [lo, hi] with lo <= hi, got [", dlo, ", ", dhi, "]"));
  }
  TAXEL_RETURN_IF_ERROR(NonNegative(f, "delay", s.delay));
  TAXEL_RETURN_IF_ERROR(NonNegative(f, "jitter", s.jitter));
  if (s.jitter > s.delay) {
    return Invalid(f, "jitter", absl::StrCat("expected jitter <= delay (", s.delay, " s), got ", s.jitter));
  }
  if (s.history_length < 0 || s.history_length > 4096) {
    return Invalid(f, "history_length", absl::StrCat("expected a value in [0, 4096], got ", s.history_length));
  }
  if (s.update_period < 1) {
    return Invalid(f, "update_period", absl::StrCat("expected a value >= 1, got ", s.update_period));
  }
  return absl::OkStatus();
}

MeasuredPipeline::MeasuredPipeline(const ImperfectionSpec& spec, const ProbeLayout& layout,
                                   std::vector<ChannelGroup> groups, int num_envs, uint64_t seed, int32_t sensor_id)
    : spec_(spec),
      layout_(&layout),
      groups_(std::move(groups)),
      n_(layout.size()),
      channels_(0),
      num_envs_(num_envs),
      rng_radius_(seed, kStreamRadius),
      rng_gain_(seed, kStreamGain),
      rng_dead_(seed, kStreamDead),
      rng_dead_value_(seed, kStreamDeadValue),
      rng_walk_(seed, kStreamWalk),
      rng_noise_(seed, kStreamNoise),
      rng_jitter_(seed, kStreamJitter),
      sensor_id_(sensor_id) {
  for (ChannelGroup g : groups_) channels_ += GroupWidth(g);
  const size_t nc = static_cast<size_t>(num_envs) * n_ * channels_;
  gains_.assign(static_cast<size_t>(num_envs) * n_, 1.0);
  dead_.assign(static_cast<size_t>(num_envs) * n_, 0);
  // State only for the stages that are on (SetNoise may switch the random walk on later).
  if (spec_.dead_taxel_probability > 0) dead_values_.assign(nc, 0.f);
  if (spec_.hysteresis_strength > 0) {
    hyst_xi_.assign(nc, 0.f);
    hyst_prev_.assign(nc, 0.f);
    hyst_blocks_ = (static_cast<size_t>(n_) * channels_ + kHystBlock - 1) / kHystBlock;
    hyst_zero_.assign(static_cast<size_t>(num_envs) * hyst_blocks_, 1);
  }
  walk_.assign(nc, 0.f);
  if (spec_.update_period > 1) held_.assign(nc, 0.f);
  written_.assign(num_envs, 0);
  active_.resize(n_);
  for (int k = 0; k < n_; ++k) active_[k] = layout.radius(k) > 0 || layout.max_radius() == 0;

  // Crosstalk kernels.
  if (!spec_.crosstalk_kernel.empty()) {
    crosstalk_ = true;
    kr_ = spec_.crosstalk_kernel_rows;
    kc_ = spec_.crosstalk_kernel_cols;
    const size_t ks = static_cast<size_t>(kr_) * kc_;
    auto layer = [&](int l) {
      return std::vector<double>(spec_.crosstalk_kernel.begin() + l * ks, spec_.crosstalk_kernel.begin() + (l + 1) * ks);
    };
    const int L = spec_.crosstalk_kernel_layers;
    kernel_normal_ = layer(0);
    kernel_shear_ = L >= 2 ? layer(1) : kernel_normal_;
    kernel_torque_ = L == 3 ? layer(2) : kernel_shear_;
  } else if (spec_.crosstalk_strength > 0) {
    crosstalk_ = true;
    const GridGeometry g = *RegularGrid(layout, "crosstalk");
    const double row_spacing = std::max(g.row_step.norm(), 1e-12), col_spacing = std::max(g.col_step.norm(), 1e-12);
    // Cover ±3σ, at most the grid itself.
    const int hr = std::min(layout.rows() - 1, static_cast<int>(std::ceil(3 * spec_.crosstalk_sigma / row_spacing)));
    const int hc = std::min(layout.cols() - 1, static_cast<int>(std::ceil(3 * spec_.crosstalk_sigma / col_spacing)));
    kr_ = 2 * hr + 1;
    kc_ = 2 * hc + 1;
    kernel_normal_ = BlendWithIdentity(*GaussianCrosstalkKernel(kr_, kc_, spec_.crosstalk_sigma, row_spacing, col_spacing),
                                       kr_, kc_, spec_.crosstalk_strength);
    kernel_shear_ = kernel_torque_ = kernel_normal_;
    // The L1-normalised 2D Gaussian is the product of the L1-normalised 1D ones.
    // Summed in double, kept in float for the blur.
    auto gaussian_1d = [&](int half, double spacing) {
      std::vector<double> g(2 * half + 1);
      double sum = 0;
      for (int a = -half; a <= half; ++a) sum += g[a + half] = std::exp(-0.5 * std::pow(a * spacing / spec_.crosstalk_sigma, 2));
      std::vector<float> out(g.size());
      for (size_t i = 0; i < g.size(); ++i) out[i] = static_cast<float>(g[i] / sum);
      return out;
    };
    g_rows_ = gaussian_1d(hr, row_spacing);
    g_cols_ = gaussian_1d(hc, col_spacing);
    separable_ = true;
  }
  // Identity kernels change nothing: skip the stage so that the measured branch stays bit-identical
  // to its input (the normal/tangential split and the sums would round, and turn −0 into +0).
  if (crosstalk_ && IsIdentityKernel(kernel_normal_, kr_, kc_) && IsIdentityKernel(kernel_shear_, kr_, kc_) &&
      IsIdentityKernel(kernel_torque_, kr_, kc_)) {
    crosstalk_ = false;
  }
  if (crosstalk_ && spec_.crosstalk_border == CrosstalkBorder::kRenormalize) {
    // Weight of source j: the kernel mass landing on active in-grid taxels, w_j = Σ_{k: j − k valid} K_k.
    const int rows = layout.rows(), cols = layout.cols();
    auto weights = [&](const std::vector<double>& K) {
      std::vector<double> w(n_, 0.0);
      for (int i = 0; i < rows; ++i) {
        for (int j = 0; j < cols; ++j) {
          double s = 0;
          for (int a = 0; a < kr_; ++a) {
            for (int b = 0; b < kc_; ++b) {
              const int ti = i - (a - kr_ / 2), tj = j - (b - kc_ / 2);  // target receiving from (i, j)
              if (ti < 0 || tj < 0 || ti >= rows || tj >= cols || !active_[ti * cols + tj]) continue;
              s += K[a * kc_ + b];
            }
          }
          w[i * cols + j] = s;
        }
      }
      return w;
    };
    source_weight_normal_ = weights(kernel_normal_);
    source_weight_shear_ = weights(kernel_shear_);
    source_weight_torque_ = weights(kernel_torque_);
    if (separable_) {
      inv_source_weight_.resize(n_);
      for (int k = 0; k < n_; ++k) {
        inv_source_weight_[k] = source_weight_normal_[k] > 0 ? static_cast<float>(1 / source_weight_normal_[k]) : 0.f;
      }
    }
  }
  for (int e = 0; e < num_envs; ++e) ResetEnv(e, 0);
}

const double* MeasuredPipeline::MeasuredRadii(int env, int begin, int end, uint64_t step) const {
  const int count = end - begin;
  thread_local std::vector<double> radii;
  radii.resize(count);
  double* out = radii.data();
  for (int i = 0; i < count; ++i) out[i] = layout_->radius(begin + i);
  if (spec_.probe_radius_noise == 0) return out;
  // Probe k takes word k mod 4 of block k / 4.
  const int first_block = begin / 4, blocks = (end + 3) / 4 - first_block;
  thread_local std::vector<uint32_t> bits;
  bits.resize(4 * static_cast<size_t>(blocks));
  FillBlocks(rng_radius_, static_cast<uint32_t>(sensor_id_), static_cast<uint32_t>(env),
             static_cast<uint32_t>(first_block), static_cast<uint32_t>(step), bits.data(), blocks);
  for (int i = 0; i < count; ++i) {
    const uint32_t word = bits[begin + i - 4 * first_block];
    if (out[i] != 0) out[i] = std::max(0.0, out[i] + (2 * UniformFromBits(word) - 1) * spec_.probe_radius_noise);
  }
  return out;
}

void MeasuredPipeline::SetGains(int env, const double* gains) {
  std::copy(gains, gains + n_, gains_.begin() + static_cast<size_t>(env) * n_);
}

void MeasuredPipeline::SetNoise(double noise, double random_walk, double bias) {
  spec_.noise = noise;
  spec_.random_walk = random_walk;
  spec_.bias = bias;
}

void MeasuredPipeline::ResetEnv(int env, uint32_t reset_count) {
  const size_t base = static_cast<size_t>(env) * n_;
  const uint32_t e = static_cast<uint32_t>(env), sid = static_cast<uint32_t>(sensor_id_);
  for (int k = 0; k < n_; ++k) {
    // Gains: drawn at every reset when a resample range is set; otherwise the configured ones at
    // creation, and whatever SetGains left after that (a reset does not undo it).
    if (spec_.probe_gain_resample_range) {
      const auto b = rng_gain_(sid, e, static_cast<uint32_t>(k), reset_count);
      const auto [lo, hi] = *spec_.probe_gain_resample_range;
      gains_[base + k] = lo + (hi - lo) * UniformFromBits(b[0]);
    } else if (reset_count == 0) {
      gains_[base + k] = spec_.probe_gain.size() == 1 ? spec_.probe_gain[0] : spec_.probe_gain[k];
    }
    bool dead = false;
    if (spec_.dead_taxel_probability > 0) {
      const auto b = rng_dead_(sid, e, static_cast<uint32_t>(k), reset_count);
      dead = UniformFromBits(b[0]) < spec_.dead_taxel_probability;
    }
    dead_[base + k] = dead;
    // A dead probe's values (only dead probes read them).
    for (int c = 0; dead && c < channels_; ++c) {
      const auto b = rng_dead_value_(sid, e, static_cast<uint32_t>(k * 8 + c), reset_count);
      const auto [lo, hi] = spec_.dead_taxel_value_range;
      dead_values_[(base + k) * channels_ + c] = static_cast<float>(lo + (hi - lo) * UniformFromBits(b[0]));
    }
  }
  // Per-env slices of the state arrays that exist.
  auto fill_env = [env](auto& v, size_t width, auto value) {
    if (!v.empty()) std::fill(v.begin() + env * width, v.begin() + (env + 1) * width, value);
  };
  const size_t nc = static_cast<size_t>(n_) * channels_;
  fill_env(hyst_xi_, nc, 0.f);
  fill_env(hyst_prev_, nc, 0.f);
  fill_env(walk_, nc, 0.f);
  fill_env(held_, nc, 0.f);
  fill_env(hyst_zero_, hyst_blocks_, uint8_t{1});
  if (ring_ > 0) {
    const size_t rbase = static_cast<size_t>(env) * ring_ * nc;
    std::fill(ring_data_.begin() + rbase, ring_data_.begin() + rbase + ring_ * nc, 0.f);
  }
  written_[env] = 0;
}

double MeasuredPipeline::RingSlotsFor(double dt) const {
  double need = spec_.history_length;
  if (spec_.delay > 0) need = std::max(need, std::ceil((spec_.delay + spec_.jitter) / dt) + 1);
  return need;
}

double MeasuredPipeline::RingGrowthBytes(double dt) const {
  const double need = RingSlotsFor(dt);
  if (need <= ring_) return 0;
  return static_cast<double>(num_envs_) * need * n_ * channels_ * sizeof(float);
}

size_t MeasuredPipeline::memory_bytes() const {
  size_t total = sizeof(*this) + ring_data_.capacity() * sizeof(float) + written_.capacity() * sizeof(uint64_t) +
                 gains_.capacity() * sizeof(double) + dead_.capacity() + hyst_zero_.capacity() + active_.capacity();
  for (const auto* v : {&dead_values_, &hyst_xi_, &hyst_prev_, &walk_, &held_, &g_rows_, &g_cols_, &inv_source_weight_}) {
    total += v->capacity() * sizeof(float);
  }
  for (const auto* v : {&kernel_normal_, &kernel_shear_, &kernel_torque_, &source_weight_normal_,
                        &source_weight_shear_, &source_weight_torque_}) {
    total += v->capacity() * sizeof(double);
  }
  return total;
}

void MeasuredPipeline::Prepare(double dt) {
  const double slots = RingSlotsFor(dt);
  if (slots <= ring_) return;
  const int need = static_cast<int>(slots);
  const size_t nc = static_cast<size_t>(n_) * channels_;
  std::vector<float> grown(static_cast<size_t>(num_envs_) * need * nc, 0.f);
  // Keep every env's samples in order: slot (written − 1 − h) mod size holds sample age h.
  for (int e = 0; e < num_envs_; ++e) {
    const uint64_t w = written_[e];
    if (ring_ == 0 && w > 0 && spec_.update_period > 1) {  // the held sample becomes the newest slot
      std::copy_n(&held_[static_cast<size_t>(e) * nc], nc, &grown[RingOffset(e, w - 1, need)]);
    }
    const int keep = static_cast<int>(std::min<uint64_t>(w, ring_));
    for (int h = 0; h < keep; ++h) {
      const float* src = &ring_data_[RingOffset(e, w - 1 - h, ring_)];
      float* dst = &grown[RingOffset(e, w - 1 - h, need)];
      std::copy(src, src + nc, dst);
    }
  }
  ring_data_.swap(grown);
  ring_ = need;
}

void MeasuredPipeline::CrossCorrelate(const float* x, int stride, int offset, const std::vector<double>& K, float* y,
                                      int y_stride, int y_offset) const {
  // y[i,j] = Σ_ab K[a,b]·x[i + a − kr/2, j + b − kc/2] (each source / its weight in renormalize
  // mode). The source goes into a zero-padded buffer first, so that the taps need no bounds tests.
  const int rows = layout_->rows(), cols = layout_->cols();
  const std::vector<double>* w = nullptr;
  if (spec_.crosstalk_border == CrosstalkBorder::kRenormalize) {
    w = &K == &kernel_normal_ ? &source_weight_normal_ : &K == &kernel_shear_ ? &source_weight_shear_ : &source_weight_torque_;
  }
  const int pr = kr_ / 2, pc = kc_ / 2, pcols = cols + 2 * pc;
  thread_local std::vector<double> pad;
  pad.assign(static_cast<size_t>(rows + 2 * pr) * pcols, 0.0);
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

// out[j] = Σ_t g[t]·src[t][j] for j < len, summed from +0 in tap order. Blocks of 8 outputs stay
// in registers over the taps (one store per output); the order of the sum is the same for every
// j, so the result does not depend on the blocking or the instruction set.
inline __attribute__((always_inline)) void WeightedSum(const float* const* src, const float* g, int taps, size_t len,
                                                       float* out) {
  size_t j = 0;
  for (; j + 8 <= len; j += 8) {
    float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    for (int t = 0; t < taps; ++t) {
      const float w = g[t];
      const float* s = src[t] + j;
      for (int l = 0; l < 8; ++l) acc[l] += w * s[l];
    }
    for (int l = 0; l < 8; ++l) out[j + l] = acc[l];
  }
  for (; j < len; ++j) {
    float acc = 0.f;
    for (int t = 0; t < taps; ++t) acc += g[t] * src[t][j];
    out[j] = acc;
  }
}

// The separable Gaussian crosstalk of SeparableCorrelate on a rows × cols grid of C interleaved
// channels, in float. `inv_w` (per source, or nullptr) divides the sources in renormalize mode.
// Element-wise loops only (each output sums its taps in a fixed order), so every clone gives the
// same bits.
__attribute__((target_clones("avx2", "default"))) void SeparableBlur(const float* x, const float* inv_w,
                                                                      const uint8_t* active, int rows, int cols, int C,
                                                                      const float* g_rows, int hr, const float* g_cols,
                                                                      int hc, float strength, float* y) {
  const size_t row_len = static_cast<size_t>(cols) * C, pad = static_cast<size_t>(hc) * C;
  thread_local std::vector<const float*> taps;
  thread_local std::vector<float> weights;
  taps.resize(2 * std::max(hr, hc) + 1);
  weights.resize(taps.size());
  // Rows whose source is all ±0 contribute nothing to the sums (leaving them out gives the same
  // bits: a sum started at +0 never becomes −0), and an output row whose (2hr + 1)-row window is
  // all ±0 reads +0: both skipped — pads are mostly out of contact.
  thread_local std::vector<uint8_t> row_any;
  row_any.assign(rows, 0);
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
  thread_local std::vector<float> src, tmp, acc;
  const size_t prow_len = row_len + 2 * pad;
  src.resize(static_cast<size_t>(rows) * prow_len);
  tmp.resize(static_cast<size_t>(rows) * row_len);
  for (int i = 0; i < rows; ++i) {
    if (!row_any[i]) continue;
    const float* xr = x + i * row_len;
    float* s_row = &src[i * prow_len];
    std::fill(s_row, s_row + pad, 0.f);
    std::fill(s_row + pad + row_len, s_row + prow_len, 0.f);
    if (inv_w == nullptr) {
      std::copy(xr, xr + row_len, s_row + pad);
    } else {
      for (int j = 0; j < cols; ++j) {
        const float iw = inv_w[i * cols + j];
        for (int c = 0; c < C; ++c) s_row[pad + j * C + c] = xr[j * C + c] * iw;
      }
    }
    for (int b = 0; b <= 2 * hc; ++b) taps[b] = s_row + static_cast<size_t>(b) * C;  // column j + b − hc, padded
    WeightedSum(taps.data(), g_cols, 2 * hc + 1, row_len, &tmp[i * row_len]);
  }
  // Column pass and the blend with the identity.
  acc.resize(row_len);
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
    WeightedSum(taps.data(), weights.data(), n_taps, row_len, acc.data());
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

void MeasuredPipeline::SeparableCorrelate(const float* x, float* y) const {
  // All C channels at once (they share the kernel), channel-interleaved like x and y so that the
  // innermost loops run over contiguous channels.
  SeparableBlur(x, inv_source_weight_.empty() ? nullptr : inv_source_weight_.data(), active_.data(), layout_->rows(),
                layout_->cols(), channels_, g_rows_.data(), kr_ / 2, g_cols_.data(), kc_ / 2,
                static_cast<float>(spec_.crosstalk_strength), y);
}

void MeasuredPipeline::Crosstalk(const float* x, float* y) const {
  // Split force-like vectors into the normal component (along the probe normal) and the
  // tangential part, filter each with its kernel, and recombine.
  const int C = channels_;
  thread_local std::vector<float> normal_in, normal_out;
  if (separable_) {  // one kernel for every channel: filter the components directly
    SeparableCorrelate(x, y);
    return;
  }
  int c0 = 0;
  for (ChannelGroup g : groups_) {
    if (g == ChannelGroup::kScalar) {
      CrossCorrelate(x, C, c0, kernel_normal_, y, C, c0);
    } else if (g == ChannelGroup::kTorque) {
      for (int a = 0; a < 3; ++a) CrossCorrelate(x, C, c0 + a, kernel_torque_, y, C, c0 + a);
    } else if (kernel_shear_ == kernel_normal_) {
      // One kernel for both parts: filtering is linear, so filter the components directly (exact
      // same result as splitting along the probe normal, without the rounding of the split).
      for (int a = 0; a < 3; ++a) CrossCorrelate(x, C, c0 + a, kernel_normal_, y, C, c0 + a);
    } else {
      normal_in.assign(n_, 0.f);
      normal_out.assign(n_, 0.f);
      thread_local std::vector<float> tangent;
      tangent.assign(static_cast<size_t>(n_) * 3, 0.f);
      for (int k = 0; k < n_; ++k) {
        const Eigen::Vector3d nrm = layout_->normal(k);
        const Eigen::Vector3d v(x[k * C + c0], x[k * C + c0 + 1], x[k * C + c0 + 2]);
        const double vn = v.dot(nrm);
        normal_in[k] = static_cast<float>(vn);
        const Eigen::Vector3d t = v - vn * nrm;
        for (int a = 0; a < 3; ++a) tangent[k * 3 + a] = static_cast<float>(t[a]);
      }
      CrossCorrelate(normal_in.data(), 1, 0, kernel_normal_, normal_out.data(), 1, 0);
      thread_local std::vector<float> tangent_out;
      tangent_out.assign(static_cast<size_t>(n_) * 3, 0.f);
      for (int a = 0; a < 3; ++a) CrossCorrelate(tangent.data(), 3, a, kernel_shear_, tangent_out.data(), 3, a);
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

const float* MeasuredPipeline::Process(int env, uint64_t step, uint64_t steps_since_reset, double dt, float* raw) {
  const int C = channels_;
  const size_t nc = static_cast<size_t>(n_) * C;
  const size_t off = static_cast<size_t>(env) * nc;
  const uint32_t e = static_cast<uint32_t>(env), sid = static_cast<uint32_t>(sensor_id_);
  // Where the sample lives: its ring slot when there is a ring (no separate copy), held_ when it
  // must be held between updates, else raw itself (the kernel rewrites it every step) or, after
  // crosstalk, a per-thread scratch (nothing of it outlives the step).
  thread_local std::vector<float> scratch;
  float* sample;
  if (ring_ > 0) {
    sample = &ring_data_[RingOffset(env, written_[env], ring_)];
  } else if (spec_.update_period > 1) {
    sample = &held_[off];
  } else if (!crosstalk_) {
    sample = raw;
  } else {
    scratch.resize(nc);
    sample = scratch.data();
  }
  const bool sample_now = (steps_since_reset - 1) % static_cast<uint64_t>(spec_.update_period) == 0;
  if (sample_now) {
    if (crosstalk_) {
      Crosstalk(raw, sample);
    } else if (sample != raw) {
      std::copy(raw, raw + nc, sample);
    }
    ApplyStages(env, step, dt, sample);
  } else if (ring_ > 0 && written_[env] > 0) {
    // Between samples the held (newest) sample is pushed again.
    const float* held = &ring_data_[RingOffset(env, written_[env] - 1, ring_)];
    std::copy(held, held + nc, sample);
  }
  ++written_[env];
  if (spec_.delay <= 0) return sample;
  double d = spec_.delay / dt;
  if (spec_.jitter > 0) {
    const auto b = rng_jitter_(sid, e, 0, static_cast<uint32_t>(step));
    d += (2 * UniformFromBits(b[0]) - 1) * spec_.jitter / dt;
  }
  // Without jitter the age is round(delay/dt) (0 reads the current sample); with jitter it is
  // rounded probabilistically (the jitter's second draw), so that its mean is d.
  int age = static_cast<int>(std::floor(d));
  if (spec_.jitter > 0) {
    const auto b = rng_jitter_(sid, e, 1, static_cast<uint32_t>(step));
    if (UniformFromBits(b[0]) < d - age) ++age;
  } else {
    age = static_cast<int>(std::lround(d));
  }
  age = std::clamp(age, 0, ring_ - 1);
  if (static_cast<uint64_t>(age) >= written_[env]) return nullptr;  // not filled yet: reads 0
  return &ring_data_[RingOffset(env, written_[env] - 1 - age, ring_)];
}

namespace {

// Per-value constants of the stages after crosstalk.
struct ValueStageParams {
  bool hysteresis, walk, noise, bias, quantise;
  float decay, strength, walk_sigma, noise_sigma, bias_value, resolution, inv_resolution;
};

// The value stages on x[0, len): hysteresis (state xi, prev; one zero flag per kHystBlock values
// in hyst_zero), random walk (state walk, increments σ·z_walk), white noise, bias, quantisation.
// Float arithmetic, element-wise loops in a fixed order: both clones give the same bits.
__attribute__((target_clones("avx2", "default"))) void ValueStages(const ValueStageParams& p, size_t kHystBlock,
                                                                    float* x, size_t len,
                                                                    float* xi, float* prev, uint8_t* hyst_zero,
                                                                    float* walk, const float* z_walk,
                                                                    const float* z_noise) {
  // Locals: x may alias the parameter block as far as the compiler knows.
  const float decay = p.decay, strength = p.strength, walk_sigma = p.walk_sigma, noise_sigma = p.noise_sigma;
  const float bias = p.bias_value, resolution = p.resolution, inv_resolution = p.inv_resolution;
  if (p.hysteresis) {
    // ξ ← decay·ξ + (x − x_prev); y = x + s·ξ. Blocks whose state and input are all +0 stay so
    // (the update would give +0 everywhere): skipped.
    for (size_t b0 = 0; b0 < len; b0 += kHystBlock) {
      const size_t bl = std::min(kHystBlock, len - b0);
      float* xb = x + b0;
      uint8_t& zero = hyst_zero[b0 / kHystBlock];
      uint32_t in = 0;
      for (size_t i = 0; i < bl; ++i) {
        uint32_t b;
        std::memcpy(&b, &xb[i], 4);
        in |= b;
      }
      if (zero && in == 0) continue;
      float* xib = xi + b0;
      float* pb = prev + b0;
      uint32_t state = 0;
      for (size_t i = 0; i < bl; ++i) {
        xib[i] = decay * xib[i] + (xb[i] - pb[i]);
        pb[i] = xb[i];
        xb[i] += strength * xib[i];
        uint32_t bx, bp;
        std::memcpy(&bx, &xib[i], 4);
        std::memcpy(&bp, &pb[i], 4);
        state |= bx | bp;
      }
      zero = state == 0;
    }
  }
  if (p.walk) {
    for (size_t i = 0; i < len; ++i) {
      walk[i] += walk_sigma * z_walk[i];
      x[i] += walk[i];
    }
  }
  if (p.noise) {
    for (size_t i = 0; i < len; ++i) x[i] += noise_sigma * z_noise[i];
  }
  if (p.bias) {  // (adding 0 would turn −0 into +0)
    for (size_t i = 0; i < len; ++i) x[i] += bias;
  }
  if (p.quantise) {
    // q = x / resolution rounded half to even: adding and subtracting 2^23 rounds |q| < 2^23 to an
    // integer in the default rounding mode (larger |q| are integers already); the sign is put back
    // afterwards, so that −0 stays −0 as with nearbyint.
    for (size_t i = 0; i < len; ++i) {
      const float q = x[i] * inv_resolution;
      const float a = std::fabs(q);
      const float rounded = (a + 8388608.f) - 8388608.f;
      const float r = a < 8388608.f ? rounded : a;
      x[i] = resolution * std::copysign(r, q);
    }
  }
}

}  // namespace

void MeasuredPipeline::ApplyStages(int env, uint64_t step, double dt, float* xs) {
  const int C = channels_;
  const size_t nc = static_cast<size_t>(n_) * C;
  const size_t off = static_cast<size_t>(env) * nc;
  const uint32_t e = static_cast<uint32_t>(env), sid = static_cast<uint32_t>(sensor_id_);
  const uint32_t st = static_cast<uint32_t>(step);
  ValueStageParams p;
  p.hysteresis = spec_.hysteresis_strength > 0;
  p.walk = spec_.random_walk > 0;
  p.noise = spec_.noise > 0;
  p.bias = spec_.bias != 0;
  p.quantise = spec_.resolution > 0;
  // Samples are update_period·dt apart: ξ decays over that time between two of them.
  p.decay = p.hysteresis ? static_cast<float>(std::exp(-dt * spec_.update_period / spec_.hysteresis_tau)) : 0.f;
  p.strength = static_cast<float>(spec_.hysteresis_strength);
  p.walk_sigma = static_cast<float>(spec_.random_walk);
  p.noise_sigma = static_cast<float>(spec_.noise);
  p.bias_value = static_cast<float>(spec_.bias);
  p.resolution = static_cast<float>(spec_.resolution);
  p.inv_resolution = p.quantise ? static_cast<float>(1 / spec_.resolution) : 0.f;
  // One pass over the values in chunks that stay in L1: every stage of a chunk before the next
  // chunk (each value sees the stages in DESIGN order; the draws do not depend on the chunking).
  float z_walk[kChunk], z_noise[kChunk];
  // This env's state (the hysteresis arrays exist only when the stage is on).
  float* xi = p.hysteresis ? hyst_xi_.data() + off : nullptr;
  float* prev = p.hysteresis ? hyst_prev_.data() + off : nullptr;
  uint8_t* hyst_zero = p.hysteresis ? hyst_zero_.data() + static_cast<size_t>(env) * hyst_blocks_ : nullptr;
  float* walk = walk_.data() + off;
  for (size_t c0 = 0; c0 < nc; c0 += kChunk) {
    const size_t len = std::min(kChunk, nc - c0);
    if (p.walk) FillStandardNormals(rng_walk_, sid, e, st, z_walk, len, c0);
    if (p.noise) FillStandardNormals(rng_noise_, sid, e, st, z_noise, len, c0);
    const bool h = p.hysteresis;
    ValueStages(p, kHystBlock, xs + c0, len, h ? xi + c0 : nullptr, h ? prev + c0 : nullptr,
                h ? hyst_zero + c0 / kHystBlock : nullptr, walk + c0, z_walk, z_noise);
  }
  const uint8_t* dead = &dead_[static_cast<size_t>(env) * n_];
  for (int k = 0; k < n_; ++k) {
    float* v = xs + static_cast<size_t>(k) * C;
    if (dead[k]) std::copy_n(&dead_values_[off + static_cast<size_t>(k) * C], C, v);
    if (!active_[k]) std::fill(v, v + C, 0.f);  // fillers stay 0
  }
}

const float* MeasuredPipeline::History(int env, int h) const {
  if (ring_ == 0 || static_cast<uint64_t>(h) >= written_[env] || h >= ring_) return nullptr;
  return &ring_data_[RingOffset(env, written_[env] - 1 - h, ring_)];
}

}  // namespace taxel::sensors
