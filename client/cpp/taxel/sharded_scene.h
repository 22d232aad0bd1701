// taxel::ShardedScene — one logical scene whose envs span several servers (env sharding).
//
//   std::vector<taxel::Client*> clients = {a.get(), b.get()};
//   auto scene = taxel::ShardedScene::Create(clients, spec);   // spec.num_envs() envs in all
//   auto r = (*scene)->Step(request);   // request as for Client::Step, with global env ids
//
// The envs 0..N−1 are split into K contiguous ranges (SplitEnvs), one per server; each server
// holds a sub-scene of the same name with num_envs = the range's size and env_offset = its start
// (plus the spec's own env_offset). Every per-env random draw of the measured branch is keyed by
// the global env index, so readings and the contact matrix are bit-identical to those of the same
// scene on one server. A step sends each server its rows of the poses (twists, reported contacts)
// concurrently, one thread per server, and concatenates the readings in the caller's env order;
// resets, reads, env_ids and contact-matrix reads are routed by env.
#ifndef TAXEL_CLIENT_CPP_TAXEL_SHARDED_SCENE_H_
#define TAXEL_CLIENT_CPP_TAXEL_SHARDED_SCENE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "taxel/client.h"
#include "taxel/v1/service.pb.h"

namespace taxel {

/// A contiguous range of global envs [start, start + count).
struct EnvRange {
  int32_t start = 0;
  int32_t count = 0;
};

/// The env range of each of `num_shards` shards: contiguous, in order, as equal as possible —
/// shard i gets ⌊N/K⌋ envs, plus one for each of the first N mod K shards (10 over 3: [0, 4),
/// [4, 7), [7, 10)). INVALID_ARGUMENT ("num_shards") unless 1 <= K <= N.
absl::StatusOr<std::vector<EnvRange>> SplitEnvs(int32_t num_envs, int num_shards);

class ShardedStepStream;

/// Not thread-safe: one caller at a time (as one scene on one server serialises its calls).
class ShardedScene {
 public:
  /// Creates sub-scene spec.name() on each client's server (clients not owned: they must outlive
  /// the scene), envs split by SplitEnvs(spec.num_envs(), clients.size()). Meshes the spec names
  /// must have been uploaded to every server. If one creation fails, the sub-scenes created so far
  /// are deleted and that error returned.
  static absl::StatusOr<std::unique_ptr<ShardedScene>> Create(std::vector<Client*> clients, const v1::SceneSpec& spec);

  const std::string& name() const { return name_; }
  int32_t num_envs() const { return num_envs_; }
  const std::vector<EnvRange>& ranges() const { return ranges_; }
  int num_shards() const { return static_cast<int>(clients_.size()); }
  Client& shard_client(int shard) { return *clients_[shard]; }

  /// As Client::Step: request.env_ids global (empty: all), poses/twists [E, L, 7|6] or flat
  /// [E·L, 7|6]; the response's readings, env_ids (global) and contact matrix in the caller's
  /// order. `step` counts the steps made through this object; `timing` is the slowest server's.
  /// Errors: OUT_OF_RANGE / INVALID_ARGUMENT naming env_ids[i] (global numbering), poses or twists
  /// (first axis), contacts.env[k]; a server's own error as it reports it (local numbering).
  absl::StatusOr<v1::StepResponse> Step(const v1::StepRequest& request);
  /// As Client::ReadSensors, routed by env.
  absl::StatusOr<v1::ReadSensorsResponse> ReadSensors(const v1::ReadSensorsRequest& request);
  /// As Client::ResetEnvs: each server resets its envs among `env_ids` (empty: all).
  absl::Status ResetEnvs(absl::Span<const int32_t> env_ids = {});
  /// As Client::GetContactMatrix, routed by env: [E, B, P, 3] in the caller's env order.
  absl::StatusOr<v1::GetContactMatrixResponse> GetContactMatrix(const v1::GetContactMatrixRequest& request);
  /// Deletes the sub-scene on every server (the first error is returned, after trying all).
  absl::Status Delete();
  /// One StepStream per server, stepped together.
  std::unique_ptr<ShardedStepStream> OpenStepStream();

  /// Which rows of a call go to which shard. Public for ShardedStepStream and tests.
  struct Part {
    int shard = 0;
    std::vector<int32_t> positions;  ///< rows of the call (caller's order) that go to this shard
    std::vector<int32_t> local;      ///< their local env ids; empty = every env of the shard, in order
  };
  /// Parts for global `env_ids` (empty: every env): only the shards involved, in shard order.
  absl::StatusOr<std::vector<Part>> Route(absl::Span<const int32_t> env_ids) const;

 private:
  friend class ShardedStepStream;
  ShardedScene() = default;
  // The per-shard requests of a step (validated, sliced).
  absl::StatusOr<std::vector<v1::StepRequest>> SplitStep(const v1::StepRequest& request,
                                                         const std::vector<Part>& parts) const;
  absl::StatusOr<v1::StepResponse> MergeStep(std::vector<absl::StatusOr<v1::StepResponse>> results,
                                             const std::vector<Part>& parts, size_t total, uint64_t sequence);

  std::string name_;
  int32_t num_envs_ = 0;
  int num_moving_links_ = 0;
  std::vector<EnvRange> ranges_;
  std::vector<Client*> clients_;
  int64_t steps_ = 0;
};

/// StepStream over every server: Step() sends each server its slice and waits for all responses.
class ShardedStepStream {
 public:
  /// As ShardedScene::Step; `sequence` numbers the merged steps (1, 2, ...).
  absl::StatusOr<v1::StepResponse> Step(const v1::StepRequest& request);
  /// Half-closes every stream; the first error, after closing all.
  absl::Status Close();

 private:
  friend class ShardedScene;
  explicit ShardedStepStream(ShardedScene* scene) : scene_(scene) {}
  ShardedScene* scene_;
  std::vector<std::unique_ptr<StepStream>> streams_;
  uint64_t sequence_ = 0;
};

}  // namespace taxel

#endif  // TAXEL_CLIENT_CPP_TAXEL_SHARDED_SCENE_H_
