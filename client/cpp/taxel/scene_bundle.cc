#include "taxel/scene_bundle.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "taxel/spec_json.h"

namespace taxel {
namespace {

namespace pb = google::protobuf;

// The shortest of %.15g / %.17g that reads back as the same double.
std::string Number(double v) {
  std::string s = absl::StrFormat("%.15g", v);
  if (std::strtod(s.c_str(), nullptr) != v) s = absl::StrFormat("%.17g", v);
  return s;
}

template <typename T>
void AppendList(std::string* out, const std::vector<T>& values, int per_line) {
  absl::StrAppend(out, "[");
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) absl::StrAppend(out, i % per_line == 0 ? ",\n      " : ", ");
    if constexpr (std::is_floating_point_v<T>) {
      absl::StrAppend(out, Number(values[i]));
    } else {
      absl::StrAppend(out, values[i]);
    }
  }
  absl::StrAppend(out, "]");
}

absl::Status Invalid(const std::string& source, const std::string& field, const std::string& rule) {
  return absl::InvalidArgumentError(absl::StrCat(source, ": ", field, ": ", rule));
}

// A list of numbers; integers when `integers` (zero-based triangle indices, >= 0).
absl::Status ReadNumbers(const pb::Value& v, const std::string& source, const std::string& field, bool integers,
                         std::vector<double>* out) {
  if (v.kind_case() != pb::Value::kListValue) return Invalid(source, field, "expected a list of numbers");
  const auto& list = v.list_value().values();
  out->reserve(list.size());
  for (int i = 0; i < list.size(); ++i) {
    const std::string at = absl::StrCat(field, "[", i, "]");
    if (list[i].kind_case() != pb::Value::kNumberValue) return Invalid(source, at, "expected a number");
    const double x = list[i].number_value();
    if (!std::isfinite(x)) return Invalid(source, at, "expected a finite number");
    if (integers && (x != std::floor(x) || x < 0 || x > 2147483647.0)) {
      return Invalid(source, at, absl::StrCat("expected a vertex index (an integer >= 0), got ", Number(x)));
    }
    out->push_back(x);
  }
  if (out->size() % 3 != 0) {
    return Invalid(source, field, absl::StrCat("expected a multiple of 3 numbers, got ", out->size()));
  }
  return absl::OkStatus();
}

absl::StatusOr<BundleMesh> ReadMesh(const pb::Value& v, const std::string& source, const std::string& field) {
  if (v.kind_case() != pb::Value::kStructValue) return Invalid(source, field, "expected an object");
  const auto& f = v.struct_value().fields();
  for (const auto& [key, unused] : f) {
    if (key != "mesh_id" && key != "vertices" && key != "triangles") {
      return Invalid(source, absl::StrCat(field, ".", key), "unknown key (expected mesh_id, vertices, triangles)");
    }
  }
  for (const char* key : {"mesh_id", "vertices", "triangles"}) {
    if (!f.count(key)) return Invalid(source, absl::StrCat(field, ".", key), "missing");
  }
  BundleMesh mesh;
  if (f.at("mesh_id").kind_case() != pb::Value::kStringValue) {
    return Invalid(source, field + ".mesh_id", "expected a string");
  }
  mesh.mesh_id = f.at("mesh_id").string_value();
  std::vector<double> tri;
  if (auto s = ReadNumbers(f.at("vertices"), source, field + ".vertices", false, &mesh.arrays.vertices); !s.ok()) {
    return s;
  }
  if (auto s = ReadNumbers(f.at("triangles"), source, field + ".triangles", true, &tri); !s.ok()) return s;
  mesh.arrays.triangles.assign(tri.begin(), tri.end());
  return mesh;
}

}  // namespace

