// Steps and reads of any size for the C++ client: a call whose request or readings exceed the
// message limit is sent as parts over consecutive ranges of its envs and the responses joined
// (README, "Steps of any size"; the Python and Node clients do the same).
//
// Client::Step / ReadSensors / StepStream::Step send a call whole first. When the server refuses
// it as too large (RESOURCE_EXHAUSTED on `read`, or the transport's "larger than max"; a refused
// step changes nothing), the client asks for the scene's info and the server's limit once, sends
// the call as parts of EnvsPerPart envs (`continues_step` on every part after the first, so the
// step count advances once), halves a part that is still refused, and remembers the part size
// for the scene so that its next calls are split at once. Cost: K round trips instead of one;
// the server's total work is the same.
#ifndef TAXEL_CLIENT_CPP_TAXEL_SPLIT_H_
#define TAXEL_CLIENT_CPP_TAXEL_SPLIT_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "taxel/v1/service.pb.h"

namespace taxel::internal {

/// A refusal of a call's size: the server's estimate of its readings (field "read") or the
/// transport's limit on a message ("larger than max").
bool TooLarge(const absl::Status& status);

/// Bytes per env and fixed bytes of the readings `read` selects (`history` samples per env when
/// > 0), as the server estimates them (server/codec_step.cc).
void ReadingBytes(const v1::SceneInfo& info, const v1::ReadSpec& read, int history, int64_t* per_env,
                  int64_t* fixed);

/// How many envs one message of at most 90 % of `limit` bytes holds (>= 1; `num_envs` if all).
int EnvsPerPart(int64_t limit, int64_t per_env, int64_t fixed, int num_envs);

/// The envs of a call: its env_ids, or 0..num_envs-1 when it has none.
std::vector<int32_t> CallEnvs(const google::protobuf::RepeatedField<int32_t>& env_ids, int num_envs);

/// Part [start, start + count) of `whole` over `envs` (the call's envs in order): those env ids,
/// their rows of poses and twists, the reported contacts of those envs, continues_step when
/// start > 0. INVALID_ARGUMENT when the poses do not split into `envs.size()` equal rows (the
/// server would refuse the whole call the same way).
absl::StatusOr<v1::StepRequest> StepPart(const v1::StepRequest& whole, const std::vector<int32_t>& envs, int start,
                                         int count);

/// A ReadSensors part: `whole` with the env ids [start, start + count) of `envs`.
v1::ReadSensorsRequest ReadPart(const v1::ReadSensorsRequest& whole, const std::vector<int32_t>& envs, int start,
                                int count);
/// The part of either request, for the client's one split path.
inline absl::StatusOr<v1::StepRequest> Part(const v1::StepRequest& whole, const std::vector<int32_t>& envs, int start,
                                            int count) {
  return StepPart(whole, envs, start, count);
}
inline absl::StatusOr<v1::ReadSensorsRequest> Part(const v1::ReadSensorsRequest& whole,
                                                   const std::vector<int32_t>& envs, int start, int count) {
  return ReadPart(whole, envs, start, count);
}
/// Bytes of a request's per-env rows (poses, twists, reported contacts; none for a read) and the
/// samples per env its readings carry (a read's history, else 1).
inline int64_t RequestBytes(const v1::StepRequest& r) {
  return static_cast<int64_t>(r.poses().data().size() + r.twists().data().size() + r.contacts().ByteSizeLong());
}
inline int64_t RequestBytes(const v1::ReadSensorsRequest&) { return 0; }
inline int HistoryOf(const v1::StepRequest&) { return 0; }
inline int HistoryOf(const v1::ReadSensorsRequest& r) { return r.history(); }

/// Appends a dense part's readings (and contact matrix) to `joined` along the env axis; the first
/// part is moved in. step, sequence: the last part's; timing: the sum.
absl::Status AppendPart(v1::StepResponse part, bool first, v1::StepResponse* joined);
absl::Status AppendPart(v1::ReadSensorsResponse part, bool first, v1::ReadSensorsResponse* joined);

/// Calls `send(start, count)` over consecutive ranges of `num_envs` envs of at most `*size`
/// envs, halving (and updating `*size`) when a part is refused as too large, and joins the parts.
template <typename Response>
absl::StatusOr<Response> InParts(int num_envs, int* size,
                                 const std::function<absl::StatusOr<Response>(int start, int count)>& send) {
  Response joined;
  for (int start = 0; start < num_envs;) {
    const int count = std::min(*size, num_envs - start);
    absl::StatusOr<Response> part = send(start, count);
    if (!part.ok()) {
      if (!TooLarge(part.status()) || count == 1) return part.status();
      *size = std::max(1, count / 2);
      continue;
    }
    if (absl::Status s = AppendPart(*std::move(part), start == 0, &joined); !s.ok()) return s;
    start += count;
  }
  return joined;
}

}  // namespace taxel::internal

#endif  // TAXEL_CLIENT_CPP_TAXEL_SPLIT_H_
