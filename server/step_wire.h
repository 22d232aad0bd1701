// The wire bytes of a taxel.v1.StepResponse, with the readings written by hand straight from the
// sensors' output arrays (DESIGN §7). A 1024-env grasp batch carries 12.6 MB of readings: built
// as protobuf `bytes` fields and then serialised, they would be copied twice on the server; here
// they are copied once, into the buffer gRPC sends.
//
// The bytes are the protobuf encoding of the same message EncodeReadings builds (any protobuf
// parser reads them into an equal StepResponse), laid out in field-number order:
//
//   head     fields 1–4 (scene, sequence, step, env_ids)           serialised by protobuf
//   readings field 5, one per (sensor, branch)                      written here
//   tail     fields 6–7 (timing, contact_matrix)                    serialised by protobuf
//
// A SensorReading is {1: sensor, 2: sensor_id, 3: branch, 4: channels}; each map entry
// {1: key, 2: Tensor}; a Tensor {1: dtype, 2: packed shape, 3: data}. Like protobuf, the writer
// leaves out proto3 fields that hold their default (0, empty) and always writes both the key and
// the value of a map entry.
#ifndef TAXEL_SERVER_STEP_WIRE_H_
#define TAXEL_SERVER_STEP_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "server/codec.h"

namespace taxel::server {

/// Writes field 5 (readings) of a StepResponse for `plan` and `envs` (as EncodeReadings would
/// build them). Construct after the step, while the scene is locked; the sensors' outputs are
/// read by Write, so the scene must stay locked (and unchanged) until Write returns.
class ReadingsWireWriter {
 public:
  /// @pre every env in `envs` is in [0, num_envs) (validated by Scene::Step).
  ReadingsWireWriter(const ReadPlan& plan, absl::Span<const int32_t> envs, int num_envs);

  /// Exact number of bytes Write produces.
  size_t size() const { return size_; }
  /// Writes size() bytes to `dst`; returns dst + size().
  char* Write(char* dst) const;

 private:
  struct Channel {
    absl::string_view name;
    ChannelArray array;
    size_t tensor_size = 0;  // bytes of the Tensor message
    size_t entry_size = 0;   // bytes of the map entry message
  };
  struct Reading {
    const std::string* sensor;
    int32_t sensor_id;
    v1::Branch branch;
    std::vector<Channel> channels;
    size_t size = 0;  // bytes of the SensorReading message
  };
  std::vector<Reading> readings_;
  absl::Span<const int32_t> envs_;
  int num_envs_;
  size_t size_ = 0;
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
