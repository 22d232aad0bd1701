// Writes the committed seed corpora and dictionaries of the fuzz targets:
//
//   taxel_fuzz_seeds <fuzz dir>   →   <fuzz dir>/corpus/<target>/<seed>, <fuzz dir>/dict/<target>.dict
//
// Seeds are serialised valid requests (what the C++ client would send), built from the same
// fixtures the targets use, so that the step seeds match the fixed scene's shapes and names and
// the mesh ids are the real content ids. A dictionary holds the wire tags of every field reachable
// from the target's message, the enum numbers, the names the fixtures use, and the byte patterns
// of boundary doubles and floats (for tensor data).
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/common/status_macros.h"
#include "fuzz/fuzz_support.h"
#include "fuzz/session.pb.h"

namespace taxel::fuzz {
namespace {

namespace fs = std::filesystem;
using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// ------------------------------------------------------------------------------------------
// Seeds.

v1::StepRequest Step(double phase) {
  v1::StepRequest step;
  step.set_scene("fixed");
  step.set_sequence(static_cast<uint64_t>(phase * 10));
  step.set_quat_order(v1::XYZW);
  step.set_dt(0.01);
  server::EncodeDoubles({kFixedEnvs, kFixedMovingLinks, 7}, FixedPoses(kFixedEnvs, phase), step.mutable_poses());
  return step;
}

// The same poses as FLOAT32, for env 1 only.
v1::Tensor Float32Poses(int env, double phase) {
  const std::vector<double> all = FixedPoses(kFixedEnvs, phase);
  std::vector<float> one(all.begin() + env * kFixedMovingLinks * 7, all.begin() + (env + 1) * kFixedMovingLinks * 7);
  v1::Tensor t;
  server::EncodeTensor(v1::FLOAT32, {1, kFixedMovingLinks, 7}, one.data(), one.size() * sizeof(float), &t);
  return t;
}

std::vector<v1::StepRequest> StepSeeds() {
  std::vector<v1::StepRequest> out;
  out.push_back(Step(0));  // all envs, dense, measured
  {
    v1::StepRequest s = Step(1);
    s.add_env_ids(1);
    *s.mutable_poses() = Float32Poses(1, 1);
    s.mutable_read()->add_sensors("kin");
    s.mutable_read()->add_sensors("gel");
    s.mutable_read()->add_branches(v1::MEASURED);
    s.mutable_read()->add_branches(v1::GROUND_TRUTH);
    s.mutable_read()->set_sparse(true);
    out.push_back(s);
  }
  {
    v1::StepRequest s = Step(2);
    std::vector<double> twists;
    for (int i = 0; i < kFixedEnvs * kFixedMovingLinks; ++i) twists.insert(twists.end(), {0, 0, -0.1, 0, 0, 0.5});
    server::EncodeDoubles({kFixedEnvs, kFixedMovingLinks, 6}, twists, s.mutable_twists());
    s.mutable_read()->set_contact_matrix(true);
    s.mutable_read()->add_channels("force");
    s.mutable_read()->add_channels("depth");
    out.push_back(s);
  }
  {
    v1::StepRequest s = Step(3);
    s.mutable_poses()->clear_shape();
    s.mutable_poses()->add_shape(kFixedEnvs * kFixedMovingLinks);
    s.mutable_poses()->add_shape(7);
    s.mutable_read()->set_none(true);
    out.push_back(s);
  }
  {
    // WXYZ: the identity quaternion moves to the front.
    v1::StepRequest s = Step(4);
    std::vector<double> poses = FixedPoses(kFixedEnvs, 4);
    for (size_t i = 0; i < poses.size(); i += 7) std::swap(poses[i + 3], poses[i + 6]);
    server::EncodeDoubles({kFixedEnvs, kFixedMovingLinks, 7}, poses, s.mutable_poses());
    s.set_quat_order(v1::WXYZ);
    s.add_env_ids(1);
    s.add_env_ids(0);
    s.mutable_read()->add_sensors("prox");
    s.mutable_read()->add_sensors("depth");
    s.mutable_read()->add_sensors("touch");
    out.push_back(s);
  }
  return out;
}

// Canonical link index of `name` in the fixed scene.
int LinkIndex(const v1::SceneInfo& info, const std::string& name) {
  for (const auto& l : info.links()) {
    if (l.name() == name) return l.index();
  }
  std::fprintf(stderr, "no link %s\n", name.c_str());
  std::abort();
}

std::vector<v1::StepRequest> ReportedSeeds() {
  const LiveScene live = CreateSceneOrDie(FixedSceneSpec(true));
  const v1::SceneInfo& info = live.info;
  const int palm = LinkIndex(info, "hand/palm"), finger = LinkIndex(info, "hand/finger");
  const int ball = LinkIndex(info, "ball/body"), dart = LinkIndex(info, "dart/tip");
  const int ground = LinkIndex(info, "ground/plane"), bowl = LinkIndex(info, "bowl/shell");
  auto ints = [](std::vector<int32_t> v, v1::Tensor* t) {
    server::EncodeTensor(v1::INT32, {static_cast<int64_t>(v.size())}, v.data(), v.size() * 4, t);
  };
  std::vector<v1::StepRequest> out;
  {
    v1::StepRequest s = Step(0);
    s.set_scene("fixed-reported");
    ints({0, 0, 1, 1}, s.mutable_contacts()->mutable_env());
    ints({palm, finger, palm, ground}, s.mutable_contacts()->mutable_body());
    ints({ball, dart, finger, bowl}, s.mutable_contacts()->mutable_partner());
    server::EncodeDoubles({4, 3}, {0, 0, 2.5, -1, 0, 0, 0, 0.5, 0, 0, 0, 100}, s.mutable_contacts()->mutable_force());
    server::EncodeDoubles({4, 3}, {0.1, 0, 0, 0, 0.2, 0, 0, 0, 0, 1, 1, 0}, s.mutable_contacts()->mutable_friction());
    s.mutable_read()->set_contact_matrix(true);
    s.mutable_read()->set_none(true);
    out.push_back(s);
  }
  {
    v1::StepRequest s = Step(1);
    s.set_scene("fixed-reported");
    s.add_env_ids(1);
    *s.mutable_poses() = Float32Poses(1, 1);
    ints({1}, s.mutable_contacts()->mutable_env());
    ints({ball}, s.mutable_contacts()->mutable_body());
    ints({ground}, s.mutable_contacts()->mutable_partner());
    const float force[3] = {0, 0, 9.81f};
    server::EncodeTensor(v1::FLOAT32, {1, 3}, force, sizeof(force), s.mutable_contacts()->mutable_force());
    s.mutable_read()->set_contact_matrix(true);
    out.push_back(s);
  }
  {
    v1::StepRequest s = Step(2);  // no contacts this step: the matrix empties
    s.set_scene("fixed-reported");
    s.mutable_read()->set_contact_matrix(true);
    s.mutable_read()->set_sparse(true);
    out.push_back(s);
  }
  return out;
}

std::vector<v1::UpdateSensorRequest> UpdateSeeds() {
  std::vector<v1::UpdateSensorRequest> out;
  v1::UpdateSensorRequest u;
  u.set_scene("fixed");
  u.set_sensor("kin");
  std::vector<double> gains(16);
  for (int i = 0; i < 16; ++i) gains[i] = 1.0 + 0.05 * i;
  server::EncodeDoubles({16}, gains, u.mutable_probe_gain());
  out.push_back(u);
  u.Clear();
  u.set_scene("fixed");
  u.set_sensor("gel");
  u.add_env_ids(1);
  std::vector<float> g(16, 0.5f);
  server::EncodeTensor(v1::FLOAT32, {1, 4, 4}, g.data(), g.size() * sizeof(float), u.mutable_probe_gain());
  u.set_noise(1e-4);
  out.push_back(u);
  u.Clear();
  u.set_scene("fixed");
  u.set_sensor("depth");
  u.set_noise(0.001);
  u.set_random_walk(0.0001);
  u.set_bias(-0.002);
  out.push_back(u);
  u.Clear();
  u.set_scene("fixed");
  u.set_sensor("kin");
  u.add_env_ids(0);
  u.add_env_ids(1);
  server::EncodeDoubles({2, 16}, std::vector<double>(32, 2.0), u.mutable_probe_gain());
  u.set_bias(0.5);
  out.push_back(u);
  return out;
}

// Sensors a client could add to the fixed scene, one per kind and layout.
std::vector<v1::SensorSpec> AddSensorSeeds() {
  const v1::SceneSpec fixed = FixedSceneSpec(false);
  std::vector<v1::SensorSpec> out;
  for (const v1::SensorSpec& s : fixed.sensors()) {
    v1::SensorSpec copy = s;
    copy.set_name("new_" + s.name());
    out.push_back(copy);
  }
  {
    v1::SensorSpec s = fixed.sensors(1);  // kin on the palm: a nonlinear law, per-probe radii
    s.set_name("new_kin_law");
    s.mutable_kinematic_taxel()->set_force_law(v1::NONLINEAR);
    s.mutable_kinematic_taxel()->mutable_nonlinear_law()->set_static_friction(0.8);
    s.mutable_kinematic_taxel()->set_exponent(1.5);
    std::vector<double> radii(16);
    for (int i = 0; i < 16; ++i) radii[i] = i % 5 == 0 ? 0 : 0.001 * (1 + i % 3);
    server::EncodeDoubles({4, 4}, radii, s.mutable_probe_radius());
    out.push_back(s);
  }
  {
    v1::SensorSpec s = fixed.sensors(2);  // gel: incompressible, direct sum, a 3-layer kernel
    s.set_name("new_gel_direct");
    s.mutable_elastomer()->set_compressibility(0);
    s.mutable_elastomer()->set_use_fft(false);
    std::vector<double> k(27, 0.0);
    for (int l = 0; l < 3; ++l) k[l * 9 + 4] = 1.0;
    server::EncodeDoubles({3, 3, 3}, k, s.mutable_imperfections()->mutable_crosstalk_kernel());
    s.mutable_imperfections()->set_crosstalk_border(v1::CROSSTALK_BORDER_RENORMALIZE);
    out.push_back(s);
  }
  {
    v1::SensorSpec s = fixed.sensors(5);  // proximity on the ball, tracking the hand
    s.set_name("new_prox_ball");
    s.set_link("ball/body");
    s.clear_track_links();
    s.add_track_links("hand/palm");
    s.add_track_links("finger");
    s.mutable_proximity()->set_shear_coupling(5);
    s.mutable_proximity()->set_twist_scalar(1);
    out.push_back(s);
  }
  return out;
}

std::vector<v1::UploadMeshRequest> MeshSeeds() {
  auto request = [](const geometry::MeshData& m, bool float32) {
    v1::UploadMeshRequest r;
    std::vector<double> xyz;
    for (const auto& v : m.vertices) xyz.insert(xyz.end(), {v.x(), v.y(), v.z()});
    const int64_t nv = static_cast<int64_t>(m.vertices.size()), nt = static_cast<int64_t>(m.triangles.size());
    if (float32) {
      std::vector<float> f(xyz.begin(), xyz.end());
      server::EncodeTensor(v1::FLOAT32, {nv, 3}, f.data(), f.size() * sizeof(float), r.mutable_vertices());
    } else {
      server::EncodeDoubles({nv, 3}, xyz, r.mutable_vertices());
    }
    server::EncodeTensor(v1::INT32, {nt, 3}, m.triangles.data(), m.triangles.size() * sizeof(geometry::Triangle),
                         r.mutable_triangles());
    return r;
  };
  std::vector<v1::UploadMeshRequest> out;
  out.push_back(request(ClosedMesh(), false));
  out.push_back(request(OpenMesh(), true));
  geometry::MeshData inside_out = ClosedMesh();
  for (auto& t : inside_out.triangles) std::swap(t[1], t[2]);
  out.push_back(request(inside_out, false));
  out.push_back(request(geometry::GeodesicSphere(0.03, 1), false));
  out.push_back(request(geometry::SubdividedBox(Eigen::Vector3d(0.02, 0.03, 0.01), 1), true));
  out.push_back(request(geometry::Torus(0.03, 0.01, 6, 4), false));
  return out;
}

// Scene specs beyond the fixed ones: a minimal scene, and one with a heightfield, empty object
// slots, every primitive and a glob-selected contact matrix.
std::vector<v1::SceneSpec> SceneSeeds() {
  std::vector<v1::SceneSpec> out = {FixedSceneSpec(false), FixedSceneSpec(true)};
  {
    v1::SceneSpec s;
    s.set_name("minimal");
    s.set_num_envs(1);
    auto* robot = s.add_entities();
    robot->set_name("r");
    robot->set_kind(v1::ROBOT);
    auto* link = robot->add_links();
    link->set_name("l");
    link->add_shapes()->mutable_sphere()->set_radius(0.01);
    auto* ground = s.add_entities();
    ground->set_name("g");
    ground->set_kind(v1::TERRAIN);
    ground->add_links()->set_name("plane");
    ground->mutable_links(0)->add_shapes()->mutable_half_space();
    auto* sensor = s.add_sensors();
    sensor->set_name("p");
    sensor->set_kind(v1::CONTACT_PROBE);
    sensor->set_link("l");
    server::EncodeDoubles({1, 3}, {0, 0, -0.01}, sensor->mutable_probe_local_pos());
    server::EncodeDoubles({}, {0.001}, sensor->mutable_probe_radius());
    out.push_back(s);
  }
  {
    v1::SceneSpec s = FixedSceneSpec(false);
    s.set_name("terrain.globs_3");
    s.set_num_envs(3);
    s.set_seed(12345);
    // Heightfield terrain instead of the plane.
    v1::Shape* hf = s.mutable_entities(3)->mutable_links(0)->mutable_shapes(0);
    hf->Clear();
    std::vector<double> heights(4 * 5);
    for (int i = 0; i < 20; ++i) heights[i] = 0.002 * (i % 3);
    server::EncodeDoubles({4, 5}, heights, hf->mutable_heightfield()->mutable_heights());
    hf->mutable_heightfield()->set_dx(0.05);
    hf->mutable_heightfield()->set_dy(0.04);
    // Object slots: asset 0, asset 1, empty.
    v1::Entity* ball = s.mutable_entities(1);
    ball->clear_env_assets();
    for (int a : {0, 1, -1}) ball->add_env_assets(a);
    ball->mutable_assets(0)->mutable_link_shapes(0)->mutable_shapes(0)->mutable_mesh()->add_scale(1.5);
    ball->mutable_assets(0)->mutable_link_shapes(0)->mutable_shapes(0)->mutable_mesh()->add_scale(1);
    ball->mutable_assets(0)->mutable_link_shapes(0)->mutable_shapes(0)->mutable_mesh()->add_scale(0.5);
    // A posed box on the dart as a second shape.
    v1::Shape* box = s.mutable_entities(2)->mutable_links(0)->add_shapes();
    for (double h : {0.01, 0.004, 0.004}) box->mutable_box()->add_half_extents(h);
    for (double p : {0.0, 0.0, 0.015}) box->mutable_pose()->add_position(p);
    for (double q : {0.0, 0.0, 0.3826834, 0.9238795}) box->mutable_pose()->add_quaternion(q);
    box->mutable_pose()->set_quat_order(v1::XYZW);
    v1::ContactMatrixSpec* cm = s.mutable_contact_matrix();
    cm->clear_bodies();
    cm->add_bodies("hand/*");
    cm->clear_partners();
    for (const char* p : {"terrain", "static/*", "object/ball", "projectile/*", "robot/fing?r"}) cm->add_partners(p);
    cm->set_friction(false);
    cm->mutable_law()->set_stiffness(5e8);
    cm->mutable_law()->set_exponent(1.2);
    cm->set_sample_spacing(0.005);
    out.push_back(s);
  }
  return out;
}

std::vector<Session> SessionSeeds() {
  std::vector<Session> out;
  {
    Session s;
    *s.mutable_spec() = FixedSceneSpec(false);
    *s.add_ops()->mutable_step() = Step(0);
    *s.add_ops()->mutable_update_sensor() = UpdateSeeds()[0];
    *s.add_ops()->mutable_step() = StepSeeds()[2];
    v1::ReadSensorsRequest* read = s.add_ops()->mutable_read_sensors();
    read->set_history(2);
    read->mutable_read()->add_sensors("kin");
    read->add_env_ids(1);
    v1::GetContactMatrixRequest* cm = s.add_ops()->mutable_get_contact_matrix();
    cm->add_rows("palm");
    cm->add_columns("terrain");
    cm->set_friction(true);
    s.add_ops()->mutable_reset()->add_env_ids(0);
    *s.add_ops()->mutable_step() = StepSeeds()[1];
    out.push_back(s);
  }
  {
    Session s;
    *s.mutable_spec() = SceneSeeds()[2];  // minimal
    v1::SensorSpec* add = s.add_ops()->mutable_add_sensor();
    add->set_name("k");
    add->set_kind(v1::KINEMATIC_TAXEL);
    add->set_link("r/l");
    server::EncodeDoubles({2, 3}, {0, 0, -0.01, 0.005, 0, -0.008}, add->mutable_probe_local_pos());
    server::EncodeDoubles({}, {0.002}, add->mutable_probe_radius());
    add->mutable_imperfections()->set_noise(0.01);
    add->mutable_imperfections()->set_history_length(2);
    v1::StepRequest step;
    step.set_quat_order(v1::WXYZ);
    step.set_dt(0.005);
    server::EncodeDoubles({1, 1, 7}, {0, 0, 0.0095, 1, 0, 0, 0}, step.mutable_poses());
    *s.add_ops()->mutable_step() = step;
    s.add_ops()->mutable_remove_sensor()->set_name("p");
    *s.add_ops()->mutable_step() = step;
    s.add_ops()->mutable_read_sensors()->set_history(1);
    out.push_back(s);
  }
  {
    Session s;
    *s.mutable_spec() = FixedSceneSpec(true);
    for (const v1::StepRequest& step : ReportedSeeds()) *s.add_ops()->mutable_step() = step;
    s.add_ops()->mutable_get_contact_matrix()->add_env_ids(1);
    out.push_back(s);
  }
  return out;
}

// ------------------------------------------------------------------------------------------
// Dictionaries.

std::string Varint(uint64_t v) {
  std::string out;
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    if (v) b |= 0x80;
    out.push_back(static_cast<char>(b));
  } while (v);
  return out;
}

int WireType(const FieldDescriptor* f) {
  switch (f->type()) {
    case FieldDescriptor::TYPE_DOUBLE:
    case FieldDescriptor::TYPE_FIXED64:
    case FieldDescriptor::TYPE_SFIXED64: return 1;
    case FieldDescriptor::TYPE_FLOAT:
    case FieldDescriptor::TYPE_FIXED32:
    case FieldDescriptor::TYPE_SFIXED32: return 5;
    case FieldDescriptor::TYPE_STRING:
    case FieldDescriptor::TYPE_BYTES:
    case FieldDescriptor::TYPE_MESSAGE: return 2;
    default: return 0;
  }
}

void CollectTags(const Descriptor* d, std::set<const Descriptor*>* seen, std::map<std::string, std::string>* dict) {
  if (!seen->insert(d).second) return;
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string name = d->name() + "." + f->name();
    (*dict)[name] = Varint((static_cast<uint64_t>(f->number()) << 3) | WireType(f));
    if (f->is_packed()) (*dict)[name + ".packed"] = Varint((static_cast<uint64_t>(f->number()) << 3) | 2);
    if (f->enum_type()) {
      for (int k = 0; k < f->enum_type()->value_count(); ++k) {
        const auto* v = f->enum_type()->value(k);
        (*dict)[f->enum_type()->name() + "." + v->name()] = Varint(static_cast<uint64_t>(v->number()));
      }
    }
    if (f->message_type()) CollectTags(f->message_type(), seen, dict);
  }
}

