#include "server/viewer.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/common/field_error.h"
#include "core/sensors/sensor.h"
#include "server/codec.h"
#include "server/tokens.h"

namespace taxel::server {
namespace {

std::string JsonString(absl::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      absl::StrAppend(&out, "\\u00", absl::Hex(u, absl::kZeroPad2));
    } else {
      out += c;  // UTF-8 passes through
    }
  }
  return out + "\"";
}

// JSON has no NaN or infinity: such a value is written as null.
std::string JsonNumber(double v) { return std::isfinite(v) ? absl::StrFormat("%.9g", v) : "null"; }

HttpResponse JsonError(int status, absl::string_view parameter, absl::string_view message) {
  HttpResponse r;
  r.status = status;
  r.body = absl::StrCat("{\"error\":", JsonString(message), ",\"parameter\":", JsonString(parameter), "}\n");
  r.headers.emplace_back("Cache-Control", "no-store");
  if (status == 401) r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"taxel\"");
  return r;
}

HttpResponse Json(std::string body) {
  HttpResponse r;
  r.body = std::move(body);
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

// An absl::Status from a lookup as an HTTP error: its field (FieldError) is the parameter.
HttpResponse StatusToHttp(const absl::Status& s) {
  const int status = s.code() == absl::StatusCode::kNotFound ? 404 : 400;
  return JsonError(status, FieldOf(s).value_or(""), s.message());
}

// The query as a map, refusing names outside `allowed` and repeated names (the first error
// names the parameter).
absl::StatusOr<std::map<std::string, std::string>> CheckQuery(const HttpRequest& req,
                                                              const std::set<std::string>& allowed) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : req.query) {
    if (allowed.count(name) == 0) {
      return InvalidFieldError(name,
                               absl::StrCat("unknown query parameter; this path takes ", absl::StrJoin(allowed, ", ")));
    }
    if (!out.emplace(name, value).second) return InvalidFieldError(name, "given more than once");
  }
  return out;
}

struct FrameData {
  int64_t step = 0;
  int rows = 0, cols = 0;
  ViewerChannel channel{};
  std::vector<float> values;
};

// One env's values of one channel: |v| per probe for vector channels, else the value.
void CopyChannel(const sensors::Sensor& sensor, sensors::Branch branch, const ViewerChannel& c, int env,
                 std::vector<float>* out) {
  // The channel's array as a reading carries it (BOOL contact flags, FLOAT32 otherwise).
  const ChannelArray a = ChannelOutput(sensor, branch, c.channel);
  std::vector<char> block(a.bytes_per_env);
  const int32_t e = env;
  GatherEnvs(a, absl::MakeConstSpan(&e, 1), sensor.num_envs(), block.data());
  const char* env_data = block.data();
  const size_t n = static_cast<size_t>(sensor.num_probes());
  const int width = sensors::ChannelWidth(c.channel);
  out->resize(n);
  for (size_t k = 0; k < n; ++k) {
    if (a.dtype == v1::BOOL) {
      (*out)[k] = env_data[k] != 0 ? 1.0f : 0.0f;
      continue;
    }
    const float* v = reinterpret_cast<const float*>(env_data) + width * k;
    (*out)[k] = width == 3 ? std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) : v[0];
  }
}

// Everything of a frame request that can be checked without the scene.
struct FrameQuery {
  std::string scene, sensor, channel;
  int64_t env = 0;
  sensors::Branch branch = sensors::Branch::kMeasured;
};

absl::StatusOr<FrameQuery> ParseFrameQuery(const std::map<std::string, std::string>& params) {
  FrameQuery q;
  for (const char* name : {"scene", "sensor"}) {
    auto it = params.find(name);
    if (it == params.end() || it->second.empty()) return InvalidFieldError(name, "required");
  }
  q.scene = params.at("scene");
  q.sensor = params.at("sensor");
  if (auto it = params.find("env"); it != params.end() && !absl::SimpleAtoi(it->second, &q.env)) {
    return InvalidFieldError("env", absl::StrCat("'", it->second, "' is not an integer"));
  }
  if (auto it = params.find("channel"); it != params.end()) q.channel = it->second;
  if (auto it = params.find("branch"); it != params.end()) {
    if (it->second == "ground_truth") {
      q.branch = sensors::Branch::kGroundTruth;
    } else if (it->second != "measured") {
      return InvalidFieldError("branch", absl::StrCat("'", it->second, "' is not measured or ground_truth"));
    }
  }
  return q;
}

