// Mesh signed-distance cases (docs/reference.md#benchmarks):
//   sdf_near/<mesh>     MeshSignedDistance::Query(p, 2 mm) on points within ±2 mm of the surface
//   sdf_uniform/<mesh>  MeshSignedDistance::Query(p) (unbounded) on points uniform in 1.2× the box
//   embree_near/<mesh>  Embree 3 rtcPointQuery closest point on the sdf_near points, radius 2 mm
//   grid_near/<mesh>    MeshSdfGrid::Query (max_error 1e-4 m, band 2 mm) on the sdf_near points,
//                       timed interleaved with Embree as above; fields max_error_m (the grid's
//                       own measurement), checked_max_error_m (|grid − exact| over these points),
//                       p99_error_m, cell_size_m, bytes, build_s (2 threads), ratio_vs_embree
// Unit qps (queries per second, all threads together). Points are split into chunks of kChunk
// handed out by ThreadPool::ParallelFor. sdf_near and embree_near of one mesh and thread count are
// timed in the same loop, repeats interleaved (T E, E T, ...), so that their ratio is not skewed
// by drift in machine load; whichever case runs first measures both and the other reuses it.
// sdf_near and grid_near also carry ratio_vs_embree_paired, the median over repeats of the ratio
// of the two times of one interleaved pair (steadier than the ratio of medians on a shared VM).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_registry.h"
#include "bench/mesh_sdf_fixtures.h"
#include "core/common/executor.h"
#include "core/common/memory_budget.h"
#include "core/geometry/mesh_sdf_grid.h"
#include "core/geometry/mesh_signed_distance.h"
#include "server/thread_pool.h"

#ifdef TAXEL_BENCH_HAVE_EMBREE
#include "bench/embree_closest_point.h"
#endif

