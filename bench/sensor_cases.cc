// Sensor-model cases (docs/reference.md#benchmarks), in-process, one Scene::Step per timed repeat, unit ms:
//
//  - elastomer/32x32_256env_fft, elastomer/32x32_256env_direct: 256 envs × one 32×32 ElastomerTaxel
//    gel pad (pitch 1 mm) indented 0.5–2 mm by a 20,480-triangle geodesic sphere of radius 2 cm
//    (500 tracked surface points); the dilation by zero-padded FFT convolution vs the direct sum.
//  - proximity/16x16_256env: 256 envs × one 16×16 ProximityTaxel (pitch 3.5 mm, R 6 mm) under the
//    same kind of sphere (radius 4 cm, 2000 sample points) hovering 1–4 mm above the pad.
//  - imperfections/grasp_batch: grasp_batch/mesh20k with every stage of the measured pipeline on
//    both pads; the record also carries the ground-truth-only time of the same run and the
//    overhead ratio (target ≤ 1.15).
#include <cmath>

#include "bench/bench_registry.h"
#include "bench/grasp_scenario.h"
#include "bench/scene_timing.h"
#include "core/common/check.h"
#include "core/common/executor.h"
#include "core/geometry/mesh_generators.h"
#include "core/scene/scene.h"
#include "server/thread_pool.h"

