#include "core/geometry/triangle_mesh.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/common/field_error.h"
#include "core/common/sha256.h"

namespace taxel::geometry {
namespace {

void PutU64(Sha256& h, uint64_t v) {
  uint8_t b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
  h.Update(b, 8);
}

}  // namespace

std::string TriangleMesh::ContentId(const std::vector<Eigen::Vector3d>& vertices,
                                    const std::vector<Triangle>& triangles) {
  static_assert(sizeof(double) == 8 && sizeof(int32_t) == 4);
  Sha256 h;
  h.Update("taxel-mesh-v1", 13);
  PutU64(h, vertices.size());
  // Little-endian hosts (x86-64, aarch64) hash their in-memory representation directly.
  for (const auto& v : vertices) h.Update(v.data(), 3 * sizeof(double));
  PutU64(h, triangles.size());
  if (!triangles.empty()) h.Update(triangles.data(), triangles.size() * sizeof(Triangle));
  return h.FinishHex();
}

absl::StatusOr<std::shared_ptr<const TriangleMesh>> TriangleMesh::Create(std::vector<Eigen::Vector3d> vertices,
                                                                         std::vector<Triangle> triangles,
                                                                         absl::string_view field) {
  // The paths of the request's fields: "<field>.vertices", or "vertices" when the mesh is the
  // request itself (UploadMesh passes "").
  const std::string at = field.empty() ? std::string() : absl::StrCat(field, ".");
  if (vertices.empty()) {
    return InvalidFieldError(absl::StrCat(at, "vertices"), "expected at least 3 vertices, got 0");
  }
  if (triangles.empty()) {
    return InvalidFieldError(absl::StrCat(at, "triangles"), "expected at least 1 triangle, got 0");
  }
  for (size_t i = 0; i < vertices.size(); ++i) {
    if (!vertices[i].allFinite()) {
      return InvalidFieldError(absl::StrCat(at, "vertices[", i, "]"), "expected finite coordinates");
    }
  }
  const int64_t nv = static_cast<int64_t>(vertices.size());
  for (size_t t = 0; t < triangles.size(); ++t) {
    const Triangle& tri = triangles[t];
    for (int k = 0; k < 3; ++k) {
      if (tri[k] < 0 || tri[k] >= nv) {
        return InvalidFieldError(absl::StrCat(at, "triangles[", t, "]"),
                                 absl::StrCat("vertex index ", tri[k], " out of range [0, ", nv, ")"));
      }
    }
    if (tri[0] == tri[1] || tri[1] == tri[2] || tri[2] == tri[0]) {
      return InvalidFieldError(absl::StrCat(at, "triangles[", t, "]"), "degenerate triangle (repeated vertex index)");
    }
    const Eigen::Vector3d& a = vertices[tri[0]];
    const Eigen::Vector3d& b = vertices[tri[1]];
    const Eigen::Vector3d& c = vertices[tri[2]];
    const double longest2 = std::max({(b - a).squaredNorm(), (c - b).squaredNorm(), (a - c).squaredNorm()});
    if (!((b - a).cross(c - a).norm() > 1e-12 * longest2)) {
      return InvalidFieldError(absl::StrCat(at, "triangles[", t, "]"), "degenerate triangle (zero area)");
    }
  }
  std::shared_ptr<TriangleMesh> mesh(new TriangleMesh());
  mesh->id_ = ContentId(vertices, triangles);
  mesh->vertices_ = std::move(vertices);
  mesh->triangles_ = std::move(triangles);
  mesh->ComputeTopologyAndNormals();
  return std::shared_ptr<const TriangleMesh>(std::move(mesh));
}

void TriangleMesh::ComputeTopologyAndNormals() {
  const int nt = num_triangles();
  bounds_ = Aabb::Empty();
  for (const auto& v : vertices_) bounds_.Extend(v);

  face_normals_.resize(nt);
  face_areas_.resize(nt);
  total_area_ = 0;
  volume_ = 0;
  for (int t = 0; t < nt; ++t) {
    const auto& tri = triangles_[t];
    const Eigen::Vector3d& a = vertices_[tri[0]];
    const Eigen::Vector3d& b = vertices_[tri[1]];
    const Eigen::Vector3d& c = vertices_[tri[2]];
    const Eigen::Vector3d n = (b - a).cross(c - a);
    const double len = n.norm();
    face_normals_[t] = n / len;
    face_areas_[t] = 0.5 * len;
    total_area_ += face_areas_[t];
    volume_ += a.dot(b.cross(c)) / 6.0;  // divergence theorem, exact for closed meshes
  }

  // Edge topology: sort half-edges by their undirected key.
  struct HalfEdge {
    uint64_t key;
    int32_t tri;
    int8_t local;  // edge k joins vertex k and (k + 1) % 3
    bool forward;  // traversed from the lower to the higher vertex index
  };
  std::vector<HalfEdge> half_edges;
  half_edges.reserve(3 * static_cast<size_t>(nt));
  for (int t = 0; t < nt; ++t) {
    for (int k = 0; k < 3; ++k) {
      const uint32_t u = triangles_[t][k], v = triangles_[t][(k + 1) % 3];
      const uint64_t key = (uint64_t{std::min(u, v)} << 32) | std::max(u, v);
      half_edges.push_back({key, t, static_cast<int8_t>(k), u < v});
    }
  }
  std::sort(half_edges.begin(), half_edges.end(),
            [](const HalfEdge& x, const HalfEdge& y) { return x.key != y.key ? x.key < y.key : x.tri < y.tri; });
  bool watertight = true;
  std::vector<int32_t> partner(3 * static_cast<size_t>(nt), -1);  // other triangle on each edge
  for (size_t i = 0; i < half_edges.size();) {
    size_t j = i;
    while (j < half_edges.size() && half_edges[j].key == half_edges[i].key) ++j;
    if (j - i == 2 && half_edges[i].forward != half_edges[i + 1].forward) {
      partner[3 * half_edges[i].tri + half_edges[i].local] = half_edges[i + 1].tri;
      partner[3 * half_edges[i + 1].tri + half_edges[i + 1].local] = half_edges[i].tri;
    } else {
      watertight = false;
      if (j - i == 2) {  // manifold but inconsistently oriented: still average the two normals
        partner[3 * half_edges[i].tri + half_edges[i].local] = half_edges[i + 1].tri;
        partner[3 * half_edges[i + 1].tri + half_edges[i + 1].local] = half_edges[i].tri;
      }
    }
    i = j;
  }
  watertight_ = watertight;
  inside_out_ = watertight_ && volume_ < 0;
  if (inside_out_) {
    for (auto& n : face_normals_) n = -n;
    volume_ = -volume_;
  }

  // Edge pseudo-normals: sum of the (up to) two adjacent face normals.
  edge_normals_.resize(3 * static_cast<size_t>(nt));
  for (int t = 0; t < nt; ++t) {
    for (int k = 0; k < 3; ++k) {
      const int32_t other = partner[3 * t + k];
      Eigen::Vector3d n = face_normals_[t];
      if (other >= 0) n += face_normals_[other];
      const double len = n.norm();
      edge_normals_[3 * t + k] = len > 0 ? Eigen::Vector3d(n / len) : face_normals_[t];
    }
  }

  // Vertex pseudo-normals: incident face normals weighted by the incident angle.
  vertex_normals_.assign(vertices_.size(), Eigen::Vector3d::Zero());
  for (int t = 0; t < nt; ++t) {
    for (int k = 0; k < 3; ++k) {
      const Eigen::Vector3d& p = vertices_[triangles_[t][k]];
      const Eigen::Vector3d e1 = (vertices_[triangles_[t][(k + 1) % 3]] - p).normalized();
      const Eigen::Vector3d e2 = (vertices_[triangles_[t][(k + 2) % 3]] - p).normalized();
      const double angle = std::acos(std::clamp(e1.dot(e2), -1.0, 1.0));
      vertex_normals_[triangles_[t][k]] += angle * face_normals_[t];
    }
  }
  for (auto& n : vertex_normals_) {
    const double len = n.norm();
    if (len > 0) n /= len;  // unreferenced vertices keep a zero normal; never a closest feature
  }
}

size_t TriangleMesh::memory_bytes() const {
  return sizeof(*this) + vertices_.capacity() * sizeof(Eigen::Vector3d) + triangles_.capacity() * sizeof(Triangle) +
         (face_normals_.capacity() + vertex_normals_.capacity() + edge_normals_.capacity()) * sizeof(Eigen::Vector3d) +
         face_areas_.capacity() * sizeof(double);
}

}  // namespace taxel::geometry