template <typename T>
std::string Bytes(T v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof(v));
}

std::string Escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[5];
      std::snprintf(buf, sizeof(buf), "\\x%02X", c);
      out += buf;
    }
  }
  return out;
}

void WriteDict(const fs::path& path, const Descriptor* root) {
  std::map<std::string, std::string> dict;
  std::set<const Descriptor*> seen;
  CollectTags(root, &seen, &dict);
  const std::vector<std::string> names = {"fixed",
                                          "fixed-reported",
                                          "hand",
                                          "palm",
                                          "finger",
                                          "hand/palm",
                                          "hand/finger",
                                          "ball",
                                          "body",
                                          "ball/body",
                                          "dart",
                                          "tip",
                                          "dart/tip",
                                          "ground",
                                          "plane",
                                          "ground/plane",
                                          "bowl",
                                          "shell",
                                          "bowl/shell",
                                          "touch",
                                          "kin",
                                          "gel",
                                          "depth",
                                          "kin_nl",
                                          "prox",
                                          "contact",
                                          "normal",
                                          "area",
                                          "partner",
                                          "force",
                                          "torque",
                                          "displacement",
                                          "all",
                                          "terrain",
                                          "object/*",
                                          "robot/*",
                                          "static/*",
                                          "projectile/*",
                                          "object/ball",
                                          "projectile/dart",
                                          "static/bowl",
                                          "robot/palm",
                                          "robot/finger",
                                          "*",
                                          "?",
                                          ClosedMeshId(),
                                          OpenMeshId()};
  for (size_t i = 0; i < names.size(); ++i) dict["name_" + std::to_string(i)] = names[i];
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::pair<std::string, double>> values = {
      {"zero", 0.0}, {"negzero", -0.0}, {"one", 1.0}, {"minus_one", -1.0}, {"tiny", 1e-300},   {"huge", 1e300},
      {"inf", inf},  {"neg_inf", -inf}, {"nan", nan}, {"small", 1e-9},     {"denorm", 5e-324}, {"big", 1e9}};
  for (const auto& [name, v] : values) {
    dict["f64_" + name] = Bytes(v);
    dict["f32_" + name] = Bytes(static_cast<float>(v));
  }
  for (int32_t v : {-1, 0, 1, 2, 3, 5, 64, 65536, INT32_MAX, INT32_MIN}) dict["i32_" + std::to_string(v)] = Bytes(v);
  std::ofstream out(path);
  out << "# Generated by taxel_fuzz_seeds (fuzz/make_seeds.cc) for " << root->full_name() << ".\n";
  for (const auto& [name, bytes] : dict) {
    std::string key;
    for (char c : name) key += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    out << key << "=\"" << Escape(bytes) << "\"\n";
  }
}

