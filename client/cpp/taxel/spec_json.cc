#include "taxel/spec_json.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace taxel {
namespace {

using google::protobuf::ListValue;
using google::protobuf::Struct;
using google::protobuf::Value;

struct Flattened {
  std::vector<double> values;
  std::vector<int64_t> shape;  // from the nesting
};

// Flattens a (nested) list of numbers in C order; every sublist at one depth has the same length.
absl::Status Flatten(const Value& v, const std::string& path, size_t depth, Flattened* out) {
  if (v.kind_case() == Value::kNumberValue || v.kind_case() == Value::kBoolValue) {
    if (depth < out->shape.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": expected a list of ", out->shape[depth], " values, got a number"));
    }
    out->values.push_back(v.kind_case() == Value::kBoolValue ? (v.bool_value() ? 1.0 : 0.0) : v.number_value());
    return absl::OkStatus();
  }
  if (v.kind_case() != Value::kListValue) {
    std::string text;
    (void)google::protobuf::util::MessageToJsonString(v, &text);
    return absl::InvalidArgumentError(absl::StrCat(path, ": expected a number, got ", text));
  }
  const ListValue& list = v.list_value();
  if (depth == out->shape.size()) {
    if (!out->values.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": expected a number here (the lists are ragged)"));
    }
    out->shape.push_back(list.values_size());
  } else if (list.values_size() != out->shape[depth]) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": expected ", out->shape[depth], " values like its siblings, got ", list.values_size()));
  }
  for (int i = 0; i < list.values_size(); ++i) {
    if (absl::Status s = Flatten(list.values(i), absl::StrCat(path, "[", i, "]"), depth + 1, out); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// The bytes of `values` as `dtype` (little-endian, as the machine is).
absl::StatusOr<std::string> Pack(const std::vector<double>& values, const std::string& dtype,
                                 const std::string& path) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    const double x = values[i];
    const std::string where = absl::StrCat(path, " value ", i);
    if (dtype == "FLOAT64") {
      out.append(reinterpret_cast<const char*>(&x), sizeof x);
    } else if (dtype == "FLOAT32") {
      const float f = static_cast<float>(x);
      out.append(reinterpret_cast<const char*>(&f), sizeof f);
    } else if (dtype == "INT32") {
      if (x != std::floor(x) || x < -2147483648.0 || x > 2147483647.0)
        return absl::InvalidArgumentError(absl::StrCat(where, ": expected a 32-bit integer, got ", x));
      const int32_t k = static_cast<int32_t>(x);
      out.append(reinterpret_cast<const char*>(&k), sizeof k);
    } else if (dtype == "BOOL") {
      if (x != 0 && x != 1) return absl::InvalidArgumentError(absl::StrCat(where, ": expected 0 or 1, got ", x));
      out.push_back(static_cast<char>(x));
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": dtype '", dtype, "' has no list form (FLOAT32, FLOAT64, INT32 or BOOL)"));
    }
  }
  return out;
}

// A Struct whose "data" is a list or a number (and whose other keys are Tensor fields) becomes
// the Tensor JSON with base64 data.
absl::Status RewriteTensor(Struct* s, const std::string& path) {
  auto& fields = *s->mutable_fields();
  const std::string data_path = path.empty() ? "data" : absl::StrCat(path, ".data");
  const Value& data = fields.at("data");
  std::string dtype = "FLOAT64";
  if (auto it = fields.find("dtype"); it != fields.end()) {
    if (it->second.kind_case() != Value::kStringValue)
      return absl::InvalidArgumentError(absl::StrCat(path, ".dtype: expected a name such as \"FLOAT64\""));
    dtype = it->second.string_value();
  }
  Flattened flat;
  if (absl::Status st = Flatten(data, data_path, 0, &flat); !st.ok()) return st;
  if (auto it = fields.find("shape"); it != fields.end()) {
    Flattened shape;
    if (absl::Status st = Flatten(it->second, path + ".shape", 0, &shape); !st.ok()) return st;
    double n = 1;
    for (double d : shape.values) n *= d;
    if (n != static_cast<double>(flat.values.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat(data_path, ": ", flat.values.size(), " values for shape [",
                       absl::StrJoin(shape.values, ", "), "], which holds ", n));
    }
  } else {
    ListValue* shape = fields["shape"].mutable_list_value();
    for (int64_t d : flat.shape) shape->add_values()->set_number_value(static_cast<double>(d));
  }
  auto bytes = Pack(flat.values, dtype, data_path);
  if (!bytes.ok()) return bytes.status();
  fields["dtype"].set_string_value(dtype);
  fields["data"].set_string_value(absl::Base64Escape(*bytes));
  return absl::OkStatus();
}

absl::Status Rewrite(Value* v, const std::string& path) {
  if (v->kind_case() == Value::kListValue) {
    ListValue* list = v->mutable_list_value();
    for (int i = 0; i < list->values_size(); ++i) {
      if (absl::Status s = Rewrite(list->mutable_values(i), absl::StrCat(path, "[", i, "]")); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  if (v->kind_case() != Value::kStructValue) return absl::OkStatus();
  Struct* s = v->mutable_struct_value();
  auto& fields = *s->mutable_fields();
  if (auto it = fields.find("data");
      it != fields.end() && (it->second.kind_case() == Value::kListValue ||
                             it->second.kind_case() == Value::kNumberValue ||
                             it->second.kind_case() == Value::kBoolValue)) {
    return RewriteTensor(s, path);
  }
  for (auto& [key, child] : fields) {
    if (absl::Status st = Rewrite(&child, path.empty() ? key : absl::StrCat(path, ".", key)); !st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status MessageFromJson(const std::string& json, google::protobuf::Message* message) {
  Value tree;
  if (auto s = google::protobuf::util::JsonStringToMessage(json, &tree); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("not valid JSON: ", s.message().as_string()));
  }
  return MessageFromJsonValue(&tree, message);
}

absl::Status MessageFromJsonValue(Value* tree, google::protobuf::Message* message) {
  if (absl::Status s = Rewrite(tree, ""); !s.ok()) return s;
  std::string rewritten;
  if (auto s = google::protobuf::util::MessageToJsonString(*tree, &rewritten); !s.ok()) {
    return absl::InternalError(s.message().as_string());
  }
  if (auto s = google::protobuf::util::JsonStringToMessage(rewritten, message); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a ", message->GetDescriptor()->full_name(), ": ", s.message().as_string()));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::SceneSpec> SceneSpecFromJson(const std::string& json) {
  v1::SceneSpec spec;
  if (absl::Status s = MessageFromJson(json, &spec); !s.ok()) return s;
  return spec;
}

}  // namespace taxel
