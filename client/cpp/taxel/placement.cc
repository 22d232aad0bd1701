#include "taxel/placement.h"

#include <algorithm>
#include <utility>

namespace taxel {
namespace {

inline uint64_t Rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

inline uint64_t Load64(const uint8_t* p, size_t n) {  // n ≤ 8 bytes, little-endian
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

struct SipState {
  uint64_t v0, v1, v2, v3;
  void Rounds(int n) {
    for (int i = 0; i < n; ++i) {
      v0 += v1;
      v1 = Rotl(v1, 13) ^ v0;
      v0 = Rotl(v0, 32);
      v2 += v3;
      v3 = Rotl(v3, 16) ^ v2;
      v0 += v3;
      v3 = Rotl(v3, 21) ^ v0;
      v2 += v1;
      v1 = Rotl(v1, 17) ^ v2;
      v2 = Rotl(v2, 32);
    }
  }
  void Absorb(uint64_t m) {
    v3 ^= m;
    Rounds(2);
    v0 ^= m;
  }
};

}  // namespace

uint64_t SipHash24(const uint8_t (&key)[16], std::string_view data) {
  const uint64_t k0 = Load64(key, 8), k1 = Load64(key + 8, 8);
  SipState s{k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL, k0 ^ 0x6c7967656e657261ULL,
             k1 ^ 0x7465646279746573ULL};
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  const size_t n = data.size(), end = n - n % 8;
  for (size_t i = 0; i < end; i += 8) s.Absorb(Load64(p + i, 8));
  s.Absorb((static_cast<uint64_t>(n & 0xff) << 56) | Load64(p + end, n - end));
  s.v2 ^= 0xff;
  s.Rounds(4);
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

uint64_t PlacementScore(std::string_view replica_id, std::string_view tenant, std::string_view name) {
  std::string data;
  data.reserve(replica_id.size() + tenant.size() + name.size() + 2);
  data.append(replica_id).push_back('\0');
  data.append(tenant).push_back('/');
  data.append(name);
  return SipHash24(kPlacementKey, data);
}

std::vector<std::string> RankReplicas(absl::Span<const std::string> replica_ids, std::string_view tenant,
                                      std::string_view name) {
  std::vector<std::pair<uint64_t, std::string>> scored;
  scored.reserve(replica_ids.size());
  for (const std::string& id : replica_ids) scored.emplace_back(PlacementScore(id, tenant, name), id);
  std::sort(scored.begin(), scored.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  std::vector<std::string> out;
  out.reserve(scored.size());
  for (auto& [score, id] : scored) out.push_back(std::move(id));
  return out;
}

}  // namespace taxel
