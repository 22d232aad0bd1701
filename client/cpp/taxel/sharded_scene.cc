#include "taxel/sharded_scene.h"

#include <algorithm>
#include <cstring>
#include <future>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace taxel {
namespace {

// fn(k) for k in [0, n), k > 0 on their own threads and k = 0 on the caller's; results in order.
template <typename Fn>
auto Concurrently(size_t n, Fn fn) -> std::vector<decltype(fn(size_t{0}))> {
  using Result = decltype(fn(size_t{0}));
  std::vector<std::future<Result>> futures;
  for (size_t k = 1; k < n; ++k) futures.push_back(std::async(std::launch::async, fn, k));
  std::vector<Result> out;
  out.reserve(n);
  if (n > 0) out.push_back(fn(0));
  for (auto& f : futures) out.push_back(f.get());
  return out;
}

// Rows idx of a tensor whose first axis has `rows` × k entries (k = 1, or the L of a flat
// [E·L, w] pose array): the output keeps the shape with the first axis idx.size() × k.
void GatherRows(const v1::Tensor& in, size_t rows, const std::vector<int32_t>& idx, v1::Tensor* out) {
  out->set_dtype(in.dtype());
  *out->mutable_shape() = in.shape();
  const int64_t per_row = in.shape(0) / static_cast<int64_t>(rows);
  out->set_shape(0, per_row * static_cast<int64_t>(idx.size()));
  const size_t row_bytes = rows == 0 ? 0 : in.data().size() / rows;
  std::string* data = out->mutable_data();
  data->resize(row_bytes * idx.size());
  const bool contiguous = !idx.empty() && idx.back() - idx.front() + 1 == static_cast<int32_t>(idx.size()) &&
                          std::is_sorted(idx.begin(), idx.end());
  if (contiguous) {
    std::memcpy(data->data(), in.data().data() + row_bytes * idx.front(), row_bytes * idx.size());
    return;
  }
  for (size_t i = 0; i < idx.size(); ++i) {
    std::memcpy(data->data() + row_bytes * i, in.data().data() + row_bytes * idx[i], row_bytes);
  }
}

// The tensors of the parts (rows in the parts' order) put back at their positions among `total` rows.
absl::Status ScatterRows(const std::vector<v1::Tensor*>& parts, const std::vector<ShardedScene::Part>& route,
                         size_t total, absl::string_view what, v1::Tensor* out) {
  for (v1::Tensor* t : parts) {
    if (absl::Status s = ExpandTensor(t); !s.ok()) return s;
    if (t->shape_size() == 0 || t->dtype() != parts[0]->dtype() || t->shape_size() != parts[0]->shape_size()) {
      return absl::InternalError(absl::StrCat(what, ": the servers returned different tensor types or ranks"));
    }
  }
  out->set_dtype(parts[0]->dtype());
  *out->mutable_shape() = parts[0]->shape();
  out->set_shape(0, static_cast<int64_t>(total));
  const size_t rows0 = static_cast<size_t>(parts[0]->shape(0));
  const size_t row_bytes = rows0 == 0 ? 0 : parts[0]->data().size() / rows0;
  std::string* data = out->mutable_data();
  data->resize(row_bytes * total);
  for (size_t p = 0; p < parts.size(); ++p) {
    const std::vector<int32_t>& pos = route[p].positions;
    if (parts[p]->data().size() != row_bytes * pos.size()) {
      return absl::InternalError(absl::StrCat(what, ": server ", route[p].shard, " returned ", parts[p]->data().size(),
                                              " bytes for ", pos.size(), " envs"));
    }
    if (pos.back() - pos.front() + 1 == static_cast<int32_t>(pos.size()) && std::is_sorted(pos.begin(), pos.end())) {
      // A contiguous run (every step without env_ids): one copy.
      std::memcpy(data->data() + row_bytes * pos.front(), parts[p]->data().data(), row_bytes * pos.size());
      continue;
    }
    for (size_t i = 0; i < pos.size(); ++i) {
      std::memcpy(data->data() + row_bytes * pos[i], parts[p]->data().data() + row_bytes * i, row_bytes);
    }
  }
  return absl::OkStatus();
}

// Global env ids of the parts' rows, in the caller's order.
template <typename Ids>
std::vector<int32_t> MergeEnvIds(const std::vector<const Ids*>& ids, const std::vector<ShardedScene::Part>& route,
                                 const std::vector<EnvRange>& ranges, size_t total) {
  std::vector<int32_t> out(total, 0);
  for (size_t p = 0; p < route.size(); ++p) {
    const int32_t start = ranges[route[p].shard].start;
    for (size_t i = 0; i < route[p].positions.size() && i < static_cast<size_t>(ids[p]->size()); ++i) {
      out[route[p].positions[i]] = start + (*ids[p])[static_cast<int>(i)];
    }
  }
  return out;
}

using Readings = google::protobuf::RepeatedPtrField<v1::SensorReading>;

absl::Status MergeReadings(const std::vector<Readings*>& parts, const std::vector<ShardedScene::Part>& route,
                           size_t total, Readings* out) {
  for (Readings* r : parts) {
    if (r->size() != parts[0]->size()) return absl::InternalError("readings: the servers returned different sensors");
  }
  for (int i = 0; i < parts[0]->size(); ++i) {
    const v1::SensorReading& first = parts[0]->Get(i);
    v1::SensorReading* merged = out->Add();
    merged->set_sensor(first.sensor());
    merged->set_sensor_id(first.sensor_id());
    merged->set_branch(first.branch());
    for (const auto& entry : first.channels()) {
      const std::string& channel = entry.first;
      std::vector<v1::Tensor*> tensors;
      for (Readings* r : parts) {
        auto* channels = r->Mutable(i)->mutable_channels();
        auto it = channels->find(channel);
        if (r->Get(i).sensor() != first.sensor() || it == channels->end()) {
          return absl::InternalError(absl::StrCat("readings: the servers disagree on sensor ", first.sensor()));
        }
        tensors.push_back(&it->second);
      }
      v1::Tensor& t = (*merged->mutable_channels())[channel];
      if (absl::Status s = ScatterRows(tensors, route, total, absl::StrCat(first.sensor(), ".", channel), &t);
          !s.ok()) {
        return s;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status MergeMatrices(const std::vector<v1::GetContactMatrixResponse*>& parts,
                           const std::vector<ShardedScene::Part>& route, const std::vector<EnvRange>& ranges,
                           size_t total, v1::GetContactMatrixResponse* out) {
  std::vector<const google::protobuf::RepeatedField<int32_t>*> ids;
  std::vector<v1::Tensor*> normal, friction, gradient;
  // Asked before mutable_*() marks the fields present.
  const bool has_friction = parts[0]->has_friction(), has_gradient = parts[0]->has_gradient();
  for (auto* m : parts) {
    ids.push_back(&m->env_ids());
    normal.push_back(m->mutable_normal());
    friction.push_back(m->mutable_friction());
    gradient.push_back(m->mutable_gradient());
  }
  for (int32_t e : MergeEnvIds(ids, route, ranges, total)) out->add_env_ids(e);
  *out->mutable_rows() = parts[0]->rows();
  *out->mutable_columns() = parts[0]->columns();
  if (absl::Status s = ScatterRows(normal, route, total, "contact_matrix.normal", out->mutable_normal()); !s.ok()) {
    return s;
  }
  if (has_friction) {
    if (absl::Status s = ScatterRows(friction, route, total, "contact_matrix.friction", out->mutable_friction());
        !s.ok()) {
      return s;
    }
  }
  if (has_gradient) {
    return ScatterRows(gradient, route, total, "contact_matrix.gradient", out->mutable_gradient());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int32_t>> Int32Values(const v1::Tensor& t, size_t k, absl::string_view field) {
  if (t.dtype() != v1::INT32 || t.data().size() != k * sizeof(int32_t)) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": expected ", k, " INT32 values (one per contact)"));
  }
  std::vector<int32_t> v(k);
  if (k > 0) std::memcpy(v.data(), t.data().data(), k * sizeof(int32_t));
  return v;
}

// The reported contacts of each part, env ids made local; INVALID_ARGUMENT / OUT_OF_RANGE naming
// contacts.env[k] for a contact of an env the step does not update.
absl::Status SplitContacts(const v1::ReportedContacts& in, const std::vector<ShardedScene::Part>& route,
                           const std::vector<EnvRange>& ranges, std::vector<v1::StepRequest>* requests) {
  const v1::Tensor& force = in.force();
  if (force.shape_size() != 2 || force.shape(1) != 3) {
    return absl::InvalidArgumentError("contacts.force: expected shape [K, 3]");
  }
  const size_t k = static_cast<size_t>(force.shape(0));
  auto env = Int32Values(in.env(), k, "contacts.env");
  if (!env.ok()) return env.status();
  for (const auto& [t, field] :
       {std::make_pair(&in.body(), "contacts.body"), std::make_pair(&in.partner(), "contacts.partner"),
        std::make_pair(&in.friction(), "contacts.friction")}) {
    if (t == &in.friction() && !in.has_friction()) continue;
    if (t->shape_size() == 0 || t->shape(0) != static_cast<int64_t>(k)) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": expected ", k, " rows (one per contact)"));
    }
  }
  // Part of each stepped global env.
  std::vector<std::pair<int32_t, std::pair<int, int32_t>>> stepped;  // (global env, (part, local env))
  for (size_t p = 0; p < route.size(); ++p) {
    const EnvRange& r = ranges[route[p].shard];
    if (route[p].local.empty()) {
      for (int32_t l = 0; l < r.count; ++l) stepped.push_back({r.start + l, {static_cast<int>(p), l}});
    } else {
      for (int32_t l : route[p].local) stepped.push_back({r.start + l, {static_cast<int>(p), l}});
    }
  }
  std::sort(stepped.begin(), stepped.end());
  std::vector<std::vector<int32_t>> rows(route.size()), local_env(route.size());
  for (size_t i = 0; i < k; ++i) {
    auto it = std::lower_bound(stepped.begin(), stepped.end(), std::make_pair((*env)[i], std::make_pair(-1, -1)));
    if (it == stepped.end() || it->first != (*env)[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat("contacts.env[", i, "]: env ", (*env)[i], " is not one of the envs this step updates"));
    }
    rows[it->second.first].push_back(static_cast<int32_t>(i));
    local_env[it->second.first].push_back(it->second.second);
  }
  for (size_t p = 0; p < route.size(); ++p) {
    if (rows[p].empty()) continue;
    v1::ReportedContacts* out = (*requests)[p].mutable_contacts();
    *out->mutable_env() = Int32Tensor({static_cast<int64_t>(rows[p].size())}, local_env[p]);
    GatherRows(in.body(), k, rows[p], out->mutable_body());
    GatherRows(in.partner(), k, rows[p], out->mutable_partner());
    GatherRows(force, k, rows[p], out->mutable_force());
    if (in.has_friction()) GatherRows(in.friction(), k, rows[p], out->mutable_friction());
  }
  return absl::OkStatus();
}

// A tensor's first axis holds `total` envs ([E, ...]) or total × links rows (flat [E·L, w]).
absl::Status CheckEnvAxis(const v1::Tensor& t, size_t total, int links, absl::string_view field) {
  const bool per_env = t.shape_size() >= 1 && t.shape(0) == static_cast<int64_t>(total);
  const bool flat = t.shape_size() == 2 && t.shape(0) == static_cast<int64_t>(total) * links;
  if (!t.nonzero_mask().empty()) return absl::InvalidArgumentError(absl::StrCat(field, ": expected a dense tensor"));
  if (per_env || flat) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, ": expected ", total, " envs on the first axis ([E, ", links,
                                                 ", w] or [E·", links, ", w]), got shape [",
                                                 absl::StrJoin(t.shape(), ", "), "]"));
}

}  // namespace

