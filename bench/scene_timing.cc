#include "bench/scene_timing.h"

#include <cmath>

#include "core/common/check.h"
#include "core/common/executor.h"
#include "server/thread_pool.h"

namespace taxel::bench {

scene::StepInput XyzwStepInput(const std::vector<double>& poses) {
  scene::StepInput in;
  in.poses = poses;
  in.quat_order = QuatOrder::kXyzw;
  in.dt = 0.01;
  return in;
}

std::unique_ptr<scene::Scene> MustCreate(const scene::SceneSpec& spec, const geometry::MeshStore& meshes) {
  auto scene = scene::Scene::Create(spec, meshes);
  TAXEL_CHECK(scene.ok());
  return *std::move(scene);
}

void TimeSceneSteps(Context& ctx, const scene::SceneSpec& spec, const std::vector<double>& poses,
                    const geometry::MeshStore& meshes, const std::function<void(Record&, const scene::Scene&)>& extra,
                    const std::vector<double>* moved_poses) {
  for (int threads : ctx.thread_counts()) {
    auto scene = MustCreate(spec, meshes);
    server::ThreadPool pool(threads);
    const scene::StepInput inputs[2] = {XyzwStepInput(poses), XyzwStepInput(moved_poses ? *moved_poses : poses)};
    int step = 0;
    const auto step_once = [&] { TAXEL_CHECK(scene->Step(inputs[step++ % 2], pool).ok()); };
    if (moved_poses != nullptr) step_once(), step_once();
    Record r = ctx.NewRecord(threads, "ms");
    r.samples = TimeRepeats(ctx.repeats(), step_once);
    ScaleSamples(&r, 1e3);
    r.AddInt("envs", spec.num_envs);
    extra(r, *scene);
    ctx.Emit(r);
  }
}

double NonZeroProbeFraction(const scene::Scene& scene) {
  int64_t active = 0, total = 0;
  for (const auto* s : scene.sensors()) {
    const auto& o = s->outputs(sensors::Branch::kGroundTruth);
    const std::vector<float>& v = !o.displacement.empty() ? o.displacement : o.force;
    for (size_t k = 0; k + 2 < v.size(); k += 3) {
      active += (v[k] != 0 || v[k + 1] != 0 || v[k + 2] != 0);
      ++total;
    }
  }
  return total ? static_cast<double>(active) / total : 0.0;
}

}  // namespace taxel::bench
