// contact_matrix/humanoid4096_estimated and contact_matrix/humanoid4096_reported: 4096 envs ×
// the 33-body humanoid of bench/humanoid_scenario.h × (terrain + 33 robot links), feet and hands
// on the ground. Unit ms per step, with the matrix size in "bytes" and the non-zero cells.
//
// contact_matrix/grasp1024_mesh20k_exact and contact_matrix/grasp1024_mesh20k_grid: the grasp
// batch of bench/grasp_scenario.h without its sensors, 1024 envs × (2 pads) × (the 20k-triangle
// mesh ball), sampled at 2 mm; the pads' samples are tested against the ball's mesh (EXACT) or
// its narrow-band grid (GRID, built before timing). Unit ms per step.
#include <cmath>

#include "bench/bench_registry.h"
#include "bench/grasp_scenario.h"
#include "bench/humanoid_scenario.h"
#include "bench/scene_timing.h"
#include "core/common/check.h"
#include "core/common/executor.h"
#include "core/scene/scene.h"
#include "server/thread_pool.h"

namespace taxel::bench {
namespace {

constexpr int kEnvs = 4096;
constexpr int kReportedPerEnv = 8;

int64_t NonZeroCells(const scene::Scene& s) {
  const contact::ContactMatrix& M = s.contact_matrix()->matrix();
  int64_t n = 0;
  for (int e = 0; e < M.num_envs(); ++e) {
    const float* v = M.normal(e);
    for (int k = 0; k < M.rows() * M.cols(); ++k) n += (v[3 * k] != 0 || v[3 * k + 1] != 0 || v[3 * k + 2] != 0);
  }
  return n;
}

void Run(Context& ctx, contact::ContactSource source) {
  const HumanoidScenario h = MakeHumanoidScenario(kEnvs, source);
  geometry::MeshStore meshes;
  // Reported contacts: 8 per env — each foot and hand on the terrain (link 33 is the plane), and
  // four robot/robot touches (left hand–left foot, etc.), as a solver would report them.
  std::vector<int32_t> env, body, partner;
  std::vector<double> force;
  if (source == contact::ContactSource::kReported) {
    const int plane = h.num_bodies;
    for (int e = 0; e < kEnvs; ++e) {
      for (int i = 0; i < kReportedPerEnv; ++i) {
        const int b = h.feet_and_hands[i % h.feet_and_hands.size()];
        env.push_back(e);
        body.push_back(b);
        partner.push_back(i < 4 ? plane : h.feet_and_hands[(i + 1) % h.feet_and_hands.size()]);
        force.insert(force.end(), {0.1 * i, 0.0, 50.0 + i});
      }
    }
  }
  for (int threads : ctx.thread_counts()) {
    auto scene = MustCreate(h.spec, meshes);
    server::ThreadPool pool(threads);
    scene::StepInput in = XyzwStepInput(h.poses);
    in.contacts.env = env;
    in.contacts.body = body;
    in.contacts.partner = partner;
    in.contacts.force = force;
    Record r = ctx.NewRecord(threads, "ms");
    r.samples = TimeRepeats(ctx.repeats(), [&] { TAXEL_CHECK(scene->Step(in, pool).ok()); });
    ScaleSamples(&r, 1e3);
    const contact::ContactMatrix& M = scene->contact_matrix()->matrix();
    r.AddInt("envs", kEnvs);
    r.AddInt("rows", M.rows());
    r.AddInt("columns", M.cols());
    r.AddInt("bytes", static_cast<int64_t>(M.matrix_bytes()));
    r.AddInt("nonzero_cells", NonZeroCells(*scene));
    if (source == contact::ContactSource::kReported) r.AddInt("contacts_per_step", static_cast<int64_t>(env.size()));
    ctx.Emit(r);
  }
}

void RunGrasp(Context& ctx, geometry::SdfBackend backend) {
  constexpr int kGraspEnvs = 1024;
  geometry::MeshStore meshes;
  GraspScenario g = MakeGraspScenario(GraspObject::kMesh20k, kGraspEnvs, meshes);
  g.spec.sensors.clear();
  g.spec.contact_matrix.bodies = {"all"};
  g.spec.contact_matrix.partners = {"object/*"};
  g.spec.contact_matrix.sample_spacing = 0.002;
  g.spec.contact_matrix.sdf_backend = backend;
  for (int threads : ctx.thread_counts()) {
    auto scene = MustCreate(g.spec, meshes);
    server::ThreadPool pool(threads);
    const scene::StepInput in = XyzwStepInput(g.poses);
    Record r = ctx.NewRecord(threads, "ms");
    r.samples = TimeRepeats(ctx.repeats(), [&] { TAXEL_CHECK(scene->Step(in, pool).ok()); });
    ScaleSamples(&r, 1e3);
    r.AddInt("envs", kGraspEnvs);
    r.AddInt("nonzero_cells", NonZeroCells(*scene));
    ctx.Emit(r);
  }
}

TAXEL_BENCH_CASE("contact_matrix/grasp1024_mesh20k_exact",
                 [](Context& ctx) { RunGrasp(ctx, geometry::SdfBackend::kExact); });
TAXEL_BENCH_CASE("contact_matrix/grasp1024_mesh20k_grid",
                 [](Context& ctx) { RunGrasp(ctx, geometry::SdfBackend::kGrid); });
TAXEL_BENCH_CASE("contact_matrix/humanoid4096_estimated",
                 [](Context& ctx) { Run(ctx, contact::ContactSource::kEstimated); });
TAXEL_BENCH_CASE("contact_matrix/humanoid4096_reported",
                 [](Context& ctx) { Run(ctx, contact::ContactSource::kReported); });

}  // namespace
}  // namespace taxel::bench
