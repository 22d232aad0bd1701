// Tests for server/scene_registry.h: the scene and mesh bookkeeping per tenant, the counted
// limits, the memory reservations (hand-computed byte counts against hand-set limits), and the
// per-scene lock: WithScene/ForEachScene run under it, Delete waits for it, and a call that waited
// for a deleted scene never reaches it.
#include "server/scene_registry.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <fstream>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "core/geometry/triangle_mesh.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/scene_fixtures.h"

namespace taxel::server {
namespace {

using ::testing::AnyOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::PadAndBallSpec;

Limits RoomyLimits() {
  Limits l;
  l.max_memory_bytes = 1LL << 30;
  return l;
}

// A closed octahedron of half-diagonal 2 cm: 6 vertices, 8 counter-clockwise triangles.
struct Octahedron {
  std::vector<Eigen::Vector3d> vertices = {{0.02, 0, 0},  {-0.02, 0, 0}, {0, 0.02, 0},
                                           {0, -0.02, 0}, {0, 0, 0.02},  {0, 0, -0.02}};
  std::vector<geometry::Triangle> triangles = {{0, 2, 4}, {2, 1, 4}, {1, 3, 4}, {3, 0, 4},
                                               {2, 0, 5}, {1, 2, 5}, {3, 1, 5}, {0, 3, 5}};
};

// The scene's own count of its bytes, read under its lock.
int64_t SceneBytes(SceneRegistry& registry, const std::string& tenant, const std::string& name) {
  int64_t bytes = -1;
  EXPECT_TRUE(registry
                  .WithScene(tenant, name,
                             [&](SceneEntry& entry) {
                               bytes = static_cast<int64_t>(entry.scene().memory_bytes());
                               return absl::OkStatus();
                             })
                  .ok());
  return bytes;
}

std::vector<std::string> SceneNames(SceneRegistry& registry, const std::string& tenant) {
  std::vector<std::string> names;
  registry.ForEachScene(tenant, [&](const SceneEntry& entry) {
    EXPECT_EQ(entry.tenant(), tenant);
    names.push_back(entry.name());
  });
  return names;
}

// ---------------------------------------------------------------------------------------------
// Create and the counted limits

TEST(SceneRegistryTest, CreateRefusesBadNames) {
  geometry::MeshStore meshes;
  SceneRegistry registry(RoomyLimits(), &meshes);
  for (const std::string& name :
       {std::string(""), std::string("has space"), std::string("slash/no"), std::string(129, 'x')}) {
    const absl::Status s = registry.Create("alice", PadAndBallSpec(name, 1, 2));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_THAT(s.message(), HasSubstr("name: expected 1 to 128 letters, digits, '_', '-' or '.'")) << name;
  }
  EXPECT_TRUE(registry.Create("alice", PadAndBallSpec("a.b-c_1", 1, 2)).ok());
  EXPECT_TRUE(registry.Create("alice", PadAndBallSpec(std::string(128, 'x'), 1, 2)).ok());
  EXPECT_EQ(registry.size(), 2);
}

TEST(SceneRegistryTest, CreateRefusesEnvsAndProbeSlotsOverTheLimits) {
  geometry::MeshStore meshes;
  Limits limits = RoomyLimits();
  limits.max_envs_per_scene = 4;
  limits.max_probes_per_scene = 50;
  SceneRegistry registry(limits, &meshes);
  absl::Status s = registry.Create("alice", PadAndBallSpec("s", 5, 1));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("num_envs: 5 exceeds the server limit of 4 envs per scene"));
  // A 4 × 4 grid in 4 envs: 64 probe slots > 50; in 3 envs: 48 fit.
  s = registry.Create("alice", PadAndBallSpec("s", 4, 4));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("sensors: num_envs x probes = 64 exceeds the server limit of 50"));
  EXPECT_TRUE(registry.Create("alice", PadAndBallSpec("s", 3, 4)).ok());
}

TEST(SceneRegistryTest, NamesAreTakenPerTenantAndSceneCountsAreLimited) {
  geometry::MeshStore meshes;
  Limits limits = RoomyLimits();
  limits.max_scenes = 2;
  limits.max_scenes_per_tenant = 1;
  SceneRegistry registry(limits, &meshes);
  ASSERT_TRUE(registry.Create("alice", PadAndBallSpec("a", 1, 2)).ok());
  absl::Status s = registry.Create("alice", PadAndBallSpec("a", 1, 2));
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(s.message(), HasSubstr("name: a scene named 'a' already exists"));
  s = registry.Create("alice", PadAndBallSpec("b", 1, 2));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("this tenant already holds its quota of 1 scenes"));
  // The same name is free for another tenant, who then fills the server.
  ASSERT_TRUE(registry.Create("bob", PadAndBallSpec("a", 1, 2)).ok());
  s = registry.Create("carol", PadAndBallSpec("c", 1, 2));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("the server already holds the maximum of 2 scenes"));
  EXPECT_EQ(registry.size(), 2);
}

