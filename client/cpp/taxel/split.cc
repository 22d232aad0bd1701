#include "taxel/split.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace taxel::internal {
namespace {

constexpr double kFill = 0.9;  // share of the limit a part may fill
constexpr int64_t kPerReading = 128;
constexpr int64_t kPerTensor = 64;
constexpr int64_t kFixed = 1024;

// `t`'s rows of envs [start, start + count) when its first axis holds `total` envs' rows (one or
// several rows each, e.g. poses [E, L, 7] or [E·L, 7]).
absl::StatusOr<v1::Tensor> EnvRows(const v1::Tensor& t, int64_t total, int64_t start, int64_t count,
                                   const char* field) {
  if (t.shape_size() == 0 || total <= 0 || t.shape(0) % total != 0 || t.data().size() % total != 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": its first axis does not hold ", total, " envs' rows"));
  }
  const int64_t rows_per_env = t.shape(0) / total;
  const size_t bytes = t.data().size() / static_cast<size_t>(total);
  v1::Tensor out;
  out.set_dtype(t.dtype());
  out.mutable_shape()->CopyFrom(t.shape());
  out.set_shape(0, rows_per_env * count);
  out.set_data(t.data().substr(static_cast<size_t>(start) * bytes, static_cast<size_t>(count) * bytes));
  return out;
}

// The rows `keep` of a [K, ...] tensor.
v1::Tensor Rows(const v1::Tensor& t, int64_t k, const std::vector<int64_t>& keep) {
  v1::Tensor out;
  out.set_dtype(t.dtype());
  out.mutable_shape()->CopyFrom(t.shape());
  if (out.shape_size() > 0) out.set_shape(0, static_cast<int64_t>(keep.size()));
  const size_t row = k > 0 ? t.data().size() / static_cast<size_t>(k) : 0;
  std::string data;
  data.reserve(row * keep.size());
  for (int64_t i : keep) data.append(t.data(), static_cast<size_t>(i) * row, row);
  out.set_data(std::move(data));
  return out;
}

// Appends `part` to `joined` along the first axis (dense tensors of the same trailing shape).
absl::Status AppendTensor(const v1::Tensor& part, v1::Tensor* joined, const std::string& what) {
  if (!part.nonzero_mask().empty() || !joined->nonzero_mask().empty() || part.shape_size() == 0 ||
      part.shape_size() != joined->shape_size() || part.dtype() != joined->dtype()) {
    return absl::InternalError(absl::StrCat("joining parts: ", what, " differs between parts"));
  }
  joined->set_shape(0, joined->shape(0) + part.shape(0));
  joined->mutable_data()->append(part.data());
  return absl::OkStatus();
}

