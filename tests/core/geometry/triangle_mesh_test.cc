// Tests for core/geometry/triangle_mesh.h (and the generators of mesh_generators.h it is fed
// with): validation errors, the content id's canonical bytes, topology flags, areas, volumes and
// the pseudo-normals, all against hand calculations or closed forms derived below.
#include "core/geometry/triangle_mesh.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/common/sha256.h"
#include "core/geometry/mesh_generators.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/test_support.h"

namespace taxel::geometry {
namespace {

using ::taxel::testing::MakeMesh;
using ::testing::HasSubstr;
using Vec = Eigen::Vector3d;

constexpr double kPi = 3.14159265358979323846;

// A unit right tetrahedron, outward (counter-clockwise seen from outside):
//
//        z
//        3
//        |
//        0 ---- 1  x        faces: (0,2,1) bottom z=0, (0,1,3) y=0, (0,3,2) x=0, (1,2,3) slanted
//       /
//      2  y
MeshData Tetrahedron() {
  return {{Vec(0, 0, 0), Vec(1, 0, 0), Vec(0, 1, 0), Vec(0, 0, 1)}, {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}}};
}

absl::Status CreateStatus(MeshData d, absl::string_view field = "mesh") {
  return TriangleMesh::Create(std::move(d.vertices), std::move(d.triangles), field).status();
}

void ExpectInvalid(const absl::Status& s, const std::string& substr1, const std::string& substr2 = "") {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(substr1));
  if (!substr2.empty()) {
    EXPECT_THAT(std::string(s.message()), HasSubstr(substr2));
  }
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

TEST(TriangleMeshCreateTest, ValidTetrahedron) {
  auto mesh = TriangleMesh::Create(Tetrahedron().vertices, Tetrahedron().triangles);
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  EXPECT_EQ((*mesh)->num_vertices(), 4);
  EXPECT_EQ((*mesh)->num_triangles(), 4);
  EXPECT_TRUE((*mesh)->is_watertight());
  EXPECT_FALSE((*mesh)->was_inside_out());
  // Volume of the corner tetrahedron: 1/6. Area: three right triangles of 1/2 and the slanted
  // equilateral face with side sqrt 2: (sqrt 3 / 4)·2 = sqrt 3 / 2.
  EXPECT_NEAR((*mesh)->volume(), 1.0 / 6, 1e-15);
  EXPECT_NEAR((*mesh)->total_area(), 1.5 + std::sqrt(3.0) / 2, 1e-15);
  EXPECT_NEAR((*mesh)->face_area(3), std::sqrt(3.0) / 2, 1e-15);
  // Outward face normals: bottom −z, y=0 face −y, x=0 face −x, slanted (1,1,1)/sqrt 3.
  EXPECT_TRUE((*mesh)->face_normal(0).isApprox(Vec(0, 0, -1), 1e-15));
  EXPECT_TRUE((*mesh)->face_normal(1).isApprox(Vec(0, -1, 0), 1e-15));
  EXPECT_TRUE((*mesh)->face_normal(2).isApprox(Vec(-1, 0, 0), 1e-15));
  EXPECT_TRUE((*mesh)->face_normal(3).isApprox(Vec(1, 1, 1) / std::sqrt(3.0), 1e-15));
  EXPECT_EQ((*mesh)->bounds().lo, Vec(0, 0, 0));
  EXPECT_EQ((*mesh)->bounds().hi, Vec(1, 1, 1));
  EXPECT_GE((*mesh)->memory_bytes(), 4 * sizeof(Vec) + 4 * sizeof(Triangle));
}

TEST(TriangleMeshCreateTest, EmptyInputs) {
  ExpectInvalid(CreateStatus({{}, {{0, 1, 2}}}), "mesh.vertices");
  ExpectInvalid(CreateStatus({Tetrahedron().vertices, {}}), "mesh.triangles");
}

TEST(TriangleMeshCreateTest, NonFiniteVertexNamesItsIndex) {
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                     -std::numeric_limits<double>::infinity()}) {
    for (int axis = 0; axis < 3; ++axis) {
      MeshData d = Tetrahedron();
      d.vertices[2][axis] = bad;
      ExpectInvalid(CreateStatus(d), "mesh.vertices[2]", "finite");
    }
  }
  MeshData d = Tetrahedron();
  d.vertices[3].z() = std::numeric_limits<double>::quiet_NaN();
  ExpectInvalid(CreateStatus(d, "upload.meshes[4]"), "upload.meshes[4].vertices[3]");
}

