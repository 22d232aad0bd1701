// taxel::ReplicaSetClient over three in-process servers: scenes on their placed replica, lookups
// by another client, and failover when a replica goes away (auto_recreate).
#include "taxel/replica_set.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "taxel/placement.h"
#include "tests/server/service_fixture.h"

namespace taxel::testing {
namespace {

using ::testing::HasSubstr;

class ReplicaSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 3; ++i) {
      server::ServerOptions o = TestServerOptions();
      o.replica_id = absl::StrCat("taxel-", i);
      auto s = server::TaxelServer::Start(o);
      ASSERT_TRUE(s.ok()) << s.status();
      servers_.push_back(*std::move(s));
    }
  }
  std::vector<std::string> Targets() const {
    std::vector<std::string> t;
    for (const auto& s : servers_) t.push_back(s->target());
    return t;
  }
  std::unique_ptr<ReplicaSetClient> Connect(bool auto_recreate, std::vector<std::string> targets = {}) {
    ReplicaSetClient::Options o;
    o.targets = targets.empty() ? Targets() : std::move(targets);
    o.auto_recreate = auto_recreate;
    o.client.timeout_seconds = 20;
    auto rs = ReplicaSetClient::Connect(o);
    EXPECT_TRUE(rs.ok()) << rs.status();
    return rs.ok() ? *std::move(rs) : nullptr;
  }
  /// The replica ids of the servers that hold `scene`, asked of each server directly.
  std::vector<std::string> Holders(const std::string& scene) {
    std::vector<std::string> out;
    for (size_t i = 0; i < servers_.size(); ++i) {
      if (servers_[i] == nullptr) continue;
      auto c = Client::Connect(servers_[i]->target());
      auto list = (*c)->ListScenes();
      EXPECT_TRUE(list.ok()) << list.status();
      for (const auto& s : list->scenes()) {
        if (s.name() == scene) out.push_back(absl::StrCat("taxel-", i));
      }
    }
    return out;
  }
  std::vector<std::unique_ptr<server::TaxelServer>> servers_;
};

TEST_F(ReplicaSetTest, ScenesLiveOnTheirPlacedReplica) {
  auto rs = Connect(false);
  ASSERT_NE(rs, nullptr);
  EXPECT_THAT(rs->replica_ids(), ::testing::ElementsAre("taxel-0", "taxel-1", "taxel-2"));
  for (int i = 0; i < 9; ++i) {
    const std::string name = absl::StrCat("placed-", i);
    auto info = rs->CreateScene(ToWire(GraspSpec(name, 2, SphereShape(kBallR))));
    ASSERT_TRUE(info.ok()) << info.status();
    const std::string home = RankReplicas(rs->replica_ids(), "", name).front();
    EXPECT_THAT(Holders(name), ::testing::ElementsAre(home)) << name;
    EXPECT_EQ(*rs->ReplicaOf(name), home);
  }
  // A second client, targets in another order, finds and steps a scene it did not create.
  std::vector<std::string> reversed = Targets();
  std::reverse(reversed.begin(), reversed.end());
  auto other = Connect(false, reversed);
  auto step = other->Step(MakeStep("placed-4", 2, MovingPoses(2, 0)));
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->step(), 1);
  ASSERT_TRUE(other->DeleteScene("placed-4").ok());
  EXPECT_TRUE(Holders("placed-4").empty());
  auto gone = rs->GetScene("placed-4");
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ReplicaSetTest, DuplicateReplicaIdsAreRefused) {
  server::ServerOptions o = TestServerOptions();
  o.replica_id = "taxel-1";
  auto twin = server::TaxelServer::Start(o);
  ASSERT_TRUE(twin.ok());
  ReplicaSetClient::Options opts;
  opts.targets = {servers_[1]->target(), (*twin)->target()};
  auto rs = ReplicaSetClient::Connect(opts);
  EXPECT_EQ(rs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(rs.status().message(), HasSubstr("both report replica_id 'taxel-1'; replica ids must be unique"));
}

TEST_F(ReplicaSetTest, RefreshSeesAReplicaThatCameBack) {
  auto rs = Connect(false);
  ASSERT_NE(rs, nullptr);
  const int port = servers_[1]->port();
  servers_[1].reset();
  ASSERT_TRUE(rs->Refresh().ok());
  EXPECT_THAT(rs->replica_ids(), ::testing::ElementsAre("taxel-0", "taxel-2"));
  server::ServerOptions o = TestServerOptions();
  o.address = absl::StrCat("127.0.0.1:", port);
  o.replica_id = "taxel-1";
  auto back = server::TaxelServer::Start(o);
  ASSERT_TRUE(back.ok()) << back.status();
  servers_[1] = *std::move(back);
  ASSERT_TRUE(rs->Refresh().ok());
  EXPECT_THAT(rs->replica_ids(), ::testing::ElementsAre("taxel-0", "taxel-1", "taxel-2"));
}

TEST(ResolveTargetsTest, DnsEntriesBecomeAddresses) {
  auto t = ResolveTargets({"a:1", "dns:///127.0.0.1:50051", "a:1", "dns://8.8.8.8/127.0.0.1:7"});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(*t, ::testing::ElementsAre("a:1", "127.0.0.1:50051", "127.0.0.1:7"));
  auto local = ResolveTargets({"dns:///localhost:9"});
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_THAT(*local, ::testing::Contains("127.0.0.1:9"));
  auto bad = ResolveTargets({"a:1", "dns:///nohost"});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("targets[1]: expected host:port with a port in 1..65535"));
  EXPECT_THAT(ResolveTargets({""}).status().message(), HasSubstr("targets[0]: expected a non-empty target"));
}