namespace taxel::bench {
namespace {

using geometry::MeshSignedDistance;

constexpr int64_t kChunk = 1024;  // points per ParallelFor task

int64_t NumChunks(size_t n) { return static_cast<int64_t>((n + kChunk - 1) / kChunk); }

// Signed distance of every point into *out (the stores keep the work observable).
void TaxelQueryAll(server::ThreadPool& pool, const MeshSignedDistance& sdf, const std::vector<Eigen::Vector3d>& points,
                   double max_distance, std::vector<double>* out) {
  const int64_t n = static_cast<int64_t>(points.size());
  pool.ParallelFor(NumChunks(points.size()), [&](int64_t task, int) {
    const int64_t end = std::min(n, (task + 1) * kChunk);
    for (int64_t i = task * kChunk; i < end; ++i) (*out)[i] = sdf.Query(points[i], max_distance).distance;
  });
}

#ifdef TAXEL_BENCH_HAVE_EMBREE
const EmbreeClosestPoint& GetEmbree(const std::string& mesh) {
  static auto* cache = new std::map<std::string, std::unique_ptr<EmbreeClosestPoint>>();
  auto& slot = (*cache)[mesh];
  if (!slot) slot = std::make_unique<EmbreeClosestPoint>(*GetSdfFixture(mesh).mesh);
  return *slot;
}

// Unsigned distance of every point into *out (+inf when nothing within max_distance).
void EmbreeQueryAll(server::ThreadPool& pool, const EmbreeClosestPoint& embree,
                    const std::vector<Eigen::Vector3d>& points, double max_distance, std::vector<double>* out) {
  const int64_t n = static_cast<int64_t>(points.size());
  pool.ParallelFor(NumChunks(points.size()), [&](int64_t task, int) {
    const int64_t end = std::min(n, (task + 1) * kChunk);
    EmbreeClosestPoint::Result r;
    for (int64_t i = task * kChunk; i < end; ++i) {
      (*out)[i] = embree.ClosestPoint(points[i], max_distance, &r) ? std::sqrt(r.squared_distance) : INFINITY;
    }
  });
}
#endif

// Seconds per pass over the near points, one entry per timed repeat.
struct NearTimings {
  std::vector<double> taxel_s;
  std::vector<double> embree_s;  // empty without Embree
};

const NearTimings& GetNearTimings(const std::string& mesh, int threads, int repeats) {
  static auto* cache = new std::map<std::pair<std::string, int>, NearTimings>();
  const auto key = std::make_pair(mesh, threads);
  if (auto it = cache->find(key); it != cache->end()) return it->second;
  const SdfFixture& f = GetSdfFixture(mesh);
  server::ThreadPool pool(threads);
  std::vector<double> taxel_out(f.near_points.size());
  auto run_taxel = [&] { TaxelQueryAll(pool, *f.sdf, f.near_points, kNearShell, &taxel_out); };
  NearTimings t;
#ifdef TAXEL_BENCH_HAVE_EMBREE
  const EmbreeClosestPoint& embree = GetEmbree(mesh);
  std::vector<double> embree_out(f.near_points.size());
  auto run_embree = [&] { EmbreeQueryAll(pool, embree, f.near_points, kNearShell, &embree_out); };
  TimeInTurn(repeats, run_taxel, run_embree, &t.taxel_s, &t.embree_s);
#else
  t.taxel_s = TimeRepeats(repeats, run_taxel);
#endif
  return cache->emplace(key, std::move(t)).first->second;
}

// Work of one pass over the points, from core's counted traversal (not timed).
struct Work {
  geometry::TraversalStats total;
  double queries = 0;
};

const Work& GetWork(const std::string& mesh, bool near) {
  static auto* cache = new std::map<std::pair<std::string, bool>, Work>();
  const auto key = std::make_pair(mesh, near);
  if (auto it = cache->find(key); it != cache->end()) return it->second;
  const SdfFixture& f = GetSdfFixture(mesh);
  const std::vector<Eigen::Vector3d>& points = near ? f.near_points : f.uniform_points;
  const double max_distance = near ? kNearShell : INFINITY;
  Work w;
  for (const Eigen::Vector3d& p : points) {
    geometry::ClosestPointResult c;
    f.sdf->ClosestPointCounted(p, max_distance, &c, &w.total);
  }
  w.queries = static_cast<double>(points.size());
  return cache->emplace(key, w).first->second;
}

#ifdef TAXEL_BENCH_HAVE_EMBREE
constexpr double kMatchTolerance = 1e-9;  // metres, Embree vs Taxel distance

// Median rate (items per second) over timed passes of `count` items.
double MedianRate(const std::vector<double>& seconds, double count) {
  std::vector<double> rates;
  for (const double s : seconds) rates.push_back(count / s);
  return Median(rates);
}

// Embree vs Taxel on every near point, once per mesh (not timed).
struct NearCheck {
  int64_t compared = 0;    // points where both found a surface within the radius
  int64_t mismatches = 0;  // of those, | Embree distance − |Taxel signed distance| | > kMatchTolerance
  double max_abs_diff = 0;
  double embree_triangles_per_query = 0;  // callbacks per query
};

const NearCheck& GetNearCheck(const std::string& mesh) {
  static auto* cache = new std::map<std::string, NearCheck>();
  if (auto it = cache->find(mesh); it != cache->end()) return it->second;
  const SdfFixture& f = GetSdfFixture(mesh);
  const EmbreeClosestPoint& embree = GetEmbree(mesh);
  NearCheck c;
  int64_t callbacks = 0;
  for (const Eigen::Vector3d& p : f.near_points) {
    const geometry::SignedDistanceResult t = f.sdf->Query(p, kNearShell);
    EmbreeClosestPoint::Result e;
    const bool e_found = embree.ClosestPoint(p, kNearShell, &e);
    callbacks += e.callbacks;
    if (!t.found() || !e_found) continue;
    ++c.compared;
    const double diff = std::abs(std::sqrt(e.squared_distance) - std::abs(t.distance));
    c.max_abs_diff = std::max(c.max_abs_diff, diff);
    if (diff > kMatchTolerance) ++c.mismatches;
  }
  c.embree_triangles_per_query = static_cast<double>(callbacks) / f.near_points.size();
  return cache->emplace(mesh, c).first->second;
}
#endif

void AddMeshFields(const SdfFixture& f, Record* r) {
  r->AddInt("triangles", f.mesh->num_triangles());
  r->AddInt("points", kSdfPoints);
}

void AddWorkFields(const Work& w, Record* r) {
  r->AddNumber("bvh_nodes_per_query", w.total.nodes / w.queries);
  r->AddNumber("triangles_per_query", w.total.triangles / w.queries);
  r->AddNumber("pretests_per_query", w.total.pretests / w.queries);
  r->AddNumber("pretest_passes_per_query", w.total.pretest_passes / w.queries);
}

void RunSdfNear(Context& ctx, const std::string& mesh) {
  const SdfFixture& f = GetSdfFixture(mesh);
  for (const int threads : ctx.thread_counts()) {
    const NearTimings& t = GetNearTimings(mesh, threads, ctx.repeats());
    Record r = ctx.NewRecord(threads, "qps");
    r.samples = t.taxel_s;
    SamplesToRate(&r, kSdfPoints);
    const double qps = Median(r.samples);
    AddMeshFields(f, &r);
    r.AddNumber("search_radius_m", kNearShell);
#ifdef TAXEL_BENCH_HAVE_EMBREE
    const double embree_qps = MedianRate(t.embree_s, kSdfPoints);
    r.AddNumber("embree_qps", embree_qps);
    r.AddNumber("ratio_vs_embree", qps / embree_qps);
    r.AddNumber("ratio_vs_embree_paired", MedianRatio(t.embree_s, t.taxel_s));
    const NearCheck& check = GetNearCheck(mesh);
    r.AddInt("mismatches", check.mismatches);
    r.AddInt("compared", check.compared);
    r.AddNumber("max_abs_diff_m", check.max_abs_diff);
    r.AddNumber("embree_triangles_per_query", check.embree_triangles_per_query);
#endif
    AddWorkFields(GetWork(mesh, /*near=*/true), &r);
    ctx.Emit(r);
  }
}

void RunSdfUniform(Context& ctx, const std::string& mesh) {
  const SdfFixture& f = GetSdfFixture(mesh);
  std::vector<double> out(f.uniform_points.size());
  for (const int threads : ctx.thread_counts()) {
    server::ThreadPool pool(threads);
    Record r = ctx.NewRecord(threads, "qps");
    r.samples = TimeRepeats(ctx.repeats(), [&] { TaxelQueryAll(pool, *f.sdf, f.uniform_points, INFINITY, &out); });
    SamplesToRate(&r, kSdfPoints);
    AddMeshFields(f, &r);
    int64_t inside = 0;
    for (const double d : out) inside += d < 0;
    r.AddInt("inside", inside);
    AddWorkFields(GetWork(mesh, /*near=*/false), &r);
    ctx.Emit(r);
  }
}

#ifdef TAXEL_BENCH_HAVE_EMBREE
void RunEmbreeNear(Context& ctx, const std::string& mesh) {
  const SdfFixture& f = GetSdfFixture(mesh);
  for (const int threads : ctx.thread_counts()) {
    const NearTimings& t = GetNearTimings(mesh, threads, ctx.repeats());
    Record r = ctx.NewRecord(threads, "qps");
    r.samples = t.embree_s;
    SamplesToRate(&r, kSdfPoints);
    AddMeshFields(f, &r);
    r.AddNumber("search_radius_m", kNearShell);
    const NearCheck& check = GetNearCheck(mesh);
    r.AddInt("mismatches", check.mismatches);
    r.AddInt("compared", check.compared);
    r.AddNumber("triangles_per_query", check.embree_triangles_per_query);
    ctx.Emit(r);
  }
}
#endif

// The grid of each mesh, built once on 2 threads (the build is timed).
struct GridFixture {
  std::shared_ptr<const geometry::MeshSdfGrid> grid;
  double build_s = 0;
  double checked_max_error = 0;  // |grid − exact| over the near points
};

constexpr double kGridMaxError = 1e-4;
constexpr int kGridBuildThreads = 2;

const GridFixture& GetGrid(const std::string& mesh) {
  static auto* cache = new std::map<std::string, GridFixture>();
  if (auto it = cache->find(mesh); it != cache->end()) return it->second;
  const SdfFixture& f = GetSdfFixture(mesh);
  server::ThreadPool pool(kGridBuildThreads);
  GridFixture g;
  g.build_s = TimeOnce([&] {
    auto grid = geometry::MeshSdfGrid::Build(f.sdf, geometry::SdfGridOptions{kGridMaxError, kNearShell}, pool,
                                             MemoryBudget::Unlimited());
    if (!grid.ok()) std::abort();  // the benchmark's own fixed options
    g.grid = *std::move(grid);
  });
  for (const Eigen::Vector3d& p : f.near_points) {
    const double d = g.grid->Query(p, kNearShell).distance;
    g.checked_max_error = std::max(g.checked_max_error, std::abs(d - f.sdf->Query(p, kNearShell).distance));
  }
  return cache->emplace(mesh, std::move(g)).first->second;
}

void GridQueryAll(server::ThreadPool& pool, const geometry::MeshSdfGrid& grid,
                  const std::vector<Eigen::Vector3d>& points, std::vector<double>* out) {
  const int64_t n = static_cast<int64_t>(points.size());
  pool.ParallelFor(NumChunks(points.size()), [&](int64_t task, int) {
    const int64_t end = std::min(n, (task + 1) * kChunk);
    for (int64_t i = task * kChunk; i < end; ++i) (*out)[i] = grid.Query(points[i], kNearShell).distance;
  });
}

void RunGridNear(Context& ctx, const std::string& mesh) {
  const SdfFixture& f = GetSdfFixture(mesh);
  const GridFixture& g = GetGrid(mesh);
  for (const int threads : ctx.thread_counts()) {
    server::ThreadPool pool(threads);
    std::vector<double> grid_out(f.near_points.size());
    auto run_grid = [&] { GridQueryAll(pool, *g.grid, f.near_points, &grid_out); };
    Record r = ctx.NewRecord(threads, "qps");
#ifdef TAXEL_BENCH_HAVE_EMBREE
    const EmbreeClosestPoint& embree = GetEmbree(mesh);
    std::vector<double> embree_out(f.near_points.size());
    auto run_embree = [&] { EmbreeQueryAll(pool, embree, f.near_points, kNearShell, &embree_out); };
    std::vector<double> embree_s;
    TimeInTurn(ctx.repeats(), run_grid, run_embree, &r.samples, &embree_s);
#else
    r.samples = TimeRepeats(ctx.repeats(), run_grid);
#endif
    const std::vector<double> grid_s = r.samples;
    SamplesToRate(&r, kSdfPoints);
    AddMeshFields(f, &r);
    r.AddNumber("search_radius_m", kNearShell);
    const geometry::SdfGridStats& s = g.grid->stats();
    r.AddNumber("requested_max_error_m", s.requested_max_error);
    r.AddNumber("max_error_m", s.max_error);
    r.AddNumber("p99_error_m", s.p99_error);
    r.AddNumber("checked_max_error_m", g.checked_max_error);
    r.AddNumber("cell_size_m", s.cell_size);
    r.AddNumber("band_m", s.band);
    r.AddInt("bytes", static_cast<int64_t>(s.bytes));
    r.AddNumber("build_s", g.build_s);
    r.AddInt("build_threads", kGridBuildThreads);
#ifdef TAXEL_BENCH_HAVE_EMBREE
    const double embree_qps = MedianRate(embree_s, kSdfPoints);
    r.AddNumber("embree_qps", embree_qps);
    r.AddNumber("ratio_vs_embree", Median(r.samples) / embree_qps);
    r.AddNumber("ratio_vs_embree_paired", MedianRatio(embree_s, grid_s));
#endif
    ctx.Emit(r);
  }
}

// Case names are a contract (docs/reference.md#benchmarks): never rename.
TAXEL_BENCH_CASE("sdf_near/ico20k", [](Context& c) { RunSdfNear(c, "ico20k"); });
TAXEL_BENCH_CASE("sdf_near/ico200k", [](Context& c) { RunSdfNear(c, "ico200k"); });
TAXEL_BENCH_CASE("sdf_near/torus50k", [](Context& c) { RunSdfNear(c, "torus50k"); });
TAXEL_BENCH_CASE("sdf_uniform/ico20k", [](Context& c) { RunSdfUniform(c, "ico20k"); });
TAXEL_BENCH_CASE("sdf_uniform/ico200k", [](Context& c) { RunSdfUniform(c, "ico200k"); });
TAXEL_BENCH_CASE("sdf_uniform/torus50k", [](Context& c) { RunSdfUniform(c, "torus50k"); });
TAXEL_BENCH_CASE("grid_near/ico20k", [](Context& c) { RunGridNear(c, "ico20k"); });
TAXEL_BENCH_CASE("grid_near/ico200k", [](Context& c) { RunGridNear(c, "ico200k"); });
TAXEL_BENCH_CASE("grid_near/torus50k", [](Context& c) { RunGridNear(c, "torus50k"); });
#ifdef TAXEL_BENCH_HAVE_EMBREE
TAXEL_BENCH_CASE("embree_near/ico20k", [](Context& c) { RunEmbreeNear(c, "ico20k"); });
TAXEL_BENCH_CASE("embree_near/ico200k", [](Context& c) { RunEmbreeNear(c, "ico200k"); });
TAXEL_BENCH_CASE("embree_near/torus50k", [](Context& c) { RunEmbreeNear(c, "torus50k"); });
#endif

}  // namespace
}  // namespace taxel::bench
