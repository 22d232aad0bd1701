#include "server/step_wire.h"

#include <algorithm>
#include <cstring>

#include "core/common/check.h"
#include "core/common/nonzero_mask.h"
#include "server/response_buffers.h"

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

ReadingsWireWriter::ReadingsWireWriter(int readings_field, std::vector<ReadingArrays> readings, bool sparse,
                                       absl::Span<const int32_t> envs, int num_envs, Executor* pool)
    : readings_field_(readings_field), envs_(envs), num_envs_(num_envs), sparse_(sparse) {
  TAXEL_CHECK(readings_field >= 1 && readings_field <= 15);  // a one-byte tag
  const int64_t n = static_cast<int64_t>(envs.size());
  for (ReadingArrays& in : readings) {
    Reading r;
    r.sensor = &in.sensor->spec().name;
    r.sensor_id = in.sensor->id().value();
    r.branch = in.branch;
    for (auto& [channel, array] : in.channels) {
      Channel ch;
      ch.name = array.name.empty() ? sensors::ChannelName(channel) : array.name;
      ch.array = std::move(array);
      ch.data_size = ch.array.bytes_per_env * envs.size();
      r.channels.push_back(std::move(ch));
    }
    readings_.push_back(std::move(r));
  }
  if (sparse_) BuildSparse(pool);
  for (Reading& r : readings_) {
    if (!r.sensor->empty()) r.size += LengthDelimitedSize(r.sensor->size());
    if (r.sensor_id != 0) r.size += 1 + VarintSize(Int32Wire(r.sensor_id));
    r.size += 1 + VarintSize(Int32Wire(r.branch));  // never 0: MEASURED or GROUND_TRUTH
    for (Channel& ch : r.channels) {
      // The env axis is always present, so the packed shape is never empty.
      ch.tensor_size =
          1 + VarintSize(Int32Wire(ch.array.dtype)) + LengthDelimitedSize(PackedShapeSize(n, ch.array.probe_shape));
      if (ch.data_size > 0) ch.tensor_size += LengthDelimitedSize(ch.data_size);
      if (ch.mask_size > 0) ch.tensor_size += LengthDelimitedSize(ch.mask_size);
      payload_size_ += ch.data_size + ch.mask_size;
      ch.entry_size = LengthDelimitedSize(ch.name.size()) + LengthDelimitedSize(ch.tensor_size);
      r.size += LengthDelimitedSize(ch.entry_size);
    }
    size_ += LengthDelimitedSize(r.size);
  }
}

void ReadingsWireWriter::BuildSparse(Executor* pool) {
  const bool all_envs = IsAllEnvsInOrder(envs_, num_envs_);
  size_t values_bytes = 0, mask_bytes = 0;
  for (Reading& r : readings_) {
    for (Channel& ch : r.channels) {
      if (all_envs && ch.array.data != nullptr) {
        ch.dense = ch.array.data;
      } else {
        ch.gathered.resize(ch.data_size);
        GatherEnvs(ch.array, envs_, num_envs_, ch.gathered.data());
        ch.dense = ch.gathered.data();
      }
      ch.elements = ch.data_size / ch.array.item_size;
      ch.values_at = values_bytes;
      ch.mask_at = mask_bytes;
      ch.mask_size = NonzeroMaskBytes(ch.elements);
      values_bytes += ch.data_size;
      mask_bytes += ch.mask_size;
      for (size_t first = 0; first < ch.elements; first += kSparseChunk) {
        chunks_.push_back({&ch, first, std::min(kSparseChunk, ch.elements - first), 0});
      }
    }
  }
  char* values = nullptr;
  char* masks = nullptr;
  values_ = NewResponseSlice(values_bytes, &values);
  masks_ = NewResponseSlice(mask_bytes, &masks);
  // One task per chunk: its mask bytes, then its nonzero values packed at the start of its room
  // (read again from L2: a chunk is 256 KiB of floats).
  auto build = [&](int64_t t, int) {
    Chunk& c = chunks_[static_cast<size_t>(t)];
    const Channel& ch = *c.channel;
    const size_t item = ch.array.item_size;
    const char* src = ch.dense + c.first * item;
    auto* mask = reinterpret_cast<uint8_t*>(masks + ch.mask_at + c.first / 8);
    c.nonzero = BuildNonzeroMask(src, c.count, item, mask);
    PackNonzero(src, c.count, item, mask, values + ch.values_at + c.first * item);
  };
  // Below a chunk's worth of elements in all, waking the pool costs more than the work.
  if (pool != nullptr && values_bytes / sizeof(float) > kSparseChunk) {
    pool->ParallelFor(static_cast<int64_t>(chunks_.size()), build);
  } else {
    for (size_t t = 0; t < chunks_.size(); ++t) build(static_cast<int64_t>(t), 0);
  }
  for (Reading& r : readings_) {
    for (Channel& ch : r.channels) ch.data_size = 0;
  }
  for (const Chunk& c : chunks_) c.channel->data_size += c.nonzero * c.channel->array.item_size;
}