TEST(SceneRegistryTest, CreatedRunsOnTheNewSceneAndOnlyOnSuccess) {
  geometry::MeshStore meshes;
  SceneRegistry registry(RoomyLimits(), &meshes);
  int calls = 0;
  ASSERT_TRUE(registry
                  .Create("alice", PadAndBallSpec("grasp", 3, 2),
                          [&](SceneEntry& entry) {
                            ++calls;
                            EXPECT_EQ(entry.tenant(), "alice");
                            EXPECT_EQ(entry.name(), "grasp");
                            EXPECT_EQ(entry.scene().num_envs(), 3);
                            EXPECT_EQ(entry.scene().num_probes(), 4);  // one 2 × 2 grid
                          })
                  .ok());
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(registry.Create("alice", PadAndBallSpec("grasp", 3, 2), [&](SceneEntry&) { ++calls; }).ok());
  EXPECT_EQ(calls, 1);
}

TEST(SceneRegistryTest, AMeshTheTenantDidNotUploadIsNotFound) {
  geometry::MeshStore meshes;
  SceneRegistry registry(RoomyLimits(), &meshes);
  Octahedron m;
  auto added = registry.AddMesh("alice", m.vertices, m.triangles);
  ASSERT_TRUE(added.ok()) << added.status();
  scene::SceneSpec spec = PadAndBallSpec("meshy", 1, 2);
  spec.entities[1].links[0].shapes = {testing::MeshShape(added->result.id)};
  // Bob gets the same answer as for an id nobody uploaded.
  const absl::Status bob = registry.Create("bob", spec);
  EXPECT_EQ(bob.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(bob.message(), HasSubstr("mesh '" + added->result.id + "' has not been uploaded"));
  EXPECT_TRUE(registry.Create("alice", spec).ok());
  ASSERT_TRUE(registry.AddMesh("bob", m.vertices, m.triangles).ok());
  EXPECT_TRUE(registry.Create("bob", spec).ok());
}

// ---------------------------------------------------------------------------------------------
// WithScene, ForEachScene, Delete

TEST(SceneRegistryTest, WithSceneRunsTheFunctionAndReturnsItsStatus) {
  geometry::MeshStore meshes;
  SceneRegistry registry(RoomyLimits(), &meshes);
  ASSERT_TRUE(registry.Create("alice", PadAndBallSpec("s", 2, 3)).ok());
  const absl::Status boom = registry.WithScene("alice", "s", [](SceneEntry& entry) {
    EXPECT_EQ(entry.scene().num_envs(), 2);
    return absl::InternalError("boom");
  });
  EXPECT_EQ(boom.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(boom.message(), "boom");
  // A change made inside is there for the next call: a second 3 × 3 sensor makes 18 probes.
  ASSERT_TRUE(registry
                  .WithScene("alice", "s",
                             [](SceneEntry& entry) {
                               return entry.scene()
                                   .AddSensor(testing::GridSensor("more", sensors::SensorKind::kContactProbe, "pad", 3,
                                                                  0.01, 0.005, 0.002))
                                   .status();
                             })
                  .ok());
  int probes = 0;
  ASSERT_TRUE(registry
                  .WithScene("alice", "s",
                             [&](SceneEntry& entry) {
                               probes = entry.scene().num_probes();
                               return absl::OkStatus();
                             })
                  .ok());
  EXPECT_EQ(probes, 18);
}

TEST(SceneRegistryTest, WithSceneOfAnotherTenantsOrNoSceneIsNotFoundAndDoesNotRun) {
  geometry::MeshStore meshes;
  SceneRegistry registry(RoomyLimits(), &meshes);
  ASSERT_TRUE(registry.Create("alice", PadAndBallSpec("s", 1, 2)).ok());
  bool ran = false;
  for (const auto& [tenant, name] : {std::make_pair("bob", "s"), std::make_pair("alice", "nope")}) {
    const absl::Status s = registry.WithScene(tenant, name, [&](SceneEntry&) {
      ran = true;
      return absl::OkStatus();
    });
    EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(s.message(), HasSubstr(std::string("scene: no scene named '") + name + "'"));
  }
  EXPECT_FALSE(ran);
}

TEST(SceneRegistryTest, ForEachSceneVisitsTheTenantsLiveScenesInNameOrder) {
  geometry::MeshStore meshes;
  SceneRegistry registry(RoomyLimits(), &meshes);
  for (const char* name : {"b", "a", "c"}) ASSERT_TRUE(registry.Create("alice", PadAndBallSpec(name, 1, 2)).ok());
  ASSERT_TRUE(registry.Create("bob", PadAndBallSpec("a2", 1, 2)).ok());
  EXPECT_THAT(SceneNames(registry, "alice"), ElementsAre("a", "b", "c"));
  EXPECT_THAT(SceneNames(registry, "bob"), ElementsAre("a2"));
  EXPECT_THAT(SceneNames(registry, "carol"), IsEmpty());
  ASSERT_TRUE(registry.Delete("alice", "b").ok());
  EXPECT_THAT(SceneNames(registry, "alice"), ElementsAre("a", "c"));
}

TEST(SceneRegistryTest, DeleteRemovesTheSceneAndFreesItsNameAndBytes) {
  geometry::MeshStore meshes;
  SceneRegistry registry(RoomyLimits(), &meshes);
  absl::Status s = registry.Delete("alice", "s");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("scene: no scene named 's'"));
  ASSERT_TRUE(registry.Create("alice", PadAndBallSpec("s", 2, 2)).ok());
  EXPECT_GT(registry.memory_bytes(), 0);
  ASSERT_TRUE(registry.Delete("alice", "s").ok());
  EXPECT_EQ(registry.size(), 0);
  EXPECT_EQ(registry.memory_bytes(), 0);
  EXPECT_EQ(registry.usage("alice").num_scenes, 0);
  s = registry.WithScene("alice", "s", [](SceneEntry&) { return absl::OkStatus(); });
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("scene: no scene named 's'"));
  EXPECT_EQ(registry.Delete("alice", "s").code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(registry.Create("alice", PadAndBallSpec("s", 2, 2)).ok()) << "the name is free again";
}

TEST(SceneRegistryTest, SceneGoneIsNotFoundNamingTheScene) {
  const absl::Status s = SceneRegistry::SceneGone("doomed");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "scene: scene 'doomed' was deleted");
}