absl::StatusOr<std::vector<EnvRange>> SplitEnvs(int32_t num_envs, int num_shards) {
  if (num_shards < 1 || num_shards > num_envs) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_shards: expected 1..num_envs (", num_envs, ") shards, got ", num_shards));
  }
  std::vector<EnvRange> out;
  int32_t start = 0;
  for (int i = 0; i < num_shards; ++i) {
    const int32_t count = num_envs / num_shards + (i < num_envs % num_shards ? 1 : 0);
    out.push_back({start, count});
    start += count;
  }
  return out;
}

absl::StatusOr<std::unique_ptr<ShardedScene>> ShardedScene::Create(std::vector<Client*> clients,
                                                                   const v1::SceneSpec& spec) {
  auto ranges = SplitEnvs(spec.num_envs(), static_cast<int>(clients.size()));
  if (!ranges.ok()) return ranges.status();
  std::unique_ptr<ShardedScene> scene(new ShardedScene());
  scene->name_ = spec.name();
  scene->num_envs_ = spec.num_envs();
  scene->ranges_ = *ranges;
  for (size_t i = 0; i < clients.size(); ++i) {
    const EnvRange& r = (*ranges)[i];
    v1::SceneSpec sub = spec;
    sub.set_num_envs(r.count);
    sub.set_env_offset(spec.env_offset() + r.start);
    for (v1::Entity& e : *sub.mutable_entities()) {
      if (e.env_assets_size() != spec.num_envs()) continue;  // absent, or wrong: the server says which
      std::vector<int32_t> slice(e.env_assets().begin() + r.start, e.env_assets().begin() + r.start + r.count);
      e.mutable_env_assets()->Assign(slice.begin(), slice.end());
    }
    auto info = clients[i]->CreateScene(sub);
    if (!info.ok()) {
      for (Client* c : scene->clients_) c->DeleteScene(scene->name_).IgnoreError();
      return info.status();
    }
    scene->num_moving_links_ = info->moving_links_size();
    scene->clients_.push_back(clients[i]);
  }
  return scene;
}

