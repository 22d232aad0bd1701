// Sensor-model cases (docs/reference.md#benchmarks), in-process, one Scene::Step per timed repeat, unit ms:
//
//  - elastomer/32x32_256env_fft, elastomer/32x32_256env_direct: 256 envs × one 32×32 ElastomerTaxel
//    gel pad (pitch 1 mm) indented 0.5–2 mm by a 20,480-triangle geodesic sphere of radius 2 cm
//    (500 tracked surface points); the dilation by zero-padded FFT convolution vs the direct sum.
//  - proximity/16x16_256env: 256 envs × one 16×16 ProximityTaxel (pitch 3.5 mm, R 6 mm) under the
//    same kind of sphere (radius 4 cm, 2000 sample points) hovering 1–4 mm above the pad.
//  - imperfections/grasp_batch: grasp_batch/mesh20k with every stage of the measured pipeline on
//    both pads; the record also carries the ground-truth-only time of the same run, the
//    overhead ratio (target ≤ 1.2) and the ratio of the steps' process CPU times
//    ("cpu_overhead_ratio", all threads; less disturbed by other processes on a shared machine),
//    and "overhead_ratio_paired", the median over repeats of the ratio of the two steps of a repeat.
//  - imperfections/pipeline_only: the measured pipeline of that case without the geometry
//    (MeasuredPipeline::Process on a fixed raw sample for 1024 envs × 2 pads, and the copy out), with
//    the sum of the last step's outputs as "checksum".
#include <algorithm>
#include <cmath>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_registry.h"
#include "bench/grasp_scenario.h"
#include "bench/scene_timing.h"
#include "core/common/check.h"
#include "core/common/executor.h"
#include "core/common/workspace.h"
#include "core/geometry/mesh_generators.h"
#include "core/scene/scene.h"
#include "core/sensors/imperfections.h"
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

double ProcessCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

// The grasp batch of grasp_batch/mesh20k with `imperfections` on every sensor, timed against the
// same scene with ground truth only, the two stepped in turn.
void RunImperfections(Context& ctx, const sensors::ImperfectionSpec& imperfections) {
  constexpr int kEnvs = 1024;
  geometry::MeshStore meshes;
  const GraspScenario clean = MakeGraspScenario(GraspObject::kMesh20k, kEnvs, meshes);
  GraspScenario noisy = clean;
  for (auto& s : noisy.spec.sensors) s.imperfections = imperfections;
  for (int threads : ctx.thread_counts()) {
    server::ThreadPool pool(threads);
    const scene::StepInput in = XyzwStepInput(clean.poses);
    auto truth_only = MustCreate(clean.spec, meshes);
    auto measured = MustCreate(noisy.spec, meshes);
    // Alternate the two scenes repeat by repeat so that both see the same machine load, and swap
    // which goes first on every other repeat (as TimeInTurn does) so that neither always runs
    // after the other. The process CPU time of each step (all threads) is less disturbed by other
    // processes than the wall time.
    std::vector<double> clean_s, noisy_s, clean_cpu, noisy_cpu;
    auto time_step = [&](scene::Scene& scene, std::vector<double>* wall, std::vector<double>* cpu, bool keep) {
      const double c0 = ProcessCpuSeconds();
      const double t = TimeOnce([&] { TAXEL_CHECK(scene.Step(in, pool).ok()); });
      const double c1 = ProcessCpuSeconds();
      if (keep) wall->push_back(t), cpu->push_back(c1 - c0);
    };
    for (int rep = -1; rep < ctx.repeats(); ++rep) {  // rep −1: warm-up of both
      const bool keep = rep >= 0;
      if (rep % 2 == 0) {
        time_step(*truth_only, &clean_s, &clean_cpu, keep);
        time_step(*measured, &noisy_s, &noisy_cpu, keep);
      } else {
        time_step(*measured, &noisy_s, &noisy_cpu, keep);
        time_step(*truth_only, &clean_s, &clean_cpu, keep);
      }
    }
    Record r = ctx.NewRecord(threads, "ms");
    r.samples = noisy_s;
    ScaleSamples(&r, 1e3);
    const double truth_ms = Median(clean_s) * 1e3;
    r.AddInt("envs", kEnvs);
    r.AddInt("taxels", static_cast<int64_t>(kEnvs) * clean.taxels_per_env);
    r.AddNumber("ground_truth_only_ms", truth_ms);
    r.AddNumber("overhead_ratio", Median(r.samples) / truth_ms);
    r.AddNumber("overhead_ratio_paired", MedianRatio(noisy_s, clean_s));
    r.AddNumber("cpu_overhead_ratio", Median(noisy_cpu) / Median(clean_cpu));
    ctx.Emit(r);
  }
}

