// grasp_batch/<object>: the in-process grasp batch (bench/grasp_scenario.h), 1024 envs × 2 pads ×
// 16×16 KinematicTaxels, one Scene::Step per timed repeat. Unit ms per step; extra fields give
// taxels per step, taxels per second (at the median), the fraction of taxels in contact and the
// speed-up of 2 threads over 1 measured in the same run. mesh20k_grid: the mesh on the grid
// backend, with the grid's max_error_m, cell_size_m, band_m and bytes, and the analytic sphere of
// grasp_batch/sphere stepped in the same loop, repeats interleaved (G S, S G, ...): sphere_ms,
// ratio_vs_sphere (of the medians) and ratio_vs_sphere_paired (the median of the per-repeat
// ratios), against which the grid backend's speed target is stated. implicit: a superellipsoid
// SE(n = 4) of semi-axes 4 cm (the implicit probe solve, warm-started per probe), stepped on poses
// that alternate by 0.1 mm so that the warm starts are one step stale (field moved_m).
#include <vector>

#include "bench/bench_registry.h"
#include "bench/grasp_scenario.h"
#include "bench/scene_timing.h"
#include "core/common/check.h"
#include "core/scene/scene.h"
#include "server/thread_pool.h"

namespace taxel::bench {
namespace {

constexpr int kEnvs = 1024;

// The fields of every grasp_batch record (its samples in ms): taxels, taxels_per_s (at the
// median), contact_fraction (after the last step).
void AddGraspFields(Record& r, const GraspScenario& g, const scene::Scene& scene) {
  const int64_t taxels = static_cast<int64_t>(kEnvs) * g.taxels_per_env;
  r.AddInt("taxels", taxels);
  r.AddNumber("taxels_per_s", taxels / (Median(r.samples) * 1e-3));
  r.AddNumber("contact_fraction", NonZeroProbeFraction(scene));
}

// The grid's fields of a grasp_batch/mesh20k_grid record.
void AddGridFields(Record& r, const geometry::MeshStore& meshes, const GraspScenario& g) {
  const auto grid = meshes.grid(g.spec.entities[1].links[0].shapes[0].mesh_id);
  r.AddNumber("max_error_m", grid->stats().max_error);
  r.AddNumber("cell_size_m", grid->stats().cell_size);
  r.AddNumber("band_m", grid->stats().band);
  r.AddInt("bytes", static_cast<int64_t>(grid->stats().bytes));
}

// grasp_batch/mesh20k_grid: the grid scene and the sphere scene timed in turn (TimeInTurn).
void RunGridVsSphere(Context& ctx) {
  geometry::MeshStore meshes;
  const GraspScenario grid = MakeGraspScenario(GraspObject::kMesh20kGrid, kEnvs, meshes);
  const GraspScenario sphere = MakeGraspScenario(GraspObject::kSphere, kEnvs, meshes);
  for (int threads : ctx.thread_counts()) {
    server::ThreadPool pool(threads);
    auto grid_scene = MustCreate(grid.spec, meshes);
    auto sphere_scene = MustCreate(sphere.spec, meshes);
    const scene::StepInput grid_in = XyzwStepInput(grid.poses), sphere_in = XyzwStepInput(sphere.poses);
    const auto step_grid = [&] { TAXEL_CHECK(grid_scene->Step(grid_in, pool).ok()); };
    const auto step_sphere = [&] { TAXEL_CHECK(sphere_scene->Step(sphere_in, pool).ok()); };
    std::vector<double> grid_s, sphere_s;
    TimeInTurn(ctx.repeats(), step_grid, step_sphere, &grid_s, &sphere_s);
    Record r = ctx.NewRecord(threads, "ms");
    r.samples = grid_s;
    ScaleSamples(&r, 1e3);
    r.AddInt("envs", kEnvs);
    AddGraspFields(r, grid, *grid_scene);
    AddGridFields(r, meshes, grid);
    r.AddNumber("sphere_ms", Median(sphere_s) * 1e3);
    r.AddNumber("ratio_vs_sphere", Median(grid_s) / Median(sphere_s));
    r.AddNumber("ratio_vs_sphere_paired", MedianRatio(grid_s, sphere_s));
    ctx.Emit(r);
  }
}

void RunGrasp(Context& ctx, GraspObject object) {
  geometry::MeshStore meshes;
  const GraspScenario g = MakeGraspScenario(object, kEnvs, meshes);
  // The implicit solve keeps a warm start per (env, probe): its steps alternate between the grasp
  // and the grasp with the object moved 0.1 mm along y (across the pads), so that every start is one
  // step stale. Poses are [E, 3 links, 7]: left pad, right pad, object.
  std::vector<double> moved = g.poses;
  for (size_t k = 2 * 7; k < moved.size(); k += 3 * 7) moved[k + 1] += 1e-4;
  const bool moving = object == GraspObject::kImplicitSe4;
  TimeSceneSteps(ctx, g.spec, g.poses, meshes, [&](Record& r, const scene::Scene& scene) {
    AddGraspFields(r, g, scene);
    if (moving) r.AddNumber("moved_m", 1e-4);
  }, moving ? &moved : nullptr);
}

TAXEL_BENCH_CASE("grasp_batch/mesh20k", [](Context& ctx) { RunGrasp(ctx, GraspObject::kMesh20k); });
TAXEL_BENCH_CASE("grasp_batch/mesh20k_grid", RunGridVsSphere);
TAXEL_BENCH_CASE("grasp_batch/sphere", [](Context& ctx) { RunGrasp(ctx, GraspObject::kSphere); });
TAXEL_BENCH_CASE("grasp_batch/box", [](Context& ctx) { RunGrasp(ctx, GraspObject::kBox); });
TAXEL_BENCH_CASE("grasp_batch/capsule", [](Context& ctx) { RunGrasp(ctx, GraspObject::kCapsule); });
TAXEL_BENCH_CASE("grasp_batch/implicit", [](Context& ctx) { RunGrasp(ctx, GraspObject::kImplicitSe4); });

}  // namespace
}  // namespace taxel::bench