// Delete erases the name at once, then waits for the operation holding the scene: until that
// operation ends, the scene stays whole under it and Delete does not return.
TEST(SceneRegistryConcurrencyTest, DeleteWaitsForTheOperationInFlight) {
  geometry::MeshStore meshes;
  SceneRegistry registry(RoomyLimits(), &meshes);
  ASSERT_TRUE(registry.Create("alice", PadAndBallSpec("s", 2, 2)).ok());
  std::mutex mu;
  std::condition_variable cv;
  bool inside = false, release = false;
  std::atomic<bool> delete_returned{false};
  int envs_after_erase = 0;
  std::thread op([&] {
    const absl::Status s = registry.WithScene("alice", "s", [&](SceneEntry& entry) {
      std::unique_lock<std::mutex> lock(mu);
      inside = true;
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
      envs_after_erase = entry.scene().num_envs();
      return absl::OkStatus();
    });
    EXPECT_TRUE(s.ok()) << s;
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return inside; });
  }
  std::thread deleter([&] {
    EXPECT_TRUE(registry.Delete("alice", "s").ok());
    delete_returned = true;
  });
  // The name goes first (bounded wait for the deleter to get there).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (registry.size() != 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_EQ(registry.size(), 0);
  EXPECT_FALSE(delete_returned.load()) << "Delete returned while an operation held the scene";
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  op.join();
  deleter.join();
  EXPECT_EQ(envs_after_erase, 2);
  EXPECT_TRUE(delete_returned.load());
}

