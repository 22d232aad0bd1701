// Enum values a request may hold: proto3 parses any number into an enum field, so the service
// checks every enum field against its declaration before decoding.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/field_error.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "server/codec.h"

namespace taxel::server {
namespace {

using google::protobuf::FieldDescriptor;

absl::Status Undeclared(const std::string& path, int value, const google::protobuf::EnumDescriptor& type) {
  std::vector<std::string> names;
  for (int i = 0; i < type.value_count(); ++i) names.push_back(type.value(i)->name());
  return InvalidFieldError(path, absl::StrCat(value, " is not a value of ", type.full_name(), " (expected one of ",
                                              absl::StrJoin(names, ", "), ")"));
}

// Walks the fields that are set; `path` is the message's own path ("" at the root).
absl::Status Check(const google::protobuf::Message& message, const std::string& path) {
  const google::protobuf::Reflection& r = *message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r.ListFields(message, &fields);
  for (const FieldDescriptor* f : fields) {
    const std::string name = path.empty() ? f->name() : absl::StrCat(path, ".", f->name());
    if (f->type() == FieldDescriptor::TYPE_ENUM) {
      const google::protobuf::EnumDescriptor& type = *f->enum_type();
      if (f->is_repeated()) {
        for (int i = 0; i < r.FieldSize(message, f); ++i) {
          const int v = r.GetRepeatedEnumValue(message, f, i);
          if (type.FindValueByNumber(v) == nullptr) return Undeclared(absl::StrCat(name, "[", i, "]"), v, type);
        }
      } else {
        const int v = r.GetEnumValue(message, f);
        if (type.FindValueByNumber(v) == nullptr) return Undeclared(name, v, type);
      }
    } else if (f->type() == FieldDescriptor::TYPE_MESSAGE) {
      if (f->is_map()) {
        // Map entries are messages {key, value}; name them by their key where it is a string.
        for (int i = 0; i < r.FieldSize(message, f); ++i) {
          const google::protobuf::Message& entry = r.GetRepeatedMessage(message, f, i);
          const FieldDescriptor* key = entry.GetDescriptor()->map_key();
          const FieldDescriptor* value = entry.GetDescriptor()->map_value();
          if (value->type() != FieldDescriptor::TYPE_MESSAGE && value->type() != FieldDescriptor::TYPE_ENUM) continue;
          const std::string at = key->type() == FieldDescriptor::TYPE_STRING
                                     ? absl::StrCat(name, "[", entry.GetReflection()->GetString(entry, key), "]")
                                     : absl::StrCat(name, "[", i, "]");
          if (value->type() == FieldDescriptor::TYPE_ENUM) {
            const int v = entry.GetReflection()->GetEnumValue(entry, value);
            if (value->enum_type()->FindValueByNumber(v) == nullptr) return Undeclared(at, v, *value->enum_type());
          } else {
            absl::Status s = Check(entry.GetReflection()->GetMessage(entry, value), at);
            if (!s.ok()) return s;
          }
        }
      } else if (f->is_repeated()) {
        for (int i = 0; i < r.FieldSize(message, f); ++i) {
          absl::Status s = Check(r.GetRepeatedMessage(message, f, i), absl::StrCat(name, "[", i, "]"));
          if (!s.ok()) return s;
        }
      } else {
        absl::Status s = Check(r.GetMessage(message, f), name);
        if (!s.ok()) return s;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckEnumValues(const google::protobuf::Message& message) { return Check(message, ""); }

}  // namespace taxel::server