absl::StatusOr<std::vector<ShardedScene::Part>> ShardedScene::Route(absl::Span<const int32_t> env_ids) const {
  std::vector<Part> parts;
  if (env_ids.empty()) {
    for (size_t s = 0; s < ranges_.size(); ++s) {
      Part p;
      p.shard = static_cast<int>(s);
      for (int32_t e = 0; e < ranges_[s].count; ++e) p.positions.push_back(ranges_[s].start + e);
      parts.push_back(std::move(p));
    }
    return parts;
  }
  std::vector<int> part_of_shard(ranges_.size(), -1);
  std::vector<uint8_t> seen(num_envs_, 0);
  for (size_t i = 0; i < env_ids.size(); ++i) {
    const int32_t e = env_ids[i];
    if (e < 0 || e >= num_envs_) {
      return absl::OutOfRangeError(absl::StrCat("env_ids[", i, "]: env id ", e, " out of range [0, ", num_envs_, ")"));
    }
    if (seen[e])
      return absl::InvalidArgumentError(absl::StrCat("env_ids[", i, "]: env id ", e, " appears more than once"));
    seen[e] = 1;
    // The last range starting at or before e.
    const size_t s =
        std::upper_bound(ranges_.begin(), ranges_.end(), e, [](int32_t v, const EnvRange& r) { return v < r.start; }) -
        ranges_.begin() - 1;
    if (part_of_shard[s] < 0) {
      part_of_shard[s] = static_cast<int>(parts.size());
      parts.push_back({static_cast<int>(s), {}, {}});
    }
    Part& p = parts[part_of_shard[s]];
    p.positions.push_back(static_cast<int32_t>(i));
    p.local.push_back(e - ranges_[s].start);
  }
  std::sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return a.shard < b.shard; });
  return parts;
}