// ------------------------------------------------------------------------------------------

// Writes the seeds and prints what the target's request path answers to each (a seed should be
// accepted, so that fuzzing starts from deep inside the code).
template <typename M, typename Check>
void WriteCorpus(const fs::path& dir, const std::string& prefix, const std::vector<M>& seeds, Check check) {
  fs::create_directories(dir);
  for (size_t i = 0; i < seeds.size(); ++i) {
    std::string bytes;
    if (!seeds[i].SerializeToString(&bytes)) std::abort();
    char name[64];
    std::snprintf(name, sizeof(name), "%s_%02zu.pb", prefix.c_str(), i);
    std::ofstream(dir / name, std::ios::binary) << bytes;
    const absl::Status status = check(seeds[i]);
    std::printf("%-50s %6zu bytes  %s\n", (dir / name).c_str(), bytes.size(), status.ToString().c_str());
  }
}

absl::Status CheckStep(const v1::StepRequest& step, bool reported) {
  LiveScene live = CreateSceneOrDie(FixedSceneSpec(reported));
  return live.Run(&server::TaxelHandlers::Step, step);
}

absl::Status CheckSession(const Session& session) {
  TAXEL_ASSIGN_OR_RETURN(LiveScene live, CreateScene(session.spec()));
  for (const SessionOp& op : session.ops()) TAXEL_RETURN_IF_ERROR(RunSessionOp(op, live));
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <fuzz dir>\n", argv[0]);
    return 2;
  }
  const fs::path root = argv[1];
  struct Target {
    std::string name;
    const Descriptor* type;
  };
  const std::vector<Target> targets = {{"scene_spec_fuzzer", v1::SceneSpec::descriptor()},
                                       {"scene_create_fuzzer", v1::SceneSpec::descriptor()},
                                       {"step_fuzzer", v1::StepRequest::descriptor()},
                                       {"reported_contacts_fuzzer", v1::StepRequest::descriptor()},
                                       {"sensor_update_fuzzer", v1::UpdateSensorRequest::descriptor()},
                                       {"add_sensor_fuzzer", v1::SensorSpec::descriptor()},
                                       {"mesh_upload_fuzzer", v1::UploadMeshRequest::descriptor()},
                                       {"scene_session_fuzzer", Session::descriptor()}};
  fs::create_directories(root / "dict");
  for (const Target& t : targets) {
    fs::remove_all(root / "corpus" / t.name);  // regenerated whole: no stale seeds
    WriteDict(root / "dict" / (t.name + ".dict"), t.type);
  }
  auto decode = [](const v1::SceneSpec& spec) { return server::DecodeSceneSpec(spec).status(); };
  auto create = [](const v1::SceneSpec& spec) { return CreateScene(spec).status(); };
  WriteCorpus(root / "corpus/scene_spec_fuzzer", "spec", SceneSeeds(), decode);
  WriteCorpus(root / "corpus/scene_create_fuzzer", "spec", SceneSeeds(), create);
  WriteCorpus(root / "corpus/step_fuzzer", "step", StepSeeds(),
              [](const v1::StepRequest& step) { return CheckStep(step, false); });
  WriteCorpus(root / "corpus/reported_contacts_fuzzer", "step", ReportedSeeds(),
              [](const v1::StepRequest& step) { return CheckStep(step, true); });
  WriteCorpus(root / "corpus/sensor_update_fuzzer", "update", UpdateSeeds(), [](const v1::UpdateSensorRequest& u) {
    LiveScene live = CreateSceneOrDie(FixedSceneSpec(false));
    return live.Run(&server::TaxelHandlers::UpdateSensor, u);
  });
  WriteCorpus(root / "corpus/add_sensor_fuzzer", "sensor", AddSensorSeeds(), [](const v1::SensorSpec& sensor) {
    LiveScene live = CreateSceneOrDie(FixedSceneSpec(false));
    return AddSensor(sensor, live);
  });
  WriteCorpus(root / "corpus/mesh_upload_fuzzer", "mesh", MeshSeeds(), [](const v1::UploadMeshRequest& r) {
    geometry::MeshStore store;
    return FuzzServer(&store).Run(&server::TaxelHandlers::UploadMesh, r);
  });
  WriteCorpus(root / "corpus/scene_session_fuzzer", "session", SessionSeeds(), CheckSession);
  return 0;
}

}  // namespace
}  // namespace taxel::fuzz

int main(int argc, char** argv) { return taxel::fuzz::Main(argc, argv); }
