// Security settings fail closed, tokens never leak, and tenants are isolated: quotas per tenant,
// usage per tenant in GetServerInfo, and meshes visible only to the tenants that uploaded them.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/tokens.h"
#include "tests/server/service_fixture.h"

namespace taxel::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// ---------------------------------------------------------------------------------------------
// Tokens file

TEST(TokensTest, PairsCommentsAndBlankLines) {
  auto t = server::ParseTokens("# ops\n\ns3cret-a  alice\n\ts3cret-b\tbob  \n", "tokens");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->size(), 2u);
  EXPECT_EQ(t->at("s3cret-a"), "alice");
  EXPECT_EQ(t->at("s3cret-b"), "bob");
}

TEST(TokensTest, ALineWithoutTenantRefusesAndDoesNotQuoteTheToken) {
  auto t = server::ParseTokens("s3cret-a alice\ns3cret-lonely\n", "tokens");
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("line 2: expected '<token> <tenant>' (1 words found)"));
  EXPECT_THAT(std::string(t.status().message()), Not(HasSubstr("s3cret")));
}

TEST(TokensTest, ExtraWordsAndRepeatedTokensRefuse) {
  EXPECT_THAT(std::string(server::ParseTokens("a b c\n", "tokens").status().message()), HasSubstr("line 1"));
  auto t = server::ParseTokens("tok alice\ntok bob\n", "tokens");
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("line 2: this token is already given"));
  EXPECT_THAT(std::string(t.status().message()), Not(HasSubstr("tok ")));
}

// A file whose tokens were all revoked (commented out) would turn authentication off.
TEST(TokensTest, AFileWithoutTokensRefuses) {
  for (const char* text : {"", "\n\n", "# revoked-token alice\n#another bob\n"}) {
    auto t = server::ParseTokens(text, "tokens");
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(std::string(t.status().message()), HasSubstr("would turn authentication off"));
  }
}

// ---------------------------------------------------------------------------------------------
// TLS settings: half a configuration never starts a plaintext server.

TEST(TlsSettingsTest, HalfConfigurationsRefuseToStart) {
  const std::string dir = ::testing::TempDir();
  const std::string pem = dir + "/any.pem";
  std::ofstream(pem) << "not read: the check comes first\n";
  server::ServerOptions o = TestServerOptions();
  struct Case {
    server::TlsOptions tls;
    std::string message;
  };
  for (const Case& c :
       {Case{{"", pem, ""}, "tls_key: set without --tls_cert"}, Case{{pem, "", ""}, "tls_cert: set without --tls_key"},
        Case{{"", "", pem}, "tls_client_ca: mutual TLS needs the server's own certificate"},
        Case{{"", pem, pem}, "tls_key: set without --tls_cert"}}) {
    auto s = server::TaxelServer::Start(o, c.tls);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(std::string(s.status().message()), StartsWith(c.message));
  }
}