absl::StatusOr<std::vector<v1::StepRequest>> ShardedScene::SplitStep(const v1::StepRequest& request,
                                                                     const std::vector<Part>& parts) const {
  const size_t total = request.env_ids().empty() ? static_cast<size_t>(num_envs_) : request.env_ids().size();
  if (absl::Status s = CheckEnvAxis(request.poses(), total, num_moving_links_, "poses"); !s.ok()) return s;
  const bool twists = request.has_twists();
  if (twists) {
    if (absl::Status s = CheckEnvAxis(request.twists(), total, num_moving_links_, "twists"); !s.ok()) return s;
  }
  std::vector<v1::StepRequest> out(parts.size());
  for (size_t p = 0; p < parts.size(); ++p) {
    v1::StepRequest& r = out[p];
    r.set_scene(name_);
    r.set_quat_order(request.quat_order());
    r.set_dt(request.dt());
    *r.mutable_read() = request.read();
    r.mutable_env_ids()->Assign(parts[p].local.begin(), parts[p].local.end());
    GatherRows(request.poses(), total, parts[p].positions, r.mutable_poses());
    if (twists) GatherRows(request.twists(), total, parts[p].positions, r.mutable_twists());
  }
  if (request.has_contacts()) {
    if (absl::Status s = SplitContacts(request.contacts(), parts, ranges_, &out); !s.ok()) return s;
  }
  return out;
}