// Under the scene's lock: checks sensor, channel and env against the scene, then copies.
absl::Status ReadFrame(const scene::Scene& scene, const FrameQuery& q, FrameData* frame) {
  const sensors::Sensor* sensor = scene.FindSensor(q.sensor);
  if (sensor == nullptr) {
    return FieldError(absl::StatusCode::kNotFound, "sensor",
                      absl::StrCat("scene '", q.scene, "' has no sensor named '", q.sensor, "'"));
  }
  const std::vector<ViewerChannel> channels = ViewerChannels(*sensor);
  auto c = std::find_if(channels.begin(), channels.end(),
                        [&](const ViewerChannel& v) { return q.channel.empty() || v.name == q.channel; });
  if (c == channels.end()) {
    std::vector<absl::string_view> names;
    for (const ViewerChannel& v : channels) names.push_back(v.name);
    return InvalidFieldError("channel", absl::StrCat("sensor '", q.sensor, "' has no viewable channel '", q.channel,
                                                     "'; it has ", absl::StrJoin(names, ", ")));
  }
  if (q.env < 0 || q.env >= scene.num_envs()) {
    return FieldError(absl::StatusCode::kOutOfRange, "env",
                      absl::StrCat(q.env, " is out of range [0, ", scene.num_envs(), ")"));
  }
  frame->step = scene.step_count();
  frame->rows = sensor->layout().is_grid() ? sensor->layout().rows() : 1;
  frame->cols = sensor->layout().is_grid() ? sensor->layout().cols() : sensor->num_probes();
  frame->channel = *c;
  CopyChannel(*sensor, q.branch, *c, static_cast<int>(q.env), &frame->values);
  return absl::OkStatus();
}

std::string FrameJson(const FrameQuery& q, const FrameData& f) {
  float lo = 0, hi = 0;
  if (!f.values.empty()) {
    const auto [mn, mx] = std::minmax_element(f.values.begin(), f.values.end());
    lo = *mn, hi = *mx;
  }
  std::string out =
      absl::StrCat("{\"scene\":", JsonString(q.scene), ",\"sensor\":", JsonString(q.sensor), ",\"env\":", q.env,
                   ",\"channel\":", JsonString(f.channel.name), ",\"quantity\":", JsonString(f.channel.quantity),
                   ",\"unit\":", JsonString(f.channel.unit),
                   ",\"branch\":", q.branch == sensors::Branch::kMeasured ? "\"measured\"" : "\"ground_truth\"",
                   ",\"step\":", f.step, ",\"rows\":", f.rows, ",\"cols\":", f.cols, ",\"min\":", JsonNumber(lo),
                   ",\"max\":", JsonNumber(hi), ",\"values\":[");
  for (size_t i = 0; i < f.values.size(); ++i) absl::StrAppend(&out, i ? "," : "", JsonNumber(f.values[i]));
  return out + "]}\n";
}

std::string SensorJson(const scene::Scene& scene, const sensors::Sensor& s) {
  const bool grid = s.layout().is_grid();
  std::string out =
      absl::StrCat("{\"name\":", JsonString(s.spec().name), ",\"kind\":", JsonString(sensors::SensorKindName(s.kind())),
                   ",\"link\":", JsonString(scene.model().link(s.link()).name), ",\"probes\":", s.num_probes(),
                   ",\"rows\":", grid ? s.layout().rows() : 1, ",\"cols\":", grid ? s.layout().cols() : s.num_probes(),
                   ",\"grid\":", grid ? "true" : "false", ",\"channels\":[");
  const std::vector<ViewerChannel> channels = ViewerChannels(s);
  for (size_t i = 0; i < channels.size(); ++i) {
    absl::StrAppend(&out, i ? "," : "", "{\"name\":", JsonString(channels[i].name),
                    ",\"quantity\":", JsonString(channels[i].quantity), ",\"unit\":", JsonString(channels[i].unit),
                    "}");
  }
  return out + "]}";
}

