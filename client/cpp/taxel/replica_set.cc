#include "taxel/replica_set.h"

#include <netdb.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "taxel/placement.h"
#include <sys/socket.h>

namespace taxel {
namespace {

absl::Status StatusOf(const absl::Status& s) { return s; }
template <typename T>
absl::Status StatusOf(const absl::StatusOr<T>& s) {
  return s.status();
}

// "dns:///host:port" or "dns://authority/host:port" → its addresses as "a.b.c.d:port" / "[v6]:port".
absl::Status ResolveDns(const std::string& entry, const std::string& field, std::vector<std::string>* out) {
  absl::string_view rest = absl::StripPrefix(entry, "dns:");
  if (absl::ConsumePrefix(&rest, "//")) {
    const size_t slash = rest.find('/');
    rest = slash == absl::string_view::npos ? absl::string_view() : rest.substr(slash + 1);
  }
  std::string host;
  absl::string_view port;
  if (absl::ConsumePrefix(&rest, "[")) {
    const size_t close = rest.find("]:");
    if (close != absl::string_view::npos) host = std::string(rest.substr(0, close)), port = rest.substr(close + 2);
  } else if (const size_t colon = rest.rfind(':'); colon != absl::string_view::npos) {
    host = std::string(rest.substr(0, colon)), port = rest.substr(colon + 1);
  }
  int port_number = 0;
  if (host.empty() || !absl::SimpleAtoi(port, &port_number) || port_number < 1 || port_number > 65535 ||
      !std::all_of(port.begin(), port.end(), absl::ascii_isdigit)) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": expected host:port with a port in 1..65535, got '", rest, "'"));
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int e = getaddrinfo(host.c_str(), nullptr, &hints, &found); e != 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": cannot resolve '", host, "': ", gai_strerror(e)));
  }
  std::set<std::string> addresses;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char text[NI_MAXHOST];
    if (getnameinfo(a->ai_addr, a->ai_addrlen, text, sizeof(text), nullptr, 0, NI_NUMERICHOST) == 0) {
      addresses.insert(text);
    }
  }
  freeaddrinfo(found);
  for (const std::string& a : addresses) {
    out->push_back(absl::StrContains(a, ':') ? absl::StrCat("[", a, "]:", port_number)
                                             : absl::StrCat(a, ":", port_number));
  }
  return absl::OkStatus();
}

// The mesh ids a spec refers to (links' and assets' shapes).
std::vector<std::string> MeshIds(const v1::SceneSpec& spec) {
  std::vector<std::string> ids;
  auto add = [&](const auto& shapes) {
    for (const v1::Shape& s : shapes) {
      if (s.has_mesh()) ids.push_back(s.mesh().mesh_id());
    }
  };
  for (const v1::Entity& e : spec.entities()) {
    for (const v1::Link& l : e.links()) add(l.shapes());
    for (const auto& asset : e.assets()) {
      for (const auto& link_shapes : asset.link_shapes()) add(link_shapes.shapes());
    }
  }
  return ids;
}

bool SceneGone(const absl::Status& s) {
  return s.code() == absl::StatusCode::kNotFound && absl::StartsWith(s.message(), "scene:");
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ResolveTargets(const std::vector<std::string>& targets) {
  std::vector<std::string> out;
  for (size_t i = 0; i < targets.size(); ++i) {
    const std::string field = absl::StrCat("targets[", i, "]");
    if (targets[i].empty()) return absl::InvalidArgumentError(field + ": expected a non-empty target");
    if (!absl::StartsWith(targets[i], "dns:")) {
      out.push_back(targets[i]);
    } else if (absl::Status s = ResolveDns(targets[i], field, &out); !s.ok()) {
      return s;
    }
  }
  std::vector<std::string> unique;
  std::set<std::string> seen;
  for (std::string& t : out) {
    if (seen.insert(t).second) unique.push_back(std::move(t));
  }
  if (unique.empty()) return absl::InvalidArgumentError("targets: no replica to connect to");
  return unique;
}

absl::StatusOr<std::unique_ptr<ReplicaSetClient>> ReplicaSetClient::Connect(Options options) {
  auto targets = ResolveTargets(options.targets);
  if (!targets.ok()) return targets.status();
  std::unique_ptr<ReplicaSetClient> rs(new ReplicaSetClient(std::move(options)));
  rs->targets_ = *std::move(targets);
  for (const std::string& t : rs->targets_) {
    Client::Options o = rs->options_.client;
    o.target = t;
    auto client = Client::Connect(std::move(o));
    if (!client.ok()) return client.status();
    rs->by_target_[t] = *std::move(client);
  }
  if (absl::Status s = rs->Refresh(); !s.ok()) return s;
  if (rs->replica_ids().empty()) {
    return absl::UnavailableError(
        absl::StrCat("replica set: no replica answered GetServerInfo among ", absl::StrJoin(rs->targets_, ", ")));
  }
  return rs;
}

absl::Status ReplicaSetClient::Refresh() {
  std::map<std::string, std::string> seen;  // replica_id → target
  for (const std::string& t : targets_) {
    // wait_for_ready: a channel in reconnect backoff (its server was down a moment ago) would
    // fail at once otherwise.
    Client& c = *by_target_[t];
    grpc::ClientContext ctx;
    ctx.set_wait_for_ready(true);
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::microseconds(static_cast<int64_t>(options_.probe_timeout_seconds * 1e6)));
    if (!c.options().bearer_token.empty()) ctx.AddMetadata("authorization", "Bearer " + c.options().bearer_token);
    v1::ServerInfo info;
    const grpc::Status status = c.stub().GetServerInfo(&ctx, v1::GetServerInfoRequest(), &info);
    if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
        status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      continue;
    }
    if (!status.ok()) return FromGrpc(status);
    const std::string& id = info.replica_id();
    if (id.empty()) return absl::InvalidArgumentError(absl::StrCat("replica set: ", t, " reports no replica_id"));
    if (auto [it, added] = seen.emplace(id, t); !added) {
      return absl::InvalidArgumentError(absl::StrCat("replica set: targets ", it->second, " and ", t,
                                                     " both report replica_id '", id, "'; replica ids must be unique"));
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, t] : seen) clients_[id] = by_target_[t].get();
  for (const auto& [id, client] : clients_) live_[id] = seen.count(id) > 0;
  return absl::OkStatus();
}