absl::StatusOr<v1::StepResponse> ShardedScene::MergeStep(std::vector<absl::StatusOr<v1::StepResponse>> results,
                                                         const std::vector<Part>& parts, size_t total,
                                                         uint64_t sequence) {
  for (auto& r : results) {
    if (!r.ok()) return r.status();
  }
  ++steps_;
  v1::StepResponse out;
  out.set_scene(name_);
  out.set_sequence(sequence);
  out.set_step(steps_);
  std::vector<const google::protobuf::RepeatedField<int32_t>*> ids;
  std::vector<Readings*> readings;
  std::vector<v1::GetContactMatrixResponse*> matrices;
  double slowest = -1;
  for (auto& r : results) {
    ids.push_back(&r->env_ids());
    readings.push_back(r->mutable_readings());
    matrices.push_back(r->mutable_contact_matrix());
    const auto& t = r->timing();
    const double sum = t.decode_us() + t.evaluate_us() + t.encode_us() + t.queue_us();
    if (sum > slowest) {
      slowest = sum;
      *out.mutable_timing() = t;
    }
  }
  for (int32_t e : MergeEnvIds(ids, parts, ranges_, total)) out.add_env_ids(e);
  if (absl::Status s = MergeReadings(readings, parts, total, out.mutable_readings()); !s.ok()) return s;
  // (A stream's response may carry an empty matrix message when the read asked for none.)
  if (results[0]->has_contact_matrix() && results[0]->contact_matrix().has_normal()) {
    if (absl::Status s = MergeMatrices(matrices, parts, ranges_, total, out.mutable_contact_matrix()); !s.ok()) {
      return s;
    }
  }
  return out;
}

absl::StatusOr<v1::StepResponse> ShardedScene::Step(const v1::StepRequest& request) {
  auto parts = Route(request.env_ids());
  if (!parts.ok()) return parts.status();
  auto requests = SplitStep(request, *parts);
  if (!requests.ok()) return requests.status();
  auto results =
      Concurrently(parts->size(), [&](size_t p) { return clients_[(*parts)[p].shard]->Step((*requests)[p]); });
  const size_t total = request.env_ids().empty() ? static_cast<size_t>(num_envs_) : request.env_ids().size();
  return MergeStep(std::move(results), *parts, total, request.sequence());
}