TEST(TriangleMeshCreateTest, IndexOutOfRangeNamesTheTriangle) {
  MeshData d = Tetrahedron();
  d.triangles[1] = {0, 1, 4};  // 4 vertices: valid indices 0..3
  ExpectInvalid(CreateStatus(d), "mesh.triangles[1]", "out of range");
  d = Tetrahedron();
  d.triangles[3] = {-1, 2, 3};
  ExpectInvalid(CreateStatus(d), "mesh.triangles[3]", "out of range");
}

TEST(TriangleMeshCreateTest, RepeatedIndexNamesTheTriangle) {
  for (Triangle bad : {Triangle{0, 0, 1}, Triangle{1, 2, 1}, Triangle{2, 3, 3}}) {
    MeshData d = Tetrahedron();
    d.triangles[2] = bad;
    ExpectInvalid(CreateStatus(d), "mesh.triangles[2]", "repeated");
  }
}

TEST(TriangleMeshCreateTest, ZeroAreaTriangleNamesTheIndex) {
  // Triangle 1 is collinear: (0,0,0), (1,0,0), (2,0,0).
  MeshData d{{Vec(0, 0, 0), Vec(1, 0, 0), Vec(2, 0, 0), Vec(0, 1, 0)}, {{0, 1, 3}, {0, 1, 2}}};
  ExpectInvalid(CreateStatus(d), "mesh.triangles[1]", "zero area");
  // The threshold is relative: |(b−a)×(c−a)| ≤ 1e-12·(longest edge)². A sliver of height 1e-13 on
  // a unit base has |cross| = 1e-13 ≤ 1e-12·1 -> refused; height 1e-11 -> accepted.
  MeshData sliver{{Vec(0, 0, 0), Vec(1, 0, 0), Vec(0.5, 1e-13, 0)}, {{0, 1, 2}}};
  ExpectInvalid(CreateStatus(sliver), "mesh.triangles[0]", "zero area");
  sliver.vertices[2].y() = 1e-11;
  EXPECT_TRUE(CreateStatus(sliver).ok());
  // A tiny triangle (1 nm legs) is fine: the rule scales with the triangle.
  MeshData tiny{{Vec(0, 0, 0), Vec(1e-9, 0, 0), Vec(0, 1e-9, 0)}, {{0, 1, 2}}};
  EXPECT_TRUE(CreateStatus(tiny).ok());
}

// ---------------------------------------------------------------------------------------------
// Content id
// ---------------------------------------------------------------------------------------------

// The canonical bytes of the header, assembled by hand: "taxel-mesh-v1", uint64 LE vertex count,
// float64 LE coordinates, uint64 LE triangle count, int32 LE indices.
std::string CanonicalBytes(const MeshData& d) {
  std::string out = "taxel-mesh-v1";
  auto put_u64 = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  put_u64(d.vertices.size());
  for (const Vec& v : d.vertices) {
    for (int a = 0; a < 3; ++a) {
      uint64_t bits;
      std::memcpy(&bits, &v[a], 8);
      put_u64(bits);
    }
  }
  put_u64(d.triangles.size());
  for (const Triangle& t : d.triangles) {
    for (int k = 0; k < 3; ++k) {
      const uint32_t u = static_cast<uint32_t>(t[k]);
      for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
    }
  }
  return out;
}

