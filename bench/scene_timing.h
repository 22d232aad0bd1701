// Timing of in-process Scene::Step for the scenario cases (grasp batch, sensor models).
#ifndef TAXEL_BENCH_SCENE_TIMING_H_
#define TAXEL_BENCH_SCENE_TIMING_H_

#include <functional>
#include <vector>

#include "bench/bench_registry.h"
#include "core/geometry/mesh_store.h"
#include "core/scene/scene.h"

namespace taxel::bench {

/// Scene::Step input for `poses` ([E, L, 7], xyzw), dt 0.01.
scene::StepInput XyzwStepInput(const std::vector<double>& poses);

/// The scene of `spec` (a benchmark's own spec: aborts if it is refused).
std::unique_ptr<scene::Scene> MustCreate(const scene::SceneSpec& spec, const geometry::MeshStore& meshes);

/// For every thread count of the context: creates the scene, times Scene::Step on `poses` (xyzw,
/// dt 0.01) over the repeats, and emits a record in ms with "envs", the fields `extra` adds (it
/// sees the scene after the last step). With `moved_poses`, the steps alternate between `poses` and
/// it (one untimed step on each first), so that state carried from the last step (the implicit
/// probe solve's warm starts) is one step stale, as in a running simulation.
void TimeSceneSteps(Context& ctx, const scene::SceneSpec& spec, const std::vector<double>& poses,
                    const geometry::MeshStore& meshes, const std::function<void(Record&, const scene::Scene&)>& extra,
                    const std::vector<double>* moved_poses = nullptr);

/// Fraction of the scene's probes whose ground-truth vector output (`displacement`, else `force`)
/// is non-zero after the last step: the share of taxels in contact (or in range).
double NonZeroProbeFraction(const scene::Scene& scene);

}  // namespace taxel::bench

#endif  // TAXEL_BENCH_SCENE_TIMING_H_
