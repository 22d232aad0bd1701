// UploadMesh: wrong dtypes, shapes and byte lengths, non-finite vertices, bad and degenerate
// triangles, sizes over the limit or past int64.
#include "tests/server/bad_inputs/bad_input.h"

namespace taxel::testing {
namespace {

// A unit right tetrahedron, faces counter-clockwise seen from outside:
//   v0 (0,0,0), v1 (1,0,0), v2 (0,1,0), v3 (0,0,1).
const std::vector<double> kTetVertices = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
const std::vector<int32_t> kTetTriangles = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};

RequestBytes Mesh(std::function<void(v1::UploadMeshRequest&)> fn) {
  return Build<v1::UploadMeshRequest>([fn = std::move(fn)](v1::UploadMeshRequest& r, BadInputContext&) {
    *r.mutable_vertices() = DoubleTensor({4, 3}, kTetVertices);
    *r.mutable_triangles() = Int32Tensor({4, 3}, kTetTriangles);
    fn(r);
  });
}

std::vector<double> TetWith(int i, double v) {
  std::vector<double> x = kTetVertices;
  x[i] = v;
  return x;
}

}  // namespace

std::vector<BadInput> MeshCases() {
  const std::string m = "UploadMesh";
  return {
      Case("no_vertices", m, Mesh([](auto& r) { r.clear_vertices(); }), kInvalid, "vertices"),
      Case("vertices_dtype_int32", m, Mesh([](auto& r) {
             *r.mutable_vertices() = Int32Tensor({4, 3}, std::vector<int32_t>(12, 0));
           }),
           kInvalid, "vertices", "FLOAT32 or FLOAT64"),
      Case("vertices_dtype_9", m, Mesh([](auto& r) { r.mutable_vertices()->set_dtype(static_cast<v1::DType>(9)); }),
           kInvalid, "vertices.dtype", "9 is not a value of taxel.v1.DType"),
      Case("vertices_shape_v_by_2", m, Mesh([](auto& r) {
             *r.mutable_vertices() = DoubleTensor({6, 2}, kTetVertices);
           }),
           kInvalid, "vertices", "expected shape [V, 3], got [6, 2]"),
      Case("vertices_short_bytes", m, Mesh([](auto& r) { r.mutable_vertices()->mutable_data()->resize(88); }), kInvalid,
           "vertices", "needs 96 bytes, got 88"),
      Case("vertices_negative_dim", m, Mesh([](auto& r) {
             *r.mutable_vertices() = RawTensor(v1::FLOAT64, {-4, 3}, std::string(96, '\0'));
           }),
           kInvalid, "vertices", "negative dimension"),
      Case("vertices_shape_past_int64", m, Mesh([](auto& r) {
             *r.mutable_vertices() =
                 RawTensor(v1::FLOAT64, {int64_t{1} << 62, int64_t{1} << 62, 3}, std::string(96, '\0'));
           }),
           kInvalid, "vertices", "too large"),
      Case("vertices_sparse", m, Mesh([](auto& r) { r.mutable_vertices()->set_nonzero_mask(std::string(2, '\xff')); }),
           kInvalid, "vertices.nonzero_mask", "inputs must be dense"),
      Case("vertex_nan", m, Mesh([](auto& r) {
             *r.mutable_vertices() = DoubleTensor({4, 3}, TetWith(7, kNaN));
           }),
           kInvalid, "vertices[2]", "expected finite coordinates"),
      Case("vertex_inf", m, Mesh([](auto& r) {
             *r.mutable_vertices() = DoubleTensor({4, 3}, TetWith(3, -kInf));
           }),
           kInvalid, "vertices[1]", "expected finite coordinates"),
      Case("no_vertices_no_triangles", m, Mesh([](auto& r) {
             *r.mutable_vertices() = DoubleTensor({0, 3}, {});
             *r.mutable_triangles() = Int32Tensor({0, 3}, {});
           }),
           kInvalid, "vertices", "expected at least 3 vertices"),
      Case("no_triangles", m, Mesh([](auto& r) {
             *r.mutable_triangles() = Int32Tensor({0, 3}, {});
           }),
           kInvalid, "triangles", "expected at least 1 triangle"),
      Case("triangles_float64", m, Mesh([](auto& r) {
             *r.mutable_triangles() =
                 DoubleTensor({4, 3}, std::vector<double>(kTetTriangles.begin(), kTetTriangles.end()));
           }),
           kInvalid, "triangles", "expected INT32 of shape [T, 3], got FLOAT64 [4, 3]"),
      Case("triangles_shape_t_by_4", m, Mesh([](auto& r) {
             *r.mutable_triangles() = Int32Tensor({3, 4}, kTetTriangles);
           }),
           kInvalid, "triangles", "expected INT32 of shape [T, 3]"),
      Case("triangle_index_past_end", m, Mesh([](auto& r) {
             *r.mutable_triangles() = Int32Tensor({1, 3}, {0, 1, 7});
           }),
           kInvalid, "triangles[0]", "vertex index 7 out of range [0, 4)"),
      Case("triangle_index_negative", m, Mesh([](auto& r) {
             *r.mutable_triangles() = Int32Tensor({2, 3}, {0, 2, 1, 0, -1, 3});
           }),
           kInvalid, "triangles[1]", "vertex index -1 out of range"),
      Case("triangle_repeated_vertex", m, Mesh([](auto& r) {
             *r.mutable_triangles() = Int32Tensor({1, 3}, {0, 2, 2});
           }),
           kInvalid, "triangles[0]", "degenerate triangle (repeated vertex index)"),
      // v3 moved to (2, 0, 0): triangle 1 (v0, v1, v3) lies on the x axis.
      Case("triangle_zero_area", m, Mesh([](auto& r) {
             *r.mutable_vertices() = DoubleTensor({4, 3}, {0, 0, 0, 1, 0, 0, 0, 1, 0, 2, 0, 0});
           }),
           kInvalid, "triangles[1]", "degenerate triangle (zero area)"),
      // Grid options: finite and >= 0 (0 = default), and a grid that fits the memory limit.
      Case("grid_max_error_negative", m, Mesh([](auto& r) { r.mutable_grid()->set_max_error(-1e-4); }), kInvalid,
           "grid.max_error", "expected a finite error >= 0"),
      Case("grid_max_error_nan", m, Mesh([](auto& r) { r.mutable_grid()->set_max_error(kNaN); }), kInvalid,
           "grid.max_error", "expected a finite error >= 0"),
      Case("grid_band_inf", m, Mesh([](auto& r) { r.mutable_grid()->set_band(kInf); }), kInvalid, "grid.band",
           "expected a finite band >= 0"),
      // 1 nm on the tetrahedron's sharp edges needs cells of about 4 nm: far more memory than any
      // limit; refused before allocation, and the mesh is not kept.
      Case("grid_max_error_needs_too_much_memory", m, Mesh([](auto& r) { r.mutable_grid()->set_max_error(1e-9); }),
           kExhausted, "grid.max_error", "signed-distance grid"),
      // The test server allows 100000 triangles per mesh.
      Case("too_many_triangles", m, Mesh([](auto& r) {
             *r.mutable_triangles() = Int32Tensor({100001, 3}, std::vector<int32_t>(300003, 0));
           }),
           kExhausted, "triangles", "100001 triangles exceed the limit of 100000"),
      // A shape that claims 2^40 triangles over 12 bytes: the byte length gives it away before
      // anything is allocated.
      Case("triangles_shape_claims_2_pow_40", m, Mesh([](auto& r) {
             *r.mutable_triangles() = RawTensor(v1::INT32, {int64_t{1} << 40, 3}, std::string(12, '\0'));
           }),
           kInvalid, "triangles", "needs 13194139533312 bytes, got 12"),
  };
}