template <typename Payload>
char* ReadingsWireWriter::WriteFraming(char* dst, const Payload& payload) const {
  const int64_t n = static_cast<int64_t>(envs_.size());
  for (const Reading& r : readings_) {
    dst = WriteLengthPrefix(readings_field_, r.size, dst);  // e.g. StepResponse.readings
    if (!r.sensor->empty()) dst = WriteString(1, *r.sensor, dst);
    if (r.sensor_id != 0) dst = WriteVarintField(2, Int32Wire(r.sensor_id), dst);
    dst = WriteVarintField(3, Int32Wire(r.branch), dst);
    for (const Channel& ch : r.channels) {
      dst = WriteLengthPrefix(4, ch.entry_size, dst);   // SensorReading.channels (map entry)
      dst = WriteString(1, ch.name, dst);               // key
      dst = WriteLengthPrefix(2, ch.tensor_size, dst);  // value: Tensor
      dst = WriteVarintField(1, Int32Wire(ch.array.dtype), dst);
      dst = WriteLengthPrefix(2, PackedShapeSize(n, ch.array.probe_shape), dst);
      dst = WriteVarint(static_cast<uint64_t>(n), dst);
      for (int64_t d : ch.array.probe_shape) dst = WriteVarint(static_cast<uint64_t>(d), dst);
      dst = payload(ch, dst);
    }
  }
  return dst;
}

std::vector<grpc::Slice> ReadingsWireWriter::Slices(absl::string_view head) const {
  std::vector<grpc::Slice> out;
  if (!sparse_) {
    // One slice: head, framing and data, gathered once.
    char* dst = nullptr;
    out.push_back(NewResponseSlice(head.size() + size_, &dst));
    std::memcpy(dst, head.data(), head.size());
    WriteFraming(dst + head.size(), [this](const Channel& ch, char* d) {
      if (ch.data_size == 0) return d;
      d = WriteLengthPrefix(3, ch.data_size, d);
      GatherEnvs(ch.array, envs_, num_envs_, d);
      return d + ch.data_size;
    });
    return out;
  }
  // The framing goes to one small buffer; each run of it becomes a slice, and between the runs
  // come the chunks' packed values and the masks.
  char* framing = nullptr;
  const grpc::Slice framing_slice = NewResponseSlice(head.size() + size_ - payload_size_, &framing);
  std::memcpy(framing, head.data(), head.size());
  char* run_start = framing;
  auto end_run = [&](char* d) {
    if (d > run_start) out.push_back(framing_slice.sub(run_start - framing, d - framing));
    run_start = d;
  };
  size_t chunk = 0;
  char* end = WriteFraming(framing + head.size(), [&](const Channel& ch, char* d) {
    if (ch.data_size > 0) {
      d = WriteLengthPrefix(3, ch.data_size, d);
      end_run(d);
    }
    for (; chunk < chunks_.size() && chunks_[chunk].channel == &ch; ++chunk) {
      const Chunk& c = chunks_[chunk];
      const size_t at = ch.values_at + c.first * ch.array.item_size;
      if (c.nonzero > 0) out.push_back(values_.sub(at, at + c.nonzero * ch.array.item_size));
    }
    if (ch.mask_size > 0) {
      d = WriteLengthPrefix(4, ch.mask_size, d);
      end_run(d);
      out.push_back(masks_.sub(ch.mask_at, ch.mask_at + ch.mask_size));
    }
    return d;
  });
  end_run(end);
  return out;
}

}  // namespace taxel::server