HttpResponse PageResponse() {
  HttpResponse r;
  r.content_type = "text/html; charset=utf-8";
  r.body = std::string(ViewerPage());
  // The page runs only its own inline script and talks only to this origin.
  r.headers.emplace_back("Content-Security-Policy",
                         "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                         "connect-src 'self'; img-src 'self' data:");
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

}  // namespace

std::vector<ViewerChannel> ViewerChannels(const sensors::Sensor& sensor) {
  std::vector<ViewerChannel> out;
  for (const sensors::Channel c : sensor.channels()) {
    switch (c) {
      case sensors::Channel::kContact: out.push_back({c, "contact", "contact", ""}); break;
      case sensors::Channel::kDepth: out.push_back({c, "depth", "depth", "m"}); break;
      case sensors::Channel::kArea: out.push_back({c, "area", "area", "m²"}); break;
      case sensors::Channel::kForce: out.push_back({c, "force", "|force|", "N"}); break;
      case sensors::Channel::kTorque: out.push_back({c, "torque", "|torque|", "N·m"}); break;
      case sensors::Channel::kDisplacement: out.push_back({c, "displacement", "|displacement|", "m"}); break;
      case sensors::Channel::kNormal:
      case sensors::Channel::kPartner: break;
    }
  }
  return out;
}

HttpResponse Viewer::Handle(const HttpRequest& request) const {
  // Authentication first, whatever the path: without a valid token nothing else is revealed.
  std::string tenant;
  if (!tokens_.empty()) {
    // The header, or the page's ?token= sent the same way.
    std::string authorization;
    if (auto h = request.headers.find("authorization"); h != request.headers.end()) {
      authorization = h->second;
    } else {
      for (const auto& [name, value] : request.query) {
        if (name == "token" && !value.empty()) authorization = "Bearer " + value;
      }
    }
    if (authorization.empty()) {
      return JsonError(401, "authorization",
                       "this server needs a token: send 'Authorization: Bearer <token>' or open /?token=<token>");
    }
    absl::StatusOr<std::string> t = TenantOfBearer(tokens_, authorization);
    if (!t.ok()) return JsonError(401, "authorization", std::string(t.status().message()));
    tenant = *std::move(t);
  }
  if (request.path == "/" || request.path == "/index.html") {
    auto params = CheckQuery(request, {"token", "scene", "sensor", "env", "channel", "branch"});
    return params.ok() ? PageResponse() : StatusToHttp(params.status());
  }
  if (request.path == "/api/scenes") {
    auto params = CheckQuery(request, {"token"});
    return params.ok() ? Scenes(tenant) : StatusToHttp(params.status());
  }
  if (request.path == "/api/frame") {
    auto params = CheckQuery(request, {"token", "scene", "sensor", "env", "channel", "branch"});
    return params.ok() ? Frame(tenant, *params) : StatusToHttp(params.status());
  }
  return JsonError(404, "path", absl::StrCat("no such path '", request.path, "'; try /, /api/scenes, /api/frame"));
}

HttpResponse Viewer::Scenes(const std::string& tenant) const {
  std::string out = "{\"scenes\":[";
  bool first = true;
  registry_->ForEachScene(tenant, [&](const SceneEntry& entry) {
    const scene::Scene& scene = entry.scene();
    absl::StrAppend(&out, first ? "" : ",", "{\"name\":", JsonString(entry.name()), ",\"num_envs\":", scene.num_envs(),
                    ",\"step\":", scene.step_count(), ",\"sensors\":[");
    first = false;
    const std::vector<const sensors::Sensor*> sensors = scene.sensors();
    for (size_t i = 0; i < sensors.size(); ++i) absl::StrAppend(&out, i ? "," : "", SensorJson(scene, *sensors[i]));
    out += "]}";
  });
  return Json(out + "]}\n");
}

HttpResponse Viewer::Frame(const std::string& tenant, const std::map<std::string, std::string>& params) const {
  absl::StatusOr<FrameQuery> q = ParseFrameQuery(params);
  if (!q.ok()) return StatusToHttp(q.status());
  FrameData frame;
  const absl::Status read =
      registry_->WithScene(tenant, q->scene, [&](SceneEntry& entry) { return ReadFrame(entry.scene(), *q, &frame); });
  // The registry's NOT_FOUND names "scene", ReadFrame's "sensor"/"channel"/"env".
  if (!read.ok()) return StatusToHttp(read);
  return Json(FrameJson(*q, frame));
}

}  // namespace taxel::server