std::vector<std::string> ReplicaSetClient::replica_ids() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> ids;
  for (const auto& [id, up] : live_) {
    if (up) ids.push_back(id);
  }
  return ids;
}

std::vector<std::string> ReplicaSetClient::Ranking(const std::string& scene) const {
  return RankReplicas(replica_ids(), options_.tenant, scene);
}

absl::StatusOr<std::string> ReplicaSetClient::ReplicaOf(const std::string& scene) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = home_.find(scene); it != home_.end()) return it->second;
  }
  const std::vector<std::string> ranking = Ranking(scene);
  if (ranking.empty()) return absl::UnavailableError("replica set: no live replica");
  return ranking.front();
}

Client* ReplicaSetClient::client(const std::string& replica_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = clients_.find(replica_id);
  return it == clients_.end() ? nullptr : it->second;
}

int ReplicaSetClient::recreations(const std::string& scene) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = recreations_.find(scene);
  return it == recreations_.end() ? 0 : it->second;
}

void ReplicaSetClient::MarkDown(const std::string& replica_id) {
  std::lock_guard<std::mutex> lock(mu_);
  live_[replica_id] = false;
}

absl::StatusOr<v1::UploadMeshResponse> ReplicaSetClient::UploadMesh(absl::Span<const double> vertices,
                                                                    absl::Span<const int32_t> triangles,
                                                                    const std::optional<v1::MeshGridOptions>& grid) {
  // Uploaded to the first live replica for its answer (validation, content id); other replicas
  // get it when a scene placed there needs it.
  for (const std::string& id : replica_ids()) {
    auto resp = client(id)->UploadMesh(vertices, triangles, grid);
    if (resp.status().code() == absl::StatusCode::kUnavailable) {
      MarkDown(id);
      continue;
    }
    if (!resp.ok()) return resp;
    std::lock_guard<std::mutex> lock(mu_);
    meshes_[resp->mesh_id()] = Mesh{{vertices.begin(), vertices.end()}, {triangles.begin(), triangles.end()}, grid};
    return resp;
  }
  return absl::UnavailableError("replica set: no live replica");
}

// CreateScene on one replica; a mesh it lacks but this client kept is uploaded, once.
absl::StatusOr<v1::SceneInfo> ReplicaSetClient::CreateOn(const std::string& replica_id, const v1::SceneSpec& spec) {
  Client* c = client(replica_id);
  auto info = c->CreateScene(spec);
  if (info.status().code() != absl::StatusCode::kNotFound || !absl::StrContains(info.status().message(), "mesh_id")) {
    return info;
  }
  std::vector<Mesh> needed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& id : MeshIds(spec)) {
      if (auto it = meshes_.find(id); it != meshes_.end()) needed.push_back(it->second);
    }
  }
  if (needed.empty()) return info;
  for (const Mesh& m : needed) {
    if (auto up = c->UploadMesh(m.vertices, m.triangles, m.grid); !up.ok()) return up.status();
  }
  return c->CreateScene(spec);
}

absl::StatusOr<v1::SceneInfo> ReplicaSetClient::CreateScene(const v1::SceneSpec& spec) {
  while (true) {
    const std::vector<std::string> ranking = Ranking(spec.name());
    if (ranking.empty()) return absl::UnavailableError("replica set: no live replica");
    auto info = CreateOn(ranking.front(), spec);
    if (info.status().code() == absl::StatusCode::kUnavailable) {
      MarkDown(ranking.front());
      continue;
    }
    if (info.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      home_[spec.name()] = ranking.front();
      if (options_.auto_recreate) specs_[spec.name()] = spec;
    }
    return info;
  }
}

