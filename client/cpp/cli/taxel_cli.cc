// taxel-cli: inspect and script a Taxel server.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "taxel/client.h"
#include "taxel/mesh_io.h"
#include "taxel/png.h"
#include "taxel/scene_bundle.h"
#include "taxel/version.h"
#ifdef TAXEL_HAVE_MUJOCO
#include "taxel/model_import.h"
#endif

namespace {

namespace v1 = taxel::v1;

constexpr char kUsage[] = R"(taxel-cli: inspect and script a Taxel server.

Usage: taxel-cli [--target=HOST:PORT|unix:PATH] [--timeout=SECONDS] [--token=TOKEN] COMMAND [ARGS]

Commands:
  info                              server version, limits and capabilities
  upload-mesh FILE.obj|FILE.stl     upload a mesh; prints its content id
  import FILE [--entity NAME] [--bodies GLOB]... [--groups G,...] [--num_envs N] [--scene NAME]
         [--ellipsoid_frequency F]  compile an MJCF or URDF file with MuJoCo and print a scene
                                    bundle (JSON: the SceneSpec + its meshes) on stdout; no server
  create-scene SPEC                 create a scene from a SceneSpec file (.json or .textproto/.pbtxt)
                                    or a scene bundle (.json, from import: uploads its meshes);
                                    in JSON a tensor's "data" may be a list of numbers:
                                    {"dtype": "FLOAT64", "data": [[0, 0, 0], [0.01, 0, 0]]}
  scenes                            list scenes
  get SCENE                         print a scene's info (links, sensors, output shapes)
  step SCENE POSES --quat_order=xyzw|wxyz [--dt=S]
                                    one step with the first line of POSES; prints readings summary
  replay SCENE POSES --quat_order=xyzw|wxyz [--dt=S] [--stream]
                                    one step per line of POSES; prints a summary per step
  read SCENE [--sensor=NAME] [--channel=NAME] [--env=E] [--ground_truth] [--png=FILE]
                                    print the latest readings of env E (default 0); --png writes
                                    a heatmap with a colour scale of each grid channel read
                                    (|value| per taxel): FILE itself when one channel is read,
                                    else FILE's stem + ".SENSOR.CHANNEL.png" per channel
  version                           this client's version (also --version)
  reset SCENE [ENV...]              reset envs (all when none given)
  delete SCENE                      delete a scene
  delete-mesh MESH_ID               forget an uploaded mesh (refused while a scene uses it)

POSES files hold one step per line: E*L*7 numbers (position, quaternion) separated by spaces
or commas, in the order of the scene's moving links (see `get`). Lines starting with # are skipped.
Default target: 127.0.0.1:50051 (or $TAXEL_TARGET).
)";

struct Args {
  std::map<std::string, std::string> flags;                    // --name=value / --name (the last one wins)
  std::vector<std::pair<std::string, std::string>> all_flags;  // every --name=value, in order
  std::vector<std::string> positional;
  std::vector<std::string> All(const std::string& name) const {
    std::vector<std::string> out;
    for (const auto& [n, v] : all_flags) {
      if (n == name) out.push_back(v);
    }
    return out;
  }
  std::string Flag(const std::string& name, const std::string& def = "") const {
    auto it = flags.find(name);
    return it == flags.end() ? def : it->second;
  }
  bool Has(const std::string& name) const { return flags.count(name) > 0; }
};

// Flags of `import` that also take their value as the next argument (`--bodies 'hand/*'`).
bool TakesValue(const std::string& name) {
  return name == "entity" || name == "bodies" || name == "groups" || name == "num_envs" || name == "scene" ||
         name == "ellipsoid_frequency";
}

Args ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (absl::StartsWith(s, "--")) {
      const size_t eq = s.find('=');
      std::string name = s.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      std::string value = eq == std::string::npos ? "" : s.substr(eq + 1);
      if (eq == std::string::npos && TakesValue(name) && i + 1 < argc) value = argv[++i];
      a.flags[name] = value;
      a.all_flags.emplace_back(name, value);
    } else {
      a.positional.push_back(s);
    }
  }
  return a;
}

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "taxel-cli: %s: %s\n", absl::StatusCodeToString(s.code()).c_str(),
               std::string(s.message()).c_str());
  return 1;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "taxel-cli: %s\n", message.c_str());
  return 2;
}

