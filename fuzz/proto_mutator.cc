#include "fuzz/proto_mutator.h"

#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "google/protobuf/stubs/logging.h"

namespace taxel::fuzz {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using Rng = std::minstd_rand;

constexpr int kMaxDepth = 16;
constexpr size_t kMaxTensorBytes = 1 << 16;  // a resize never makes a tensor larger than this

bool OneIn(Rng& rng, int n) { return rng() % n == 0; }
size_t Below(Rng& rng, size_t n) { return n == 0 ? 0 : rng() % n; }

// One mutable place of the tree: a field of `msg`, or element `index` of a repeated field.
struct Slot {
  Message* msg;
  const FieldDescriptor* field;
  int index;  // -1: the field as a whole
};

void Collect(Message* m, int depth, std::vector<Slot>* out) {
  const Descriptor* d = m->GetDescriptor();
  const Reflection* r = m->GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    out->push_back({m, f, -1});
    const bool is_message = f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
    if (f->is_repeated()) {
      const int n = r->FieldSize(*m, f);
      for (int k = 0; k < n; ++k) {
        out->push_back({m, f, k});
        if (is_message && depth < kMaxDepth) Collect(r->MutableRepeatedMessage(m, f, k), depth + 1, out);
      }
    } else if (is_message && r->HasField(*m, f) && depth < kMaxDepth) {
      Collect(r->MutableMessage(m, f), depth + 1, out);
    }
  }
}

// Every sub-message of type `type` in the tree (candidates for a structural cross-over).
void FindOfType(const Message& m, const Descriptor* type, std::vector<const Message*>* out) {
  if (m.GetDescriptor() == type) out->push_back(&m);
  const Reflection* r = m.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const FieldDescriptor* f : fields) {
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (f->is_repeated()) {
      for (int k = 0; k < r->FieldSize(m, f); ++k) FindOfType(r->GetRepeatedMessage(m, f, k), type, out);
    } else {
      FindOfType(r->GetMessage(m, f), type, out);
    }
  }
}

double MutateDouble(double v, Rng& rng) {
  static const double kSpecial[] = {0.0,
                                    -0.0,
                                    1.0,
                                    -1.0,
                                    0.5,
                                    2.0,
                                    1e-3,
                                    1e-6,
                                    1e-9,
                                    1e-12,
                                    1e-300,
                                    std::numeric_limits<double>::denorm_min(),
                                    1e3,
                                    1e6,
                                    1e9,
                                    1e300,
                                    std::numeric_limits<double>::max(),
                                    -std::numeric_limits<double>::max(),
                                    std::numeric_limits<double>::infinity(),
                                    -std::numeric_limits<double>::infinity(),
                                    std::numeric_limits<double>::quiet_NaN(),
                                    2147483648.0,
                                    -2147483649.0};
  switch (rng() % 8) {
    case 0:
    case 1: return kSpecial[Below(rng, std::size(kSpecial))];
    case 2: return v * 2;
    case 3: return v / 2;
    case 4: return -v;
    case 5: return v + std::uniform_real_distribution<double>(-0.01, 0.01)(rng);
    case 6: return std::uniform_real_distribution<double>(-1, 1)(rng);
    default: {
      uint64_t bits;
      std::memcpy(&bits, &v, sizeof(bits));
      bits ^= uint64_t{1} << Below(rng, 64);
      std::memcpy(&v, &bits, sizeof(bits));
      return v;
    }
  }
}

int64_t MutateInt(int64_t v, Rng& rng) {
  static const int64_t kSpecial[] = {0,         1,         -1, 2,    3,      4,         7,         8,
                                     16,        63,        64, 65,   255,    256,       1 << 16,   1 << 20,
                                     INT32_MAX, INT32_MIN, -2, 1000, 100000, INT64_MAX, INT64_MIN, UINT32_MAX};
  switch (rng() % 6) {
    case 0:
    case 1: return kSpecial[Below(rng, std::size(kSpecial))];
    // Wrapping arithmetic (in uint64_t: no signed overflow in the mutator itself).
    case 2: return static_cast<int64_t>(static_cast<uint64_t>(v) + 1);
    case 3: return static_cast<int64_t>(static_cast<uint64_t>(v) - 1);
    case 4: return static_cast<int64_t>(static_cast<uint64_t>(v) * 2);
    default: return static_cast<int64_t>(static_cast<uint64_t>(v) ^ (uint64_t{1} << Below(rng, 64)));
  }
}