absl::StatusOr<v1::ReadSensorsResponse> ShardedScene::ReadSensors(const v1::ReadSensorsRequest& request) {
  auto parts = Route(request.env_ids());
  if (!parts.ok()) return parts.status();
  auto results = Concurrently(parts->size(), [&](size_t p) {
    v1::ReadSensorsRequest r = request;
    r.set_scene(name_);
    r.mutable_env_ids()->Assign((*parts)[p].local.begin(), (*parts)[p].local.end());
    return clients_[(*parts)[p].shard]->ReadSensors(r);
  });
  std::vector<const google::protobuf::RepeatedField<int32_t>*> ids;
  std::vector<Readings*> readings;
  for (auto& r : results) {
    if (!r.ok()) return r.status();
    ids.push_back(&r->env_ids());
    readings.push_back(r->mutable_readings());
  }
  const size_t total = request.env_ids().empty() ? static_cast<size_t>(num_envs_) : request.env_ids().size();
  v1::ReadSensorsResponse out;
  out.set_step(steps_);
  for (int32_t e : MergeEnvIds(ids, *parts, ranges_, total)) out.add_env_ids(e);
  if (absl::Status s = MergeReadings(readings, *parts, total, out.mutable_readings()); !s.ok()) return s;
  return out;
}

absl::Status ShardedScene::ResetEnvs(absl::Span<const int32_t> env_ids) {
  auto parts = Route(env_ids);
  if (!parts.ok()) return parts.status();
  auto results = Concurrently(
      parts->size(), [&](size_t p) { return clients_[(*parts)[p].shard]->ResetEnvs(name_, (*parts)[p].local); });
  for (const absl::Status& s : results) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::GetContactMatrixResponse> ShardedScene::GetContactMatrix(
    const v1::GetContactMatrixRequest& request) {
  auto parts = Route(request.env_ids());
  if (!parts.ok()) return parts.status();
  auto results = Concurrently(parts->size(), [&](size_t p) {
    v1::GetContactMatrixRequest r = request;
    r.set_scene(name_);
    r.mutable_env_ids()->Assign((*parts)[p].local.begin(), (*parts)[p].local.end());
    return clients_[(*parts)[p].shard]->GetContactMatrix(r);
  });
  std::vector<v1::GetContactMatrixResponse*> matrices;
  for (auto& r : results) {
    if (!r.ok()) return r.status();
    matrices.push_back(&*r);
  }
  const size_t total = request.env_ids().empty() ? static_cast<size_t>(num_envs_) : request.env_ids().size();
  v1::GetContactMatrixResponse out;
  if (absl::Status s = MergeMatrices(matrices, *parts, ranges_, total, &out); !s.ok()) return s;
  return out;
}

absl::Status ShardedScene::Delete() {
  auto results = Concurrently(clients_.size(), [&](size_t s) { return clients_[s]->DeleteScene(name_); });
  for (const absl::Status& s : results) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

std::unique_ptr<ShardedStepStream> ShardedScene::OpenStepStream() {
  std::unique_ptr<ShardedStepStream> stream(new ShardedStepStream(this));
  for (Client* c : clients_) stream->streams_.push_back(c->OpenStepStream());
  return stream;
}

absl::StatusOr<v1::StepResponse> ShardedStepStream::Step(const v1::StepRequest& request) {
  ShardedScene& sc = *scene_;
  auto parts = sc.Route(request.env_ids());
  if (!parts.ok()) return parts.status();
  auto requests = sc.SplitStep(request, *parts);
  if (!requests.ok()) return requests.status();
  auto results = Concurrently(parts->size(),
                              [&](size_t p) { return streams_[(*parts)[p].shard]->Step(std::move((*requests)[p])); });
  const size_t total = request.env_ids().empty() ? static_cast<size_t>(sc.num_envs_) : request.env_ids().size();
  return sc.MergeStep(std::move(results), *parts, total, ++sequence_);
}

absl::Status ShardedStepStream::Close() {
  absl::Status first;
  for (auto& s : streams_) {
    absl::Status st = s->Close();
    if (first.ok() && !st.ok()) first = st;
  }
  return first;
}

}  // namespace taxel