TEST_F(ReplicaSetTest, NoLiveReplicaIsUnavailable) {
  const std::vector<std::string> targets = Targets();
  servers_.clear();
  ReplicaSetClient::Options o;
  o.targets = targets;
  o.client.timeout_seconds = 5;
  o.probe_timeout_seconds = 0.5;  // each dead target costs this long
  auto rs = ReplicaSetClient::Connect(o);
  EXPECT_EQ(rs.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(rs.status().message(), HasSubstr("replica set: no replica answered GetServerInfo"));
}

TEST_F(ReplicaSetTest, FailoverRecreatesTheLostReplicasScenesOnTheirSecondChoice) {
  auto rs = Connect(true);
  ASSERT_NE(rs, nullptr);
  const geometry::MeshData ball = BallMesh();
  auto mesh = rs->UploadMesh(FlatVertices(ball), FlatTriangles(ball));
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  const int kScenes = 12, kEnvs = 2;
  std::vector<std::string> names;
  std::map<std::string, std::string> home;
  for (int i = 0; i < kScenes; ++i) {
    names.push_back(absl::StrCat("fo-", i));
    ASSERT_TRUE(rs->CreateScene(ToWire(GraspSpec(names.back(), kEnvs, MeshShape(mesh->mesh_id())))).ok());
    home[names.back()] = *rs->ReplicaOf(names.back());
  }
  for (int s = 0; s < 2; ++s) {
    for (const std::string& n : names) ASSERT_TRUE(rs->Step(MakeStep(n, kEnvs, MovingPoses(kEnvs, s))).ok());
  }
  const std::string victim = home[names[0]];
  servers_[victim.back() - '0'].reset();  // shut down: its port refuses connections

  std::map<std::string, v1::StepResponse> after;
  for (const std::string& n : names) {
    auto r = rs->Step(MakeStep(n, kEnvs, MovingPoses(kEnvs, 2)));
    ASSERT_TRUE(r.ok()) << n << ": " << r.status();
    after[n] = *std::move(r);
  }
  EXPECT_THAT(rs->replica_ids(), ::testing::Not(::testing::Contains(victim)));
  ASSERT_TRUE(rs->CreateScene(ToWire(GraspSpec("fresh", kEnvs, MeshShape(mesh->mesh_id())))).ok());
  auto fresh = rs->Step(MakeStep("fresh", kEnvs, MovingPoses(kEnvs, 2)));
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  int moved = 0;
  for (const std::string& n : names) {
    if (home[n] != victim) {
      EXPECT_EQ(after[n].step(), 3) << n;
      EXPECT_EQ(rs->recreations(n), 0) << n;
      EXPECT_THAT(Holders(n), ::testing::ElementsAre(home[n]));
      continue;
    }
    ++moved;
    const std::string second = RankReplicas({"taxel-0", "taxel-1", "taxel-2"}, "", n)[1];
    EXPECT_EQ(after[n].step(), 1) << n;
    EXPECT_EQ(rs->recreations(n), 1) << n;
    EXPECT_THAT(Holders(n), ::testing::ElementsAre(second)) << n;
    ASSERT_EQ(after[n].readings_size(), fresh->readings_size());
    for (int k = 0; k < fresh->readings_size(); ++k) {
      for (const auto& [channel, tensor] : fresh->readings(k).channels()) {
        EXPECT_EQ(after[n].readings(k).channels().at(channel).data(), tensor.data()) << n << " " << channel;
      }
    }
  }
  EXPECT_GT(moved, 0);
  EXPECT_LT(moved, kScenes);
}

}  // namespace
}  // namespace taxel::testing
