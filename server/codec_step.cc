// Steps and readings.
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/field_error.h"
#include "core/common/status_macros.h"
#include "server/codec.h"

namespace taxel::server {
namespace {

// Accepts [n, L, w] or [n·L, w].
absl::Status CheckLinkArrayShape(const TensorView& view, int64_t n, int64_t L, int64_t w, absl::string_view field) {
  const auto& s = view.shape;
  const bool nested = s.size() == 3 && s[0] == n && s[1] == L && s[2] == w;
  const bool flat = s.size() == 2 && s[0] == n * L && s[1] == w;
  if (!nested && !flat) {
    return InvalidFieldError(field, absl::StrCat("expected shape [", n, ", ", L, ", ", w, "] (or [", n * L, ", ", w,
                                                 "]), got ", ShapeString(s)));
  }
  return absl::OkStatus();
}

// Whether a reading of this sensor and branch carries the gradient (ReadSpec.gradients).
bool CarriesGradient(const sensors::Sensor& s, sensors::Branch b) {
  return b == sensors::Branch::kGroundTruth || s.pipeline() == nullptr;
}

// ReadSpec.gradients: every planned sensor must be able to carry its gradient.
absl::Status CheckGradients(const ReadPlan& plan, const std::string& field) {
  for (const ReadPlan::Item& item : plan.items) {
    const sensors::Sensor& s = *item.sensor;
    const std::string name = absl::StrCat("sensor '", s.spec().name, "'");
    sensors::Channel c;
    if (!sensors::GradientChannelOf(s.kind(), &c)) {
      return InvalidFieldError(field, absl::StrCat(name, " (", sensors::SensorKindName(s.kind()),
                                                   ") has no gradients; list the sensors to read in read.sensors"));
    }
    if (std::find(item.channels.begin(), item.channels.end(), c) == item.channels.end()) {
      return InvalidFieldError(field, absl::StrCat(name, ": its gradient is that of '", sensors::ChannelName(c),
                                                   "', which read.channels leaves out"));
    }
    const auto carries = [&](sensors::Branch b) { return CarriesGradient(s, b); };
    if (std::none_of(plan.branches.begin(), plan.branches.end(), carries)) {
      return InvalidFieldError(field, absl::StrCat(name,
                                                   " has imperfections: its gradients are those of the ground "
                                                   "truth; add GROUND_TRUTH to read.branches"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status DecodeStep(const v1::StepRequest& request, const scene::Scene& scene, DecodedStep* out) {
  const int64_t L = scene.model().num_moving_links();
  out->env_ids.assign(request.env_ids().begin(), request.env_ids().end());
  const int64_t n = out->env_ids.empty() ? scene.num_envs() : static_cast<int64_t>(out->env_ids.size());
  if (!request.has_poses()) return InvalidFieldError("poses", absl::StrCat("required: shape [", n, ", ", L, ", 7]"));
  TAXEL_ASSIGN_OR_RETURN(TensorView poses, ViewTensor(request.poses(), "poses"));
  TAXEL_RETURN_IF_ERROR(CheckLinkArrayShape(poses, n, L, 7, "poses"));
  TAXEL_ASSIGN_OR_RETURN(out->input.poses, RealValues(poses, "poses", &out->pose_storage));
  out->input.twists = {};
  if (request.has_twists()) {
    TAXEL_ASSIGN_OR_RETURN(TensorView twists, ViewTensor(request.twists(), "twists"));
    TAXEL_RETURN_IF_ERROR(CheckLinkArrayShape(twists, n, L, 6, "twists"));
    TAXEL_ASSIGN_OR_RETURN(out->input.twists, RealValues(twists, "twists", &out->twist_storage));
  }
  out->input.quat_order = FromProto(request.quat_order());
  out->input.env_ids = out->env_ids;
  out->input.dt = request.dt();
  out->input.continues_step = request.continues_step();
  out->input.contacts = {};
  if (request.has_contacts()) {
    const v1::ReportedContacts& k = request.contacts();
    auto ints = [](const v1::Tensor& t, absl::string_view field, std::vector<int32_t>* storage) -> absl::Status {
      TAXEL_ASSIGN_OR_RETURN(TensorView v, ViewTensor(t, field));
      if (v.dtype != v1::INT32 || v.shape.size() != 1) {
        return InvalidFieldError(field, absl::StrCat("expected INT32 of shape [K], got ", v1::DType_Name(v.dtype), " ",
                                                     ShapeString(v.shape)));
      }
      storage->resize(v.num_elements);
      // (K = 0: an empty vector's data() may be null, which memcpy must not get even for 0 bytes.)
      if (!v.bytes.empty()) std::memcpy(storage->data(), v.bytes.data(), v.bytes.size());
      return absl::OkStatus();
    };
    TAXEL_RETURN_IF_ERROR(ints(k.env(), "contacts.env", &out->contact_env));
    TAXEL_RETURN_IF_ERROR(ints(k.body(), "contacts.body", &out->contact_body));
    TAXEL_RETURN_IF_ERROR(ints(k.partner(), "contacts.partner", &out->contact_partner));
    const int64_t K = static_cast<int64_t>(out->contact_env.size());
    // contacts.env sets K; a body or partner array of another length is named here (the core only
    // sees the spans and could report no more than "contacts").
    for (const auto& [field, v] : {std::make_pair("contacts.body", &out->contact_body),
                                   std::make_pair("contacts.partner", &out->contact_partner)}) {
      if (static_cast<int64_t>(v->size()) != K) {
        return InvalidFieldError(
            field, absl::StrCat("expected shape [", K, "] (K = len(contacts.env)), got [", v->size(), "]"));
      }
    }
    auto vec3 = [&](const v1::Tensor& t, absl::string_view field, std::vector<double>* storage,
                    absl::Span<const double>* span) -> absl::Status {
      TAXEL_ASSIGN_OR_RETURN(TensorView v, ViewTensor(t, field));
      if (v.shape.size() != 2 || v.shape[0] != K || v.shape[1] != 3) {
        return InvalidFieldError(field, absl::StrCat("expected shape [", K, ", 3], got ", ShapeString(v.shape)));
      }
      TAXEL_ASSIGN_OR_RETURN(*span, RealValues(v, field, storage));
      return absl::OkStatus();
    };
    TAXEL_RETURN_IF_ERROR(vec3(k.force(), "contacts.force", &out->contact_force_storage, &out->input.contacts.force));
    if (k.has_friction()) {
      TAXEL_RETURN_IF_ERROR(
          vec3(k.friction(), "contacts.friction", &out->contact_friction_storage, &out->input.contacts.friction));
    }
    out->input.contacts.env = out->contact_env;
    out->input.contacts.body = out->contact_body;
    out->input.contacts.partner = out->contact_partner;
  }
  return absl::OkStatus();
}

absl::Status EncodeContactMatrix(const scene::Scene& scene, absl::Span<const int32_t> envs,
                                 const google::protobuf::RepeatedPtrField<std::string>& rows,
                                 const google::protobuf::RepeatedPtrField<std::string>& columns, bool friction,
                                 bool gradients, v1::GetContactMatrixResponse* out) {
  const scene::ContactEstimation* cm = scene.contact_matrix();
  if (cm == nullptr) {
    return FieldError(absl::StatusCode::kFailedPrecondition, "contact_matrix",
                      "this scene has no contact matrix (set SceneSpec.contact_matrix.bodies)");
  }
  const contact::ContactMatrix& M = cm->matrix();
  auto pick = [](const std::vector<std::string>& names, const google::protobuf::RepeatedPtrField<std::string>& want,
                 absl::string_view field, std::vector<int>* idx) -> absl::Status {
    idx->clear();
    if (want.empty()) {
      for (size_t i = 0; i < names.size(); ++i) idx->push_back(static_cast<int>(i));
      return absl::OkStatus();
    }
    for (int i = 0; i < want.size(); ++i) {
      auto it = std::find(names.begin(), names.end(), want[i]);
      if (it == names.end()) {
        return InvalidFieldError(absl::StrCat(field, "[", i, "]"),
                                 absl::StrCat("'", want[i], "' is not in the contact matrix"));
      }
      idx->push_back(static_cast<int>(it - names.begin()));
    }
    return absl::OkStatus();
  };
  std::vector<int> r, c;
  TAXEL_RETURN_IF_ERROR(pick(M.row_names(), rows, "rows", &r));
  TAXEL_RETURN_IF_ERROR(pick(M.column_names(), columns, "columns", &c));
  if (friction && !M.has_friction()) {
    return FieldError(absl::StatusCode::kFailedPrecondition, "friction",
                      "this scene's contact matrix does not keep friction");
  }
  if (gradients && !M.has_gradient()) {
    return FieldError(absl::StatusCode::kFailedPrecondition, "gradients",
                      "this scene's contact matrix does not keep gradients (set contact_matrix.gradients)");
  }
  out->mutable_env_ids()->Assign(envs.begin(), envs.end());
  for (int i : r) out->add_rows(M.row_names()[i]);
  for (int i : c) out->add_columns(M.column_names()[i]);
  const int P = M.cols();
  // One array of `floats` per cell: normal, friction (3) or gradient (36).
  auto fill = [&](const float* (contact::ContactMatrix::*array)(int) const, int floats, v1::Tensor* t) {
    t->set_dtype(v1::FLOAT32);
    for (int64_t d : {static_cast<int64_t>(envs.size()), static_cast<int64_t>(r.size()), static_cast<int64_t>(c.size()),
                      int64_t{3}}) {
      t->add_shape(d);
    }
    if (floats > 3) t->add_shape(2), t->add_shape(6);
    const size_t cell = static_cast<size_t>(floats) * sizeof(float);
    std::string* data = t->mutable_data();
    const bool whole = r.size() == static_cast<size_t>(M.rows()) && c.size() == static_cast<size_t>(P);
    data->clear();
    data->reserve(envs.size() * r.size() * c.size() * cell);
    for (int32_t e : envs) {
      const float* base = (M.*array)(e);
      if (whole) {
        data->append(reinterpret_cast<const char*>(base), static_cast<size_t>(M.rows()) * P * cell);
        continue;
      }
      for (int ri : r) {
        for (int ci : c) {
          data->append(reinterpret_cast<const char*>(base + (static_cast<size_t>(ri) * P + ci) * floats), cell);
        }
      }
    }
  };
  fill(&contact::ContactMatrix::normal, 3, out->mutable_normal());
  if (friction) fill(&contact::ContactMatrix::friction, 3, out->mutable_friction());
  if (gradients) fill(&contact::ContactMatrix::gradient, contact::ContactMatrix::kGradientFloats, out->mutable_gradient());
  return absl::OkStatus();
}

absl::StatusOr<ReadPlan> PlanRead(const v1::ReadSpec& read, const scene::Scene& scene, absl::string_view field) {
  ReadPlan plan;
  if (read.none()) return plan;
  std::vector<const sensors::Sensor*> chosen;
  if (read.sensors().empty()) {
    chosen = scene.sensors();
  } else {
    for (int i = 0; i < read.sensors_size(); ++i) {
      const sensors::Sensor* s = scene.FindSensor(read.sensors(i));
      if (s == nullptr) {
        return FieldError(absl::StatusCode::kNotFound, absl::StrCat(field, ".sensors[", i, "]"),
                          absl::StrCat("no sensor named '", read.sensors(i), "' in this scene"));
      }
      chosen.push_back(s);
    }
  }
  for (int i = 0; i < read.channels_size(); ++i) {
    bool known = false;
    for (int c = 0; c < sensors::kNumChannels; ++c) {
      known |= sensors::ChannelName(static_cast<sensors::Channel>(c)) == read.channels(i);
    }
    if (!known) {
      return InvalidFieldError(
          absl::StrCat(field, ".channels[", i, "]"),
          absl::StrCat("unknown channel '", read.channels(i),
                       "'; expected contact, depth, normal, area, partner, force, torque or displacement"));
    }
  }
  for (const sensors::Sensor* s : chosen) {
    ReadPlan::Item item{s, {}};
    for (sensors::Channel c : s->channels()) {
      bool wanted = read.channels().empty();
      for (const auto& name : read.channels()) wanted |= sensors::ChannelName(c) == name;
      if (wanted) item.channels.push_back(c);
    }
    plan.items.push_back(std::move(item));
  }
  for (int i = 0; i < read.branches_size(); ++i) {
    switch (read.branches(i)) {
      case v1::BRANCH_UNSPECIFIED:
      case v1::MEASURED: plan.branches.push_back(sensors::Branch::kMeasured); break;
      case v1::GROUND_TRUTH: plan.branches.push_back(sensors::Branch::kGroundTruth); break;
      default: return InvalidFieldError(absl::StrCat(field, ".branches[", i, "]"), "expected MEASURED or GROUND_TRUTH");
    }
  }
  if (plan.branches.empty()) plan.branches.push_back(sensors::Branch::kMeasured);
  plan.sparse = read.sparse();
  if (read.gradients()) TAXEL_RETURN_IF_ERROR(CheckGradients(plan, absl::StrCat(field, ".gradients")));
  plan.gradients = read.gradients();
  return plan;
}

int64_t EstimateResponseBytes(const ReadPlan& plan, int64_t num_envs) {
  constexpr int64_t kPerTensor = 64;      // map entry, key, dtype, shape varints, length prefixes
  constexpr int64_t kPerReading = 128;    // sensor name, id, branch, framing
  constexpr int64_t kFixed = 1024;        // scene name, sequence, step, timing
  int64_t bytes = kFixed + 5 * num_envs;  // env_ids: at most 5 bytes per varint
  for (const ReadPlan::Item& item : plan.items) {
    int64_t per_branch = kPerReading;
    for (sensors::Channel c : item.channels) {
      const int64_t item_size = c == sensors::Channel::kContact ? 1 : 4;
      const int64_t elements = num_envs * item.sensor->num_probes() * sensors::ChannelWidth(c);
      // The sparse form of a tensor without zeros: all elements plus the mask.
      per_branch += kPerTensor + elements * item_size + (plan.sparse ? (elements + 7) / 8 : 0);
    }
    bytes += per_branch * static_cast<int64_t>(plan.branches.size());
    if (plan.gradients) {
      const int64_t elements = num_envs * item.sensor->num_probes() * sensors::GradientWidth(item.sensor->kind());
      const int64_t per_gradient = kPerTensor + elements * 4 + (plan.sparse ? (elements + 7) / 8 : 0);
      for (sensors::Branch b : plan.branches) bytes += CarriesGradient(*item.sensor, b) ? per_gradient : 0;
    }
  }
  return bytes;
}

int64_t EstimateContactMatrixBytes(const scene::Scene& scene, int64_t num_envs) {
  const scene::ContactEstimation* cm = scene.contact_matrix();
  if (cm == nullptr) return 0;
  const contact::ContactMatrix& M = cm->matrix();
  int64_t names = 0;  // each name with its tag and length prefix
  for (const auto* list : {&M.row_names(), &M.column_names()}) {
    for (const std::string& n : *list) names += static_cast<int64_t>(n.size()) + 8;
  }
  const int64_t tensors = (M.has_friction() ? 2 : 1) + (M.has_gradient() ? 12 : 0);
  return 256 + 5 * num_envs + names + tensors * num_envs * M.rows() * M.cols() * 3 * 4;
}

bool IsAllEnvsInOrder(absl::Span<const int32_t> envs, int num_envs) {
  bool identity = static_cast<int>(envs.size()) == num_envs;
  for (size_t i = 0; identity && i < envs.size(); ++i) identity = envs[i] == static_cast<int32_t>(i);
  return identity;
}

ChannelArray ChannelOutput(const sensors::Sensor& sensor, sensors::Branch branch, sensors::Channel channel) {
  const int width = sensors::ChannelWidth(channel);
  ChannelArray a;
  a.probe_shape = sensor.layout().shape();
  if (width == 3) a.probe_shape.push_back(3);
  a.bytes_per_env = static_cast<size_t>(sensor.num_probes()) * width * sizeof(float);
  if (branch == sensors::Branch::kMeasured && sensor.measured_in_ring() &&
      (channel == sensors::Channel::kForce || channel == sensors::Channel::kTorque)) {
    // Taken from the delay ring, where the step left them, rather than copied into the output
    // arrays first (outputs() would).
    a.dtype = v1::FLOAT32;
    a.copy_env = [&sensor, channel](int32_t e, char* dst) { sensor.CopyMeasured(e, channel, dst); };
    return a;
  }
  const sensors::SensorOutputs& o = sensor.outputs(branch);
  const void* src = nullptr;
  size_t item_size = 4;
  switch (channel) {
    case sensors::Channel::kContact: src = o.contact.data(), item_size = 1, a.dtype = v1::BOOL; break;
    case sensors::Channel::kDepth: src = o.depth.data(), a.dtype = v1::FLOAT32; break;
    case sensors::Channel::kNormal: src = o.normal.data(), a.dtype = v1::FLOAT32; break;
    case sensors::Channel::kArea: src = o.area.data(), a.dtype = v1::FLOAT32; break;
    case sensors::Channel::kPartner: src = o.partner.data(), a.dtype = v1::INT32; break;
    case sensors::Channel::kForce: src = o.force.data(), a.dtype = v1::FLOAT32; break;
    case sensors::Channel::kTorque: src = o.torque.data(), a.dtype = v1::FLOAT32; break;
    case sensors::Channel::kDisplacement: src = o.displacement.data(), a.dtype = v1::FLOAT32; break;
  }
  a.data = static_cast<const char*>(src);
  a.item_size = item_size;
  a.bytes_per_env = static_cast<size_t>(sensor.num_probes()) * width * item_size;
  return a;
}

ChannelArray GradientOutput(const sensors::Sensor& sensor, sensors::Channel channel) {
  const sensors::SensorOutputs& o = sensor.outputs(sensors::Branch::kGroundTruth);
  ChannelArray a;
  a.probe_shape = sensor.layout().shape();
  if (sensors::ChannelWidth(channel) == 3) a.probe_shape.push_back(3);
  a.probe_shape.push_back(2);
  a.probe_shape.push_back(6);
  a.dtype = v1::FLOAT32;
  a.data = reinterpret_cast<const char*>(o.gradient_of(channel).data());
  a.item_size = sizeof(float);
  a.bytes_per_env = static_cast<size_t>(sensor.num_probes()) * sensors::GradientWidth(sensor.kind()) * sizeof(float);
  a.name = sensors::GradientName(channel);
  return a;
}

void GatherEnvs(const ChannelArray& array, absl::Span<const int32_t> envs, int num_envs, char* dst) {
  const size_t block = array.bytes_per_env;
  if (array.copy_env) {
    for (int32_t e : envs) array.copy_env(e, dst), dst += block;
    return;
  }
  if (IsAllEnvsInOrder(envs, num_envs)) {
    if (block * envs.size() > 0) std::memcpy(dst, array.data, block * envs.size());
    return;
  }
  for (int32_t e : envs) std::memcpy(dst, array.data + block * e, block), dst += block;
}

std::vector<ReadingArrays> PlannedReadings(const ReadPlan& plan) {
  std::vector<ReadingArrays> out;
  for (const ReadPlan::Item& item : plan.items) {
    for (sensors::Branch b : plan.branches) {
      ReadingArrays& r = out.emplace_back();
      r.sensor = item.sensor;
      r.branch = b == sensors::Branch::kMeasured ? v1::MEASURED : v1::GROUND_TRUTH;
      for (sensors::Channel c : item.channels) r.channels.emplace_back(c, ChannelOutput(*item.sensor, b, c));
      sensors::Channel g;
      if (plan.gradients && CarriesGradient(*item.sensor, b) && sensors::GradientChannelOf(item.sensor->kind(), &g)) {
        r.channels.emplace_back(g, GradientOutput(*item.sensor, g));
      }
    }
  }
  return out;
}

absl::Status CheckHistory(const ReadPlan& plan, int history, absl::string_view field) {
  if (history < 0) {
    return InvalidFieldError(field, absl::StrCat("expected a value >= 0, got ", history));
  }
  for (const ReadPlan::Item& item : plan.items) {
    const int kept = item.sensor->pipeline() ? item.sensor->pipeline()->history_length() : 0;
    if (history > kept) {
      return InvalidFieldError(field, absl::StrCat("sensor '", item.sensor->spec().name, "' keeps ", kept,
                                                   " samples (imperfections.history_length), asked for ", history));
    }
  }
  return absl::OkStatus();
}

std::vector<ReadingArrays> HistoryReadings(const ReadPlan& plan, int history, absl::Span<const int32_t> envs,
                                           std::vector<std::vector<float>>* storage) {
  std::vector<ReadingArrays> out;
  for (const ReadPlan::Item& item : plan.items) {
    const sensors::Sensor& s = *item.sensor;
    ReadingArrays& r = out.emplace_back();
    r.sensor = &s;
    r.branch = v1::MEASURED;
    for (sensors::Channel c : s.history_channels()) {
      if (std::find(item.channels.begin(), item.channels.end(), c) == item.channels.end()) continue;
      const int width = sensors::ChannelWidth(c);
      const size_t per_sample = static_cast<size_t>(s.num_probes()) * width;
      std::vector<float>& values = storage->emplace_back(per_sample * history * envs.size());
      float* dst = values.data();
      for (int32_t e : envs) {
        for (int h = 0; h < history; ++h, dst += per_sample) s.CopyHistory(e, h, c, dst);
      }
      ChannelArray a;
      a.dtype = v1::FLOAT32;
      a.probe_shape = s.layout().shape();
      a.probe_shape.insert(a.probe_shape.begin(), history);
      if (width == 3) a.probe_shape.push_back(3);
      a.data = reinterpret_cast<const char*>(values.data());
      a.bytes_per_env = per_sample * history * sizeof(float);
      a.item_size = sizeof(float);
      r.channels.emplace_back(c, std::move(a));
    }
  }
  return out;
}

}  // namespace taxel::server