TAXEL_BENCH_CASE("imperfections/grasp_batch", [](Context& ctx) { RunImperfections(ctx, FullPipeline()); });

// The stages of FullPipeline, each with the fields that belong to it (those that go together,
// such as the delay's jitter and history, move together): `take` copies them from one spec into
// another. The cases below read the table both ways.
struct PipelineStage {
  const char* name;
  void (*take)(const sensors::ImperfectionSpec& from, sensors::ImperfectionSpec& to);
};
using Spec = sensors::ImperfectionSpec;
const PipelineStage kPipelineStages[] = {
    {"radius_noise", [](const Spec& f, Spec& m) { m.probe_radius_noise = f.probe_radius_noise; }},
    {"gain", [](const Spec& f, Spec& m) { m.probe_gain_resample_range = f.probe_gain_resample_range; }},
    {"crosstalk",
     [](const Spec& f, Spec& m) {
       m.crosstalk_strength = f.crosstalk_strength;
       m.crosstalk_sigma = f.crosstalk_sigma;
       m.crosstalk_border = f.crosstalk_border;
     }},
    {"hysteresis",
     [](const Spec& f, Spec& m) {
       m.hysteresis_strength = f.hysteresis_strength;
       m.hysteresis_tau = f.hysteresis_tau;
     }},
    {"random_walk", [](const Spec& f, Spec& m) { m.random_walk = f.random_walk; }},
    {"noise", [](const Spec& f, Spec& m) { m.noise = f.noise; }},
    {"bias_resolution",
     [](const Spec& f, Spec& m) {
       m.bias = f.bias;
       m.resolution = f.resolution;
     }},
    {"dead_taxels",
     [](const Spec& f, Spec& m) {
       m.dead_taxel_probability = f.dead_taxel_probability;
       m.dead_taxel_value_range = f.dead_taxel_value_range;
     }},
    {"delay",
     [](const Spec& f, Spec& m) {
       m.delay = f.delay;
       m.jitter = f.jitter;
       m.history_length = f.history_length;
     }},
};
[[maybe_unused]] const bool kStageCasesRegistered = [] {
  // One stage alone, at the full pipeline's settings: what it costs by itself. Each case also
  // pays for the measured branch (a second sample per probe, its outputs), so these figures do
  // not add up to grasp_batch's.
  for (const PipelineStage& stage : kPipelineStages) {
    RegisterCase(std::string("imperfections/stage/") + stage.name, [stage](Context& ctx) {
      Spec m;
      stage.take(FullPipeline(), m);
      RunImperfections(ctx, m);
    });
  }
  // The full pipeline with one stage off (its fields taken from a default spec): what it adds on
  // top of all the others.
  for (const PipelineStage& stage : kPipelineStages) {
    RegisterCase(std::string("imperfections/without/") + stage.name, [stage](Context& ctx) {
      Spec m = FullPipeline();
      stage.take(Spec{}, m);
      RunImperfections(ctx, m);
    });
  }
  return true;
}();

double ThreadCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