absl::Status AppendReadings(const google::protobuf::RepeatedPtrField<v1::SensorReading>& part,
                            google::protobuf::RepeatedPtrField<v1::SensorReading>* joined) {
  if (part.size() != joined->size()) return absl::InternalError("joining parts: other readings in a part");
  for (int k = 0; k < part.size(); ++k) {
    for (const auto& [channel, tensor] : part[k].channels()) {
      auto it = joined->Mutable(k)->mutable_channels()->find(channel);
      if (it == joined->Mutable(k)->mutable_channels()->end()) {
        return absl::InternalError(absl::StrCat("joining parts: channel ", channel, " missing"));
      }
      if (absl::Status s = AppendTensor(tensor, &it->second, part[k].sensor() + "." + channel); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool TooLarge(const absl::Status& status) {
  return status.code() == absl::StatusCode::kResourceExhausted &&
         (absl::StartsWith(status.message(), "read: ") || absl::StrContains(status.message(), "larger than max"));
}

void ReadingBytes(const v1::SceneInfo& info, const v1::ReadSpec& read, int history, int64_t* per_env, int64_t* fixed) {
  *per_env = 5;  // the env id
  *fixed = kFixed;
  if (!read.none()) {
    const std::set<std::string> sensors(read.sensors().begin(), read.sensors().end());
    const std::set<std::string> channels(read.channels().begin(), read.channels().end());
    const int64_t branches = std::max(1, read.branches_size());
    for (const v1::SensorInfo& s : info.sensors()) {
      if (!sensors.empty() && !sensors.count(s.name())) continue;
      *fixed += kPerReading * branches;
      for (const v1::OutputInfo& o : s.outputs()) {
        if (!channels.empty() && !channels.count(o.channel())) continue;
        int64_t elements = std::max(1, history);
        for (int d = 1; d < o.shape_size(); ++d) elements *= o.shape(d);
        const int64_t item = o.dtype() == v1::BOOL ? 1 : 4;
        *per_env += branches * (elements * item + (read.sparse() ? (elements + 7) / 8 : 0));
        *fixed += kPerTensor * branches;
        // ReadSpec.gradients: 2 × 6 floats per value of the depth (probes) or force (taxels).
        const bool has_gradient = (o.channel() == "depth" && s.kind() != v1::KINEMATIC_TAXEL) ||
                                  (o.channel() == "force" && s.kind() == v1::KINEMATIC_TAXEL);
        if (read.gradients() && has_gradient) {
          *per_env += branches * (elements * 12 * 4 + (read.sparse() ? (elements * 12 + 7) / 8 : 0));
          *fixed += kPerTensor * branches;
        }
      }
    }
  }
  if (read.contact_matrix() && info.has_contact_matrix()) {
    const v1::ContactMatrixInfo& cm = info.contact_matrix();
    *per_env += 5 + int64_t{cm.rows_size()} * cm.columns_size() * 3 * 4 * ((cm.friction() ? 2 : 1) + (cm.gradients() ? 12 : 0));
    *fixed += 256;
    for (const auto* names : {&cm.rows(), &cm.columns()}) {
      for (const std::string& n : *names) *fixed += static_cast<int64_t>(n.size()) + 8;
    }
  }
}

int EnvsPerPart(int64_t limit, int64_t per_env, int64_t fixed, int num_envs) {
  const double room = kFill * static_cast<double>(limit) - static_cast<double>(fixed);
  if (per_env <= 0 || static_cast<double>(per_env) * num_envs <= room) return num_envs;
  return std::max(1, static_cast<int>(room / static_cast<double>(per_env)));
}

std::vector<int32_t> CallEnvs(const google::protobuf::RepeatedField<int32_t>& env_ids, int num_envs) {
  if (!env_ids.empty()) return {env_ids.begin(), env_ids.end()};
  std::vector<int32_t> all(static_cast<size_t>(std::max(0, num_envs)));
  for (int e = 0; e < num_envs; ++e) all[static_cast<size_t>(e)] = e;
  return all;
}

absl::StatusOr<v1::StepRequest> StepPart(const v1::StepRequest& whole, const std::vector<int32_t>& envs, int start,
                                         int count) {
  const int64_t n = static_cast<int64_t>(envs.size());
  v1::StepRequest part = whole;
  part.mutable_env_ids()->Assign(envs.begin() + start, envs.begin() + start + count);
  part.set_continues_step(whole.continues_step() || start > 0);
  absl::StatusOr<v1::Tensor> poses = EnvRows(whole.poses(), n, start, count, "poses");
  if (!poses.ok()) return poses.status();
  *part.mutable_poses() = *std::move(poses);
  if (whole.has_twists()) {
    absl::StatusOr<v1::Tensor> twists = EnvRows(whole.twists(), n, start, count, "twists");
    if (!twists.ok()) return twists.status();
    *part.mutable_twists() = *std::move(twists);
  }
  if (whole.has_contacts()) {
    const v1::ReportedContacts& c = whole.contacts();
    const v1::Tensor& env = c.env();
    if (env.dtype() != v1::INT32 || env.data().size() % 4 != 0) {
      return absl::InvalidArgumentError("contacts.env: expected an INT32 tensor");
    }
    const int64_t k = static_cast<int64_t>(env.data().size() / 4);
    const std::set<int32_t> mine(envs.begin() + start, envs.begin() + start + count);
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < k; ++i) {
      int32_t e;
      std::memcpy(&e, env.data().data() + 4 * i, 4);
      if (mine.count(e)) keep.push_back(i);
    }
    v1::ReportedContacts* out = part.mutable_contacts();
    *out->mutable_env() = Rows(c.env(), k, keep);
    *out->mutable_body() = Rows(c.body(), k, keep);
    *out->mutable_partner() = Rows(c.partner(), k, keep);
    *out->mutable_force() = Rows(c.force(), k, keep);
    if (c.has_friction()) *out->mutable_friction() = Rows(c.friction(), k, keep);
  }
  return part;
}

v1::ReadSensorsRequest ReadPart(const v1::ReadSensorsRequest& whole, const std::vector<int32_t>& envs, int start,
                                int count) {
  v1::ReadSensorsRequest part = whole;
  part.mutable_env_ids()->Assign(envs.begin() + start, envs.begin() + start + count);
  return part;
}

absl::Status AppendPart(v1::StepResponse part, bool first, v1::StepResponse* joined) {
  if (first) {
    *joined = std::move(part);
    return absl::OkStatus();
  }
  joined->mutable_env_ids()->Add(part.env_ids().begin(), part.env_ids().end());
  if (absl::Status s = AppendReadings(part.readings(), joined->mutable_readings()); !s.ok()) return s;
  if (part.has_contact_matrix()) {
    v1::GetContactMatrixResponse* m = joined->mutable_contact_matrix();
    m->mutable_env_ids()->Add(part.contact_matrix().env_ids().begin(), part.contact_matrix().env_ids().end());
    if (absl::Status s = AppendTensor(part.contact_matrix().normal(), m->mutable_normal(), "contact_matrix.normal");
        !s.ok())
      return s;
    if (part.contact_matrix().has_friction()) {
      if (absl::Status s =
              AppendTensor(part.contact_matrix().friction(), m->mutable_friction(), "contact_matrix.friction");
          !s.ok())
        return s;
    }
    if (part.contact_matrix().has_gradient()) {
      if (absl::Status s =
              AppendTensor(part.contact_matrix().gradient(), m->mutable_gradient(), "contact_matrix.gradient");
          !s.ok())
        return s;
    }
  }
  v1::StepTiming* t = joined->mutable_timing();
  t->set_decode_us(t->decode_us() + part.timing().decode_us());
  t->set_evaluate_us(t->evaluate_us() + part.timing().evaluate_us());
  t->set_encode_us(t->encode_us() + part.timing().encode_us());
  t->set_queue_us(t->queue_us() + part.timing().queue_us());
  joined->set_step(part.step());
  joined->set_sequence(part.sequence());
  return absl::OkStatus();
}

absl::Status AppendPart(v1::ReadSensorsResponse part, bool first, v1::ReadSensorsResponse* joined) {
  if (first) {
    *joined = std::move(part);
    return absl::OkStatus();
  }
  joined->mutable_env_ids()->Add(part.env_ids().begin(), part.env_ids().end());
  joined->set_step(part.step());
  return AppendReadings(part.readings(), joined->mutable_readings());
}

}  // namespace taxel::internal