// Calls racing a delete either run on the whole scene or are NOT_FOUND (absent, or deleted while
// they waited); none ever runs on a deleted one (fn reads the scene, which a delete frees).
TEST(SceneRegistryConcurrencyTest, CallsRacingDeletesNeverReachADeletedScene) {
  geometry::MeshStore meshes;
  SceneRegistry registry(RoomyLimits(), &meshes);
  constexpr int kRounds = 50;
  std::atomic<bool> stop{false};
  std::atomic<int> calls{0}, ran{0}, not_found{0}, wrong{0};
  ASSERT_TRUE(registry.Create("alice", PadAndBallSpec("s", 2, 2)).ok());
  std::vector<std::thread> callers;
  for (int t = 0; t < 2; ++t) {
    callers.emplace_back([&] {
      for (int i = 0; i < 10000000 && !stop.load(); ++i) {
        const absl::Status s = registry.WithScene("alice", "s", [&](SceneEntry& entry) {
          if (entry.scene().num_envs() != 2) ++wrong;
          ++ran;
          return absl::OkStatus();
        });
        const bool gone = s.code() == absl::StatusCode::kNotFound &&
                          (s.message() == "scene: no scene named 's'" || s.message() == "scene: scene 's' was deleted");
        if (gone) {
          ++not_found;
        } else if (!s.ok()) {
          ++wrong;
        }
        ++calls;
      }
    });
  }
  // Each round waits (bounded) for the callers to make two more calls, so that they really race it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (int r = 0; r < kRounds; ++r) {
    const int before = calls.load();
    ASSERT_TRUE(registry.Delete("alice", "s").ok());
    ASSERT_TRUE(registry.Create("alice", PadAndBallSpec("s", 2, 2)).ok());
    while (calls.load() < before + 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  }
  stop = true;
  for (auto& t : callers) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GE(calls.load(), 2 * kRounds);
  EXPECT_EQ(ran.load() + not_found.load(), calls.load());
}

// ---------------------------------------------------------------------------------------------
// Memory: reservations, scenes, meshes

// Limits of 10 000 B for the server and 5 000 B per tenant (FormatBytes: "10 KB", "5 KB").
TEST(ReservationTest, ReservesAgainstTheServerAndTheTenantAndReleasesWhenDestroyed) {
  geometry::MeshStore meshes;
  Limits limits;
  limits.max_memory_bytes = 10000;
  limits.max_memory_bytes_per_tenant = 5000;
  SceneRegistry registry(limits, &meshes);
  {
    Reservation alice(&registry, "alice");
    ASSERT_TRUE(alice.Reserve(1000, "f", "x").ok());
    ASSERT_TRUE(alice.Reserve(3000, "f", "x").ok());
    EXPECT_EQ(alice.reserved(), 4000);
    EXPECT_EQ(registry.memory_bytes(), 4000);
    EXPECT_EQ(registry.usage("alice").memory_bytes, 4000);
    EXPECT_EQ(registry.usage("bob").memory_bytes, 0);
    // 4 000 + 2 000 > 5 000: the tenant's quota refuses, and nothing more is held.
    absl::Status s = alice.Reserve(2000, "delay", "a delay ring");
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(s.message(),
                HasSubstr("delay: a delay ring needs 2 KB; this tenant's memory quota is 5 KB (4 KB in use)"));
    EXPECT_EQ(alice.reserved(), 4000);
    {
      Reservation bob(&registry, "bob");
      ASSERT_TRUE(bob.Reserve(4000, "f", "x").ok());
      // 8 000 + 3 000 > 10 000: the server's limit refuses Bob (within his own quota).
      s = bob.Reserve(3000, "history", "histories");
      EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
      EXPECT_THAT(s.message(),
                  HasSubstr("history: histories needs 3 KB; the server's memory limit is 10 KB (8 KB in use)"));
      EXPECT_EQ(registry.memory_bytes(), 8000);
    }
    EXPECT_EQ(registry.memory_bytes(), 4000);
  }
  EXPECT_EQ(registry.memory_bytes(), 0);
  EXPECT_EQ(registry.usage("alice").memory_bytes, 0);
}

TEST(ReservationTest, RefusesWhatIsNotASize) {
  geometry::MeshStore meshes;
  SceneRegistry registry(RoomyLimits(), &meshes);
  Reservation r(&registry, "alice");
  for (double bytes : {-1.0, std::numeric_limits<double>::quiet_NaN()}) {
    const absl::Status s = r.Reserve(bytes, "field", "it");
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << bytes;
    EXPECT_THAT(s.message(), HasSubstr("that is not a size")) << bytes;
  }
  EXPECT_EQ(r.reserved(), 0);
  EXPECT_EQ(registry.memory_bytes(), 0);
}

