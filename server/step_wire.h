// The one encoder of readings: the wire bytes of the `readings` of a taxel.v1.StepResponse (Step
// and StepStream) or ReadSensorsResponse (current values and history), written by hand straight
// from the sensors' output arrays (docs/reference.md#contact-matrix). A 1024-env grasp batch carries 12.6 MB of
// readings: built as protobuf `bytes` fields and then serialised, they would be copied twice on
// the server; here they are copied once, into memory gRPC sends without copying (pooled slices).
//
// The bytes are the protobuf encoding of the readings protobuf would build from the same arrays
// (any protobuf parser reads them into an equal message; the tests keep a protobuf-built
// reference), laid out in field-number order, e.g. for a StepResponse:
//
//   head     fields 1–4 (scene, sequence, step, env_ids)           serialised by protobuf
//   readings field 5, one per (sensor, branch)                      written here
//   tail     fields 6–7 (timing, contact_matrix)                    serialised by protobuf
//
// and for a ReadSensorsResponse the head is fields 1–2 (step, env_ids), the readings field 3.
//
// A SensorReading is {1: sensor, 2: sensor_id, 3: branch, 4: channels}; each map entry
// {1: key, 2: Tensor}; a Tensor {1: dtype, 2: packed shape, 3: data, 4: nonzero_mask}. Like
// protobuf, the writer leaves out proto3 fields that hold their default (0, empty) and always
// writes both the key and the value of a map entry.
//
// Sparse reads (ReadSpec.sparse) build each tensor's mask and pack its nonzero elements in one
// pass per chunk of 64 Ki elements, the chunks spread over the evaluation pool. Each chunk's
// values stay where they were packed: the response is a list of slices (framing, the chunks'
// values, the masks), so the values are written once and never moved.
#ifndef TAXEL_SERVER_STEP_WIRE_H_
#define TAXEL_SERVER_STEP_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "core/common/executor.h"
#include "grpcpp/support/slice.h"
#include "server/codec.h"

namespace taxel::server {

/// Writes the readings field (number `readings_field`) of a response: one SensorReading per entry
/// of `readings`, each tensor holding the blocks of `envs` (in that order) of its array. Construct
/// after the step, while the scene is locked; the arrays are read until Slices returns, so the
/// scene must stay locked (and unchanged) until then.
class ReadingsWireWriter {
 public:
  /// @pre every env in `envs` is in [0, num_envs) (validated by Scene::Step or ResolveEnvIds);
  /// 1 <= readings_field <= 15. With `sparse` this builds the masks and packs the values, in
  /// chunks on `pool` when one is given.
  ReadingsWireWriter(int readings_field, std::vector<ReadingArrays> readings, bool sparse,
                     absl::Span<const int32_t> envs, int num_envs, Executor* pool = nullptr);
  /// The readings of `plan` as StepResponse.readings (field 5).
  ReadingsWireWriter(const ReadPlan& plan, absl::Span<const int32_t> envs, int num_envs, Executor* pool = nullptr)
      : ReadingsWireWriter(v1::StepResponse::kReadingsFieldNumber, PlannedReadings(plan), plan.sparse, envs, num_envs,
                           pool) {}

  /// Exact number of bytes of the readings.
  size_t size() const { return size_; }
  /// `head` followed by the readings, as slices that gRPC sends without copying.
  std::vector<grpc::Slice> Slices(absl::string_view head) const;

 private:
  struct Channel {
    absl::string_view name;
    ChannelArray array;
    size_t data_size = 0;    // bytes of Tensor.data
    size_t tensor_size = 0;  // bytes of the Tensor message
    size_t entry_size = 0;   // bytes of the map entry message
    // Sparse form: the elements in response order (the sensor's array, or a gather of the
    // requested envs), how many, and where the packed values and the mask are.
    const char* dense = nullptr;
    std::vector<char> gathered;
    size_t elements = 0;
    size_t values_at = 0;  // in values_
    size_t mask_at = 0;    // in masks_
    size_t mask_size = 0;
  };
  struct Reading {
    const std::string* sensor;
    int32_t sensor_id;
    v1::Branch branch;
    std::vector<Channel> channels;
    size_t size = 0;  // bytes of the SensorReading message
  };
  // A run of kSparseChunk elements of one channel (the last one shorter): the unit of parallel
  // mask building and packing. Its values are packed at values_at + first·item_size in values_.
  static constexpr size_t kSparseChunk = size_t{1} << 16;  // a multiple of 8: whole mask bytes
  struct Chunk {
    Channel* channel;
    size_t first;    // first element
    size_t count;    // elements
    size_t nonzero;  // set bits
  };
  // Writes the framing from `dst` on, calling payload(channel, dst) where a Tensor's fields 3–4
  // go; payload returns the new dst.
  template <typename Payload>
  char* WriteFraming(char* dst, const Payload& payload) const;
  void BuildSparse(Executor* pool);

  std::vector<Reading> readings_;
  int readings_field_;
  std::vector<Chunk> chunks_;  // in response order
  absl::Span<const int32_t> envs_;
  int num_envs_;
  bool sparse_ = false;
  size_t size_ = 0;
  size_t payload_size_ = 0;     // bytes of data and masks (the rest is framing)
  grpc::Slice values_, masks_;  // sparse: packed values and masks of every channel
};

namespace internal {

/// Protobuf wire-format primitives (https://protobuf.dev/programming-guides/encoding/).
size_t VarintSize(uint64_t value);
char* WriteVarint(uint64_t value, char* dst);
/// The tag of field `field` with wire type `wire_type` (0 varint, 2 length-delimited).
constexpr uint32_t Tag(int field, int wire_type) { return (static_cast<uint32_t>(field) << 3) | wire_type; }

}  // namespace internal
}  // namespace taxel::server

#endif  // TAXEL_SERVER_STEP_WIRE_H_