std::string Text(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::TextFormat::Printer printer;
  printer.SetUseShortRepeatedPrimitives(true);
  printer.SetTruncateStringFieldLongerThan(64);
  printer.PrintToString(m, &out);
  return out;
}

absl::StatusOr<std::vector<std::vector<double>>> ReadPoses(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::vector<std::vector<double>> steps;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const absl::string_view t = absl::StripAsciiWhitespace(line);
    if (t.empty() || t[0] == '#') continue;
    std::vector<double> values;
    for (absl::string_view tok : absl::StrSplit(t, absl::ByAnyChar(" ,\t"), absl::SkipEmpty())) {
      double v;
      if (!absl::SimpleAtod(tok, &v)) {
        return absl::InvalidArgumentError(absl::StrCat(path, ":", line_no, ": not a number: '", tok, "'"));
      }
      values.push_back(v);
    }
    steps.push_back(std::move(values));
  }
  if (steps.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no poses"));
  return steps;
}

// Channels with 3 values per probe (the last axis); the others have one.
bool IsVectorChannel(const std::string& channel) {
  return channel == "normal" || channel == "force" || channel == "torque" || channel == "displacement";
}

// The unit of a channel's values (docs/reference.md, "Readings"); "" for flags, ids and unit vectors.
std::string ChannelUnit(const std::string& channel) {
  if (channel == "force") return "N";
  if (channel == "torque") return "N m";
  if (channel == "depth" || channel == "displacement") return "m";
  if (channel == "area") return "m2";
  return "";
}

// Largest |value| (vector norm for 3-channel tensors) of every channel of every reading.
void PrintSummary(const v1::StepResponse& r) {
  std::printf("step %lld  (decode %.0f us, evaluate %.0f us, encode %.0f us)\n", static_cast<long long>(r.step()),
              r.timing().decode_us(), r.timing().evaluate_us(), r.timing().encode_us());
  for (const auto& reading : r.readings()) {
    std::vector<std::string> parts;
    std::map<std::string, const v1::Tensor*> sorted;
    for (const auto& [name, t] : reading.channels()) sorted[name] = &t;
    for (const auto& [name, t] : sorted) {
      if (t->dtype() == v1::FLOAT32) {
        const auto values = *taxel::FloatValues(*t);
        const bool vec = IsVectorChannel(name);
        double max_abs = 0;
        int active = 0;
        for (size_t k = 0; k < values.size(); k += vec ? 3 : 1) {
          const double v =
              vec ? std::sqrt(values[k] * values[k] + values[k + 1] * values[k + 1] + values[k + 2] * values[k + 2])
                  : std::abs(values[k]);
          max_abs = std::max(max_abs, v);
          active += v > 0;
        }
        parts.push_back(absl::StrCat(name, ": max ", max_abs, " (", active, " nonzero)"));
      } else if (t->dtype() == v1::BOOL) {
        int on = 0;
        for (char c : t->data()) on += c != 0;
        parts.push_back(absl::StrCat(name, ": ", on, " on"));
      }
    }
    std::printf("  %-20s %s\n", reading.sensor().c_str(), absl::StrJoin(parts, "; ").c_str());
  }
}

v1::QuatOrder ParseQuatOrder(const std::string& s) {
  const std::string l = absl::AsciiStrToLower(s);
  if (l == "xyzw") return v1::XYZW;
  if (l == "wxyz") return v1::WXYZ;
  return v1::QUAT_ORDER_UNSPECIFIED;
}