std::string SceneBundleToJson(const SceneBundle& bundle) {
  pb::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  std::string scene;
  // A SceneSpec always prints (no Any fields to resolve).
  (void)pb::util::MessageToJsonString(bundle.scene, &scene, options);
  std::string out = absl::StrCat("{\n\"scene\": ", scene, ",\n\"meshes\": [");
  for (size_t i = 0; i < bundle.meshes.size(); ++i) {
    const BundleMesh& m = bundle.meshes[i];
    absl::StrAppend(&out, i ? ",\n" : "\n", "  {\"mesh_id\": \"", m.mesh_id, "\",\n   \"vertices\": ");
    AppendList(&out, m.arrays.vertices, 3);
    absl::StrAppend(&out, ",\n   \"triangles\": ");
    AppendList(&out, m.arrays.triangles, 3);
    absl::StrAppend(&out, "}");
  }
  absl::StrAppend(&out, bundle.meshes.empty() ? "]" : "\n]");
  if (!bundle.geom_names.empty()) {
    absl::StrAppend(&out, ",\n\"geom_names\": {");
    const char* sep = "\n";
    for (const auto& [link, names] : bundle.geom_names) {
      pb::Value v;
      for (const std::string& n : names) v.mutable_list_value()->add_values()->set_string_value(n);
      std::string list, key;
      (void)pb::util::MessageToJsonString(v, &list);
      pb::Value k;
      k.set_string_value(link);
      (void)pb::util::MessageToJsonString(k, &key);  // quoted and escaped
      absl::StrAppend(&out, sep, "  ", key, ": ", list);
      sep = ",\n";
    }
    absl::StrAppend(&out, "\n}");
  }
  absl::StrAppend(&out, "\n}\n");
  return out;
}

absl::StatusOr<SceneBundle> ParseSceneBundleJson(const std::string& json, const std::string& source) {
  SceneBundle bundle;
  pb::Struct root;
  if (!pb::util::JsonStringToMessage(json, &root).ok()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", SceneSpecFromJson(json).status().message()));
  }
  if (!root.fields().count("scene")) {  // not a bundle: the whole document is a SceneSpec
    pb::Value whole;
    *whole.mutable_struct_value() = std::move(root);
    if (absl::Status s = MessageFromJsonValue(&whole, &bundle.scene); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": ", s.message()));
    }
    return bundle;
  }
  for (const auto& [key, unused] : root.fields()) {
    if (key != "scene" && key != "meshes" && key != "geom_names") {
      return Invalid(source, key, "unknown key (expected scene, meshes, geom_names)");
    }
  }
  if (absl::Status s = MessageFromJsonValue(&(*root.mutable_fields())["scene"], &bundle.scene); !s.ok()) {
    return Invalid(source, "scene", std::string(s.message()));
  }
  if (root.fields().count("meshes")) {
    const pb::Value& meshes = root.fields().at("meshes");
    if (meshes.kind_case() != pb::Value::kListValue) return Invalid(source, "meshes", "expected a list");
    for (int i = 0; i < meshes.list_value().values_size(); ++i) {
      auto mesh = ReadMesh(meshes.list_value().values(i), source, absl::StrCat("meshes[", i, "]"));
      if (!mesh.ok()) return mesh.status();
      bundle.meshes.push_back(*std::move(mesh));
    }
  }
  if (root.fields().count("geom_names")) {
    const pb::Value& names = root.fields().at("geom_names");
    if (names.kind_case() != pb::Value::kStructValue) return Invalid(source, "geom_names", "expected an object");
    for (const auto& [link, list] : names.struct_value().fields()) {
      const std::string field = absl::StrCat("geom_names[\"", link, "\"]");
      if (list.kind_case() != pb::Value::kListValue) return Invalid(source, field, "expected a list of strings");
      std::vector<std::string>& out = bundle.geom_names[link];
      for (const pb::Value& n : list.list_value().values()) {
        if (n.kind_case() != pb::Value::kStringValue) return Invalid(source, field, "expected a list of strings");
        out.push_back(n.string_value());
      }
    }
  }
  return bundle;
}

absl::StatusOr<v1::SceneInfo> CreateSceneFromBundle(Client& client, const SceneBundle& bundle) {
  for (size_t i = 0; i < bundle.meshes.size(); ++i) {
    const BundleMesh& m = bundle.meshes[i];
    auto r = client.UploadMesh(m.arrays.vertices, m.arrays.triangles);
    if (!r.ok()) {
      return absl::Status(r.status().code(), absl::StrCat("meshes[", i, "]: ", r.status().message()));
    }
    if (r->mesh_id() != m.mesh_id) {
      return absl::FailedPreconditionError(absl::StrCat(
          "meshes[", i, "].mesh_id: the server's content id of these vertices and triangles is ", r->mesh_id(),
          ", not ", m.mesh_id, " (the mesh was edited: update mesh_id here and in the MeshRefs that use it)"));
    }
  }
  return client.CreateScene(bundle.scene);
}

}  // namespace taxel