bool ReplicaSetClient::Recover(const std::string& scene, const absl::Status& error) {
  if (!options_.auto_recreate) return false;
  v1::SceneSpec spec;
  std::string old_home;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = specs_.find(scene);
    auto home = home_.find(scene);
    if (it == specs_.end() || home == home_.end()) return false;
    spec = it->second;
    old_home = home->second;
  }
  std::vector<std::string> candidates;
  if (SceneGone(error)) {
    candidates = {old_home};  // the replica restarted: re-create in place
  } else if (error.code() == absl::StatusCode::kUnavailable) {
    MarkDown(old_home);
    candidates = Ranking(scene);
  } else {
    return false;
  }
  for (const std::string& id : candidates) {
    auto info = CreateOn(id, spec);
    if (info.status().code() == absl::StatusCode::kUnavailable) {
      MarkDown(id);
      continue;
    }
    if (!info.ok() && info.status().code() != absl::StatusCode::kAlreadyExists) return false;
    std::lock_guard<std::mutex> lock(mu_);
    home_[scene] = id;
    ++recreations_[scene];
    return true;
  }
  return false;
}

template <typename Fn>
auto ReplicaSetClient::Routed(const std::string& scene, Fn fn) -> decltype(fn(std::declval<Client&>())) {
  auto home = ReplicaOf(scene);
  if (!home.ok()) return home.status();
  auto result = fn(*client(*home));
  if (StatusOf(result).ok() || !Recover(scene, StatusOf(result))) return result;
  home = ReplicaOf(scene);
  if (!home.ok()) return home.status();
  return fn(*client(*home));
}

absl::StatusOr<v1::SceneInfo> ReplicaSetClient::GetScene(const std::string& scene) {
  bool known;
  {
    std::lock_guard<std::mutex> lock(mu_);
    known = home_.count(scene) > 0;
  }
  if (known) return Routed(scene, [&](Client& c) { return c.GetScene(scene); });
  for (const std::string& id : Ranking(scene)) {
    auto info = client(id)->GetScene(scene);
    if (info.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      home_[scene] = id;
      return info;
    }
    if (info.status().code() == absl::StatusCode::kUnavailable) MarkDown(id);
  }
  return absl::NotFoundError(absl::StrCat("scene: no scene named '", scene, "' on any live replica"));
}

absl::Status ReplicaSetClient::DeleteScene(const std::string& scene) {
  if (auto info = GetScene(scene); !info.ok()) return info.status();
  auto home = ReplicaOf(scene);
  if (!home.ok()) return home.status();
  absl::Status s = client(*home)->DeleteScene(scene);
  std::lock_guard<std::mutex> lock(mu_);
  home_.erase(scene);
  specs_.erase(scene);
  return s;
}

absl::StatusOr<v1::SensorInfo> ReplicaSetClient::AddSensor(const std::string& scene, const v1::SensorSpec& sensor) {
  auto info = Routed(scene, [&](Client& c) { return c.AddSensor(scene, sensor); });
  if (info.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = specs_.find(scene); it != specs_.end()) *it->second.add_sensors() = sensor;
  }
  return info;
}

absl::Status ReplicaSetClient::RemoveSensor(const std::string& scene, const std::string& sensor_name) {
  absl::Status s = Routed(scene, [&](Client& c) { return c.RemoveSensor(scene, sensor_name); });
  if (s.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = specs_.find(scene); it != specs_.end()) {
      auto* sensors = it->second.mutable_sensors();
      sensors->erase(std::remove_if(sensors->begin(), sensors->end(),
                                    [&](const v1::SensorSpec& x) { return x.name() == sensor_name; }),
                     sensors->end());
    }
  }
  return s;
}

absl::StatusOr<v1::StepResponse> ReplicaSetClient::Step(const v1::StepRequest& request) {
  return Routed(request.scene(), [&](Client& c) { return c.Step(request); });
}

absl::StatusOr<v1::ReadSensorsResponse> ReplicaSetClient::ReadSensors(const v1::ReadSensorsRequest& request) {
  return Routed(request.scene(), [&](Client& c) { return c.ReadSensors(request); });
}

absl::Status ReplicaSetClient::ResetEnvs(const std::string& scene, absl::Span<const int32_t> env_ids) {
  return Routed(scene, [&](Client& c) { return c.ResetEnvs(scene, env_ids); });
}

absl::StatusOr<v1::GetContactMatrixResponse> ReplicaSetClient::GetContactMatrix(
    const v1::GetContactMatrixRequest& request) {
  return Routed(request.scene(), [&](Client& c) { return c.GetContactMatrix(request); });
}

absl::StatusOr<std::unique_ptr<StepStream>> ReplicaSetClient::OpenStepStream(const std::string& scene) {
  auto home = ReplicaOf(scene);
  if (!home.ok()) return home.status();
  return client(*home)->OpenStepStream();
}

}  // namespace taxel