int Steps(taxel::Client& client, const Args& a, bool all) {
  if (a.positional.size() < 3) return Fail("usage: step|replay SCENE POSES");
  const std::string scene = a.positional[1];
  auto info = client.GetScene(scene);
  if (!info.ok()) return Fail(info.status());
  auto steps = ReadPoses(a.positional[2]);
  if (!steps.ok()) return Fail(steps.status());
  // No default: a quaternion read in the wrong order is a silently wrong pose.
  if (!a.Has("quat_order")) {
    return Fail("--quat_order is required: xyzw or wxyz, the order of the 4 quaternion numbers of each pose in POSES");
  }
  const v1::QuatOrder order = ParseQuatOrder(a.Flag("quat_order"));
  if (order == v1::QUAT_ORDER_UNSPECIFIED) return Fail("--quat_order must be xyzw or wxyz");
  double dt = 0.01;
  if (!absl::SimpleAtod(a.Flag("dt", "0.01"), &dt)) return Fail("--dt must be a number");
  const int64_t L = info->moving_links_size();
  std::unique_ptr<taxel::StepStream> stream;
  if (a.Has("stream")) stream = client.OpenStepStream();
  const size_t n = all ? steps->size() : 1;
  for (size_t i = 0; i < n; ++i) {
    const auto& values = (*steps)[i];
    v1::StepRequest req;
    req.set_scene(scene);
    req.set_quat_order(order);
    req.set_dt(dt);
    const int64_t per_env = L * 7;
    if (per_env == 0 || values.size() % per_env != 0) {
      return Fail(absl::StrCat("line ", i + 1, ": expected a multiple of ", per_env, " numbers (E x ", L,
                               " links x 7), got ", values.size()));
    }
    *req.mutable_poses() = taxel::DoubleTensor({static_cast<int64_t>(values.size()) / per_env, L, 7}, values);
    auto r = stream ? stream->Step(req) : client.Step(req);
    if (!r.ok()) return Fail(r.status());
    PrintSummary(*r);
  }
  if (stream) {
    if (auto s = stream->Close(); !s.ok()) return Fail(s);
  }
  return 0;
}

int Read(taxel::Client& client, const Args& a) {
  if (a.positional.size() < 2) return Fail("usage: read SCENE [--sensor=NAME] [--channel=NAME] [--env=E] [--png=FILE]");
  v1::ReadSensorsRequest req;
  req.set_scene(a.positional[1]);
  int env = 0;
  if (!absl::SimpleAtoi(a.Flag("env", "0"), &env)) return Fail("--env must be an integer");
  req.add_env_ids(env);
  if (a.Has("sensor")) req.mutable_read()->add_sensors(a.Flag("sensor"));
  if (a.Has("channel")) req.mutable_read()->add_channels(a.Flag("channel"));
  req.mutable_read()->add_branches(a.Has("ground_truth") ? v1::GROUND_TRUTH : v1::MEASURED);
  auto r = client.ReadSensors(req);
  if (!r.ok()) return Fail(r.status());
  std::printf("step %lld, env %d\n", static_cast<long long>(r->step()), env);
  struct Heatmap {
    std::string sensor, channel;
    int rows, cols;
    std::vector<float> mags;
  };
  std::vector<Heatmap> heatmaps;
  for (const auto& reading : r->readings()) {
    std::map<std::string, const v1::Tensor*> sorted;
    for (const auto& [name, t] : reading.channels()) sorted[name] = &t;
    for (const auto& [name, t] : sorted) {
      std::printf("%s.%s shape [%s]\n", reading.sensor().c_str(), name.c_str(),
                  absl::StrJoin(t->shape(), ", ").c_str());
      if (t->dtype() != v1::FLOAT32) continue;
      const auto values = *taxel::FloatValues(*t);
      const bool vec = IsVectorChannel(name);
      const int width = vec ? 3 : 1;
      // Grid: print rows of |value|.
      const bool grid = t->shape_size() == (vec ? 4 : 3);
      const int cols = grid ? static_cast<int>(t->shape(2)) : static_cast<int>(values.size() / width);
      const int rows = grid ? static_cast<int>(t->shape(1)) : 1;
      std::vector<float> mags(values.size() / width);
      for (size_t k = 0; k < mags.size(); ++k) {
        double s = 0;
        for (int c = 0; c < width; ++c) s += values[k * width + c] * values[k * width + c];
        mags[k] = static_cast<float>(std::sqrt(s));
      }
      for (int i = rows - 1; i >= 0; --i) {
        std::string row;
        for (int j = 0; j < cols; ++j) absl::StrAppend(&row, absl::StrFormat("%9.3g", mags[i * cols + j]));
        std::printf("%s\n", row.c_str());
      }
      if (grid) heatmaps.push_back({reading.sensor(), name, rows, cols, std::move(mags)});
    }
  }
  if (a.Has("png")) {
    const std::string path = a.Flag("png");
    if (heatmaps.empty()) return Fail("--png: no grid channel among the readings (read a sensor with a rows x cols layout)");
    // One channel: FILE. Several: FILE's stem + .SENSOR.CHANNEL.png each, so none overwrites another.
    const absl::string_view stem = absl::EndsWith(path, ".png") ? absl::string_view(path).substr(0, path.size() - 4)
                                                                 : absl::string_view(path);
    for (const Heatmap& h : heatmaps) {
      const std::string file = heatmaps.size() == 1 ? path : absl::StrCat(stem, ".", h.sensor, ".", h.channel, ".png");
      taxel::HeatmapOptions options;
      options.unit = ChannelUnit(h.channel);
      if (auto s = taxel::WriteHeatmapPng(file, h.rows, h.cols, h.mags, options); !s.ok()) return Fail(s);
      std::printf("wrote %s (%s.%s, %dx%d taxels)\n", file.c_str(), h.sensor.c_str(), h.channel.c_str(), h.rows,
                  h.cols);
    }
  }
  return 0;
}