TEST(SceneRegistryTest, ScenesCountTheirBytesForTheirTenant) {
  geometry::MeshStore meshes;
  SceneRegistry registry(RoomyLimits(), &meshes);
  ASSERT_TRUE(registry.Create("alice", PadAndBallSpec("a", 4, 3)).ok());
  ASSERT_TRUE(registry.Create("bob", PadAndBallSpec("b", 2, 2)).ok());
  const int64_t a = SceneBytes(registry, "alice", "a"), b = SceneBytes(registry, "bob", "b");
  EXPECT_GT(a, 0);
  EXPECT_GT(b, 0);
  EXPECT_EQ(registry.memory_bytes(), a + b);
  const TenantUsage alice = registry.usage("alice");
  EXPECT_EQ(alice.num_scenes, 1);
  EXPECT_EQ(alice.num_meshes, 0);
  EXPECT_EQ(alice.memory_bytes, a);
  EXPECT_EQ(registry.usage("bob").memory_bytes, b);
}

TEST(SceneRegistryTest, ASceneOverTheMemoryLimitIsRefusedAndHoldsNothing) {
  geometry::MeshStore meshes;
  Limits limits;
  limits.max_memory_bytes = 1000;  // less than any scene's buffers
  SceneRegistry registry(limits, &meshes);
  const absl::Status s = registry.Create("alice", PadAndBallSpec("s", 64, 8));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("the server's memory limit is 1 KB"));
  EXPECT_EQ(registry.size(), 0);
  EXPECT_EQ(registry.memory_bytes(), 0);
}

TEST(SceneRegistryTest, UpdateSceneBytesRecordsTheSizeAfterAChange) {
  geometry::MeshStore meshes;
  SceneRegistry registry(RoomyLimits(), &meshes);
  ASSERT_TRUE(registry.Create("alice", PadAndBallSpec("s", 8, 2)).ok());
  const int64_t before = registry.memory_bytes();
  int64_t after_add = 0;
  ASSERT_TRUE(registry
                  .WithScene("alice", "s",
                             [&](SceneEntry& entry) -> absl::Status {
                               auto id = entry.scene().AddSensor(testing::GridSensor(
                                   "big", sensors::SensorKind::kKinematicTaxel, "pad", 8, 0.005, 0.005, 0.002));
                               if (!id.ok()) return id.status();
                               // Not recorded until told.
                               EXPECT_EQ(registry.memory_bytes(), before);
                               registry.UpdateSceneBytes(entry);
                               after_add = static_cast<int64_t>(entry.scene().memory_bytes());
                               return absl::OkStatus();
                             })
                  .ok());
  EXPECT_GT(after_add, before);
  EXPECT_EQ(registry.memory_bytes(), after_add);
  EXPECT_EQ(registry.usage("alice").memory_bytes, after_add);
}

// Probe slots after the add = (probes + new probes) × envs: a 3 × 3 grid in 2 envs and a limit of
// 22 slots leave room for 2 probes ((9 + 2) × 2 = 22), not 3 ((9 + 3) × 2 = 24).
TEST(SceneRegistryTest, CheckAddSensorCountsTheNewProbesInEveryEnv) {
  geometry::MeshStore meshes;
  Limits limits = RoomyLimits();
  limits.max_probes_per_scene = 22;
  SceneRegistry registry(limits, &meshes);
  ASSERT_TRUE(registry.Create("alice", PadAndBallSpec("s", 2, 3)).ok());
  sensors::SensorSpec two, three;
  two.probe_local_pos.resize(2, Eigen::Vector3d::Zero());
  three.probe_local_pos.resize(3, Eigen::Vector3d::Zero());
  absl::Status fits, over;
  ASSERT_TRUE(registry
                  .WithScene("alice", "s",
                             [&](SceneEntry& entry) {
                               fits = registry.CheckAddSensor(entry.scene(), two);
                               over = registry.CheckAddSensor(entry.scene(), three);
                               return absl::OkStatus();
                             })
                  .ok());
  EXPECT_TRUE(fits.ok()) << fits;
  EXPECT_EQ(over.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(over.message(), HasSubstr("sensor: num_envs x probes would be 24, over the server limit of 22"));
}

TEST(SceneRegistryTest, AddMeshIsNewPerTenantAndCountsForEachTenantOnce) {
  geometry::MeshStore meshes;
  SceneRegistry registry(RoomyLimits(), &meshes);
  Octahedron m;
  auto first = registry.AddMesh("alice", m.vertices, m.triangles);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->newly_added);
  EXPECT_EQ(first->result.id, geometry::TriangleMesh::ContentId(m.vertices, m.triangles));
  auto again = registry.AddMesh("alice", m.vertices, m.triangles);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->newly_added);
  auto bob = registry.AddMesh("bob", m.vertices, m.triangles);
  ASSERT_TRUE(bob.ok());
  EXPECT_TRUE(bob->newly_added) << "new to Bob, whoever uploaded it before";
  EXPECT_EQ(bob->result.id, first->result.id);
  // Built once: the server holds it once, each tenant is charged for it.
  const int64_t mesh_bytes = static_cast<int64_t>(meshes.mesh_bytes(first->result.id));
  EXPECT_GT(mesh_bytes, 0);
  EXPECT_EQ(registry.memory_bytes(), static_cast<int64_t>(meshes.memory_bytes()));
  EXPECT_EQ(registry.memory_bytes(), mesh_bytes);
  for (const char* tenant : {"alice", "bob"}) {
    EXPECT_EQ(registry.usage(tenant).num_meshes, 1) << tenant;
    EXPECT_EQ(registry.usage(tenant).memory_bytes, mesh_bytes) << tenant;
  }
  EXPECT_EQ(registry.usage("carol").num_meshes, 0);
}

