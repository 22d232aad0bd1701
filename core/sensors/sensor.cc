#include "core/sensors/sensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/common/field_error.h"
#include "core/common/status_macros.h"
#include "core/common/stream_store.h"
#include "core/sensors/tracked_geometry.h"

namespace taxel::sensors {
namespace {

const std::vector<Channel>& ChannelsOf(SensorKind kind) { return TraitsOf(kind).channels; }
const std::vector<ChannelGroup>& GroupsOf(SensorKind kind) { return TraitsOf(kind).groups; }

constexpr int kMaxSamplePoints = 20000;

int WidthOf(SensorKind kind) {
  int w = 0;
  for (ChannelGroup g : GroupsOf(kind)) w += g == ChannelGroup::kScalar ? 1 : 3;
  return w;
}

size_t ChannelBytes(Channel c) { return c == Channel::kContact ? 1 : 4; }

absl::Status Finite(absl::string_view field, absl::string_view name, double v, double min, bool strict) {
  const bool ok = std::isfinite(v) && (strict ? v > min : v >= min);
  if (!ok) {
    return InvalidFieldError(absl::StrCat(field, ".", name),
                             absl::StrCat("expected a finite value ", strict ? "> " : ">= ", min, ", got ", v));
  }
  return absl::OkStatus();
}

absl::Status ValidateElastomer(const ElastomerParams& p, absl::string_view f) {
  TAXEL_RETURN_IF_ERROR(Finite(f, "lambda_d", p.lambda_d, 0, true));
  TAXEL_RETURN_IF_ERROR(Finite(f, "dilate_scale", p.dilate_scale, -1e300, false));
  TAXEL_RETURN_IF_ERROR(Finite(f, "normal_exponent", p.normal_exponent, 0, true));
  if (!(p.compressibility >= 0 && p.compressibility <= 1)) {
    return InvalidFieldError(absl::StrCat(f, ".compressibility"),
                             absl::StrCat("expected a value in [0, 1], got ", p.compressibility));
  }
  TAXEL_RETURN_IF_ERROR(Finite(f, "elastomer_thickness", p.elastomer_thickness, 0, true));
  TAXEL_RETURN_IF_ERROR(Finite(f, "lambda_s", p.lambda_s, 0, true));
  TAXEL_RETURN_IF_ERROR(Finite(f, "shear_scale", p.shear_scale, -1e300, false));
  TAXEL_RETURN_IF_ERROR(Finite(f, "contact_threshold", p.contact_threshold, -1e300, false));
  TAXEL_RETURN_IF_ERROR(Finite(f, "release_threshold", p.release_threshold, -1e300, false));
  if (p.release_threshold > p.contact_threshold) {
    return InvalidFieldError(
        absl::StrCat(f, ".release_threshold"),
        absl::StrCat("expected a value <= contact_threshold (", p.contact_threshold, "), got ", p.release_threshold));
  }
  return absl::OkStatus();
}

absl::Status ValidateProximity(const ProximityParams& p, absl::string_view f) {
  TAXEL_RETURN_IF_ERROR(Finite(f, "stiffness", p.stiffness, -1e300, false));
  TAXEL_RETURN_IF_ERROR(Finite(f, "shear_coupling", p.shear_coupling, -1e300, false));
  TAXEL_RETURN_IF_ERROR(Finite(f, "twist_scalar", p.twist_scalar, -1e300, false));
  TAXEL_RETURN_IF_ERROR(Finite(f, "density_scalar", p.density_scalar, 0, false));
  return absl::OkStatus();
}

}  // namespace

const SensorKindTraits& TraitsOf(SensorKind kind) {
  using C = Channel;
  using G = ChannelGroup;
  // Indexed by the kind's value (kSensorKinds order).
  static const SensorKindTraits kTraits[kNumSensorKinds] = {
      {"contact_probe", {C::kContact, C::kDepth}, {G::kScalar}, {C::kDepth}, false, false, Evaluator::kProbeRange},
      {"contact_depth_probe",
       {C::kDepth, C::kNormal, C::kArea, C::kPartner},
       {G::kScalar},
       {C::kDepth},
       false,
       false,
       Evaluator::kProbeRange},
      {"kinematic_taxel",
       {C::kForce, C::kTorque},
       {G::kForceLike, G::kTorque},
       {C::kForce, C::kTorque},
       false,
       true,
       Evaluator::kProbeRange},
      {"elastomer_taxel", {C::kDisplacement}, {G::kForceLike}, {C::kDisplacement}, true, false, Evaluator::kElastomer},
      {"proximity_taxel",
       {C::kForce, C::kTorque},
       {G::kForceLike, G::kTorque},
       {C::kForce, C::kTorque},
       true,
       true,
       Evaluator::kProximity},
  };
  return kTraits[static_cast<int>(kind)];
}

absl::string_view SensorKindName(SensorKind kind) { return TraitsOf(kind).name; }

absl::string_view SensorSpec::ForceLawName(ForceLaw law) {
  switch (law) {
    case ForceLaw::kSpringDamper: return "spring_damper";
    case ForceLaw::kNonlinear: return "nonlinear";
  }
  return "unknown";
}

absl::string_view ChannelName(Channel c) {
  switch (c) {
    case Channel::kContact: return "contact";
    case Channel::kDepth: return "depth";
    case Channel::kNormal: return "normal";
    case Channel::kArea: return "area";
    case Channel::kPartner: return "partner";
    case Channel::kForce: return "force";
    case Channel::kTorque: return "torque";
    case Channel::kDisplacement: return "displacement";
  }
  return "unknown";
}

bool GradientChannelOf(SensorKind kind, Channel* channel) {
  switch (kind) {
    case SensorKind::kContactProbe:
    case SensorKind::kContactDepthProbe: *channel = Channel::kDepth; return true;
    case SensorKind::kKinematicTaxel: *channel = Channel::kForce; return true;
    default: return false;
  }
}

int GradientWidth(SensorKind kind) {
  Channel c;
  if (!GradientChannelOf(kind, &c)) return 0;
  return 12 * ChannelWidth(c);
}

absl::string_view GradientName(Channel c) { return c == Channel::kForce ? "force_gradient" : "depth_gradient"; }

size_t Sensor::GradientBytes() const {
  Channel c;
  if (!GradientChannelOf(kind(), &c) || !truth_.gradient_of(c).empty()) return 0;
  return sizeof(float) * GradientWidth(kind()) * static_cast<size_t>(num_envs_) * layout_.size();
}

void Sensor::EnableGradients() {
  const size_t bytes = GradientBytes();
  Channel c;
  if (bytes == 0 || !GradientChannelOf(kind(), &c)) return;
  truth_.gradient_of(c).assign(bytes / sizeof(float), 0.f);
}

int ChannelWidth(Channel c) {
  return (c == Channel::kNormal || c == Channel::kForce || c == Channel::kTorque || c == Channel::kDisplacement) ? 3
                                                                                                                 : 1;
}

size_t Sensor::EstimateBytes(const SensorSpec& spec, int num_envs, bool warm_starts) {
  size_t per_probe = 1;  // latch
  for (Channel c : ChannelsOf(spec.kind)) per_probe += ChannelBytes(c) * ChannelWidth(c);
  if (spec.imperfections.any()) {
    // measured outputs + raw + hysteresis/walk/held/dead + ring
    const size_t w = static_cast<size_t>(WidthOf(spec.kind));
    per_probe *= 2;
    // In size_t: called before validation, with any history_length a request holds.
    per_probe += 4 * w * (6 + static_cast<size_t>(std::max(spec.imperfections.history_length, 2)));
  }
  if (warm_starts && TraitsOf(spec.kind).evaluator == Evaluator::kProbeRange) per_probe += sizeof(ProbeWarmStart);
  const size_t envs = static_cast<size_t>(std::max(num_envs, 0));
  // With imperfections, one ring pointer per env (measured_ring_).
  return per_probe * spec.probe_local_pos.size() * envs + (spec.imperfections.any() ? sizeof(const float*) * envs : 0);
}

Sensor::~Sensor() = default;

void Sensor::set_tracked(std::unique_ptr<TrackedGeometry> tracked) { tracked_ = std::move(tracked); }

absl::StatusOr<std::unique_ptr<Sensor>> Sensor::Create(SensorId id, SensorSpec spec, LinkIndex link,
                                                       const std::vector<LinkIndex>& ignored_links, int num_links,
                                                       int num_envs, uint64_t seed, absl::string_view field,
                                                       uint32_t env_offset) {
  TAXEL_ASSIGN_OR_RETURN(ProbeLayout layout,
                         ProbeLayout::Create(spec.probe_local_pos, spec.probe_radius, spec.probe_local_normal,
                                             spec.grid_rows, spec.grid_cols, field));
  std::unique_ptr<Sensor> sensor(new Sensor());
  if (spec.kind == SensorKind::kContactProbe) {
    if (!std::isfinite(spec.contact_threshold)) {
      return InvalidFieldError(absl::StrCat(field, ".contact_probe.contact_threshold"), "expected a finite number");
    }
    const double release = spec.release_threshold.value_or(spec.contact_threshold);
    if (!std::isfinite(release) || release > spec.contact_threshold) {
      return InvalidFieldError(
          absl::StrCat(field, ".contact_probe.release_threshold"),
          absl::StrCat("expected a finite value <= contact_threshold (", spec.contact_threshold, "), got ", release));
    }
    sensor->release_threshold_ = release;
  }
  if (spec.kind == SensorKind::kKinematicTaxel) {
    const std::string f = absl::StrCat(field, ".kinematic_taxel");
    TAXEL_RETURN_IF_ERROR(contact::ValidateSpringDamperParams(spec.spring_damper, f.c_str()));
    if (spec.force_law == SensorSpec::ForceLaw::kNonlinear) {
      TAXEL_RETURN_IF_ERROR(
          contact::ValidateNonlinearLaw(spec.nonlinear, absl::StrCat(field, ".kinematic_taxel.nonlinear_law")));
    }
  }
  if (spec.kind == SensorKind::kElastomerTaxel) {
    TAXEL_RETURN_IF_ERROR(ValidateElastomer(spec.elastomer, absl::StrCat(field, ".elastomer")));
  }
  if (spec.kind == SensorKind::kProximityTaxel) {
    TAXEL_RETURN_IF_ERROR(ValidateProximity(spec.proximity, absl::StrCat(field, ".proximity")));
    if (spec.sdf_backend == SdfBackend::kGrid) {
      return InvalidFieldError(absl::StrCat(field, ".sdf_backend"),
                               "GRID applies to the sensors that query signed distances; a PROXIMITY_TAXEL reads "
                               "point clouds (expected EXACT)");
    }
  }
  if (TraitsOf(spec.kind).tracks_links) {
    if (spec.track_links.empty()) {
      return InvalidFieldError(absl::StrCat(field, ".track_links"), "expected at least one tracked link");
    }
    // Farthest-point sampling picks n of 8·n candidates in O(8·n²): 20000 points take about a
    // second, a million would hold a request thread for hours.
    if (spec.n_sample_points < 1 || spec.n_sample_points > kMaxSamplePoints) {
      return InvalidFieldError(
          absl::StrCat(field, ".n_sample_points"),
          absl::StrCat("expected a value in [1, ", kMaxSamplePoints, "], got ", spec.n_sample_points));
    }
  }
  TAXEL_RETURN_IF_ERROR(ValidateImperfections(spec.imperfections, layout, field));
  sensor->id_ = id;
  sensor->link_ = link;
  sensor->layout_ = std::move(layout);
  sensor->num_envs_ = num_envs;
  sensor->ignored_.assign(num_links, 0);
  sensor->ignored_[link.value()] = 1;
  for (LinkIndex l : ignored_links) sensor->ignored_[l.value()] = 1;
  sensor->channels_ = ChannelsOf(spec.kind);
  sensor->spec_ = std::move(spec);
  const size_t n = static_cast<size_t>(num_envs) * sensor->layout_.size();
  const bool measured = sensor->spec_.imperfections.any();
  for (SensorOutputs* o : {&sensor->truth_, &sensor->measured_}) {
    if (o == &sensor->measured_ && !measured) break;
    for (Channel c : sensor->channels_) {
      const size_t len = n * ChannelWidth(c);
      switch (c) {
        case Channel::kContact: o->contact.assign(len, 0); break;
        case Channel::kDepth: o->depth.assign(len, 0.f); break;
        case Channel::kNormal: o->normal.assign(len, 0.f); break;
        case Channel::kArea: o->area.assign(len, 0.f); break;
        case Channel::kPartner: o->partner.assign(len, -1); break;
        case Channel::kForce: o->force.assign(len, 0.f); break;
        case Channel::kTorque: o->torque.assign(len, 0.f); break;
        case Channel::kDisplacement: o->displacement.assign(len, 0.f); break;
      }
    }
  }
  if (sensor->kind() == SensorKind::kContactProbe) {
    sensor->latch_.assign(n, 0);
    if (measured) sensor->latch_measured_.assign(n, 0);
  }
  if (measured) {
    sensor->pipeline_ = std::make_unique<MeasuredPipeline>(
        sensor->spec_.imperfections, sensor->layout_, GroupsOf(sensor->kind()), num_envs, seed, id.value(), env_offset);
    if (!sensor->one_task_per_env()) sensor->raw_measured_.assign(n * WidthOf(sensor->kind()), 0.f);
    if (sensor->kind() == SensorKind::kKinematicTaxel || sensor->kind() == SensorKind::kProximityTaxel) {
      // Their readings are read from the ring where there is one (outputs(), CopyMeasured).
      sensor->pipeline_->set_report_in_ring(true);
      sensor->measured_ring_.assign(num_envs, nullptr);
    }
  }
  return sensor;
}

int Sensor::measured_width() const { return WidthOf(spec_.kind); }

float* Sensor::raw_measured(int env, Workspace& ws) {
  const size_t width = static_cast<size_t>(layout_.size()) * measured_width();
  if (!raw_measured_.empty()) return &raw_measured_[static_cast<size_t>(env) * width];
  return ws.Take<float>(width);
}

bool Sensor::has_channel(Channel c) const {
  return std::find(channels_.begin(), channels_.end(), c) != channels_.end();
}

namespace {

// force[k] = v[k][0..2], torque[k] = v[k][3..5] for n probes of 6 interleaved floats; written
// for the vectoriser (no aliasing: the sample and the output arrays are distinct buffers).
__attribute__((target_clones("avx512f", "avx2", "default"))) void SplitForceTorque(const float* __restrict v, int n,
                                                                        float* __restrict force,
                                                                        float* __restrict torque) {
  for (int k = 0; k < n; ++k) {
    for (int a = 0; a < 3; ++a) {
      force[3 * k + a] = v[6 * k + a];
      torque[3 * k + a] = v[6 * k + 3 + a];
    }
  }
}

// Float k·width + a of out = sample[k·W + offset + a] for n probes: one channel of a pipeline
// sample. `out` may have any alignment (a response buffer): each float is copied as bytes.
void CopyChannelOfSample(const float* sample, size_t n, int W, int offset, int width, void* out) {
  char* dst = static_cast<char*>(out);
  for (size_t k = 0; k < n; ++k) {
    for (int a = 0; a < width; ++a) std::memcpy(dst + (k * width + a) * sizeof(float), &sample[k * W + offset + a], 4);
  }
}

}  // namespace

void Sensor::FinishMeasured(int env, uint64_t step, uint64_t steps_since_reset, double dt, float* raw, Workspace& ws) {
  const float* out = pipeline_->Process(env, step, steps_since_reset, dt, raw, ws);
  // Force and torque stay in the ring when the sample is there: no read of it and no copy in the
  // step (a reader takes them from there, or outputs() copies them on first use).
  const bool in_ring = !measured_ring_.empty() && out != nullptr && pipeline_->InRing(out);
  if (!measured_ring_.empty()) measured_ring_[env] = in_ring ? out : nullptr;
  if (in_ring) {
    ring_pending_.store(true, std::memory_order_relaxed);  // published by the end of the step
  } else {
    WriteMeasuredOutputs(env, out, ws);
  }
  // One fence for the streamed ring slot (Process) and output arrays, before the task ends and
  // another thread may read them.
  StreamFence();
}

void Sensor::WriteMeasuredOutputs(int env, const float* out, Workspace& ws) {
  const int n = layout_.size();
  const int W = measured_width();
  const size_t base = static_cast<size_t>(env) * n;
  if (out == nullptr) out = ws.TakeZeroed<float>(static_cast<size_t>(n) * W);  // a delay not yet filled reads 0
  switch (kind()) {
    // The output arrays are larger than the caches and read only after the step: the env's
    // values are split in the workspace and streamed out (no read of the lines they overwrite).
    case SensorKind::kKinematicTaxel:
    case SensorKind::kProximityTaxel: {
      Workspace::Scope scope(ws);
      float* force = ws.Take<float>(static_cast<size_t>(n) * 3);
      float* torque = ws.Take<float>(static_cast<size_t>(n) * 3);
      SplitForceTorque(out, n, force, torque);
      StreamCopyUnfenced(force, static_cast<size_t>(n) * 3, &measured_.force[base * 3]);
      StreamCopyUnfenced(torque, static_cast<size_t>(n) * 3, &measured_.torque[base * 3]);
      break;
    }
    case SensorKind::kElastomerTaxel:
      StreamCopyUnfenced(out, static_cast<size_t>(n) * W, &measured_.displacement[base * 3]);
      break;
    case SensorKind::kContactDepthProbe:
      for (int k = 0; k < n; ++k) {
        measured_.depth[base + k] = out[k];
        measured_.area[base + k] = static_cast<float>(SphericalCapArea(layout_.radius(k), out[k]));
        measured_.partner[base + k] = truth_.partner[base + k];
        for (int a = 0; a < 3; ++a) measured_.normal[(base + k) * 3 + a] = truth_.normal[(base + k) * 3 + a];
      }
      break;
    case SensorKind::kContactProbe:
      for (int k = 0; k < n; ++k) {
        const float d = out[k];
        uint8_t& on = latch_measured_[base + k];
        if (d >= spec_.contact_threshold) {
          on = 1;
        } else if (d < release_threshold_) {
          on = 0;
        }
        if (layout_.radius(k) == 0) on = 0;
        measured_.depth[base + k] = d;
        measured_.contact[base + k] = on;
      }
      break;
  }
}

void Sensor::MaterializeMeasured() const {
  std::lock_guard<std::mutex> lock(materialize_mu_);
  if (!ring_pending_.load(std::memory_order_relaxed)) return;  // another reader did it
  const size_t n = static_cast<size_t>(layout_.size());
  for (size_t e = 0; e < measured_ring_.size(); ++e) {
    if (measured_ring_[e] == nullptr) continue;
    SplitForceTorque(measured_ring_[e], static_cast<int>(n), &measured_.force[e * n * 3], &measured_.torque[e * n * 3]);
    measured_ring_[e] = nullptr;
  }
  ring_pending_.store(false, std::memory_order_release);
}

void Sensor::CopyMeasured(int env, Channel c, void* out) const {
  const size_t n = static_cast<size_t>(layout_.size());
  std::lock_guard<std::mutex> lock(materialize_mu_);  // against a MaterializeMeasured of another reader
  const float* sample = measured_ring_.empty() ? nullptr : measured_ring_[env];
  if (sample != nullptr) {
    CopyChannelOfSample(sample, n, measured_width(), c == Channel::kTorque ? 3 : 0, 3, out);
    return;
  }
  const std::vector<float>& v = c == Channel::kTorque ? measured_.torque : measured_.force;
  std::memcpy(out, &v[static_cast<size_t>(env) * n * 3], n * 3 * sizeof(float));
}

void Sensor::PrepareMeasured(double dt) {
  if (pipeline_ == nullptr) return;
  if (pipeline_->RingGrowthBytes(dt) > 0 && measured_in_ring()) MaterializeMeasured();  // the ring moves
  pipeline_->Prepare(dt);
}

const std::vector<Channel>& Sensor::history_channels() const { return TraitsOf(kind()).history; }

void Sensor::CopyHistory(int env, int h, Channel c, float* out) const {
  const int n = layout_.size();
  const int W = measured_width();
  const int width = ChannelWidth(c);
  const int offset = c == Channel::kTorque ? 3 : 0;
  const float* sample = pipeline_->History(env, h);
  if (sample == nullptr) {
    std::fill_n(out, static_cast<size_t>(n) * width, 0.f);
  } else {
    CopyChannelOfSample(sample, n, W, offset, width, out);
  }
}

void Sensor::EnableWarmStarts() {
  if (warm_.empty() && TraitsOf(kind()).evaluator == Evaluator::kProbeRange) {
    warm_.assign(static_cast<size_t>(num_envs_) * layout_.size(), ProbeWarmStart{});
  }
}

void Sensor::ResetEnv(int env, uint32_t reset_count) {
  const size_t n = layout_.size();
  const size_t b = static_cast<size_t>(env) * n, e = b + n;
  auto zero = [&](auto& v, int width, auto value) {
    if (!v.empty()) std::fill(v.begin() + b * width, v.begin() + e * width, value);
  };
  for (SensorOutputs* o : {&truth_, &measured_}) {
    zero(o->contact, 1, uint8_t{0});
    zero(o->depth, 1, 0.f);
    zero(o->normal, 3, 0.f);
    zero(o->area, 1, 0.f);
    zero(o->partner, 1, int32_t{-1});
    zero(o->force, 3, 0.f);
    zero(o->torque, 3, 0.f);
    zero(o->displacement, 3, 0.f);
    zero(o->depth_gradient, 12, 0.f);
    zero(o->force_gradient, 36, 0.f);
  }
  zero(latch_, 1, uint8_t{0});
  zero(latch_measured_, 1, uint8_t{0});
  zero(warm_, 1, ProbeWarmStart{});
  if (pipeline_) {
    zero(raw_measured_, measured_width(), 0.f);
    if (!measured_ring_.empty()) measured_ring_[env] = nullptr;  // reads the zeros above
    pipeline_->ResetEnv(env, reset_count);
  }
  if (tracked_) tracked_->ResetEnv(env);
}

size_t Sensor::memory_bytes() const {
  size_t total = sizeof(*this) + latch_.capacity() + latch_measured_.capacity() + ignored_.capacity() +
                 raw_measured_.capacity() * 4 + warm_.capacity() * sizeof(ProbeWarmStart);
  for (const SensorOutputs* o : {&truth_, static_cast<const SensorOutputs*>(&measured_)}) {
    total += o->contact.capacity() +
             4 * (o->depth.capacity() + o->normal.capacity() + o->area.capacity() + o->partner.capacity() +
                  o->force.capacity() + o->torque.capacity() + o->displacement.capacity() +
                  o->depth_gradient.capacity() + o->force_gradient.capacity());
  }
  if (tracked_) total += tracked_->memory_bytes();
  if (pipeline_) total += pipeline_->memory_bytes() + measured_ring_.capacity() * sizeof(const float*);
  return total + layout_.size() * (sizeof(Eigen::Vector3d) * 2 + sizeof(double));
}

}  // namespace taxel::sensors