#ifdef TAXEL_HAVE_MUJOCO
void MujocoWarning(const char* msg) { std::fprintf(stderr, "taxel-cli: MuJoCo: %s\n", msg); }
#endif

// `import`: no server involved; the bundle goes to stdout, notes and warnings to stderr.
int Import(const Args& a) {
  if (a.positional.size() != 2) {
    return Fail("usage: import FILE [--entity NAME] [--bodies GLOB]... [--groups G,...] [--num_envs N] [--scene NAME]");
  }
#ifdef TAXEL_HAVE_MUJOCO
  mju_user_warning = MujocoWarning;  // MuJoCo would print to stdout, into the JSON
  taxel::ImportOptions options;
  options.entity = a.Flag("entity");
  options.scene_name = a.Flag("scene");
  options.bodies = a.All("bodies");
  for (absl::string_view g : absl::StrSplit(a.Flag("groups"), ',', absl::SkipEmpty())) {
    int group;
    if (!absl::SimpleAtoi(g, &group)) return Fail(absl::StrCat("--groups: not an integer: '", g, "'"));
    options.groups.push_back(group);
  }
  if (!absl::SimpleAtoi(a.Flag("num_envs", "1"), &options.num_envs)) return Fail("--num_envs must be an integer");
  if (!absl::SimpleAtoi(a.Flag("ellipsoid_frequency", "4"), &options.ellipsoid_frequency)) {
    return Fail("--ellipsoid_frequency must be an integer");
  }
  auto imported = taxel::ImportModelFile(a.positional[1], options);
  if (!imported.ok()) return Fail(imported.status());
  for (const std::string& note : imported->notes) std::fprintf(stderr, "taxel-cli: import: %s\n", note.c_str());
  std::fputs(taxel::SceneBundleToJson(imported->bundle).c_str(), stdout);
  return 0;
#else
  return Fail("import: this taxel-cli was built without MuJoCo (Debian: libmujoco-dev)");
#endif
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = ParseArgs(argc, argv);
  if (a.Has("version") || (!a.positional.empty() && a.positional[0] == "version")) {
    std::printf("taxel-cli %s\n", taxel::kVersion);
    return 0;
  }
  if (a.positional.empty() || a.Has("help") || a.Has("h")) {
    std::fputs(kUsage, a.positional.empty() && !a.Has("help") && !a.Has("h") ? stderr : stdout);
    return a.positional.empty() && !a.Has("help") && !a.Has("h") ? 2 : 0;
  }
  if (a.positional[0] == "import") return Import(a);
  taxel::Client::Options options;
  const char* env_target = std::getenv("TAXEL_TARGET");
  options.target = a.Flag("target", env_target ? env_target : "127.0.0.1:50051");
  if (!absl::SimpleAtod(a.Flag("timeout", "60"), &options.timeout_seconds)) return Fail("--timeout must be a number");
  options.bearer_token = a.Flag("token");
  auto client_or = taxel::Client::Connect(options);
  if (!client_or.ok()) return Fail(client_or.status());
  taxel::Client& client = **client_or;
  const std::string& cmd = a.positional[0];

  if (cmd == "info") {
    auto r = client.GetServerInfo();
    if (!r.ok()) return Fail(r.status());
    std::fputs(Text(*r).c_str(), stdout);
    return 0;
  }
  if (cmd == "upload-mesh") {
    if (a.positional.size() < 2) return Fail("usage: upload-mesh FILE.obj|FILE.stl");
    auto mesh = taxel::ReadMeshFile(a.positional[1]);
    if (!mesh.ok()) return Fail(mesh.status());
    auto r = client.UploadMesh(mesh->vertices, mesh->triangles);
    if (!r.ok()) return Fail(r.status());
    std::printf("%s\n", r->mesh_id().c_str());
    std::fprintf(stderr, "%d vertices, %d triangles, watertight=%s%s\n", r->num_vertices(), r->num_triangles(),
                 r->watertight() ? "yes" : "no", r->newly_added() ? "" : " (already on the server)");
    return 0;
  }
  if (cmd == "create-scene") {
    if (a.positional.size() < 2) return Fail("usage: create-scene SPEC.json|SPEC.textproto");
    std::ifstream in(a.positional[1]);
    if (!in) return Fail(absl::StrCat("cannot open '", a.positional[1], "'"));
    std::stringstream ss;
    ss << in.rdbuf();
    taxel::SceneBundle bundle;
    if (absl::EndsWith(a.positional[1], ".json")) {
      // A bundle or a plain SceneSpec; tensors may give their data as plain lists of numbers
      // (taxel/spec_json.h). The message names the file and the JSON path.
      auto parsed = taxel::ParseSceneBundleJson(ss.str(), a.positional[1]);
      if (!parsed.ok()) return Fail(std::string(parsed.status().message()));
      bundle = *std::move(parsed);
    } else if (!google::protobuf::TextFormat::ParseFromString(ss.str(), &bundle.scene)) {
      return Fail(absl::StrCat(a.positional[1], ": not a valid text-format taxel.v1.SceneSpec"));
    }
    auto r = taxel::CreateSceneFromBundle(client, bundle);
    if (!r.ok()) return Fail(r.status());
    std::fputs(Text(*r).c_str(), stdout);
    return 0;
  }
  if (cmd == "scenes") {
    auto r = client.ListScenes();
    if (!r.ok()) return Fail(r.status());
    std::printf("%-24s %8s %8s %10s %12s\n", "NAME", "ENVS", "SENSORS", "STEP", "BYTES");
    for (const auto& s : r->scenes()) {
      std::printf("%-24s %8d %8d %10lld %12lld\n", s.name().c_str(), s.num_envs(), s.sensors_size(),
                  static_cast<long long>(s.step()), static_cast<long long>(s.memory_bytes()));
    }
    return 0;
  }
  if (cmd == "get") {
    if (a.positional.size() < 2) return Fail("usage: get SCENE");
    auto r = client.GetScene(a.positional[1]);
    if (!r.ok()) return Fail(r.status());
    std::fputs(Text(*r).c_str(), stdout);
    return 0;
  }
  if (cmd == "step") return Steps(client, a, false);
  if (cmd == "replay") return Steps(client, a, true);
  if (cmd == "read") return Read(client, a);
  if (cmd == "reset") {
    if (a.positional.size() < 2) return Fail("usage: reset SCENE [ENV...]");
    std::vector<int32_t> envs;
    for (size_t i = 2; i < a.positional.size(); ++i) {
      int32_t e;
      if (!absl::SimpleAtoi(a.positional[i], &e)) return Fail(absl::StrCat("not an env id: ", a.positional[i]));
      envs.push_back(e);
    }
    if (auto s = client.ResetEnvs(a.positional[1], envs); !s.ok()) return Fail(s);
    return 0;
  }
  if (cmd == "delete") {
    if (a.positional.size() < 2) return Fail("usage: delete SCENE");
    if (auto s = client.DeleteScene(a.positional[1]); !s.ok()) return Fail(s);
    return 0;
  }
  if (cmd == "delete-mesh") {
    if (a.positional.size() < 2) return Fail("usage: delete-mesh MESH_ID");
    if (auto s = client.DeleteMesh(a.positional[1]); !s.ok()) return Fail(s);
    return 0;
  }
  return Fail(absl::StrCat("unknown command '", cmd, "' (see taxel-cli --help)"));
}