TEST(TriangleMeshContentIdTest, IsSha256OfTheDocumentedCanonicalBytes) {
  const MeshData d = Tetrahedron();
  const std::string bytes = CanonicalBytes(d);
  ASSERT_EQ(bytes.size(), 13u + 8 + 4 * 24 + 8 + 4 * 12);
  Sha256 h;
  h.Update(bytes.data(), bytes.size());
  const std::string want = h.FinishHex();
  EXPECT_EQ(MakeMesh(d)->id(), want);
  EXPECT_EQ(TriangleMesh::ContentId(d.vertices, d.triangles), want);
  EXPECT_EQ(want.size(), 64u);
}

TEST(TriangleMeshContentIdTest, StableForEqualInputAndSensitiveToOneUlp) {
  const MeshData d = SubdividedBox(Vec(0.5, 1, 2), 2);
  const std::string id = MakeMesh(d)->id();
  EXPECT_EQ(MakeMesh(d)->id(), id);  // equal input, separately built
  std::set<std::string> ids{id};
  // A 1-ulp change of any single coordinate changes the id.
  for (int v : {0, 7, static_cast<int>(d.vertices.size()) - 1}) {
    for (int a = 0; a < 3; ++a) {
      MeshData e = d;
      e.vertices[v][a] = std::nextafter(e.vertices[v][a], std::numeric_limits<double>::infinity());
      EXPECT_TRUE(ids.insert(MakeMesh(e)->id()).second) << "vertex " << v << " axis " << a;
    }
  }
  // So does reordering one triangle's indices (same geometry, different bytes).
  MeshData e = d;
  e.triangles[0] = {e.triangles[0][1], e.triangles[0][2], e.triangles[0][0]};
  EXPECT_TRUE(ids.insert(MakeMesh(e)->id()).second);
  // −0.0 and +0.0 are different bytes.
  MeshData z = Tetrahedron(), nz = Tetrahedron();
  nz.vertices[0].x() = -0.0;
  EXPECT_NE(MakeMesh(z)->id(), MakeMesh(nz)->id());
}

// ---------------------------------------------------------------------------------------------
// Topology: watertight, holes, orientation
// ---------------------------------------------------------------------------------------------

MeshData Flipped(MeshData d) {
  for (Triangle& t : d.triangles) std::swap(t[1], t[2]);
  return d;
}

struct NamedMesh {
  std::string name;
  MeshData data;
  friend void PrintTo(const NamedMesh& m, std::ostream* os) { *os << m.name; }
};

std::vector<NamedMesh> ClosedMeshes() {
  return {{"geodesic_sphere", GeodesicSphere(1.3, 6)},
          {"subdivided_box", SubdividedBox(Vec(0.5, 1, 2), 3)},
          {"torus", Torus(1.0, 0.3, 24, 12)},
          {"tetrahedron", Tetrahedron()}};
}

class ClosedMeshTest : public ::testing::TestWithParam<NamedMesh> {};

TEST_P(ClosedMeshTest, GeneratedMeshesAreWatertightAndOutward) {
  const auto mesh = MakeMesh(GetParam().data);
  EXPECT_TRUE(mesh->is_watertight());
  EXPECT_FALSE(mesh->was_inside_out());
  EXPECT_GT(mesh->volume(), 0);
}

TEST_P(ClosedMeshTest, OneTriangleRemovedIsNotWatertight) {
  MeshData d = GetParam().data;
  d.triangles.erase(d.triangles.begin() + static_cast<long>(d.triangles.size() / 2));
  EXPECT_FALSE(MakeMesh(d)->is_watertight());
  EXPECT_FALSE(MakeMesh(d)->was_inside_out());
}

TEST_P(ClosedMeshTest, OneTriangleFlippedIsNotWatertight) {
  // Every edge is still shared by two triangles, but three are traversed twice the same way.
  MeshData d = GetParam().data;
  std::swap(d.triangles[1][1], d.triangles[1][2]);
  EXPECT_FALSE(MakeMesh(d)->is_watertight());
}

