// Rendezvous placement (client/cpp/taxel/placement.h): SipHash-2-4 against its reference vectors
// and OpenSSL, the ranking rule, and how little moves when a replica comes or goes.
#include "taxel/placement.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"

namespace taxel {
namespace {

std::string Prefix(size_t n) {  // 00 01 .. n-1
  std::string s;
  for (size_t i = 0; i < n; ++i) s.push_back(static_cast<char>(i));
  return s;
}

TEST(SipHash24Test, ReferenceVectors) {
  // SipHash-2-4, key 00..0f, message 00 01 .. n-1: the reference implementation's vectors.h
  // (n = 0 and n = 15 also in the paper, Appendix A).
  const std::map<size_t, uint64_t> vectors = {
      {0, 0x726fdb47dd0e0e31ULL}, {1, 0x74f839c593dc67fdULL},  {7, 0xab0200f58b01d137ULL},
      {8, 0x93f5f5799a932462ULL}, {15, 0xa129ca6149be45e5ULL}, {63, 0x958a324ceb064572ULL},
  };
  for (const auto& [n, expected] : vectors) EXPECT_EQ(SipHash24(kPlacementKey, Prefix(n)), expected) << n;
}

TEST(PlacementScoreTest, EqualsOpenSsl) {
  // `openssl mac -macopt hexkey:000102030405060708090a0b0c0d0e0f -macopt size:8 SIPHASH` over
  // replica_id NUL tenant "/" name (its 8 output bytes read little-endian).
  EXPECT_EQ(PlacementScore("taxel-0", "", "grasp"), 0xe6d25cac3d524a2aULL);
  EXPECT_EQ(PlacementScore("taxel-1", "alice", "scene-7"), 0x1d3ceddf8080a2b4ULL);
  EXPECT_EQ(PlacementScore("taxel-2", "bob", "humanoid-\xc3\xbc"), 0xe444a3eb82dc9ad1ULL);
  EXPECT_EQ(PlacementScore("r", "", "x"), SipHash24(kPlacementKey, std::string("r\0/x", 4)));
  EXPECT_NE(PlacementScore("r", "alice", "x"), PlacementScore("r", "", "alice/x"));
}

TEST(RankReplicasTest, DecreasingScoreThenId) {
  const std::vector<std::string> ids = {"taxel-0", "taxel-1", "taxel-2"};
  const std::vector<std::string> order = RankReplicas(ids, "", "grasp");
  ASSERT_EQ(order.size(), 3u);
  for (size_t i = 1; i < order.size(); ++i) {
    EXPECT_GT(PlacementScore(order[i - 1], "", "grasp"), PlacementScore(order[i], "", "grasp"));
  }
  EXPECT_EQ(RankReplicas({"b", "a", "b"}, "", "x").size(), 3u);
  EXPECT_TRUE(RankReplicas({}, "", "x").empty());
}

std::vector<std::pair<std::string, std::string>> SceneNames() {  // the cross-language test's set
  const char* tenants[] = {"", "alice", "bob", "team-7"};
  std::vector<std::pair<std::string, std::string>> out;
  for (int i = 0; i < 100; ++i) out.emplace_back(tenants[i % 4], absl::StrFormat("scene-%03d", i));
  return out;
}

TEST(RankReplicasTest, AFourthReplicaTakesAboutAQuarterAndNothingElseMoves) {
  const std::vector<std::string> three = {"taxel-0", "taxel-1", "taxel-2"};
  const std::vector<std::string> four = {"taxel-0", "taxel-1", "taxel-2", "taxel-3"};
  int moved = 0;
  std::map<std::string, int> counts;
  for (const auto& [tenant, name] : SceneNames()) {
    const std::string before = RankReplicas(three, tenant, name).front();
    const std::string after = RankReplicas(four, tenant, name).front();
    ++counts[after];
    if (before != after) {
      ++moved;
      EXPECT_EQ(after, "taxel-3") << tenant << "/" << name << " moved between old replicas";
    }
  }
  // Each scene moves with probability 1/4: Binomial(100, 1/4), mean 25, sigma 4.33; 3 sigma: 12..38.
  EXPECT_GE(moved, 12);
  EXPECT_LE(moved, 38);
  for (const auto& [id, n] : counts) EXPECT_GE(n, 12) << id;
}

TEST(RankReplicasTest, LosingAReplicaMovesItsScenesToTheirSecondChoice) {
  const std::vector<std::string> four = {"taxel-0", "taxel-1", "taxel-2", "taxel-3"};
  const std::vector<std::string> survivors = {"taxel-0", "taxel-2", "taxel-3"};
  for (const auto& [tenant, name] : SceneNames()) {
    const std::vector<std::string> order = RankReplicas(four, tenant, name);
    const std::string expected = order[0] == "taxel-1" ? order[1] : order[0];
    EXPECT_EQ(RankReplicas(survivors, tenant, name).front(), expected) << tenant << "/" << name;
  }
}

}  // namespace
}  // namespace taxel
