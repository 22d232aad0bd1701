#include "server/step_wire.h"

#include <cstring>

namespace taxel::server {
namespace internal {

size_t VarintSize(uint64_t value) {
  size_t n = 1;
  while (value >= 0x80) value >>= 7, ++n;
  return n;
}

char* WriteVarint(uint64_t value, char* dst) {
  while (value >= 0x80) {
    *dst++ = static_cast<char>(value | 0x80);
    value >>= 7;
  }
  *dst++ = static_cast<char>(value);
  return dst;
}

}  // namespace internal

namespace {

using internal::Tag;
using internal::VarintSize;
using internal::WriteVarint;

// int32 and enum fields are sign-extended to 64 bits on the wire (a negative value takes 10 bytes).
uint64_t Int32Wire(int32_t v) { return static_cast<uint64_t>(static_cast<int64_t>(v)); }

// Bytes of a length-delimited field with a payload of `n` bytes (tag of a field number < 16).
size_t LengthDelimitedSize(size_t n) { return 1 + VarintSize(n) + n; }

char* WriteLengthPrefix(int field, size_t n, char* dst) {
  *dst++ = static_cast<char>(Tag(field, 2));
  return WriteVarint(n, dst);
}

char* WriteString(int field, absl::string_view s, char* dst) {
  dst = WriteLengthPrefix(field, s.size(), dst);
  std::memcpy(dst, s.data(), s.size());
  return dst + s.size();
}

char* WriteVarintField(int field, uint64_t v, char* dst) {
  *dst++ = static_cast<char>(Tag(field, 0));
  return WriteVarint(v, dst);
}

// Field sizes of a Tensor {1: dtype, 2: packed shape, 3: data} with the env axis first.
size_t PackedShapeSize(int64_t num_envs, const std::vector<int64_t>& probe_shape) {
  size_t n = VarintSize(static_cast<uint64_t>(num_envs));
  for (int64_t d : probe_shape) n += VarintSize(static_cast<uint64_t>(d));
  return n;
}

}  // namespace

ReadingsWireWriter::ReadingsWireWriter(const ReadPlan& plan, absl::Span<const int32_t> envs, int num_envs)
    : envs_(envs), num_envs_(num_envs) {
  const int64_t n = static_cast<int64_t>(envs.size());
  for (const ReadPlan::Item& item : plan.items) {
    const sensors::Sensor& s = *item.sensor;
    for (sensors::Branch b : plan.branches) {
      Reading r;
      r.sensor = &s.spec().name;
      r.sensor_id = s.id().value();
      r.branch = b == sensors::Branch::kMeasured ? v1::MEASURED : v1::GROUND_TRUTH;
      if (!r.sensor->empty()) r.size += LengthDelimitedSize(r.sensor->size());
      if (r.sensor_id != 0) r.size += 1 + VarintSize(Int32Wire(r.sensor_id));
      r.size += 1 + VarintSize(Int32Wire(r.branch));  // never 0: MEASURED or GROUND_TRUTH
      for (sensors::Channel c : item.channels) {
        Channel ch;
        ch.name = sensors::ChannelName(c);
        ch.array = ChannelOutput(s, b, c);
        // The env axis is always present, so the packed shape is never empty.
        ch.tensor_size = 1 + VarintSize(Int32Wire(ch.array.dtype)) +
                         LengthDelimitedSize(PackedShapeSize(n, ch.array.probe_shape));
        const size_t data = ch.array.bytes_per_env * envs.size();
        if (data > 0) ch.tensor_size += LengthDelimitedSize(data);
        ch.entry_size = LengthDelimitedSize(ch.name.size()) + LengthDelimitedSize(ch.tensor_size);
        r.size += LengthDelimitedSize(ch.entry_size);
        r.channels.push_back(std::move(ch));
      }
      size_ += LengthDelimitedSize(r.size);
      readings_.push_back(std::move(r));
    }
  }
}

char* ReadingsWireWriter::Write(char* dst) const {
  const int64_t n = static_cast<int64_t>(envs_.size());
  for (const Reading& r : readings_) {
    dst = WriteLengthPrefix(5, r.size, dst);  // StepResponse.readings
    if (!r.sensor->empty()) dst = WriteString(1, *r.sensor, dst);
    if (r.sensor_id != 0) dst = WriteVarintField(2, Int32Wire(r.sensor_id), dst);
    dst = WriteVarintField(3, Int32Wire(r.branch), dst);
    for (const Channel& ch : r.channels) {
      dst = WriteLengthPrefix(4, ch.entry_size, dst);  // SensorReading.channels (map entry)
      dst = WriteString(1, ch.name, dst);              // key
      dst = WriteLengthPrefix(2, ch.tensor_size, dst);  // value: Tensor
      dst = WriteVarintField(1, Int32Wire(ch.array.dtype), dst);
      dst = WriteLengthPrefix(2, PackedShapeSize(n, ch.array.probe_shape), dst);
      dst = WriteVarint(static_cast<uint64_t>(n), dst);
      for (int64_t d : ch.array.probe_shape) dst = WriteVarint(static_cast<uint64_t>(d), dst);
      const size_t data = ch.array.bytes_per_env * envs_.size();
      if (data > 0) {
        dst = WriteLengthPrefix(3, data, dst);
        GatherEnvs(ch.array, envs_, num_envs_, dst);
        dst += data;
      }
    }
  }
  return dst;
}

}  // namespace taxel::server