namespace taxel::bench {
namespace {

constexpr int kSensorEnvs = 256;

// A robot "pad" link at the world origin (identity pose) carrying a grid sensor on its z = 0 plane
// facing +z, and an object "ball" (geodesic sphere mesh) whose centre height is set per env.
struct PadScenario {
  scene::SceneSpec spec;
  std::vector<double> poses;  // [E, 2, 7] xyzw: pad, ball
};

PadScenario MakePadScenario(sensors::SensorSpec sensor, int grid, double pitch, double ball_radius,
                            double (*centre_height)(int env), geometry::MeshStore& meshes) {
  PadScenario s;
  s.spec.name = "pad";
  s.spec.num_envs = kSensorEnvs;
  s.spec.seed = 11;
  scene::ShapeSpec pad_box;
  pad_box.kind = geometry::ShapeKind::kBox;
  pad_box.half_extents = Eigen::Vector3d(0.5 * grid * pitch, 0.5 * grid * pitch, 0.002);
  pad_box.X_LS.p = Eigen::Vector3d(0, 0, -0.002);
  auto data = geometry::GeodesicSphere(ball_radius, 32);  // 20,480 triangles
  auto added = meshes.Add(std::move(data.vertices), std::move(data.triangles));
  TAXEL_CHECK(added.ok());
  scene::ShapeSpec ball;
  ball.kind = geometry::ShapeKind::kMesh;
  ball.mesh_id = added->id;
  scene::EntitySpec robot;
  robot.name = "hand";
  robot.kind = scene::EntityKind::kRobot;
  robot.links = {{"pad", {pad_box}, {}}};
  scene::EntitySpec obj;
  obj.name = "object";
  obj.kind = scene::EntityKind::kObject;
  obj.links = {{"ball", {ball}, {}}};
  s.spec.entities = {robot, obj};
  sensor.link = "hand/pad";
  for (int i = 0; i < grid; ++i) {
    for (int j = 0; j < grid; ++j) {
      sensor.probe_local_pos.emplace_back((j - 0.5 * (grid - 1)) * pitch, (i - 0.5 * (grid - 1)) * pitch, 0.0);
    }
  }
  sensor.grid_rows = sensor.grid_cols = grid;
  sensor.probe_local_normal = {Eigen::Vector3d::UnitZ()};
  sensor.track_links = {"object/ball"};
  s.spec.sensors = {sensor};
  for (int e = 0; e < kSensorEnvs; ++e) {
    // The ball wanders up to 3 mm sideways so that envs differ.
    const double pad[7] = {0, 0, 0, 0, 0, 0, 1};
    const double ball_pose[7] = {0.003 * std::sin(0.9 * e), 0.003 * std::cos(1.7 * e), centre_height(e), 0, 0, 0, 1};
    s.poses.insert(s.poses.end(), pad, pad + 7);
    s.poses.insert(s.poses.end(), ball_pose, ball_pose + 7);
  }
  return s;
}

void RunElastomer(Context& ctx, bool fft) {
  constexpr int kGrid = 32;
  constexpr double kBallRadius = 0.02;
  sensors::SensorSpec s;
  s.name = "gel";
  s.kind = sensors::SensorKind::kElastomerTaxel;
  s.elastomer.use_fft = fft;
  geometry::MeshStore meshes;
  // Indentation 0.5–2.0 mm at the ball's lowest point.
  const PadScenario p = MakePadScenario(
      s, kGrid, 0.001, kBallRadius, [](int e) { return kBallRadius - 0.0005 * (1 + e % 4); }, meshes);
  TimeSceneSteps(ctx, p.spec, p.poses, meshes, [&](Record& r, const scene::Scene& scene) {
    r.AddInt("taxels", static_cast<int64_t>(kSensorEnvs) * kGrid * kGrid);
    r.AddInt("indenter_triangles", 20480);
    r.AddString("dilation", fft ? "fft" : "direct");
    r.AddNumber("active_fraction", NonZeroProbeFraction(scene));
  });
}

TAXEL_BENCH_CASE("elastomer/32x32_256env_fft", [](Context& ctx) { RunElastomer(ctx, true); });
TAXEL_BENCH_CASE("elastomer/32x32_256env_direct", [](Context& ctx) { RunElastomer(ctx, false); });

void RunProximity(Context& ctx) {
  constexpr int kGrid = 16;
  constexpr double kBallRadius = 0.04;
  constexpr int kPoints = 2000;
  sensors::SensorSpec s;
  s.name = "skin";
  s.kind = sensors::SensorKind::kProximityTaxel;
  s.probe_radius = {0.006};
  s.n_sample_points = kPoints;
  geometry::MeshStore meshes;
  // Gap 1–4 mm between the pad and the ball's lowest point.
  const PadScenario p = MakePadScenario(
      s, kGrid, 0.0035, kBallRadius, [](int e) { return kBallRadius + 0.001 * (1 + e % 4); }, meshes);
  TimeSceneSteps(ctx, p.spec, p.poses, meshes, [&](Record& r, const scene::Scene& scene) {
    r.AddInt("taxels", static_cast<int64_t>(kSensorEnvs) * kGrid * kGrid);
    r.AddInt("sample_points", kPoints);
    r.AddNumber("active_fraction", NonZeroProbeFraction(scene));
  });
}

TAXEL_BENCH_CASE("proximity/16x16_256env", RunProximity);

// Every stage of the measured pipeline of docs/reference.md#measured-branch, at values a user might train with.
sensors::ImperfectionSpec FullPipeline() {
  sensors::ImperfectionSpec m;
  m.probe_radius_noise = 1e-4;
  m.probe_gain_resample_range = std::make_pair(0.9, 1.1);
  m.crosstalk_strength = 0.2;
  m.crosstalk_sigma = 0.0035;
  m.crosstalk_border = sensors::CrosstalkBorder::kRenormalize;
  m.hysteresis_strength = 0.3;
  m.hysteresis_tau = 0.05;
  m.random_walk = 1e-3;
  m.noise = 1e-2;
  m.bias = 1e-3;
  m.resolution = 1e-3;
  m.dead_taxel_probability = 0.01;
  m.dead_taxel_value_range = {0.0, 0.1};
  m.delay = 0.02;
  m.jitter = 0.005;
  m.history_length = 4;
  return m;
}

void RunImperfections(Context& ctx) {
  constexpr int kEnvs = 1024;
  geometry::MeshStore meshes;
  const GraspScenario clean = MakeGraspScenario(GraspObject::kMesh20k, kEnvs, meshes);
  GraspScenario noisy = clean;
  for (auto& s : noisy.spec.sensors) s.imperfections = FullPipeline();
  for (int threads : ctx.thread_counts()) {
    server::ThreadPool pool(threads);
    const scene::StepInput in = XyzwStepInput(clean.poses);
    auto truth_only = MustCreate(clean.spec, meshes);
    auto measured = MustCreate(noisy.spec, meshes);
    // Alternate the two scenes repeat by repeat so that both see the same machine load.
    std::vector<double> clean_s, noisy_s;
    for (int rep = -1; rep < ctx.repeats(); ++rep) {  // rep −1: warm-up of both
      const double c = TimeOnce([&] { TAXEL_CHECK(truth_only->Step(in, pool).ok()); });
      const double n = TimeOnce([&] { TAXEL_CHECK(measured->Step(in, pool).ok()); });
      if (rep >= 0) clean_s.push_back(c), noisy_s.push_back(n);
    }
    Record r = ctx.NewRecord(threads, "ms");
    r.samples = noisy_s;
    ScaleSamples(&r, 1e3);
    const double truth_ms = Median(clean_s) * 1e3;
    r.AddInt("envs", kEnvs);
    r.AddInt("taxels", static_cast<int64_t>(kEnvs) * clean.taxels_per_env);
    r.AddNumber("ground_truth_only_ms", truth_ms);
    r.AddNumber("overhead_ratio", Median(r.samples) / truth_ms);
    ctx.Emit(r);
  }
}

TAXEL_BENCH_CASE("imperfections/grasp_batch", RunImperfections);

}  // namespace
}  // namespace taxel::bench
