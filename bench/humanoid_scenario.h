// The humanoid of the contact-matrix benchmarks: 33 bodies made of capsules, boxes and spheres,
// standing on a half-space terrain with both feet flat on the ground and both hands resting on
// it (1 mm penetration each), in num_envs envs. No two bodies of the humanoid overlap.
#ifndef TAXEL_BENCH_HUMANOID_SCENARIO_H_
#define TAXEL_BENCH_HUMANOID_SCENARIO_H_

#include <vector>

#include "core/scene/scene_spec.h"

namespace taxel::bench {

struct HumanoidScenario {
  scene::SceneSpec spec;
  std::vector<double> poses;  ///< [num_envs, 33, 7] xyzw
  int num_bodies = 0;
  std::vector<int> feet_and_hands;  ///< link indices in contact with the terrain
};

HumanoidScenario MakeHumanoidScenario(int num_envs, contact::ContactSource source);

}  // namespace taxel::bench

#endif  // TAXEL_BENCH_HUMANOID_SCENARIO_H_
