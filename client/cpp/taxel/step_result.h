// taxel::StepResult — a step response read straight from the received bytes.
//
// Client::Step(request) returns a v1::StepResponse: protobuf copies every tensor into a string of
// its own, allocated afresh each step (12.6 MB for the 1024-env grasp batch). A StepResult parses
// the small fields with protobuf and copies each tensor's bytes once, into one buffer that the
// result keeps and reuses from step to step; a simulation loop keeps one StepResult per stream:
//
//   taxel::StepResult result;
//   for (;;) {
//     TAXEL_RETURN_IF_ERROR(stream->Step(request, &result));
//     const int left = result.FindReading("left_pad");
//     absl::Span<const float> force = result.floats(left, "force");  // [E, 16, 16, 3], N
//   }
//
// The wire format is the same StepResponse message; ToProto() rebuilds it bit for bit.
#ifndef TAXEL_CLIENT_CPP_TAXEL_STEP_RESULT_H_
#define TAXEL_CLIENT_CPP_TAXEL_STEP_RESULT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "grpcpp/support/byte_buffer.h"
#include "taxel/v1/service.pb.h"

namespace taxel {

class StepResult {
 public:
  StepResult() = default;
  StepResult(const StepResult&) = delete;
  StepResult& operator=(const StepResult&) = delete;
  StepResult(StepResult&&) = default;
  StepResult& operator=(StepResult&&) = default;

  /// The response without tensor bytes: scene, sequence, step, env_ids, timing, contact_matrix
  /// (complete), and every reading with its sensor, id, branch and channels, whose tensors carry
  /// dtype and shape but an empty `data`.
  const v1::StepResponse& header() const { return header_; }
  int num_readings() const { return header_.readings_size(); }
  /// Index of the reading of sensor `sensor` and branch `branch` (BRANCH_UNSPECIFIED matches
  /// MEASURED), or −1.
  int FindReading(absl::string_view sensor, v1::Branch branch = v1::MEASURED) const;

  /// The bytes of header().readings(reading).channels(channel), as Tensor.data carries them
  /// (little-endian, C order), 16-byte aligned; empty when there is no such reading or channel.
  /// Valid until the next Parse (the next step into this result) or the result's destruction.
  absl::Span<const char> bytes(int reading, absl::string_view channel) const;
  /// The same as floats; empty unless the tensor is FLOAT32.
  absl::Span<const float> floats(int reading, absl::string_view channel) const;

  /// The complete message (copies the tensor bytes): equal to what protobuf parses from the same
  /// bytes.
  v1::StepResponse ToProto() const;

  /// Decodes the wire bytes of a taxel.v1.StepResponse, replacing the contents. Reads them with
  /// protobuf's rules (fields in any order, unknown fields skipped, the last of a repeated
  /// singular field wins, a map's last entry for a key wins). Bytes that protobuf would refuse are
  /// refused with DATA_LOSS; on error the result is empty. O(size); the only copy of the tensor
  /// bytes goes into a buffer that is reused when large enough.
  absl::Status Parse(const grpc::ByteBuffer& bytes);

 private:
  struct Channel {
    int reading;
    std::string name;
    size_t offset;  // into buffer_
    size_t size;
  };
  const Channel* Find(int reading, absl::string_view channel) const;

  v1::StepResponse header_;
  std::vector<Channel> channels_;
  std::unique_ptr<char[]> buffer_;
  size_t capacity_ = 0;
};

}  // namespace taxel

#endif  // TAXEL_CLIENT_CPP_TAXEL_STEP_RESULT_H_
