#include "taxel/step_result.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace taxel {
namespace {

// The concatenated bytes of a message's slices, read by offset from the start of the message.
class SliceReader {
 public:
  explicit SliceReader(const std::vector<grpc::Slice>& all) {
    for (const grpc::Slice& s : all) {
      if (s.size() == 0) continue;  // so that every slice holds the offsets [start, start + size)
      starts_.push_back(size_);
      slices_.push_back(s);
      size_ += s.size();
    }
  }
  size_t size() const { return size_; }

  /// @pre pos < size().
  uint8_t At(size_t pos) {
    if (pos < starts_[cur_] || pos - starts_[cur_] >= slices_[cur_].size()) {
      cur_ = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), pos) - starts_.begin()) - 1;
    }
    return slices_[cur_].begin()[pos - starts_[cur_]];
  }

  /// Copies [pos, pos + n) to dst. @pre pos + n <= size().
  void Copy(size_t pos, size_t n, char* dst) {
    if (n == 0) return;
    size_t i = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), pos) - starts_.begin()) - 1;
    while (n > 0) {
      const size_t in = pos - starts_[i];
      const size_t take = std::min(n, slices_[i].size() - in);
      std::memcpy(dst, slices_[i].begin() + in, take);
      dst += take, pos += take, n -= take, ++i;
    }
  }

 private:
  std::vector<grpc::Slice> slices_;
  std::vector<size_t> starts_;
  size_t size_ = 0;
  size_t cur_ = 0;
};

// One field of a message in [pos, end): its number and wire type, the offset of its tag, and its
// value (a varint, or the range of a length-delimited payload).
struct Field {
  int number = 0;
  int wire_type = 0;
  size_t begin = 0;
  uint64_t varint = 0;
  size_t value_begin = 0, value_end = 0;
};

bool ReadVarint(SliceReader& r, size_t* pos, size_t end, uint64_t* value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= end) return false;
    const uint8_t b = r.At((*pos)++);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) {
      *value = v;
      return true;
    }
  }
  return false;  // longer than 10 bytes
}

// Reads the field at *pos and moves past it. False for a truncated field, field number 0, or a
// wire type no taxel.v1 message uses (groups).
bool NextField(SliceReader& r, size_t* pos, size_t end, Field* f) {
  f->begin = *pos;
  uint64_t tag;
  if (!ReadVarint(r, pos, end, &tag) || tag > 0xffffffffu) return false;
  f->number = static_cast<int>(tag >> 3);
  f->wire_type = static_cast<int>(tag & 7);
  if (f->number == 0) return false;
  f->value_begin = *pos;
  switch (f->wire_type) {
    case 0:
      if (!ReadVarint(r, pos, end, &f->varint)) return false;
      break;
    case 1:
    case 5: {
      const size_t n = f->wire_type == 1 ? 8 : 4;
      if (end - *pos < n) return false;
      *pos += n;
      break;
    }
    case 2: {
      uint64_t n;
      if (!ReadVarint(r, pos, end, &n) || n > end - *pos) return false;
      f->value_begin = *pos;
      *pos += static_cast<size_t>(n);
      break;
    }
    default: return false;
  }
  f->value_end = *pos;
  return true;
}

// Well-formed UTF-8 (RFC 3629: shortest form, no surrogates, at most U+10FFFF), which protobuf
// requires of proto3 `string` fields.
bool IsUtf8(absl::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const uint8_t c = static_cast<uint8_t>(s[i]);
    int n = 0;
    uint8_t lo = 0x80, hi = 0xbf;  // range of the first continuation byte
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xc2 && c <= 0xdf) {
      n = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c == 0xe0) lo = 0xa0;  // no overlong forms
      if (c == 0xed) hi = 0x9f;  // no surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c == 0xf0) lo = 0x90;  // no overlong forms
      if (c == 0xf4) hi = 0x8f;  // at most U+10FFFF
    } else {
      return false;
    }
    if (s.size() - i <= static_cast<size_t>(n)) return false;
    for (int k = 1; k <= n; ++k) {
      const uint8_t b = static_cast<uint8_t>(s[i + k]);
      if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xbf)) return false;
    }
    i += n + 1;
  }
  return true;
}

// A proto3 string field; false when it is not UTF-8.
bool ReadString(SliceReader& r, const Field& f, std::string* out) {
  out->assign(f.value_end - f.value_begin, '\0');
  r.Copy(f.value_begin, out->size(), out->data());
  return IsUtf8(*out);
}

// Where a tensor's bytes are in the message.
struct DataRange {
  bool present = false;
  size_t pos = 0, size = 0;
};

bool ParseTensor(SliceReader& r, size_t pos, size_t end, v1::Tensor* t, DataRange* data) {
  Field f;
  while (pos < end) {
    if (!NextField(r, &pos, end, &f)) return false;
    if (f.number == 1 && f.wire_type == 0) {
      t->set_dtype(static_cast<v1::DType>(static_cast<int32_t>(f.varint)));
    } else if (f.number == 2 && f.wire_type == 2) {  // packed
      for (size_t p = f.value_begin; p < f.value_end;) {
        uint64_t d;
        if (!ReadVarint(r, &p, f.value_end, &d)) return false;
        t->add_shape(static_cast<int64_t>(d));
      }
    } else if (f.number == 2 && f.wire_type == 0) {  // one unpacked element
      t->add_shape(static_cast<int64_t>(f.varint));
    } else if (f.number == 3 && f.wire_type == 2) {
      *data = {true, f.value_begin, f.value_end - f.value_begin};
    }
  }
  return true;
}

struct PendingData {
  int reading;
  std::string channel;
  DataRange range;
};

