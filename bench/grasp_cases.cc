// grasp_batch/<object>: the in-process grasp batch (bench/grasp_scenario.h), 1024 envs × 2 pads ×
// 16×16 KinematicTaxels, one Scene::Step per timed repeat. Unit ms per step; extra fields give
// taxels per step, taxels per second (at the median), the fraction of taxels in contact and the
// speed-up of 2 threads over 1 measured in the same run.
#include <cmath>
#include <map>
#include <memory>

#include "bench/bench_registry.h"
#include "bench/grasp_scenario.h"
#include "core/common/check.h"
#include "core/common/executor.h"
#include "core/scene/scene.h"

namespace taxel::bench {
namespace {

constexpr int kEnvs = 1024;

double ContactFraction(const scene::Scene& scene) {
  int64_t touching = 0, total = 0;
  for (const auto* s : scene.sensors()) {
    const auto& f = s->outputs(sensors::Branch::kGroundTruth).force;
    for (size_t k = 0; k < f.size(); k += 3) {
      touching += (f[k] != 0 || f[k + 1] != 0 || f[k + 2] != 0);
      ++total;
    }
  }
  return total ? static_cast<double>(touching) / total : 0.0;
}

void RunGrasp(Context& ctx, GraspObject object) {
  geometry::MeshStore meshes;
  const GraspScenario g = MakeGraspScenario(object, kEnvs, meshes);
  double one_thread_ms = NAN;
  for (int threads : ctx.thread_counts()) {
    auto scene = scene::Scene::Create(g.spec, meshes);
    TAXEL_CHECK(scene.ok());
    ThreadPool pool(threads);
    scene::StepInput in;
    in.poses = g.poses;
    in.quat_order = QuatOrder::kXyzw;
    in.dt = 0.01;
    Record r = ctx.NewRecord(threads, "ms");
    r.samples = TimeRepeats(ctx.repeats(), [&] { TAXEL_CHECK((*scene)->Step(in, pool).ok()); });
    ScaleSamples(&r, 1e3);
    const double median_ms = Median(r.samples);
    const int64_t taxels = static_cast<int64_t>(kEnvs) * g.taxels_per_env;
    r.AddInt("envs", kEnvs);
    r.AddInt("taxels", taxels);
    r.AddNumber("taxels_per_s", taxels / (median_ms * 1e-3));
    r.AddNumber("contact_fraction", ContactFraction(**scene));
    if (threads == 1) one_thread_ms = median_ms;
    if (threads > 1 && std::isfinite(one_thread_ms)) r.AddNumber("speedup_vs_1thread", one_thread_ms / median_ms);
    ctx.Emit(r);
  }
}

TAXEL_BENCH_CASE("grasp_batch/mesh20k", [](Context& ctx) { RunGrasp(ctx, GraspObject::kMesh20k); });
TAXEL_BENCH_CASE("grasp_batch/sphere", [](Context& ctx) { RunGrasp(ctx, GraspObject::kSphere); });
TAXEL_BENCH_CASE("grasp_batch/box", [](Context& ctx) { RunGrasp(ctx, GraspObject::kBox); });
TAXEL_BENCH_CASE("grasp_batch/capsule", [](Context& ctx) { RunGrasp(ctx, GraspObject::kCapsule); });

}  // namespace
}  // namespace taxel::bench
