// UploadMesh: bytes → taxel.v1.UploadMeshRequest → TaxelHandlers::UploadMesh (DecodeMeshUpload with
// max_triangles → SceneRegistry::AddMesh: memory reservation, validation, topology, BVH, and the
// narrow-band grid at whatever error and band the input asks, within the server's query limit per
// grid build). A mesh it accepts is then used the way scenes use meshes: CreateScene of an OBJECT
// made of it, scaled, pressed by a probe grid on a robot pad (signed distance from pseudo-normals
// or winding numbers, estimated contact forces), one Step. Each input gets a fresh store and
// FuzzServer, so that accepted meshes do not pile up across inputs.
#include <cstdint>
#include <memory>
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
  geometry::MeshStore store;  // outlives the server and the scene
  auto handlers = std::make_unique<fuzz::FuzzServer>(&store);
  v1::UploadMeshResponse uploaded;
  if (!handlers->Run(&server::TaxelHandlers::UploadMesh, request, &uploaded).ok()) return 0;
  auto live = fuzz::CreateScene(MeshScene(uploaded.mesh_id()), std::move(handlers));
  if (!live.ok()) return 0;  // e.g. a mesh too large for the memory limit once scaled
  v1::StepRequest step;
  step.set_quat_order(v1::XYZW);
  step.set_dt(0.01);
  // The pad at the origin, the object's origin 1 cm above it.
  server::EncodeDoubles({1, 2, 7}, {0, 0, 0, 0, 0, 0, 1, 0, 0, 0.01, 0, 0, 0, 1}, step.mutable_poses());
  step.mutable_read()->set_contact_matrix(true);
  live->Run(&server::TaxelHandlers::Step, step).IgnoreError();
  return 0;
}

TAXEL_FUZZ_PROTO_MUTATOR(taxel::v1::UploadMeshRequest)
