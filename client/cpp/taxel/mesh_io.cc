#include "taxel/mesh_io.h"

#include <array>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace taxel {
namespace {

class VertexMerger {
 public:
  explicit VertexMerger(MeshArrays* out) : out_(out) {}
  int32_t Add(double x, double y, double z) {
    auto [it, inserted] =
        index_.emplace(std::array<double, 3>{x, y, z}, static_cast<int32_t>(out_->vertices.size() / 3));
    if (inserted) out_->vertices.insert(out_->vertices.end(), {x, y, z});
    return it->second;
  }

 private:
  MeshArrays* out_;
  std::map<std::array<double, 3>, int32_t> index_;
};

}  // namespace

absl::StatusOr<MeshArrays> ParseObj(const std::string& text, const std::string& name) {
  MeshArrays mesh;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::vector<absl::string_view> tok = absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (tok.empty()) continue;
    if (tok[0] == "v") {
      double x, y, z;
      if (tok.size() < 4 || !absl::SimpleAtod(tok[1], &x) || !absl::SimpleAtod(tok[2], &y) ||
          !absl::SimpleAtod(tok[3], &z)) {
        return absl::InvalidArgumentError(absl::StrCat(name, ":", line_no, ": malformed vertex"));
      }
      mesh.vertices.insert(mesh.vertices.end(), {x, y, z});
    } else if (tok[0] == "f") {
      if (tok.size() < 4)
        return absl::InvalidArgumentError(absl::StrCat(name, ":", line_no, ": a face needs 3 vertices"));
      std::vector<int32_t> idx;
      const int64_t nv = static_cast<int64_t>(mesh.vertices.size() / 3);
      for (size_t k = 1; k < tok.size(); ++k) {
        const absl::string_view first = tok[k].substr(0, tok[k].find('/'));
        int64_t i;
        if (!absl::SimpleAtoi(first, &i) || i == 0) {
          return absl::InvalidArgumentError(absl::StrCat(name, ":", line_no, ": malformed face index '", tok[k], "'"));
        }
        const int64_t zero_based = i > 0 ? i - 1 : nv + i;
        if (zero_based < 0 || zero_based >= nv) {
          return absl::InvalidArgumentError(absl::StrCat(name, ":", line_no, ": face index ", i, " out of range"));
        }
        idx.push_back(static_cast<int32_t>(zero_based));
      }
      for (size_t k = 1; k + 1 < idx.size(); ++k)
        mesh.triangles.insert(mesh.triangles.end(), {idx[0], idx[k], idx[k + 1]});
    }
  }
  if (mesh.triangles.empty()) return absl::InvalidArgumentError(absl::StrCat(name, ": no faces"));
  return mesh;
}

absl::StatusOr<MeshArrays> ParseStl(const std::string& bytes, const std::string& name) {
  MeshArrays mesh;
  VertexMerger merger(&mesh);
  // Binary STL: 80-byte header, uint32 count, 50 bytes per triangle. Some ASCII-looking headers
  // ("solid ...") are binary, so decide by the exact size.
  if (bytes.size() >= 84) {
    uint32_t count;
    std::memcpy(&count, bytes.data() + 80, 4);
    if (bytes.size() == 84 + 50ull * count) {
      for (uint32_t t = 0; t < count; ++t) {
        const char* p = bytes.data() + 84 + 50ull * t + 12;  // skip the normal
        int32_t ids[3];
        for (int k = 0; k < 3; ++k) {
          float v[3];
          std::memcpy(v, p + 12 * k, 12);
          ids[k] = merger.Add(v[0], v[1], v[2]);
        }
        mesh.triangles.insert(mesh.triangles.end(), ids, ids + 3);
      }
      if (mesh.triangles.empty()) return absl::InvalidArgumentError(absl::StrCat(name, ": no facets"));
      return mesh;
    }
  }
  std::istringstream in(bytes);
  std::string line;
  int line_no = 0;
  std::vector<int32_t> facet;
  while (std::getline(in, line)) {
    ++line_no;
    std::vector<absl::string_view> tok = absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (tok.empty()) continue;
    if (tok[0] == "vertex") {
      double x, y, z;
      if (tok.size() < 4 || !absl::SimpleAtod(tok[1], &x) || !absl::SimpleAtod(tok[2], &y) ||
          !absl::SimpleAtod(tok[3], &z)) {
        return absl::InvalidArgumentError(absl::StrCat(name, ":", line_no, ": malformed vertex"));
      }
      facet.push_back(merger.Add(x, y, z));
    } else if (tok[0] == "endloop") {
      for (size_t k = 1; k + 1 < facet.size(); ++k)
        mesh.triangles.insert(mesh.triangles.end(), {facet[0], facet[k], facet[k + 1]});
      facet.clear();
    }
  }
  if (mesh.triangles.empty()) return absl::InvalidArgumentError(absl::StrCat(name, ": no facets"));
  return mesh;
}

absl::StatusOr<MeshArrays> ReadMeshFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string lower = absl::AsciiStrToLower(path);
  if (absl::EndsWith(lower, ".obj")) return ParseObj(ss.str(), path);
  if (absl::EndsWith(lower, ".stl")) return ParseStl(ss.str(), path);
  return absl::InvalidArgumentError(absl::StrCat(path, ": expected a .obj or .stl file"));
}

}  // namespace taxel