// Runs libFuzzer's byte mutator over a string (names, ids, bytes), up to `grow` bytes longer.
std::string MutateBytes(std::string s, size_t grow) {
  const size_t size = s.size();
  s.resize(size + grow);
  const size_t n = LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(s.data()), size, s.size());
  s.resize(n);
  return s;
}

size_t DTypeItemSize(int dtype) {
  switch (dtype) {
    case 1: return 4;  // FLOAT32
    case 2: return 8;  // FLOAT64
    case 3: return 4;  // INT32
    case 4: return 1;  // BOOL
    default: return 0;
  }
}

// Tensor.data, edited in the tensor's dtype: one element gets a new value, or the data is resized
// to prod(shape) elements so that a mutated shape becomes consistent again.
bool MutateTensorData(Message* tensor, Rng& rng) {
  const Descriptor* d = tensor->GetDescriptor();
  const Reflection* r = tensor->GetReflection();
  const FieldDescriptor* dtype_f = d->FindFieldByName("dtype");
  const FieldDescriptor* shape_f = d->FindFieldByName("shape");
  const FieldDescriptor* data_f = d->FindFieldByName("data");
  const size_t item = DTypeItemSize(r->GetEnumValue(*tensor, dtype_f));
  if (item == 0) return false;
  std::string data = r->GetString(*tensor, data_f);
  if (OneIn(rng, 3)) {
    uint64_t elements = 1;
    for (int k = 0; k < r->FieldSize(*tensor, shape_f); ++k) {
      const int64_t dim = r->GetRepeatedInt64(*tensor, shape_f, k);
      if (dim < 0 || (dim > 0 && elements > kMaxTensorBytes / static_cast<uint64_t>(dim))) return false;
      elements *= static_cast<uint64_t>(dim);
    }
    if (elements * item > kMaxTensorBytes) return false;
    // New elements repeat the old ones cyclically (plausible values), or are zero.
    const size_t old = data.size();
    data.resize(elements * item);
    for (size_t i = old; i < data.size(); ++i) data[i] = old == 0 ? 0 : data[i % old];
    r->SetString(tensor, data_f, data);
    return true;
  }
  if (data.size() < item) return false;
  char* p = data.data() + Below(rng, data.size() / item) * item;
  if (item == 8) {
    double v;
    std::memcpy(&v, p, 8);
    v = MutateDouble(v, rng);
    std::memcpy(p, &v, 8);
  } else if (item == 4 && r->GetEnumValue(*tensor, dtype_f) == 1) {
    float v;
    std::memcpy(&v, p, 4);
    v = static_cast<float>(MutateDouble(v, rng));
    std::memcpy(p, &v, 4);
  } else if (item == 4) {
    int32_t v;
    std::memcpy(&v, p, 4);
    v = static_cast<int32_t>(MutateInt(v, rng));
    std::memcpy(p, &v, 4);
  } else {
    *p = static_cast<char>(rng() % 3);  // 0, 1 and one invalid bool
  }
  r->SetString(tensor, data_f, data);
  return true;
}

