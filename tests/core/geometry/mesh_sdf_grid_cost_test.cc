// Tests for core/geometry/mesh_sdf_grid_cost.h: the estimates of a grid's bricks and queries
// against real builds, and the query limit of MeshSdfGrid::Build.
//
// Fixtures (mesh frame, metres):
//
//   box 80 × 60 × 40 mm        sphere r = 50 mm       torus R = 50, r = 20 mm    bead: sphere r = 5 mm
//   +-------------+             .-"""-.               .-"""""""-.                 .-.
//   |             | sharp      /       \  smooth     / .-"""-.  \  non-convex   (   )  4 µm error: the
//   |             | edges      |   o   |            | (   o   ) |                '-'   coarsest cell
//   +-------------+             '-...-'               '-.....-'                       is below the start
//   1e-3 m, band 3 mm          1e-4 m, band 3 mm     1e-4 m, band 3 mm          4e-6 m, band 2 mm
#include "core/geometry/mesh_sdf_grid_cost.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/common/field_error.h"
#include "core/geometry/mesh_generators.h"
#include "core/geometry/mesh_store.h"
#include "gtest/gtest.h"
#include "server/thread_pool.h"
#include "tests/support/test_support.h"

namespace taxel::geometry {
namespace {

using ::taxel::testing::MakeSdf;

constexpr double kBand = 3e-3;

struct Fixture {
  const char* name;
  std::shared_ptr<const MeshSignedDistance> sdf;
  SdfGridOptions options;
};

std::vector<Fixture> Fixtures() {
  return {{"box", MakeSdf(SubdividedBox(Eigen::Vector3d(0.04, 0.03, 0.02), 4)), {1e-3, kBand}},
          {"sphere", MakeSdf(GeodesicSphere(0.05, 16)), {1e-4, kBand}},
          {"torus", MakeSdf(Torus(0.05, 0.02, 100, 40)), {1e-4, kBand}},
          {"bead", MakeSdf(GeodesicSphere(0.005, 32)), {4e-6, 2e-3}}};
}

std::shared_ptr<const MeshSdfGrid> Build(const Fixture& f, double max_queries = MeshSdfGrid::kUnlimitedQueries) {
  server::ThreadPool pool(2);
  auto grid = MeshSdfGrid::Build(f.sdf, f.options, pool, MemoryBudget::Unlimited(), max_queries);
  EXPECT_TRUE(grid.ok()) << f.name << ": " << grid.status();
  return grid.ok() ? *grid : nullptr;
}

// Sample counts by hand. A box of 4 × 4 squares per face: 6·16·2 = 192 triangles, 6·25 − 12·5 + 8 =
// 98 vertices, 192·3/2 = 288 edges. With 4096 features both strides are 1: 8192 random + 2·98 +
// 2·288 = 8964 points; with 10, every 98/10 = 9th vertex and every 288/10 = 28th triangle.
TEST(MeshSdfGridCostTest, SampleCountsByHand) {
  const auto sdf = MakeSdf(SubdividedBox(Eigen::Vector3d(0.04, 0.03, 0.02), 4));
  const TriangleMesh& box = sdf->mesh();
  ASSERT_EQ(box.num_triangles(), 192);
  ASSERT_EQ(box.num_vertices(), 98);
  EXPECT_EQ(SdfGridSampleCount(box, kSdfGridSearchSampling), 8192 + 2 * 98 + 2 * 288);
  const SdfGridFeatureStrides s = FeatureStrides(box, 10);
  EXPECT_EQ(s.vertex, 9);
  EXPECT_EQ(s.triangle, 28);
}

// The brick estimates bracket the built grids: kept_least ≤ built ≤ kept ≤ 2.5 × built, at the
// cell size each build chose.
TEST(MeshSdfGridCostTest, BrickEstimatesBracketBuiltGrids) {
  for (const Fixture& f : Fixtures()) {
    const auto grid = Build(f);
    ASSERT_NE(grid, nullptr);
    const double built = static_cast<double>(grid->stats().num_bricks);
    const SdfGridBricks est = EstimateSdfGridBricks(f.sdf->mesh(), f.options.band, grid->cell_size());
    EXPECT_GE(est.kept, built) << f.name << " cell " << grid->cell_size();
    EXPECT_LE(est.kept, 2.5 * built) << f.name << " cell " << grid->cell_size();
    EXPECT_LE(est.kept_least, built) << f.name;
    EXPECT_LE(est.kept, est.lattice) << f.name;
  }
}

// The least a request can cost is at most what its build cost: the coarsest cell the error allows
// is at least the one each build chose (the bead's, 3·√(4e-6 m · (8.66 + 2) mm) = 0.62 mm with ρ
// the half-diagonal 5·√3 mm of its bounds, is below its 1 mm start), and the up-front refusal
// never refuses what would fit.
TEST(MeshSdfGridCostTest, LeastQueriesAtMostTheBuildsOwn) {
  for (const Fixture& f : Fixtures()) {
    const auto grid = Build(f);
    ASSERT_NE(grid, nullptr);
    EXPECT_GE(SdfGridCoarsestCell(f.sdf->mesh(), f.options), grid->cell_size()) << f.name;
    if (std::string(f.name) == "bead") {
      // (Its vertices reach to within a few per cent of r on each axis: 1e-5 m of slack.)
      EXPECT_NEAR(SdfGridCoarsestCell(f.sdf->mesh(), f.options), 3 * std::sqrt(4e-6 * (0.005 * std::sqrt(3) + 2e-3)),
                  1e-5);
    }
    EXPECT_LE(SdfGridLeastQueries(f.sdf->mesh(), f.options), grid->stats().num_queries) << f.name;
    // A build's queries: at least its nodes (729 per brick) and the two sample sets.
    EXPECT_GE(grid->stats().num_queries, 729.0 * grid->stats().num_bricks + 8192 + 32768) << f.name;
    // The same build under a limit of exactly what it used succeeds, and makes the same grid.
    const auto again = Build(f, grid->stats().num_queries);
    ASSERT_NE(again, nullptr);
    EXPECT_EQ(again->cell_size(), grid->cell_size()) << f.name;
  }
}

// A limit a little below what the build needs is refused before the queries that would pass it;
// a tiny error is refused before any query, naming the field and both numbers.
TEST(MeshSdfGridCostTest, LimitRefusesBeforeTheQueries) {
  const Fixture f = Fixtures()[0];
  const auto grid = Build(f);
  ASSERT_NE(grid, nullptr);
  server::ThreadPool pool(2);
  auto refused =
      MeshSdfGrid::Build(f.sdf, f.options, pool, MemoryBudget::Unlimited(), 0.9 * grid->stats().num_queries);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(FieldOf(refused.status()), "grid.max_error");
  EXPECT_NE(refused.status().message().find("over the limit of"), std::string::npos) << refused.status();

  // 1e-9 m on the box: the coarsest cell is 3·√(1e-9 · (ρ + band)) with ρ = ½·√(80² + 60² + 40²)
  // mm = 53.9 mm, i.e. 2.3e-5 m; bricks of 0.18 mm hold band·area = 3 mm · 20800 mm² in at least
  // 1.0e7 bricks of 730 queries: 7e9, refused up front (and fast: no query made).
  const SdfGridOptions tiny{1e-9, kBand};
  EXPECT_NEAR(SdfGridCoarsestCell(f.sdf->mesh(), tiny), 3 * std::sqrt(1e-9 * (0.0539 + kBand)), 1e-7);
  EXPECT_GT(SdfGridLeastQueries(f.sdf->mesh(), tiny), 5e9);
  refused = MeshSdfGrid::Build(f.sdf, tiny, pool, MemoryBudget::Unlimited(), 2e7, "grid", "sensor.sdf_backend");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(FieldOf(refused.status()), "sensor.sdf_backend");
  EXPECT_NE(refused.status().message().find("the coarsest this error allows"), std::string::npos) << refused.status();
  EXPECT_NE(refused.status().message().find("over the limit of 2e+07"), std::string::npos) << refused.status();
}

// MeshStore::Add with a grid stores nothing unless the grid is built too; the upload's grid then
// serves any request for an error at least its own and a band at most its own (AddGrid, and a
// sensor's Grid), and a wider band builds a new one with the upload's error.
TEST(MeshSdfGridCostTest, StoreKeepsNothingOfARefusedGridAndReusesByOneRule) {
  server::ThreadPool pool(2);
  MeshStore store;
  store.set_grid_builds(&pool, 2e6);
  const MeshData box = SubdividedBox(Eigen::Vector3d(0.04, 0.03, 0.02), 4);
  auto refused = store.Add(box.vertices, box.triangles, "mesh", SdfGridOptions{1e-8, kBand});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(FieldOf(refused.status()), "grid.max_error");
  EXPECT_EQ(store.size(), 0);
  EXPECT_EQ(store.memory_bytes(), 0u);

  auto added = store.Add(box.vertices, box.triangles, "mesh", SdfGridOptions{1e-3, kBand});
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_TRUE(added->newly_added);
  ASSERT_NE(added->grid, nullptr);
  EXPECT_EQ(store.grid(added->id), added->grid);
  // Coarser or narrower requests reuse it.
  auto reused = store.AddGrid(added->id, SdfGridOptions{2e-3, 1e-3}, MemoryBudget::Unlimited());
  ASSERT_TRUE(reused.ok());
  EXPECT_EQ(*reused, added->grid);
  auto for_sensor = store.Grid(added->id, 2e-3, MemoryBudget::Unlimited(), "sensor.sdf_backend");
  ASSERT_TRUE(for_sensor.ok());
  EXPECT_EQ(*for_sensor, added->grid);
  // A sensor reaching 4 mm gets a wider grid at the upload's error, which replaces it.
  auto wider = store.Grid(added->id, 4e-3, MemoryBudget::Unlimited(), "sensor.sdf_backend");
  ASSERT_TRUE(wider.ok());
  EXPECT_EQ((*wider)->band(), 4e-3);
  EXPECT_EQ((*wider)->stats().requested_max_error, 1e-3);
  EXPECT_EQ(store.grid(added->id), *wider);
  // Uploading again without grid options reports the grid the mesh has.
  auto again = store.Add(box.vertices, box.triangles);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->newly_added);
  EXPECT_EQ(again->grid, *wider);
}

}  // namespace
}  // namespace taxel::geometry
