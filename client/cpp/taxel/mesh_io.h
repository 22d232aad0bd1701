// Reading triangle meshes from Wavefront OBJ and STL (ASCII or binary) files.
#ifndef TAXEL_CLIENT_CPP_TAXEL_MESH_IO_H_
#define TAXEL_CLIENT_CPP_TAXEL_MESH_IO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace taxel {

struct MeshArrays {
  std::vector<double> vertices;    ///< V·3
  std::vector<int32_t> triangles;  ///< T·3, zero-based
};

/// OBJ: `v x y z` and `f a b c ...` lines (1-based or negative indices, `a/b/c` forms; polygons
/// are fan-triangulated); everything else is ignored. STL: ASCII or binary; coincident vertices
/// are merged. The format is chosen by the extension (.obj, .stl). INVALID_ARGUMENT naming the
/// file and line for malformed input, NOT_FOUND for a missing file.
absl::StatusOr<MeshArrays> ReadMeshFile(const std::string& path);
absl::StatusOr<MeshArrays> ParseObj(const std::string& text, const std::string& name = "obj");
absl::StatusOr<MeshArrays> ParseStl(const std::string& bytes, const std::string& name = "stl");

}  // namespace taxel

#endif  // TAXEL_CLIENT_CPP_TAXEL_MESH_IO_H_