// MeshStore::EstimateBytes(6 vertices, 8 triangles) = 320 000 + 420·8 + 64·6 = 323 744 B, "324 KB":
// reserved before the mesh is built, so a 300 kB server refuses even this small mesh.
TEST(SceneRegistryTest, AddMeshReservesTheEstimateFirst) {
  geometry::MeshStore meshes;
  Limits limits;
  limits.max_memory_bytes = 300000;
  SceneRegistry registry(limits, &meshes);
  Octahedron m;
  auto added = registry.AddMesh("alice", m.vertices, m.triangles);
  EXPECT_EQ(added.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(added.status().message(),
              HasSubstr("triangles: a mesh of 6 vertices and 8 triangles needs 324 KB; the server's memory limit is "
                        "300 KB"));
  EXPECT_EQ(registry.memory_bytes(), 0);
  EXPECT_EQ(registry.usage("alice").num_meshes, 0);
}

TEST(SceneRegistryTest, AnInvalidMeshIsRefusedAndHoldsNothing) {
  geometry::MeshStore meshes;
  SceneRegistry registry(RoomyLimits(), &meshes);
  Octahedron m;
  m.triangles[3] = {0, 1, 6};  // vertex 6 does not exist
  auto added = registry.AddMesh("alice", m.vertices, m.triangles);
  EXPECT_EQ(added.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(added.status().message(), HasSubstr("triangles[3]"));
  EXPECT_EQ(registry.memory_bytes(), 0);
  EXPECT_EQ(registry.usage("alice").num_meshes, 0);
}

TEST(SceneRegistryTest, LimitsAreTheOnesGiven) {
  geometry::MeshStore meshes;
  Limits limits;
  limits.max_memory_bytes = 123456;
  limits.max_scenes = 7;
  limits.max_scenes_per_tenant = 3;
  const SceneRegistry registry(limits, &meshes);
  EXPECT_EQ(registry.limits().max_memory_bytes, 123456);
  EXPECT_EQ(registry.limits().max_scenes, 7);
  EXPECT_EQ(registry.limits().max_scenes_per_tenant, 3);
  EXPECT_EQ(registry.size(), 0);
}

// ---------------------------------------------------------------------------------------------
// ResolveMemoryLimit

TEST(ResolveMemoryLimitTest, ARequestedLimitIsKept) {
  EXPECT_EQ(ResolveMemoryLimit(12345), 12345);
  EXPECT_EQ(ResolveMemoryLimit(int64_t{1} << 40), int64_t{1} << 40);
}

// Otherwise three quarters of min(cgroup memory.max, MemTotal), both read here from the files.
TEST(ResolveMemoryLimitTest, UnsetIsThreeQuartersOfWhatTheProcessMayUse) {
  double mem_total = 0;
  {
    std::ifstream meminfo("/proc/meminfo");
    std::string key, unit;
    double kb = 0;
    while (meminfo >> key >> kb >> unit) {
      if (key == "MemTotal:") mem_total = kb * 1024;
    }
  }
  ASSERT_GT(mem_total, 0) << "no MemTotal in /proc/meminfo";
  double available = mem_total;
  for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(path);
    std::string text;
    double v = 0;
    if (in >> text && absl::SimpleAtod(text, &v) && v > 0 && v < 1e18) {
      available = std::min(available, v);
      break;
    }
  }
  EXPECT_EQ(ResolveMemoryLimit(0), static_cast<int64_t>(0.75 * available));
  EXPECT_EQ(ResolveMemoryLimit(-1), static_cast<int64_t>(0.75 * available));
}

}  // namespace
}  // namespace taxel::server
