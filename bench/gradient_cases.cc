// gradients/grasp_batch: the grasp batch of grasp_batch/mesh20k (bench/grasp_scenario.h, 1024
// envs × 2 pads × 16×16 KinematicTaxels against a 20k-triangle mesh) stepped with
// StepInput.gradients on, so every taxel in contact also computes ∂force/∂(pad, object) twist
// (core/sensors/probe_gradients.h). Unit ms per step with gradients; "ms_without" is the same
// scene stepped without them in the same run (the two interleaved repeat by repeat, so that
// drift and noise from other work hit both alike) and "ratio" the quotient of the medians.
#include "bench/bench_registry.h"
#include "bench/grasp_scenario.h"
#include "bench/scene_timing.h"
#include "core/common/check.h"
#include "server/thread_pool.h"

namespace taxel::bench {
namespace {

constexpr int kEnvs = 1024;

void RunGradients(Context& ctx) {
  geometry::MeshStore meshes;
  const GraspScenario g = MakeGraspScenario(GraspObject::kMesh20k, kEnvs, meshes);
  for (int threads : ctx.thread_counts()) {
    auto scene = MustCreate(g.spec, meshes);
    server::ThreadPool pool(threads);
    const scene::StepInput without = XyzwStepInput(g.poses);
    scene::StepInput with = without;
    with.gradients = true;
    // Warm-up of both; the first step with gradients allocates their buffers.
    TAXEL_CHECK(scene->Step(with, pool).ok());
    TAXEL_CHECK(scene->Step(without, pool).ok());
    std::vector<double> on, off;
    for (int i = 0; i < ctx.repeats(); ++i) {
      off.push_back(1e3 * TimeOnce([&] { TAXEL_CHECK(scene->Step(without, pool).ok()); }));
      on.push_back(1e3 * TimeOnce([&] { TAXEL_CHECK(scene->Step(with, pool).ok()); }));
    }
    Record r = ctx.NewRecord(threads, "ms");
    r.samples = on;
    r.AddInt("envs", kEnvs);
    r.AddInt("taxels", static_cast<int64_t>(kEnvs) * g.taxels_per_env);
    r.AddNumber("ms_without", Median(off));
    r.AddNumber("ratio", Median(on) / Median(off));
    r.AddNumber("contact_fraction", NonZeroProbeFraction(*scene));
    ctx.Emit(r);
  }
}

TAXEL_BENCH_CASE("gradients/grasp_batch", RunGradients);

}  // namespace
}  // namespace taxel::bench