// SIGTERM with queued work (finding 8): one request thread, eight concurrent slow steps, a grace
// of half a step. The steps still queued when the grace ends are answered UNAVAILABLE (and never
// run: request_executor_test.cc), and Shutdown returns once the running step is done, not after
// every queued one: within grace + 2 steps + 1 s (the bound for scheduling on a loaded machine),
// where running all eight would take grace + 7 steps.
TEST(ShutdownTest, QueuedStepsAreRefusedAtTheEndOfTheGrace) {
  server::ServerOptions o = TestServerOptions();
  o.eval_threads = 1;
  o.request_threads = 1;
  o.limits.max_envs_per_scene = 4096;
  o.limits.max_message_bytes = 64 << 20;
  auto started = server::TaxelServer::Start(o);
  ASSERT_TRUE(started.ok()) << started.status();
  std::unique_ptr<server::TaxelServer> server = *std::move(started);
  auto client = Client::Connect(server->target());
  ASSERT_TRUE(client.ok());
  constexpr int kE = 4096;
  ASSERT_TRUE((*client)->CreateScene(ToWire(PadAndBallSpec("slow", kE, 16))).ok());
  std::vector<double> poses;
  for (int e = 0; e < kE; ++e) poses.insert(poses.end(), {0, 0, 0, 0, 0, 0, 1, 0, 0, 0.054, 0, 0, 0, 1});
  v1::StepRequest step = MakeStep("slow", kE, poses);
  step.mutable_read()->set_none(true);
  // One step alone sets the time scale.
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE((*client)->Step(step).ok());
  const double step_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  constexpr int kCalls = 8;
  std::vector<absl::Status> results(kCalls);
  std::vector<std::thread> callers;
  std::atomic<int> sent{0};
  for (int i = 0; i < kCalls; ++i) {
    callers.emplace_back([&, i] {
      auto c = Client::Connect(server->target());
      ++sent;
      results[i] = c.ok() ? (*c)->Step(step).status() : c.status();
    });
  }
  // Wait (bounded) until at least five calls wait in the queue behind the running one: a fixed
  // sleep would let a fast machine finish several steps first.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (server->queued_requests() < 5 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_GE(server->queued_requests(), 5u) << "the calls did not reach the queue; one step takes " << step_s << " s";
  const double grace = 0.5 * step_s;
  t0 = std::chrono::steady_clock::now();
  server->Shutdown(grace);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto& t : callers) t.join();
  EXPECT_LT(took, grace + 2 * step_s + 1.0) << "one step takes " << step_s << " s";
  int ok = 0, refused = 0;
  for (const absl::Status& r : results) {
    if (r.ok()) ++ok;
    // Ours (UNAVAILABLE, "not run") or gRPC's own cancellation at the deadline, which races it.
    if (r.code() == absl::StatusCode::kUnavailable || r.code() == absl::StatusCode::kCancelled) ++refused;
  }
  EXPECT_EQ(ok + refused, kCalls);
  // At least five were queued when the grace began; in half a step at most one more starts.
  EXPECT_GE(refused, 4) << "the grace is half a step: most calls were still queued";
}

// ---------------------------------------------------------------------------------------------
// Tenants

class TenantTest : public ServerTest {
 protected:
  void SetUp() override {}
  void Start(int max_scenes_per_tenant, int64_t max_memory_bytes_per_tenant) {
    server::ServerOptions o = TestServerOptions();
    o.limits.max_scenes_per_tenant = max_scenes_per_tenant;
    o.limits.max_memory_bytes_per_tenant = max_memory_bytes_per_tenant;
    StartServer(o, {{"token-a", "alice"}, {"token-b", "bob"}});
    alice_ = NewClient("token-a");
    bob_ = NewClient("token-b");
  }
  std::unique_ptr<Client> alice_, bob_;
};

TEST_F(TenantTest, SceneQuotaIsPerTenantAndUsageIsTheCallers) {
  Start(/*max_scenes_per_tenant=*/1, 0);
  ASSERT_TRUE(alice_->CreateScene(ToWire(GraspSpec("a1", 2, SphereShape(kBallR)))).ok());
  auto second = alice_->CreateScene(ToWire(GraspSpec("a2", 2, SphereShape(kBallR))));
  EXPECT_EQ(second.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(second.status().message()), HasSubstr("this tenant already holds its quota of 1 scenes"));
  // Bob is not starved by Alice.
  ASSERT_TRUE(bob_->CreateScene(ToWire(GraspSpec("b1", 2, SphereShape(kBallR)))).ok());

  auto a = alice_->GetServerInfo();
  auto b = bob_->GetServerInfo();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->limits().max_scenes_per_tenant(), 1);
  EXPECT_EQ(a->num_scenes(), 1);
  EXPECT_EQ(b->num_scenes(), 1);
  EXPECT_GT(a->memory_bytes(), 0);
  // Alice's usage is her scene's bytes, not the server's total.
  auto scene = alice_->GetScene("a1");
  ASSERT_TRUE(scene.ok());
  EXPECT_EQ(a->memory_bytes(), scene->memory_bytes());
}

TEST_F(TenantTest, MemoryQuotaIsPerTenant) {
  // 64 envs of the grasp scene hold about 100 kB; 40 kB is too little for Alice and Bob alike,
  // while 2 envs fit.
  Start(0, 40000);
  auto big = alice_->CreateScene(ToWire(GraspSpec("big", 64, SphereShape(kBallR))));
  EXPECT_EQ(big.status().code(), absl::StatusCode::kResourceExhausted) << big.status();
  EXPECT_THAT(std::string(big.status().message()), HasSubstr("this tenant's memory quota is 40 KB"));
  EXPECT_TRUE(alice_->CreateScene(ToWire(GraspSpec("small", 2, SphereShape(kBallR)))).ok());
  EXPECT_TRUE(bob_->CreateScene(ToWire(GraspSpec("small", 2, SphereShape(kBallR)))).ok());
  auto a = alice_->GetServerInfo();
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->limits().max_memory_bytes_per_tenant(), 40000);
  EXPECT_LE(a->memory_bytes(), 40000);
}

