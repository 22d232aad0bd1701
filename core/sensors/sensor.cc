#include "core/sensors/sensor.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"

namespace taxel::sensors {
namespace {

std::vector<Channel> ChannelsOf(SensorKind kind) {
  switch (kind) {
    case SensorKind::kContactProbe: return {Channel::kContact, Channel::kDepth};
    case SensorKind::kContactDepthProbe: return {Channel::kDepth, Channel::kNormal, Channel::kArea, Channel::kPartner};
    case SensorKind::kKinematicTaxel: return {Channel::kForce, Channel::kTorque};
    default: return {};
  }
}

size_t ChannelBytes(Channel c) {
  return c == Channel::kContact ? 1 : 4;
}

}  // namespace

absl::string_view SensorKindName(SensorKind kind) {
  switch (kind) {
    case SensorKind::kContactProbe: return "contact_probe";
    case SensorKind::kContactDepthProbe: return "contact_depth_probe";
    case SensorKind::kKinematicTaxel: return "kinematic_taxel";
    case SensorKind::kElastomerTaxel: return "elastomer_taxel";
    case SensorKind::kProximityTaxel: return "proximity_taxel";
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
  }
  return "unknown";
}

int ChannelWidth(Channel c) {
  return (c == Channel::kNormal || c == Channel::kForce || c == Channel::kTorque) ? 3 : 1;
}

size_t Sensor::EstimateBytes(const SensorSpec& spec, int num_envs) {
  size_t per_probe = 1;  // latch
  for (Channel c : ChannelsOf(spec.kind)) per_probe += ChannelBytes(c) * ChannelWidth(c);
  return per_probe * spec.probe_local_pos.size() * static_cast<size_t>(std::max(num_envs, 0));
}

absl::StatusOr<std::unique_ptr<Sensor>> Sensor::Create(SensorId id, SensorSpec spec, LinkIndex link,
                                                       const std::vector<LinkIndex>& ignored_links, int num_links,
                                                       int num_envs, absl::string_view field) {
  if (spec.kind == SensorKind::kElastomerTaxel || spec.kind == SensorKind::kProximityTaxel) {
    return absl::UnimplementedError(absl::StrCat(field, ".kind: ", SensorKindName(spec.kind),
                                                 " is not available yet (planned)"));
  }
  TAXEL_ASSIGN_OR_RETURN(ProbeLayout layout,
                         ProbeLayout::Create(spec.probe_local_pos, spec.probe_radius, spec.probe_local_normal,
                                             spec.grid_rows, spec.grid_cols, field));
  std::unique_ptr<Sensor> sensor(new Sensor());
  if (spec.kind == SensorKind::kContactProbe) {
    if (!std::isfinite(spec.contact_threshold)) {
      return absl::InvalidArgumentError(absl::StrCat(field, ".contact_probe.contact_threshold: expected a finite number"));
    }
    const double release = spec.release_threshold.value_or(spec.contact_threshold);
    if (!std::isfinite(release) || release > spec.contact_threshold) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".contact_probe.release_threshold: expected a finite value <= contact_threshold (", spec.contact_threshold,
          "), got ", release));
    }
    sensor->release_threshold_ = release;
  }
  if (spec.kind == SensorKind::kKinematicTaxel) {
    const std::string f = absl::StrCat(field, ".kinematic_taxel");
    TAXEL_RETURN_IF_ERROR(contact::ValidateSpringDamperParams(spec.spring_damper, f.c_str()));
  }
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
  SensorOutputs& o = sensor->truth_;
  for (Channel c : sensor->channels_) {
    const size_t len = n * ChannelWidth(c);
    switch (c) {
      case Channel::kContact: o.contact.assign(len, 0); break;
      case Channel::kDepth: o.depth.assign(len, 0.f); break;
      case Channel::kNormal: o.normal.assign(len, 0.f); break;
      case Channel::kArea: o.area.assign(len, 0.f); break;
      case Channel::kPartner: o.partner.assign(len, -1); break;
      case Channel::kForce: o.force.assign(len, 0.f); break;
      case Channel::kTorque: o.torque.assign(len, 0.f); break;
    }
  }
  if (sensor->kind() == SensorKind::kContactProbe) sensor->latch_.assign(n, 0);
  return sensor;
}

bool Sensor::has_channel(Channel c) const {
  return std::find(channels_.begin(), channels_.end(), c) != channels_.end();
}

void Sensor::ResetEnv(int env) {
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
  }
  zero(latch_, 1, uint8_t{0});
}

size_t Sensor::memory_bytes() const {
  size_t total = sizeof(*this) + latch_.capacity() + ignored_.capacity();
  for (const SensorOutputs* o : {&truth_, &measured_}) {
    total += o->contact.capacity() + 4 * (o->depth.capacity() + o->normal.capacity() + o->area.capacity() +
                                          o->partner.capacity() + o->force.capacity() + o->torque.capacity());
  }
  return total + layout_.size() * (sizeof(Eigen::Vector3d) * 2 + sizeof(double));
}

}  // namespace taxel::sensors