TEST_P(ClosedMeshTest, DuplicatedTriangleIsNotWatertight) {
  // Edges of the duplicated triangle are used by three triangles (non-manifold).
  MeshData d = GetParam().data;
  d.triangles.push_back(d.triangles[0]);
  EXPECT_FALSE(MakeMesh(d)->is_watertight());
}

TEST_P(ClosedMeshTest, InsideOutMeshIsFlaggedAndFlippedBack) {
  const auto outward = MakeMesh(GetParam().data);
  const auto inward = MakeMesh(Flipped(GetParam().data));
  EXPECT_TRUE(inward->is_watertight());
  EXPECT_TRUE(inward->was_inside_out());
  EXPECT_NEAR(inward->volume(), outward->volume(), 1e-12 * outward->volume());
  EXPECT_GT(inward->volume(), 0);
  // Normals of the flipped mesh are turned back out: equal to those of the outward mesh.
  for (int t = 0; t < outward->num_triangles(); ++t) {
    ASSERT_LE((inward->face_normal(t) - outward->face_normal(t)).norm(), 1e-12) << "triangle " << t;
  }
  for (int v = 0; v < outward->num_vertices(); ++v) {
    ASSERT_LE((inward->vertex_pseudo_normal(v) - outward->vertex_pseudo_normal(v)).norm(), 1e-12) << "vertex " << v;
  }
}

