#include "taxel/model_import.h"

#include <fnmatch.h>

#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/geometry/triangle_mesh.h"
#include "taxel/client.h"

namespace taxel {
namespace {

std::string Sanitize(std::string name) {
  for (char& c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok) c = '_';
  }
  return name;
}

// The body's name as a link name: MuJoCo's name without '/', or "body<id>" for an unnamed body.
std::string BodyName(const mjModel* m, int b) {
  const char* n = mj_id2name(m, mjOBJ_BODY, b);
  if (n == nullptr || *n == '\0') return absl::StrCat("body", b);
  std::string s(n);
  for (char& c : s) {
    if (c == '/') c = '_';
  }
  return s;
}

std::string GeomLabel(const mjModel* m, int g) {
  const char* n = mj_id2name(m, mjOBJ_GEOM, g);
  return (n == nullptr || *n == '\0') ? absl::StrCat("geom ", g) : absl::StrCat("geom '", n, "'");
}

bool Glob(const std::string& pattern, const std::string& name) {
  return fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

void SetPose(const mjtNum* pos, const mjtNum* quat_wxyz, v1::Pose* pose) {
  for (int i = 0; i < 3; ++i) pose->add_position(pos[i]);
  for (int i = 0; i < 4; ++i) pose->add_quaternion(quat_wxyz[i]);
  pose->set_quat_order(v1::WXYZ);
}

// State shared by the geoms of one import: meshes already converted, by MuJoCo mesh id, so that
// each is uploaded once.
struct MeshCache {
  SceneBundle* bundle;
  std::map<int, std::string> by_mesh;
};

std::string AddMesh(MeshCache* cache, MeshArrays arrays) {
  std::vector<Eigen::Vector3d> v(arrays.vertices.size() / 3);
  std::vector<geometry::Triangle> t(arrays.triangles.size() / 3);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = {arrays.vertices[3 * i], arrays.vertices[3 * i + 1], arrays.vertices[3 * i + 2]};
  for (size_t i = 0; i < t.size(); ++i)
    t[i] = {arrays.triangles[3 * i], arrays.triangles[3 * i + 1], arrays.triangles[3 * i + 2]};
  std::string id = geometry::TriangleMesh::ContentId(v, t);
  cache->bundle->meshes.push_back({id, std::move(arrays)});
  return id;
}

absl::StatusOr<std::string> MujocoMesh(const mjModel* m, int g, MeshCache* cache) {
  const int k = m->geom_dataid[g];
  if (auto it = cache->by_mesh.find(k); it != cache->by_mesh.end()) return it->second;
  const int nv = m->mesh_vertnum[k], nf = m->mesh_facenum[k];
  // mesh_vert is in the geom frame: the compiler recentred the vertices (inertial frame) and
  // moved geom_pos/geom_quat to compensate; mesh scale is applied. MuJoCo's OBJ reader gives every
  // face its own corners; vertices with bit-identical coordinates are welded back together so
  // that a closed mesh is watertight again (its geometry is unchanged).
  const float* vert = m->mesh_vert + 3 * m->mesh_vertadr[k];
  MeshArrays a;
  std::vector<int32_t> welded(nv);
  std::map<std::tuple<float, float, float>, int32_t> index_of;
  for (int v = 0; v < nv; ++v) {
    const auto key = std::make_tuple(vert[3 * v], vert[3 * v + 1], vert[3 * v + 2]);
    auto [it, added] = index_of.emplace(key, static_cast<int32_t>(index_of.size()));
    if (added) a.vertices.insert(a.vertices.end(), {vert[3 * v], vert[3 * v + 1], vert[3 * v + 2]});
    welded[v] = it->second;
  }
  const int* face = m->mesh_face + 3 * m->mesh_faceadr[k];
  for (int i = 0; i < 3 * nf; ++i) {
    if (face[i] < 0 || face[i] >= nv) {
      return absl::InvalidArgumentError(
          absl::StrCat(GeomLabel(m, g), ": mesh face index ", face[i], " outside [0, ", nv, ")"));
    }
    a.triangles.push_back(welded[face[i]]);
  }
  return cache->by_mesh[k] = AddMesh(cache, std::move(a));
}

// The Shape of geom g in its body's frame.
absl::Status AddShape(const mjModel* m, int g, MeshCache* cache, v1::Link* link) {
  v1::Shape* shape = link->add_shapes();
  SetPose(m->geom_pos + 3 * g, m->geom_quat + 4 * g, shape->mutable_pose());
  const mjtNum* size = m->geom_size + 3 * g;
  switch (m->geom_type[g]) {
    case mjGEOM_SPHERE: shape->mutable_sphere()->set_radius(size[0]); break;
    case mjGEOM_CAPSULE:
      shape->mutable_capsule()->set_radius(size[0]);
      shape->mutable_capsule()->set_half_length(size[1]);
      break;
    case mjGEOM_CYLINDER:
      shape->mutable_cylinder()->set_radius(size[0]);
      shape->mutable_cylinder()->set_half_length(size[1]);
      break;
    case mjGEOM_BOX:
      for (int i = 0; i < 3; ++i) shape->mutable_box()->add_half_extents(size[i]);
      break;
    case mjGEOM_PLANE: shape->mutable_half_space(); break;
    case mjGEOM_ELLIPSOID: {
      // Exact: the implicit superellipsoid with n = 1 is the ellipsoid (up to ε = 1e-12).
      v1::Implicit::Superellipsoid* se = shape->mutable_implicit()->mutable_superellipsoid();
      se->set_n(1);
      for (int i = 0; i < 3; ++i) se->add_semi_axes(size[i]);
      break;
    }
    case mjGEOM_MESH: {
      auto id = MujocoMesh(m, g, cache);
      if (!id.ok()) return id.status();
      shape->mutable_mesh()->set_mesh_id(*id);
      break;
    }
    case mjGEOM_HFIELD: {
      // hfield_data is normalised to [0, 1]; the elevation is data × size[2]. Sample (r, c) sits at
      // x = −size[0] + c·2·size[0]/(ncol − 1), y = −size[1] + r·2·size[1]/(nrow − 1): Taxel's
      // centred grid with rows along y.
      const int h = m->geom_dataid[g];
      const int rows = m->hfield_nrow[h], cols = m->hfield_ncol[h];
      const mjtNum* hs = m->hfield_size + 4 * h;
      std::vector<double> heights(static_cast<size_t>(rows) * cols);
      for (size_t i = 0; i < heights.size(); ++i) heights[i] = m->hfield_data[m->hfield_adr[h] + i] * hs[2];
      v1::Heightfield* hf = shape->mutable_heightfield();
      *hf->mutable_heights() = DoubleTensor({rows, cols}, heights);
      hf->set_dx(2 * hs[0] / (cols - 1));
      hf->set_dy(2 * hs[1] / (rows - 1));
      break;
    }
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(GeomLabel(m, g), ": geom type ", m->geom_type[g], " cannot be imported"));
  }
  return absl::OkStatus();
}

absl::Status CheckOptions(const ImportOptions& o) {
  if (o.num_envs < 1) return absl::InvalidArgumentError(absl::StrCat("--num_envs: expected >= 1, got ", o.num_envs));
  for (int g : o.groups) {
    if (g < 0 || g >= mjNGROUP) {
      return absl::InvalidArgumentError(absl::StrCat("--groups: expected geom groups in [0, ", mjNGROUP, "), got ", g));
    }
  }
  if (o.ellipsoid_frequency < 1 || o.ellipsoid_frequency > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("--ellipsoid_frequency: expected 1..64 (20·F² triangles), got ", o.ellipsoid_frequency));
  }
  return absl::OkStatus();
}