std::vector<BadInput> DeleteMeshCases() {
  const std::string m = "DeleteMesh";
  v1::DeleteMeshRequest long_id;
  long_id.set_mesh_id(std::string(100000, 'f'));
  std::vector<BadInput> cases = {
      Case("id_unknown", m, Text(R"pb(mesh_id: "0123abcd")pb"), kNotFound, "mesh_id",
           "mesh '0123abcd' has not been uploaded"),
      Case("id_empty", m, Text(R"pb(mesh_id: "")pb"), kNotFound, "mesh_id", "mesh '' has not been uploaded"),
      Case("id_100kb", m, Bytes(long_id.SerializeAsString()), kNotFound, "mesh_id", "mesh 'fff"),
  };
  // A mesh the scene "meshy" uses (its ball): refused, and the mesh, the scene and memory_bytes
  // stay as they were (the snapshot is taken after the setup).
  cases.push_back(Case("id_in_use", m, Build<v1::DeleteMeshRequest>([](v1::DeleteMeshRequest& r, BadInputContext& ctx) {
                         r.set_mesh_id(ctx.mesh_id);
                       }),
                       kPrecondition, "mesh_id", "is used by scene 'meshy'; delete the scene first")
                      .Setup([](BadInputContext& ctx) {
                        UploadBall(ctx);
                        MustCreate(ctx, ToWire(GraspSpec("meshy", 1, MeshShape(ctx.mesh_id))));
                      }));
  return cases;
}

}  // namespace taxel::testing