TEST_P(ClosedMeshTest, PseudoNormalsAreUnitAndEdgeNormalsAverageTheTwoFaces) {
  const auto mesh = MakeMesh(GetParam().data);
  // Partner of each directed edge u->v: the triangle holding v->u (closed, consistently oriented).
  std::map<std::pair<int, int>, int> owner;
  for (int t = 0; t < mesh->num_triangles(); ++t) {
    for (int k = 0; k < 3; ++k) owner[{mesh->triangle(t)[k], mesh->triangle(t)[(k + 1) % 3]}] = t;
  }
  for (int v = 0; v < mesh->num_vertices(); ++v) {
    ASSERT_NEAR(mesh->vertex_pseudo_normal(v).norm(), 1, 1e-12);
  }
  for (int t = 0; t < mesh->num_triangles(); ++t) {
    const Triangle& tri = mesh->triangle(t);
    // Face normal from the vertices: (b − a) × (c − a), normalised.
    const Vec face = (mesh->vertex(tri[1]) - mesh->vertex(tri[0])).cross(mesh->vertex(tri[2]) - mesh->vertex(tri[0]));
    ASSERT_LE((mesh->face_normal(t) - face.normalized()).norm(), 1e-14);
    for (int k = 0; k < 3; ++k) {
      const auto it = owner.find({tri[(k + 1) % 3], tri[k]});
      ASSERT_NE(it, owner.end());
      const Vec want = (mesh->face_normal(t) + mesh->face_normal(it->second)).normalized();
      ASSERT_LE((mesh->edge_pseudo_normal(t, k) - want).norm(), 1e-14) << "triangle " << t << " edge " << k;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Meshes, ClosedMeshTest, ::testing::ValuesIn(ClosedMeshes()),
                         [](const ::testing::TestParamInfo<NamedMesh>& info) { return info.param.name; });

TEST(TriangleMeshTopologyTest, SingleTriangleIsOpen) {
  const auto mesh = MakeMesh({{Vec(0, 0, 0), Vec(1, 0, 0), Vec(0, 1, 0)}, {{0, 1, 2}}});
  EXPECT_FALSE(mesh->is_watertight());
  EXPECT_FALSE(mesh->was_inside_out());
  // Boundary edges use the face normal as their pseudo-normal.
  for (int k = 0; k < 3; ++k) EXPECT_TRUE(mesh->edge_pseudo_normal(0, k).isApprox(Vec(0, 0, 1), 1e-15));
  EXPECT_TRUE(mesh->vertex_pseudo_normal(1).isApprox(Vec(0, 0, 1), 1e-15));
}

// ---------------------------------------------------------------------------------------------
// Areas and volumes
// ---------------------------------------------------------------------------------------------

TEST(TriangleMeshMeasureTest, SubdividedBoxAreaAndVolumeAreExact) {
  // The mesh IS the box: area 8(hx·hy + hy·hz + hz·hx), volume 8·hx·hy·hz.
  for (int n : {1, 2, 5}) {
    const Vec h(0.5, 1.25, 2);
    const auto mesh = MakeMesh(SubdividedBox(h, n));
    EXPECT_EQ(mesh->num_triangles(), 12 * n * n);
    EXPECT_NEAR(mesh->total_area(), 8 * (h.x() * h.y() + h.y() * h.z() + h.z() * h.x()), 1e-12);
    EXPECT_NEAR(mesh->volume(), 8 * h.x() * h.y() * h.z(), 1e-12);
    double sum = 0;
    for (int t = 0; t < mesh->num_triangles(); ++t) sum += mesh->face_area(t);
    EXPECT_NEAR(sum, mesh->total_area(), 1e-12);
    EXPECT_EQ(mesh->bounds().lo, -h);
    EXPECT_EQ(mesh->bounds().hi, h);
  }
}

// Distance from the origin to the plane of each triangle, from the vertices alone.
double MinPlaneDistanceFromOrigin(const TriangleMesh& m) {
  double h = std::numeric_limits<double>::infinity();
  for (const Triangle& t : m.triangles()) {
    const Vec &a = m.vertex(t[0]), &b = m.vertex(t[1]), &c = m.vertex(t[2]);
    const Vec n = (b - a).cross(c - a).normalized();
    h = std::min(h, std::abs(n.dot(a)));
  }
  return h;
}

TEST(TriangleMeshMeasureTest, GeodesicSphereAreaAndVolumeWithinTessellationBounds) {
  // Every vertex lies on the sphere of radius r and every face plane is at least h_min from the
  // centre, so B(h_min) ⊆ mesh ⊆ B(r). The mesh is checked convex below; for nested convex
  // bodies surface area is monotone (Cauchy), hence
  //   4π h_min² ≤ area ≤ 4π r²   and   (4/3)π h_min³ ≤ volume ≤ (4/3)π r³.
  const double r = 1.3;
  for (int freq : {1, 4, 16}) {
    const auto mesh = MakeMesh(GeodesicSphere(r, freq));
    EXPECT_EQ(mesh->num_triangles(), 20 * freq * freq);
    for (int v = 0; v < mesh->num_vertices(); ++v) ASSERT_NEAR(mesh->vertex(v).norm(), r, 1e-14);
    // Convexity: every vertex is on the inner side of every face plane (spot-check a stride).
    for (int t = 0; t < mesh->num_triangles(); t += 7) {
      const Vec& a = mesh->vertex(mesh->triangle(t)[0]);
      for (int v = 0; v < mesh->num_vertices(); ++v) {
        ASSERT_LE(mesh->face_normal(t).dot(mesh->vertex(v) - a), 1e-12) << "triangle " << t << " vertex " << v;
      }
    }
    const double h = MinPlaneDistanceFromOrigin(*mesh);
    EXPECT_GT(h, 0.5 * r);
    EXPECT_GE(mesh->total_area(), 4 * kPi * h * h);
    EXPECT_LE(mesh->total_area(), 4 * kPi * r * r);
    EXPECT_GE(mesh->volume(), 4.0 / 3 * kPi * h * h * h);
    EXPECT_LE(mesh->volume(), 4.0 / 3 * kPi * r * r * r);
  }
}

TEST(TriangleMeshMeasureTest, TorusAreaAndVolumeMatchThePolyhedronsClosedForm) {
  // Torus(R, r, S, N): vertex (i, j) at azimuth u_i = 2πi/S on the tube circle point v_j = 2πj/N,
  // i.e. cylindrical (ρ_j, z_j) = (R + r cos v_j, r sin v_j). The quad (i, j) has two parallel
  // sides 2ρ_j sin(π/S) and 2ρ_{j+1} sin(π/S) (chords at the same height) and is symmetric about
  // the mid-azimuth plane, so it is a planar isosceles trapezoid of height
  //   H_j = sqrt(cos²(π/S)(ρ_{j+1} − ρ_j)² + (z_{j+1} − z_j)²)   (distance of the chord midpoints).
  // Area = S Σ_j (ρ_j + ρ_{j+1}) sin(π/S) H_j.
  // Volume: each sector is swept by chords between the two cross-section N-gons; parametrising
  // x = ρ((1−s)e_i + s e_{i+1}) + z ẑ gives |Jacobian| = ρ sin(2π/S), so the sector volume is
  // sin(2π/S) ∫∫ρ dA = sin(2π/S) · R · A_N with the N-gon area A_N = (N/2) r² sin(2π/N):
  //   V = S sin(2π/S) · R · (N/2) r² sin(2π/N)   -> 2π² R r² as S, N -> ∞.
  const double R = 1.0, r = 0.3;
  for (auto [S, N] : {std::pair{8, 5}, std::pair{24, 12}, std::pair{96, 48}}) {
    const auto mesh = MakeMesh(Torus(R, r, S, N));
    EXPECT_EQ(mesh->num_triangles(), 2 * S * N);
    double area = 0;
    for (int j = 0; j < N; ++j) {
      const double v0 = 2 * kPi * j / N, v1 = 2 * kPi * (j + 1) / N;
      const double rho0 = R + r * std::cos(v0), rho1 = R + r * std::cos(v1);
      const double z0 = r * std::sin(v0), z1 = r * std::sin(v1);
      const double c = std::cos(kPi / S);
      const double H = std::sqrt(c * c * (rho1 - rho0) * (rho1 - rho0) + (z1 - z0) * (z1 - z0));
      area += S * (rho0 + rho1) * std::sin(kPi / S) * H;
    }
    const double volume = S * std::sin(2 * kPi / S) * R * 0.5 * N * r * r * std::sin(2 * kPi / N);
    EXPECT_NEAR(mesh->total_area(), area, 1e-12 * area) << S << "x" << N;
    EXPECT_NEAR(mesh->volume(), volume, 1e-12 * volume) << S << "x" << N;
    // And the true torus: the polyhedron converges from below, O(1/S² + 1/N²).
    const double true_area = 4 * kPi * kPi * R * r, true_volume = 2 * kPi * kPi * R * r * r;
    EXPECT_LT(mesh->total_area(), true_area);
    EXPECT_LT(mesh->volume(), true_volume);
    // Leading relative errors: volume (2π/S)²/6 + (2π/N)²/6 (sin x / x ≈ 1 − x²/6); area
    // (π/S)²(1/6 + 1/4) + (π/N)²/6. The bound 2π²(1/S² + 1/N²) is three times the larger.
    const double rel = 2 * kPi * kPi * (1.0 / (S * S) + 1.0 / (N * N));
    EXPECT_NEAR(mesh->volume() / true_volume, 1, rel);
    EXPECT_NEAR(mesh->total_area() / true_area, 1, rel);
  }
}

// ---------------------------------------------------------------------------------------------
// Pseudo-normals on a box
// ---------------------------------------------------------------------------------------------

TEST(TriangleMeshPseudoNormalTest, BoxCornersEdgesAndFaces) {
  // At a box corner three faces meet, each with a total incident angle of π/2 (split into one or
  // two triangles, whatever the aspect ratio): n ∝ (π/2)(±x̂ ± ŷ ± ẑ) -> (±1, ±1, ±1)/sqrt 3.
  // At a vertex in the middle of a box edge (n even) two faces meet with angle π each:
  // (±1, ±1, 0)/sqrt 2 etc. At a vertex inside a face: that face's normal.
  const Vec h(1, 2, 3);
  const auto mesh = MakeMesh(SubdividedBox(h, 2));
  int corners = 0, edge_mids = 0, face_centres = 0;
  for (int v = 0; v < mesh->num_vertices(); ++v) {
    const Vec& p = mesh->vertex(v);
    Vec expected = Vec::Zero();
    int on_faces = 0;
    for (int a = 0; a < 3; ++a) {
      if (std::abs(p[a]) == h[a]) {
        expected[a] = p[a] > 0 ? 1 : -1;
        ++on_faces;
      }
    }
    expected.normalize();
    EXPECT_LE((mesh->vertex_pseudo_normal(v) - expected).norm(), 1e-14) << "vertex " << p.transpose();
    corners += on_faces == 3;
    edge_mids += on_faces == 2;
    face_centres += on_faces == 1;
  }
  EXPECT_EQ(corners, 8);
  EXPECT_EQ(edge_mids, 12);
  EXPECT_EQ(face_centres, 6);
  EXPECT_LE((mesh->vertex_pseudo_normal(0) - mesh->vertex_pseudo_normal(0).normalized()).norm(), 1e-15);

  // Face normals: ±axis of the coordinate the three vertices share at ±h. Edge pseudo-normals:
  // edges along a box edge average two perpendicular faces; the others lie inside one face.
  for (int t = 0; t < mesh->num_triangles(); ++t) {
    const Triangle& tri = mesh->triangle(t);
    Vec face = Vec::Zero();
    for (int a = 0; a < 3; ++a) {
      const double c = mesh->vertex(tri[0])[a];
      if (std::abs(c) == h[a] && mesh->vertex(tri[1])[a] == c && mesh->vertex(tri[2])[a] == c) face[a] = c > 0 ? 1 : -1;
    }
    ASSERT_EQ(face.norm(), 1) << "triangle " << t;
    EXPECT_LE((mesh->face_normal(t) - face).norm(), 1e-15);
    // n = 2: each square cell is h_u × h_v (side 2h/n = h), split in two: area h_u·h_v/2.
    const int fa = face.x() != 0 ? 0 : (face.y() != 0 ? 1 : 2);
    EXPECT_NEAR(mesh->face_area(t), 0.5 * h[(fa + 1) % 3] * h[(fa + 2) % 3], 1e-15);
    for (int k = 0; k < 3; ++k) {
      const Vec& p = mesh->vertex(tri[k]);
      const Vec& q = mesh->vertex(tri[(k + 1) % 3]);
      Vec expected = face;
      for (int a = 0; a < 3; ++a) {
        if (face[a] == 0 && std::abs(p[a]) == h[a] && q[a] == p[a]) expected[a] = p[a] > 0 ? 1 : -1;
      }
      expected.normalize();
      EXPECT_LE((mesh->edge_pseudo_normal(t, k) - expected).norm(), 1e-15) << "triangle " << t << " edge " << k;
    }
  }
}

TEST(TriangleMeshPseudoNormalTest, CubeCornerOfUnsubdividedBox) {
  // n = 1: corner (1, 1, 1) of the unit cube gets (1, 1, 1)/sqrt 3 (three faces × π/2).
  const auto mesh = MakeMesh(SubdividedBox(Vec(1, 1, 1), 1));
  EXPECT_EQ(mesh->num_vertices(), 8);
  for (int v = 0; v < 8; ++v) {
    const Vec& p = mesh->vertex(v);
    EXPECT_LE((mesh->vertex_pseudo_normal(v) - p / std::sqrt(3.0)).norm(), 1e-15) << p.transpose();
  }
}

}  // namespace
}  // namespace taxel::geometry
