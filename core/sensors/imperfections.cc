#include "core/sensors/imperfections.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/stream_store.h"

namespace taxel::sensors {

MeasuredPipeline::MeasuredPipeline(const ImperfectionSpec& spec, const ProbeLayout& layout,
                                   std::vector<ChannelGroup> groups, int num_envs, uint64_t seed, int32_t sensor_id,
                                   uint32_t env_offset)
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
      sensor_id_(sensor_id),
      env_offset_(env_offset) {
  for (ChannelGroup g : groups_) channels_ += GroupWidth(g);
  const size_t nc = static_cast<size_t>(num_envs) * n_ * channels_;
  gains_.assign(static_cast<size_t>(num_envs) * n_, 1.0);
  dead_.assign(static_cast<size_t>(num_envs) * DeadWords(), 0);
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
  for (int k = 0; k < n_; ++k) {
    active_[k] = layout.radius(k) > 0 || layout.max_radius() == 0;
    if (!active_[k]) inactive_.push_back(k);
  }

  // Crosstalk kernels.
  if (!spec_.crosstalk_kernel.empty()) {
    crosstalk_ = true;
    kr_ = spec_.crosstalk_kernel_rows;
    kc_ = spec_.crosstalk_kernel_cols;
    const size_t ks = static_cast<size_t>(kr_) * kc_;
    auto layer = [&](int l) {
      return std::vector<double>(spec_.crosstalk_kernel.begin() + l * ks,
                                 spec_.crosstalk_kernel.begin() + (l + 1) * ks);
    };
    const int L = spec_.crosstalk_kernel_layers;
    kernel_normal_ = layer(0);
    kernel_shear_ = L >= 2 ? layer(1) : kernel_normal_;
    kernel_torque_ = L == 3 ? layer(2) : kernel_shear_;
  } else if (spec_.crosstalk_strength > 0) {
    crosstalk_ = true;
    const GridGeometry g = *RegularGrid(layout, "crosstalk");
    const double row_spacing = std::max(g.row_step.norm(), 1e-12), col_spacing = std::max(g.col_step.norm(), 1e-12);
    // Cover ±3σ, at most the grid itself (clamped in double: 3σ/spacing may not fit an int).
    auto half_width = [&](int n, double spacing) {
      return static_cast<int>(std::min<double>(n - 1, std::ceil(3 * spec_.crosstalk_sigma / spacing)));
    };
    const int hr = half_width(layout.rows(), row_spacing), hc = half_width(layout.cols(), col_spacing);
    kr_ = 2 * hr + 1;
    kc_ = 2 * hc + 1;
    kernel_normal_ =
        BlendWithIdentity(*GaussianCrosstalkKernel(kr_, kc_, spec_.crosstalk_sigma, row_spacing, col_spacing), kr_, kc_,
                          spec_.crosstalk_strength);
    kernel_shear_ = kernel_torque_ = kernel_normal_;
    // The L1-normalised 2D Gaussian is the product of the L1-normalised 1D ones.
    // Summed in double, kept in float for the blur.
    auto gaussian_1d = [&](int half, double spacing) {
      std::vector<double> g(2 * half + 1);
      double sum = 0;
      for (int a = -half; a <= half; ++a)
        sum += g[a + half] = std::exp(-0.5 * std::pow(a * spacing / spec_.crosstalk_sigma, 2));
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
      // One factor per value (each probe's repeated over its channels): the blur multiplies rows
      // element by element.
      inv_source_weight_.resize(static_cast<size_t>(n_) * channels_);
      for (int k = 0; k < n_; ++k) {
        const float iw = source_weight_normal_[k] > 0 ? static_cast<float>(1 / source_weight_normal_[k]) : 0.f;
        std::fill_n(&inv_source_weight_[static_cast<size_t>(k) * channels_], channels_, iw);
      }
    }
  }
  for (int e = 0; e < num_envs; ++e) ResetEnv(e, 0);
}

namespace {

// r_i ← max(0, r_i + (2u_i − 1)·noise) for the nonzero radii r_i (a filler's 0 stays 0), u_i the
// uniform of word i. Branch-free for the vectoriser; the clones give the same bits (the same
// double operations in the same order, no FMA).
__attribute__((target_clones("avx512f", "avx2", "default"))) void PerturbRadii(const uint32_t* words, int count,
                                                                                double noise, double* r) {
  for (int i = 0; i < count; ++i) {
    const double perturbed = std::max(0.0, r[i] + (2 * UniformFromBits(words[i]) - 1) * noise);
    r[i] = r[i] != 0 ? perturbed : r[i];
  }
}

// Starts the loads of every cache line of p[0, count), for reading with temporal locality
// kLocality (__builtin_prefetch's, 0–3).
template <int kLocality>
inline void PrefetchFloats(const float* p, size_t count) {
  if (count == 0) return;
  constexpr uintptr_t kLine = 64;
  const uintptr_t last = reinterpret_cast<uintptr_t>(p + count - 1);
  for (uintptr_t a = reinterpret_cast<uintptr_t>(p) & ~(kLine - 1); a <= last; a += kLine) {
    __builtin_prefetch(reinterpret_cast<const void*>(a), 0, kLocality);
  }
}

}  // namespace

const double* MeasuredPipeline::MeasuredRadii(int env, int begin, int end, uint64_t step, Workspace& ws) const {
  const int count = end - begin;
  double* out = ws.Take<double>(count);
  for (int i = 0; i < count; ++i) out[i] = layout_->radius(begin + i);
  if (spec_.probe_radius_noise == 0) return out;
  // Probe k takes word k mod 4 of block k / 4.
  const int first_block = begin / 4, blocks = (end + 3) / 4 - first_block;
  Workspace::Scope scope(ws);  // the random words only; `out` belongs to the caller's scope
  uint32_t* bits = ws.Take<uint32_t>(4 * static_cast<size_t>(blocks));
  FillBlocks(rng_radius_, static_cast<uint32_t>(sensor_id_), GlobalEnv(env), static_cast<uint32_t>(first_block),
             static_cast<uint32_t>(step), bits, blocks);
  PerturbRadii(bits + (begin - 4 * first_block), count, spec_.probe_radius_noise, out);
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
  const uint32_t e = GlobalEnv(env), sid = static_cast<uint32_t>(sensor_id_);
  uint64_t* dead_bits = DeadBits(env);
  std::fill_n(dead_bits, DeadWords(), uint64_t{0});
  int rank = 0;  // dead probes so far: the values of the r-th are at the r-th place of the env's block
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
    if (dead) dead_bits[k / 64] |= uint64_t{1} << (k % 64);
    // A dead probe's values (only dead probes read them), packed in order of the dead probes.
    for (int c = 0; dead && c < channels_; ++c) {
      const auto b = rng_dead_value_(sid, e, static_cast<uint32_t>(k * 8 + c), reset_count);
      const auto [lo, hi] = spec_.dead_taxel_value_range;
      dead_values_[(base + rank) * channels_ + c] = static_cast<float>(lo + (hi - lo) * UniformFromBits(b[0]));
    }
    rank += dead;
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
                 gains_.capacity() * sizeof(double) + dead_.capacity() * sizeof(uint64_t) + hyst_zero_.capacity() +
                 active_.capacity() + inactive_.capacity() * sizeof(int32_t);
  for (const auto* v :
       {&dead_values_, &hyst_xi_, &hyst_prev_, &walk_, &held_, &g_rows_, &g_cols_, &inv_source_weight_}) {
    total += v->capacity() * sizeof(float);
  }
  for (const auto* v : {&kernel_normal_, &kernel_shear_, &kernel_torque_, &source_weight_normal_, &source_weight_shear_,
                        &source_weight_torque_}) {
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

template <typename F>
void MeasuredPipeline::ForEachDead(int env, F&& f) const {
  const uint64_t* dead = DeadBits(env);
  int rank = 0;
  for (size_t w = 0; w < DeadWords(); ++w) {
    for (uint64_t m = dead[w]; m != 0; m &= m - 1) f(static_cast<int>(64 * w + __builtin_ctzll(m)), rank++);
  }
}

const float* MeasuredPipeline::Process(int env, uint64_t step, uint64_t steps_since_reset, double dt, float* raw,
                                       Workspace& ws) {
  const int C = channels_;
  const size_t nc = static_cast<size_t>(n_) * C;
  const size_t off = static_cast<size_t>(env) * nc;
  // Where the stages work on the sample: with a ring, the caller's workspace (or raw itself), whose
  // result is then streamed to its ring slot — the slot, overwritten whole, is never fetched from
  // memory; held_ when it must be held between updates; else raw itself (the kernel rewrites it
  // every step) or, after crosstalk, the caller's workspace (nothing of it outlives the step).
  float* slot = ring_ > 0 ? &ring_data_[RingOffset(env, written_[env], ring_)] : nullptr;
  float* sample;
  if (ring_ > 0) {
    sample = crosstalk_ ? ws.Take<float>(nc) : raw;
  } else if (spec_.update_period > 1) {
    sample = &held_[off];
  } else if (!crosstalk_) {
    sample = raw;
  } else {
    sample = ws.Take<float>(nc);
  }
  // The sample reported now (its age: 0 the current one; read by the caller right after): when it
  // is an older ring slot, its loads start here and overlap the crosstalk and the stages.
  const int age = spec_.delay > 0 ? DelayAge(env, step, dt) : 0;
  if (!report_in_ring_ && age > 0 && static_cast<uint64_t>(age) <= written_[env]) {
    PrefetchFloats<2>(&ring_data_[RingOffset(env, written_[env] - age, ring_)], nc);
  }
  const bool sample_now = (steps_since_reset - 1) % static_cast<uint64_t>(spec_.update_period) == 0;
  // The newest sample's values after this step.
  const float* current = sample;
  if (sample_now) {
    // Dead probes (a few per env) read fixed values, packed at the start of the env's block (a
    // cold line or two): fetched from here on, during the crosstalk and the stages, used at their
    // end.
    const size_t dead_floats = static_cast<size_t>(DeadCount(env)) * C;
    if (dead_floats > 0) PrefetchFloats<3>(&dead_values_[off], dead_floats);
    if (crosstalk_) {
      Crosstalk(raw, sample, ws);
    } else if (sample != raw) {
      std::copy(raw, raw + nc, sample);
    }
    ApplyStages(env, step, dt, sample);
    if (slot != nullptr) StreamCopyUnfenced(sample, nc, slot);
  } else if (ring_ > 0) {
    // Between samples the held (newest) sample is pushed again (before the first, the slot keeps
    // the zeros of the reset).
    const float* held = written_[env] > 0 ? &ring_data_[RingOffset(env, written_[env] - 1, ring_)] : slot;
    if (held != slot) StreamCopyUnfenced(held, nc, slot);
    current = slot;
  }
  ++written_[env];
  // The current sample is also in its slot (streamed there) when there is a ring.
  if (report_in_ring_ && slot != nullptr) current = slot;
  if (spec_.delay <= 0) return current;
  if (static_cast<uint64_t>(age) >= written_[env]) return nullptr;  // not filled yet: reads 0
  if (age == 0) return current;
  return &ring_data_[RingOffset(env, written_[env] - 1 - age, ring_)];
}

int MeasuredPipeline::DelayAge(int env, uint64_t step, double dt) const {
  const uint32_t e = GlobalEnv(env), sid = static_cast<uint32_t>(sensor_id_);
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
  return std::clamp(age, 0, ring_ - 1);
}

namespace {

// Per-value constants of the stages after crosstalk.
struct ValueStageParams {
  bool hysteresis, walk, noise, bias, quantise;
  float decay, strength, walk_sigma, noise_sigma, bias_value, resolution, inv_resolution;
};

// The stages after hysteresis on x[0, len), in one pass (one load and one store of each value):
// random walk (state walk, increments σ·z_walk), white noise, bias, quantisation, each value in
// that order — the same operations as one loop per stage, so the same bits. The stages that are
// off are left out at compile time (adding 0 would turn −0 into +0).
template <bool kWalk, bool kNoise, bool kBias, bool kQuantise>
inline __attribute__((always_inline)) void PointStages(const ValueStageParams& p, float* x, size_t len, float* walk,
                                                       const float* z_walk, const float* z_noise) {
  // Locals: x may alias the parameter block as far as the compiler knows.
  const float walk_sigma = p.walk_sigma, noise_sigma = p.noise_sigma, bias = p.bias_value;
  const float resolution = p.resolution, inv_resolution = p.inv_resolution;
  for (size_t i = 0; i < len; ++i) {
    float v = x[i];
    if (kWalk) {
      const float w = walk[i] + walk_sigma * z_walk[i];
      walk[i] = w;
      v += w;
    }
    if (kNoise) v += noise_sigma * z_noise[i];
    if (kBias) v += bias;
    if (kQuantise) {
      // q = v / resolution rounded half to even: adding and subtracting 2^23 rounds |q| < 2^23 to
      // an integer in the default rounding mode (larger |q| are integers already); the sign is put
      // back afterwards, so that −0 stays −0 as with nearbyint.
      const float q = v * inv_resolution;
      const float a = std::fabs(q);
      const float rounded = (a + 8388608.f) - 8388608.f;
      const float r = a < 8388608.f ? rounded : a;
      v = resolution * std::copysign(r, q);
    }
    x[i] = v;
  }
}

// The value stages on x[0, len): hysteresis (state xi, prev; one zero flag per kHystBlock values
// in hyst_zero), then PointStages. Float arithmetic, element-wise loops in a fixed order: both
// clones give the same bits.
__attribute__((target_clones("avx512f", "avx2", "default"))) void ValueStages(const ValueStageParams& p, size_t kHystBlock,
                                                                   float* x, size_t len, float* xi, float* prev,
                                                                   uint8_t* hyst_zero, float* walk, const float* z_walk,
                                                                   const float* z_noise) {
  const float decay = p.decay, strength = p.strength;
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
  // The 16 combinations of the point stages, each its own loop.
  switch (p.walk * 8 + p.noise * 4 + p.bias * 2 + p.quantise) {
#define TAXEL_POINT_STAGES(mask)                                                                                       \
  case mask:                                                                                                           \
    PointStages<((mask)&8) != 0, ((mask)&4) != 0, ((mask)&2) != 0, ((mask)&1) != 0>(p, x, len, walk, z_walk, z_noise); \
    break;
    TAXEL_POINT_STAGES(0)
    TAXEL_POINT_STAGES(1)
    TAXEL_POINT_STAGES(2)
    TAXEL_POINT_STAGES(3)
    TAXEL_POINT_STAGES(4)
    TAXEL_POINT_STAGES(5)
    TAXEL_POINT_STAGES(6)
    TAXEL_POINT_STAGES(7)
    TAXEL_POINT_STAGES(8)
    TAXEL_POINT_STAGES(9)
    TAXEL_POINT_STAGES(10)
    TAXEL_POINT_STAGES(11)
    TAXEL_POINT_STAGES(12)
    TAXEL_POINT_STAGES(13)
    TAXEL_POINT_STAGES(14)
    TAXEL_POINT_STAGES(15)
#undef TAXEL_POINT_STAGES
  }
}

}  // namespace

void MeasuredPipeline::ApplyStages(int env, uint64_t step, double dt, float* xs) {
  const int C = channels_;
  const size_t nc = static_cast<size_t>(n_) * C;
  const size_t off = static_cast<size_t>(env) * nc;
  const uint32_t e = GlobalEnv(env), sid = static_cast<uint32_t>(sensor_id_);
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
  // chunk (each value sees the stages in the documented order, docs/reference.md#measured-branch; the draws do not
  // depend on the chunking).
  float z_walk[kChunk], z_noise[kChunk];
  // This env's state (the hysteresis arrays exist only when the stage is on).
  float* xi = p.hysteresis ? hyst_xi_.data() + off : nullptr;
  float* prev = p.hysteresis ? hyst_prev_.data() + off : nullptr;
  uint8_t* hyst_zero = p.hysteresis ? hyst_zero_.data() + static_cast<size_t>(env) * hyst_blocks_ : nullptr;
  float* walk = walk_.data() + off;
  for (size_t c0 = 0; c0 < nc; c0 += kChunk) {
    const size_t len = std::min(kChunk, nc - c0);
    // The chunk's state comes from memory (each env's is touched once a step): its loads are
    // started now and overlap the drawing of the normals instead of stalling the stages.
    // (Hysteresis blocks flagged all +0 are not fetched: their state is known, and it is only
    // read again if their input is not all +0 — the rare start of a contact.)
    for (size_t i = 0; i < len; i += 64 / sizeof(float)) {
      if (p.hysteresis && !hyst_zero[(c0 + i) / kHystBlock]) {
        __builtin_prefetch(xi + c0 + i, 1, 3), __builtin_prefetch(prev + c0 + i, 1, 3);
      }
      if (p.walk) __builtin_prefetch(walk + c0 + i, 1, 3);
    }
    if (p.walk) FillStandardNormals(rng_walk_, sid, e, st, z_walk, len, c0);
    if (p.noise) FillStandardNormals(rng_noise_, sid, e, st, z_noise, len, c0);
    const bool h = p.hysteresis;
    ValueStages(p, kHystBlock, xs + c0, len, h ? xi + c0 : nullptr, h ? prev + c0 : nullptr,
                h ? hyst_zero + c0 / kHystBlock : nullptr, walk + c0, z_walk, z_noise);
  }
  // Dead probes read their fixed values (prefetched when Process began).
  ForEachDead(env, [&](int k, int rank) {
    const float* v = &dead_values_[off + static_cast<size_t>(rank) * C];
    for (int c = 0; c < C; ++c) xs[static_cast<size_t>(k) * C + c] = v[c];
  });
  for (const int k : inactive_) std::fill_n(xs + static_cast<size_t>(k) * C, C, 0.f);  // fillers stay 0
}

const float* MeasuredPipeline::History(int env, int h) const {
  if (ring_ == 0 || static_cast<uint64_t>(h) >= written_[env] || h >= ring_) return nullptr;
  return &ring_data_[RingOffset(env, written_[env] - 1 - h, ring_)];
}

}  // namespace taxel::sensors