// Which bodies the globs select; INVALID_ARGUMENT for a glob that matches none.
absl::StatusOr<std::vector<bool>> SelectBodies(const mjModel* m, const std::string& entity,
                                               const std::vector<std::string>& globs) {
  std::vector<bool> keep(m->nbody, globs.empty());
  std::vector<std::string> names;
  for (int b = 0; b < m->nbody; ++b) names.push_back(BodyName(m, b));
  for (const std::string& glob : globs) {
    bool any = false;
    for (int b = 0; b < m->nbody; ++b) {
      if (Glob(glob, names[b]) || Glob(glob, absl::StrCat(entity, "/", names[b]))) any = keep[b] = true;
    }
    if (!any) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--bodies: '", glob, "' matches no body of the model (bodies: ", absl::StrJoin(names, ", "), ")"));
    }
  }
  return keep;
}

// A body moves when a body on its path to the world (itself included) has a joint or is a mocap
// body (moved by data->mocap_pos/quat). Without either it is welded to the world.
bool Moving(const mjModel* m, int b) {
  for (; b > 0; b = m->body_parentid[b]) {
    if (m->body_jntnum[b] > 0 || m->body_mocapid[b] >= 0) return true;
  }
  return false;
}

bool GeomSelected(const mjModel* m, int g, const std::vector<int>& groups) {
  if (groups.empty()) return (m->geom_contype[g] | m->geom_conaffinity[g]) != 0;
  for (int group : groups) {
    if (m->geom_group[g] == group) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<ImportedModel> ImportModel(const mjModel* m, const ImportOptions& options) {
  if (auto s = CheckOptions(options); !s.ok()) return s;
  // names[0] is the model's name (MJCF <mujoco model>, URDF <robot name>).
  std::string entity = options.entity.empty() ? Sanitize(m->names) : options.entity;
  if (entity.empty()) entity = "model";
  if (entity.find('/') != std::string::npos) return absl::InvalidArgumentError("--entity: expected a name without '/'");
  auto keep = SelectBodies(m, entity, options.bodies);
  if (!keep.ok()) return keep.status();

  // Fixed bodies' poses in world: forward kinematics at qpos0.
  std::unique_ptr<mjData, void (*)(mjData*)> d(mj_makeData(m), mj_deleteData);
  mj_kinematics(m, d.get());

  ImportedModel out;
  v1::SceneSpec& spec = out.bundle.scene;
  spec.set_name(options.scene_name.empty() ? entity : options.scene_name);
  spec.set_num_envs(options.num_envs);
  v1::Entity robot, fixed, terrain;
  robot.set_name(entity);
  robot.set_kind(v1::ROBOT);
  fixed.set_name(entity + "_static");
  fixed.set_kind(v1::STATIC);
  terrain.set_name(entity + "_terrain");
  terrain.set_kind(v1::TERRAIN);
  MeshCache cache{&out.bundle, {}};
  for (int b = 0; b < m->nbody; ++b) {
    if (!(*keep)[b]) continue;
    const bool moving = Moving(m, b);
    v1::Link *link = nullptr, *fixed_link = nullptr, *terrain_link = nullptr;
    for (int g = m->body_geomadr[b]; g < m->body_geomadr[b] + m->body_geomnum[b]; ++g) {
      if (!GeomSelected(m, g, options.groups)) continue;
      const bool ground = m->geom_type[g] == mjGEOM_PLANE || m->geom_type[g] == mjGEOM_HFIELD;
      v1::Link** slot = moving ? &link : ground ? &terrain_link : &fixed_link;
      if (*slot == nullptr) {
        *slot = (moving ? robot : ground ? terrain : fixed).add_links();
        (*slot)->set_name(BodyName(m, b));
        if (!moving) SetPose(d->xpos + 3 * b, d->xquat + 4 * b, (*slot)->mutable_pose());
        if (moving) out.moving_bodies.push_back(b);
      }
      if (auto s = AddShape(m, g, &cache, *slot); !s.ok()) return s;
      const v1::Entity& owner = moving ? robot : ground ? terrain : fixed;
      const char* geom_name = mj_id2name(m, mjOBJ_GEOM, g);
      out.bundle.geom_names[absl::StrCat(owner.name(), "/", (*slot)->name())].push_back(geom_name ? geom_name : "");
    }
  }
  for (v1::Entity* e : {&robot, &fixed, &terrain}) {
    if (e->links_size() > 0) *spec.add_entities() = std::move(*e);
  }
  if (spec.entities_size() == 0) {
    return absl::InvalidArgumentError(
        options.groups.empty()
            ? "nothing to import: no selected body has a geom that can collide (contype | conaffinity != 0)"
            : "nothing to import: no selected body has a geom in --groups");
  }
  return out;
}

absl::StatusOr<ImportedModel> ImportModelFile(const std::string& path, const ImportOptions& options) {
  char error[1024] = "";
  std::unique_ptr<mjModel, void (*)(mjModel*)> m(mj_loadXML(path.c_str(), nullptr, error, sizeof(error)),
                                                 mj_deleteModel);
  if (m == nullptr) return absl::InvalidArgumentError(absl::StrCat("cannot load '", path, "': ", error));
  return ImportModel(m.get(), options);
}

std::vector<double> MovingLinkPoses(const ImportedModel& imported, const mjData* data) {
  std::vector<double> poses;
  poses.reserve(imported.moving_bodies.size() * 7);
  for (int b : imported.moving_bodies) {
    poses.insert(poses.end(), data->xpos + 3 * b, data->xpos + 3 * b + 3);
    poses.insert(poses.end(), data->xquat + 4 * b, data->xquat + 4 * b + 4);
  }
  return poses;
}

}  // namespace taxel