// Bob learns nothing of Alice's uploads: the same mesh is new to him, and her mesh id is unknown
// to him until he uploads it himself (the same NOT_FOUND as an id nobody uploaded).
TEST_F(TenantTest, UploadsAreNotRevealedToOtherTenants) {
  Start(0, 0);
  const geometry::MeshData ball = BallMesh();
  auto a = alice_->UploadMesh(FlatVertices(ball), FlatTriangles(ball));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->newly_added());
  auto again = alice_->UploadMesh(FlatVertices(ball), FlatTriangles(ball));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->newly_added());

  auto theirs = bob_->CreateScene(ToWire(GraspSpec("g", 2, MeshShape(a->mesh_id()))));
  auto nobodys = bob_->CreateScene(ToWire(GraspSpec("g", 2, MeshShape(std::string(64, '0')))));
  EXPECT_EQ(theirs.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(std::string(theirs.status().message()),
            absl::StrCat("spec.entities[1].links[0].shapes[0].mesh.mesh_id: mesh '", a->mesh_id(),
                         "' has not been uploaded"));
  EXPECT_EQ(nobodys.status().code(), absl::StatusCode::kNotFound);

  auto b = bob_->UploadMesh(FlatVertices(ball), FlatTriangles(ball));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->mesh_id(), a->mesh_id());
  EXPECT_TRUE(b->newly_added()) << "tells Bob that someone else uploaded this mesh";
  EXPECT_TRUE(bob_->CreateScene(ToWire(GraspSpec("g", 2, MeshShape(a->mesh_id())))).ok());
  auto info = bob_->GetServerInfo();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->num_meshes(), 1);
}

// A mesh two tenants uploaded stays on the server until both delete it; each one's DeleteMesh
// answers only for its own scenes.
TEST_F(TenantTest, DeletingASharedMeshLeavesItToTheOtherTenant) {
  Start(0, 0);
  const geometry::MeshData ball = BallMesh();
  auto a = alice_->UploadMesh(FlatVertices(ball), FlatTriangles(ball));
  auto b = bob_->UploadMesh(FlatVertices(ball), FlatTriangles(ball));
  ASSERT_TRUE(a.ok() && b.ok());
  const std::string id = a->mesh_id();
  ASSERT_TRUE(bob_->CreateScene(ToWire(GraspSpec("g", 2, MeshShape(id)))).ok());

  // Bob's scene does not stop Alice, and tells her nothing of it.
  ASSERT_TRUE(alice_->DeleteMesh(id).ok());
  auto alice = alice_->GetServerInfo();
  ASSERT_TRUE(alice.ok());
  EXPECT_EQ(alice->num_meshes(), 0);
  EXPECT_EQ(alice->memory_bytes(), 0);
  EXPECT_EQ(alice_->CreateScene(ToWire(GraspSpec("g", 2, MeshShape(id)))).status().code(),
            absl::StatusCode::kNotFound);
  // Bob's scene still has its mesh: the ball sunk into the pad reads a depth.
  const std::vector<double> env = PosesXyzw({Eigen::Vector3d::Zero(), Eigen::Vector3d(0, 0, 0.054)});
  std::vector<double> poses = env;
  poses.insert(poses.end(), env.begin(), env.end());
  auto step = bob_->Step(MakeStep("g", 2, poses));
  ASSERT_TRUE(step.ok()) << step.status();
  float deepest = 0;
  for (const auto& reading : step->readings()) {
    if (auto it = reading.channels().find("depth"); it != reading.channels().end()) {
      const std::vector<float> depths = *FloatValues(it->second);
      for (float v : depths) deepest = std::max(deepest, v);
    }
  }
  EXPECT_GT(deepest, 0.f);
  EXPECT_EQ(bob_->DeleteMesh(id).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(bob_->DeleteScene("g").ok());
  ASSERT_TRUE(bob_->DeleteMesh(id).ok());
  auto bob = bob_->GetServerInfo();
  ASSERT_TRUE(bob.ok());
  EXPECT_EQ(bob->num_meshes(), 0);
  EXPECT_EQ(bob->memory_bytes(), 0);
}

}  // namespace
}  // namespace taxel::testing
