// Rendezvous (highest-random-weight) placement of scenes on replicas: the rule every Taxel
// client follows (docs/reference.md, "Placement"), so that all clients of a tenant find a scene
// on the same replica.
//
//   score(replica_id, tenant, name) = SipHash-2-4(kPlacementKey, replica_id ‖ 0x00 ‖ tenant ‖ "/" ‖ name)
//
// (UTF-8 bytes; the 64-bit result as an unsigned integer). The scene lives on the replica with the
// highest score; the rest, by decreasing score, is where it goes when that replica is lost.
#ifndef TAXEL_CLIENT_CPP_TAXEL_PLACEMENT_H_
#define TAXEL_CLIENT_CPP_TAXEL_PLACEMENT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/types/span.h"

namespace taxel {

/// The fixed 128-bit key: bytes 00 01 .. 0f (the key of SipHash's reference test vectors).
inline constexpr uint8_t kPlacementKey[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

/// SipHash-2-4 of `data` under a 16-byte key.
uint64_t SipHash24(const uint8_t (&key)[16], std::string_view data);

/// The rendezvous score of scene `tenant/name` on replica `replica_id`.
uint64_t PlacementScore(std::string_view replica_id, std::string_view tenant, std::string_view name);

/// `replica_ids` by decreasing score for scene `tenant/name` (equal scores, possible only for
/// equal ids, by increasing id). The first is the scene's home.
std::vector<std::string> RankReplicas(absl::Span<const std::string> replica_ids, std::string_view tenant,
                                      std::string_view name);

}  // namespace taxel

#endif  // TAXEL_CLIENT_CPP_TAXEL_PLACEMENT_H_