// The measured pipeline alone (no geometry): 1024 envs × 2 pads of 16 × 16 KinematicTaxel probes
// with FullPipeline, fed a fixed raw sample (a contact disc of 5 probes' radius on every pad),
// then each env's reported sample copied out as Sensor::FinishMeasured does. Unit ms per step,
// with "thread_cpu_ms", the median CPU time of the step (less disturbed by other processes).
void RunPipelineOnly(Context& ctx) {
  constexpr int kEnvs = 1024, kPads = 2, kGrid = 16, kC = 6;
  constexpr double kDt = 0.01;
  std::vector<Eigen::Vector3d> positions;
  for (int i = 0; i < kGrid; ++i) {
    for (int j = 0; j < kGrid; ++j) positions.emplace_back((j - 7.5) * 0.0035, (i - 7.5) * 0.0035, 0.0);
  }
  auto layout = sensors::ProbeLayout::Create(positions, {0.002}, {Eigen::Vector3d::UnitZ()}, kGrid, kGrid);
  TAXEL_CHECK(layout.ok());
  const sensors::ImperfectionSpec spec = FullPipeline();
  TAXEL_CHECK(sensors::ValidateImperfections(spec, *layout, "bench").ok());
  const std::vector<sensors::ChannelGroup> groups = {sensors::ChannelGroup::kForceLike, sensors::ChannelGroup::kTorque};
  std::vector<std::unique_ptr<sensors::MeasuredPipeline>> pipes;
  for (int p = 0; p < kPads; ++p) {
    pipes.push_back(std::make_unique<sensors::MeasuredPipeline>(spec, *layout, groups, kEnvs, 11, p));
  }
  const size_t nc = static_cast<size_t>(kGrid) * kGrid * kC;
  std::vector<float> raw_in(nc, 0.f), raw(nc), out(static_cast<size_t>(kEnvs) * kPads * nc);
  for (int i = 0; i < kGrid; ++i) {
    for (int j = 0; j < kGrid; ++j) {
      const double r2 = (i - 7.5) * (i - 7.5) + (j - 7.5) * (j - 7.5);
      if (r2 > 25) continue;
      float* v = &raw_in[(static_cast<size_t>(i) * kGrid + j) * kC];
      v[0] = 0.01f * (i - 7.5f), v[1] = 0.01f * (j - 7.5f), v[2] = static_cast<float>(0.5 * (25 - r2) / 25);
      v[3] = 1e-4f * (j - 7.5f), v[4] = -1e-4f * (i - 7.5f), v[5] = 0.f;
    }
  }
  Workspace ws;
  uint64_t step = 0;
  std::vector<double> cpu_s;  // this thread's CPU time per run: robust to a machine shared with others
  Record r = ctx.NewRecord(1, "ms");
  r.samples = TimeRepeats(ctx.repeats(), [&] {
    const double cpu0 = ThreadCpuSeconds();
    ++step;
    for (int p = 0; p < kPads; ++p) {
      pipes[p]->Prepare(kDt);
      for (int e = 0; e < kEnvs; ++e) {
        Workspace::Scope scope(ws);
        std::copy(raw_in.begin(), raw_in.end(), raw.begin());  // the kernel's write of the raw sample
        const float* s = pipes[p]->Process(e, step, step, kDt, raw.data(), ws);
        float* o = &out[(static_cast<size_t>(e) * kPads + p) * nc];
        if (s == nullptr) {
          std::fill(o, o + nc, 0.f);
        } else {
          std::copy(s, s + nc, o);
        }
      }
    }
    cpu_s.push_back(ThreadCpuSeconds() - cpu0);
  });
  ScaleSamples(&r, 1e3);
  cpu_s.erase(cpu_s.begin());  // the warm-up run
  r.AddNumber("thread_cpu_ms", Median(cpu_s) * 1e3);
  r.AddInt("envs", kEnvs);
  r.AddInt("values", static_cast<int64_t>(kEnvs) * kPads * static_cast<int64_t>(nc));
  // The last step's reported samples, summed in a fixed order: equal across builds that give the
  // same bits.
  double checksum = 0;
  for (float v : out) checksum += v;
  r.AddNumber("checksum", checksum);
  ctx.Emit(r);
}

TAXEL_BENCH_CASE("imperfections/pipeline_only", RunPipelineOnly);

}  // namespace
}  // namespace taxel::bench