// A new value for a scalar field (or element `index` of a repeated one).
void MutateScalar(const Slot& s, Rng& rng) {
  Message* m = s.msg;
  const FieldDescriptor* f = s.field;
  const Reflection* r = m->GetReflection();
  const bool rep = s.index >= 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE: {
      const double v = MutateDouble(rep ? r->GetRepeatedDouble(*m, f, s.index) : r->GetDouble(*m, f), rng);
      rep ? r->SetRepeatedDouble(m, f, s.index, v) : r->SetDouble(m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_FLOAT: {
      const auto v =
          static_cast<float>(MutateDouble(rep ? r->GetRepeatedFloat(*m, f, s.index) : r->GetFloat(*m, f), rng));
      rep ? r->SetRepeatedFloat(m, f, s.index, v) : r->SetFloat(m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_INT32: {
      const auto v =
          static_cast<int32_t>(MutateInt(rep ? r->GetRepeatedInt32(*m, f, s.index) : r->GetInt32(*m, f), rng));
      rep ? r->SetRepeatedInt32(m, f, s.index, v) : r->SetInt32(m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      const int64_t v = MutateInt(rep ? r->GetRepeatedInt64(*m, f, s.index) : r->GetInt64(*m, f), rng);
      rep ? r->SetRepeatedInt64(m, f, s.index, v) : r->SetInt64(m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      const auto v =
          static_cast<uint32_t>(MutateInt(rep ? r->GetRepeatedUInt32(*m, f, s.index) : r->GetUInt32(*m, f), rng));
      rep ? r->SetRepeatedUInt32(m, f, s.index, v) : r->SetUInt32(m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      const auto v = static_cast<uint64_t>(
          MutateInt(static_cast<int64_t>(rep ? r->GetRepeatedUInt64(*m, f, s.index) : r->GetUInt64(*m, f)), rng));
      rep ? r->SetRepeatedUInt64(m, f, s.index, v) : r->SetUInt64(m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      const bool v = !(rep ? r->GetRepeatedBool(*m, f, s.index) : r->GetBool(*m, f));
      rep ? r->SetRepeatedBool(m, f, s.index, v) : r->SetBool(m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      // Mostly a declared value; sometimes a number proto3 accepts but no enumerator names.
      const auto* e = f->enum_type();
      int v = e->value(static_cast<int>(Below(rng, e->value_count())))->number();
      if (OneIn(rng, 3)) v = static_cast<int>(MutateInt(v, rng));
      if (OneIn(rng, 4)) v = e->value(e->value_count() - 1)->number() + 1;
      rep ? r->SetRepeatedEnumValue(m, f, s.index, v) : r->SetEnumValue(m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      if (!rep && f->name() == "data" && m->GetDescriptor()->name() == "Tensor" && !OneIn(rng, 4) &&
          MutateTensorData(m, rng)) {
        break;
      }
      std::string v = MutateBytes(rep ? r->GetRepeatedString(*m, f, s.index) : r->GetString(*m, f), 64);
      // proto3 `string` fields must hold UTF-8 or the message does not parse: keep them ASCII.
      if (f->type() == FieldDescriptor::TYPE_STRING) {
        for (char& c : v) c = static_cast<char>(c & 0x7f);
      }
      rep ? r->SetRepeatedString(m, f, s.index, v) : r->SetString(m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE: break;
  }
}

// Appends an element to a repeated field: a copy of one of its elements (or of a message of the
// same type elsewhere in `root`), or a default one.
void AddElement(Message* root, const Slot& s, Rng& rng) {
  Message* m = s.msg;
  const FieldDescriptor* f = s.field;
  const Reflection* r = m->GetReflection();
  const int n = r->FieldSize(*m, f);
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    std::vector<const Message*> donors;
    if (!OneIn(rng, 4)) FindOfType(*root, f->message_type(), &donors);
    std::unique_ptr<Message> copy;
    if (!donors.empty()) {
      copy.reset(donors[Below(rng, donors.size())]->New());
      copy->CopyFrom(*donors[Below(rng, donors.size())]);
    }
    Message* added = r->AddMessage(m, f);
    if (copy) added->CopyFrom(*copy);
    return;
  }
  // Scalars: duplicate the last element, then give it a new value half of the time.
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE: r->AddDouble(m, f, n ? r->GetRepeatedDouble(*m, f, n - 1) : 0); break;
    case FieldDescriptor::CPPTYPE_FLOAT: r->AddFloat(m, f, n ? r->GetRepeatedFloat(*m, f, n - 1) : 0); break;
    case FieldDescriptor::CPPTYPE_INT32: r->AddInt32(m, f, n ? r->GetRepeatedInt32(*m, f, n - 1) : 0); break;
    case FieldDescriptor::CPPTYPE_INT64: r->AddInt64(m, f, n ? r->GetRepeatedInt64(*m, f, n - 1) : 0); break;
    case FieldDescriptor::CPPTYPE_UINT32: r->AddUInt32(m, f, n ? r->GetRepeatedUInt32(*m, f, n - 1) : 0); break;
    case FieldDescriptor::CPPTYPE_UINT64: r->AddUInt64(m, f, n ? r->GetRepeatedUInt64(*m, f, n - 1) : 0); break;
    case FieldDescriptor::CPPTYPE_BOOL: r->AddBool(m, f, n ? r->GetRepeatedBool(*m, f, n - 1) : false); break;
    case FieldDescriptor::CPPTYPE_ENUM: r->AddEnumValue(m, f, n ? r->GetRepeatedEnumValue(*m, f, n - 1) : 0); break;
    case FieldDescriptor::CPPTYPE_STRING: r->AddString(m, f, n ? r->GetRepeatedString(*m, f, n - 1) : ""); break;
    case FieldDescriptor::CPPTYPE_MESSAGE: break;
  }
  if (OneIn(rng, 2)) MutateScalar({m, f, n}, rng);
}

void MutateOnce(Message* root, Rng& rng) {
  std::vector<Slot> slots;
  Collect(root, 0, &slots);
  if (slots.empty()) return;
  const Slot s = slots[Below(rng, slots.size())];
  Message* m = s.msg;
  const FieldDescriptor* f = s.field;
  const Reflection* r = m->GetReflection();
  const bool is_message = f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
  if (f->is_repeated() && s.index < 0) {
    const int n = r->FieldSize(*m, f);
    switch (rng() % 5) {
      case 0:
      case 1:
      case 2: AddElement(root, s, rng); break;
      case 3:
        if (n > 0) {
          r->SwapElements(m, f, static_cast<int>(Below(rng, n)), n - 1);
          r->RemoveLast(m, f);
        }
        break;
      default: r->ClearField(m, f); break;
    }
    return;
  }
  if (!is_message) return MutateScalar(s, rng);
  // A message (singular, or an element of a repeated field): clear it, or replace it by another
  // message of its type from the input; a singular one that is absent gets created.
  Message* target = s.index >= 0 ? r->MutableRepeatedMessage(m, f, s.index) : nullptr;
  if (s.index < 0 && !r->HasField(*m, f)) {
    r->MutableMessage(m, f);
    return;
  }
  if (target == nullptr) target = r->MutableMessage(m, f);
  if (OneIn(rng, 2)) {
    std::vector<const Message*> donors;
    FindOfType(*root, f->message_type(), &donors);
    const Message* donor = donors[Below(rng, donors.size())];
    if (donor != target) {
      std::unique_ptr<Message> copy(donor->New());
      copy->CopyFrom(*donor);  // the donor may live inside the target
      target->CopyFrom(*copy);
      return;
    }
  }
  if (s.index < 0) {
    r->ClearField(m, f);
  } else {
    target->Clear();
  }
}

}  // namespace

size_t MutateProtoInput(const Message& prototype, uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  // Byte mutations make protobuf log every string field with invalid UTF-8: silence it.
  static const bool quiet = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)quiet;
  Rng rng(seed);
  std::unique_ptr<Message> message(prototype.New());
  if (OneIn(rng, 4) || !message->ParseFromArray(data, static_cast<int>(size))) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  const int rounds = 1 + static_cast<int>(Below(rng, 3));
  for (int i = 0; i < rounds; ++i) MutateOnce(message.get(), rng);
  std::string out;
  if (!message->SerializeToString(&out) || out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

}  // namespace taxel::fuzz