// One map entry of SensorReading.channels: the entry replaces any earlier one of the same key.
bool ParseChannelEntry(SliceReader& r, size_t pos, size_t end, int reading, v1::SensorReading* out,
                       std::vector<PendingData>* pending) {
  std::string key;
  v1::Tensor value;
  DataRange data;
  Field f;
  while (pos < end) {
    if (!NextField(r, &pos, end, &f)) return false;
    if (f.number == 1 && f.wire_type == 2) {
      if (!ReadString(r, f, &key)) return false;
    } else if (f.number == 2 && f.wire_type == 2) {
      if (!ParseTensor(r, f.value_begin, f.value_end, &value, &data)) return false;
    }
  }
  pending->erase(std::remove_if(pending->begin(), pending->end(),
                                [&](const PendingData& p) { return p.reading == reading && p.channel == key; }),
                 pending->end());
  if (data.present) pending->push_back({reading, key, data});
  (*out->mutable_channels())[key] = std::move(value);
  return true;
}

bool ParseReading(SliceReader& r, size_t pos, size_t end, int reading, v1::SensorReading* out,
                  std::vector<PendingData>* pending) {
  Field f;
  while (pos < end) {
    if (!NextField(r, &pos, end, &f)) return false;
    if (f.number == 1 && f.wire_type == 2) {
      if (!ReadString(r, f, out->mutable_sensor())) return false;
    } else if (f.number == 2 && f.wire_type == 0) {
      out->set_sensor_id(static_cast<int32_t>(f.varint));
    } else if (f.number == 3 && f.wire_type == 0) {
      out->set_branch(static_cast<v1::Branch>(static_cast<int32_t>(f.varint)));
    } else if (f.number == 4 && f.wire_type == 2) {
      if (!ParseChannelEntry(r, f.value_begin, f.value_end, reading, out, pending)) return false;
    }
  }
  return true;
}

constexpr size_t kAlign = 16;

}  // namespace

absl::Status StepResult::Parse(const grpc::ByteBuffer& bytes) {
  header_.Clear();
  channels_.clear();
  std::vector<grpc::Slice> slices;
  if (!bytes.Valid() || !bytes.Dump(&slices).ok()) return absl::DataLossError("StepResponse: no message bytes");
  SliceReader r(slices);
  // Readings are decoded here; every other field is handed to protobuf as it came.
  std::string rest;
  google::protobuf::RepeatedPtrField<v1::SensorReading> readings;
  std::vector<PendingData> pending;
  size_t pos = 0;
  Field f;
  while (pos < r.size()) {
    if (!NextField(r, &pos, r.size(), &f)) {
      return absl::DataLossError(absl::StrCat("StepResponse: malformed field at byte ", f.begin));
    }
    if (f.number == 5 && f.wire_type == 2) {
      const int index = readings.size();
      if (!ParseReading(r, f.value_begin, f.value_end, index, readings.Add(), &pending)) {
        return absl::DataLossError(absl::StrCat("StepResponse: malformed reading at byte ", f.begin));
      }
      continue;
    }
    const size_t n = pos - f.begin;
    rest.resize(rest.size() + n);
    r.Copy(f.begin, n, rest.data() + rest.size() - n);
  }
  if (!header_.ParseFromString(rest)) {
    header_.Clear();
    return absl::DataLossError("StepResponse: malformed message fields");
  }
  header_.mutable_readings()->Swap(&readings);

  size_t total = 0;
  for (PendingData& p : pending) {
    channels_.push_back({p.reading, std::move(p.channel), total, p.range.size});
    total += (p.range.size + kAlign - 1) / kAlign * kAlign;
  }
  if (total > capacity_) {
    buffer_.reset(new char[total]);  // operator new[] aligns to 16 bytes
    capacity_ = total;
  }
  for (size_t i = 0; i < channels_.size(); ++i) {
    r.Copy(pending[i].range.pos, pending[i].range.size, buffer_.get() + channels_[i].offset);
  }
  return absl::OkStatus();
}

int StepResult::FindReading(absl::string_view sensor, v1::Branch branch) const {
  if (branch == v1::BRANCH_UNSPECIFIED) branch = v1::MEASURED;
  for (int i = 0; i < header_.readings_size(); ++i) {
    const v1::SensorReading& r = header_.readings(i);
    const v1::Branch b = r.branch() == v1::BRANCH_UNSPECIFIED ? v1::MEASURED : r.branch();
    if (r.sensor() == sensor && b == branch) return i;
  }
  return -1;
}

const StepResult::Channel* StepResult::Find(int reading, absl::string_view channel) const {
  for (const Channel& c : channels_) {
    if (c.reading == reading && c.name == channel) return &c;
  }
  return nullptr;
}

absl::Span<const char> StepResult::bytes(int reading, absl::string_view channel) const {
  const Channel* c = Find(reading, channel);
  if (c == nullptr) return {};
  return absl::MakeConstSpan(buffer_.get() + c->offset, c->size);
}

absl::Span<const float> StepResult::floats(int reading, absl::string_view channel) const {
  const Channel* c = Find(reading, channel);
  if (c == nullptr) return {};
  const auto& map = header_.readings(reading).channels();
  auto it = map.find(std::string(channel));
  if (it == map.end() || it->second.dtype() != v1::FLOAT32) return {};
  return absl::MakeConstSpan(reinterpret_cast<const float*>(buffer_.get() + c->offset), c->size / sizeof(float));
}

v1::StepResponse StepResult::ToProto() const {
  v1::StepResponse out = header_;
  for (const Channel& c : channels_) {
    (*out.mutable_readings(c.reading)->mutable_channels())[c.name].set_data(buffer_.get() + c.offset, c.size);
  }
  return out;
}

}  // namespace taxel
