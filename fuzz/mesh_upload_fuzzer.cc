// UploadMesh: bytes → taxel.v1.UploadMeshRequest → DecodeMeshUpload(max_triangles) →
// SceneRegistry::AddMesh (memory reservation, validation, topology, BVH). A mesh it accepts is then used the
// way scenes use meshes: an OBJECT made of it, scaled, pressed by a probe grid on a robot pad
// (signed distance from pseudo-normals or winding numbers, estimated contact forces), one step.
// Each input gets a fresh store and registry, so that accepted meshes do not pile up across inputs.
#include <cstdint>
#include <utility>

#include "fuzz/fuzz_support.h"
#include "fuzz/proto_mutator.h"

namespace {

// A pad with a 3 × 3 depth-probe grid under an object made of mesh `id` (and the same mesh,
// mirrored, as static geometry), with an estimated contact matrix pad × object.
taxel::v1::SceneSpec MeshScene(const std::string& id) {
  using namespace taxel;  // NOLINT: fixture code
  scene::SceneSpec s;
  s.name = "mesh";
  s.num_envs = 1;
  scene::ShapeSpec pad;
  pad.kind = geometry::ShapeKind::kBox;
  pad.half_extents = Eigen::Vector3d(0.05, 0.05, 0.005);
  scene::ShapeSpec mesh;
  mesh.kind = geometry::ShapeKind::kMesh;
  mesh.mesh_id = id;
  scene::ShapeSpec mirrored = mesh;
  mirrored.mesh_scale = Eigen::Vector3d(-1, 1, 0.5);
  s.entities.push_back({"hand", scene::EntityKind::kRobot, {{"pad", {pad}, RigidTransform()}}, {}, {}});
  s.entities.push_back({"thing", scene::EntityKind::kObject, {{"body", {mesh}, RigidTransform()}}, {}, {}});
  s.entities.push_back({"fixed", scene::EntityKind::kStatic, {{"body", {mirrored}, RigidTransform()}}, {}, {}});
  sensors::SensorSpec probes;
  probes.name = "depth";
  probes.kind = sensors::SensorKind::kContactDepthProbe;
  probes.link = "hand/pad";
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) probes.probe_local_pos.emplace_back(0.02 * (j - 1), 0.02 * (i - 1), 0.005);
  }
  probes.grid_rows = probes.grid_cols = 3;
  probes.probe_radius = {0.01};
  s.sensors.push_back(probes);
  s.contact_matrix.bodies = {"all"};
  s.contact_matrix.partners = {"object/thing", "static/fixed"};
  s.contact_matrix.sample_spacing = 0.02;
  v1::SceneSpec out;
  server::EncodeSceneSpec(s, &out);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace taxel;  // NOLINT: a fuzz entry point
  v1::UploadMeshRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  auto decoded = server::DecodeMeshUpload(request, fuzz::FuzzLimits().max_triangles_per_mesh);
  if (!decoded.ok()) return 0;
  geometry::MeshStore store;  // outlives the registry and the scene
  auto registry = fuzz::NewRegistry(&store);
  // UploadMesh: the registry reserves the mesh's estimated bytes, then builds it.
  auto added = registry->AddMesh(fuzz::kTenant, std::move(decoded->vertices), std::move(decoded->triangles));
  if (!added.ok()) return 0;
  auto live = fuzz::CreateScene(MeshScene(added->result.id), std::move(registry));
  if (!live.ok()) return 0;  // e.g. a mesh too large for the memory limit once scaled
  v1::StepRequest step;
  step.set_quat_order(v1::XYZW);
  step.set_dt(0.01);
  // The pad at the origin, the object's origin 1 cm above it.
  server::EncodeDoubles({1, 2, 7}, {0, 0, 0, 0, 0, 0, 1, 0, 0, 0.01, 0, 0, 0, 1}, step.mutable_poses());
  step.mutable_read()->set_contact_matrix(true);
  fuzz::RunStep(step, *live).IgnoreError();
  return 0;
}

TAXEL_FUZZ_PROTO_MUTATOR(taxel::v1::UploadMeshRequest)
