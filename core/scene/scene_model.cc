#include "core/scene/scene_model.h"

#include <cmath>
#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "core/common/field_error.h"
#include "core/common/status_macros.h"

namespace taxel::scene {
namespace {

absl::StatusOr<geometry::ImplicitShape> BuildImplicit(const ImplicitSpec& spec, const std::string& field) {
  using geometry::ImplicitShape;
  const std::string path = absl::StrCat(field, ".", geometry::ImplicitKindName(spec.kind));
  switch (spec.kind) {
    case geometry::ImplicitKind::kSphere: return ImplicitShape::Sphere(spec.radius, path);
    case geometry::ImplicitKind::kSuperellipsoid: return ImplicitShape::Superellipsoid(spec.n, spec.semi_axes, path);
    case geometry::ImplicitKind::kSmoothPolytope:
      return ImplicitShape::SmoothPolytope(spec.normals, spec.offsets, spec.beta, path);
    case geometry::ImplicitKind::kSuperellipticCylinder:
      return ImplicitShape::SuperellipticCylinder(spec.n, spec.radius, spec.half_length, path);
    case geometry::ImplicitKind::kTruncatedCone:
      return ImplicitShape::TruncatedCone(spec.beta, spec.bottom_radius, spec.top_radius, spec.a, spec.b, path);
  }
  return InvalidFieldError(field, "unknown implicit kind");
}

absl::StatusOr<ShapeInstance> BuildShape(const ShapeSpec& spec, const geometry::MeshLookup& meshes,
                                         const std::string& field, MemoryBudget& budget) {
  using geometry::Shape;
  using geometry::ShapeKind;
  if (!spec.X_LS.p.allFinite() || !spec.X_LS.R.allFinite()) {
    return InvalidFieldError(field + ".pose", "expected finite numbers");
  }
  ShapeInstance instance{Shape::HalfSpace(), spec.X_LS, {}, false, {}};
  switch (spec.kind) {
    case ShapeKind::kSphere: {
      TAXEL_ASSIGN_OR_RETURN(instance.shape, Shape::Sphere(spec.radius, field + ".sphere"));
      break;
    }
    case ShapeKind::kBox: {
      TAXEL_ASSIGN_OR_RETURN(instance.shape, Shape::Box(spec.half_extents, field + ".box"));
      break;
    }
    case ShapeKind::kCapsule: {
      TAXEL_ASSIGN_OR_RETURN(instance.shape, Shape::Capsule(spec.radius, spec.half_length, field + ".capsule"));
      break;
    }
    case ShapeKind::kCylinder: {
      TAXEL_ASSIGN_OR_RETURN(instance.shape, Shape::Cylinder(spec.radius, spec.half_length, field + ".cylinder"));
      break;
    }
    case ShapeKind::kHalfSpace: break;
    case ShapeKind::kHeightfield: {
      TAXEL_ASSIGN_OR_RETURN(auto hf, geometry::Heightfield::Create(spec.hf_rows, spec.hf_cols, spec.hf_dx, spec.hf_dy,
                                                                    spec.hf_heights, field + ".heightfield"));
      instance.shape = Shape::FromHeightfield(std::move(hf));
      break;
    }
    case ShapeKind::kMesh: {
      if (spec.mesh_id.empty())
        return InvalidFieldError(field + ".mesh.mesh_id", "expected the id of an uploaded mesh");
      if (!spec.mesh_scale.allFinite() || (spec.mesh_scale.array() == 0).any()) {
        return InvalidFieldError(field + ".mesh.scale", "expected finite, non-zero components");
      }
      const bool scaled = spec.mesh_scale != Eigen::Vector3d::Ones();
      if (scaled) {
        // A scaled copy is built (or shared) for this scene; it counts as the scene's memory.
        TAXEL_RETURN_IF_ERROR(budget.Reserve(static_cast<double>(meshes.mesh_bytes(spec.mesh_id)),
                                             field + ".mesh.scale", "a scaled copy of the mesh"));
      }
      auto mesh = meshes.Get(spec.mesh_id, spec.mesh_scale);
      if (!mesh.ok()) {
        return FieldError(mesh.status().code(), field + ".mesh.mesh_id", mesh.status().message());
      }
      instance.shape = Shape::FromMesh(*std::move(mesh));
      instance.scaled_mesh = scaled;
      instance.mesh_id = spec.mesh_id;
      break;
    }
    case ShapeKind::kImplicit: {
      TAXEL_ASSIGN_OR_RETURN(auto implicit, BuildImplicit(spec.implicit, field + ".implicit"));
      instance.shape = Shape::FromImplicit(std::make_shared<const geometry::ImplicitShape>(std::move(implicit)));
      break;
    }
  }
  instance.bounds_L = instance.shape.local_bounds().Transformed(instance.X_LS);
  return instance;
}

absl::StatusOr<std::vector<ShapeInstance>> BuildShapes(const std::vector<ShapeSpec>& specs,
                                                       const geometry::MeshLookup& meshes, const std::string& field,
                                                       MemoryBudget& budget) {
  std::vector<ShapeInstance> shapes;
  shapes.reserve(specs.size());
  for (size_t s = 0; s < specs.size(); ++s) {
    TAXEL_ASSIGN_OR_RETURN(auto shape, BuildShape(specs[s], meshes, absl::StrCat(field, "[", s, "]"), budget));
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

geometry::Aabb BoundsOf(const std::vector<ShapeInstance>& shapes) {
  geometry::Aabb b;
  for (const auto& s : shapes) b.Extend(s.bounds_L);
  return b;
}

}  // namespace

absl::string_view EntityKindName(EntityKind kind) {
  switch (kind) {
    case EntityKind::kRobot: return "robot";
    case EntityKind::kObject: return "object";
    case EntityKind::kProjectile: return "projectile";
    case EntityKind::kTerrain: return "terrain";
    case EntityKind::kStatic: return "static";
  }
  return "unknown";
}

absl::StatusOr<std::shared_ptr<const SceneModel>> SceneModel::Build(const SceneSpec& spec,
                                                                    const geometry::MeshLookup& meshes,
                                                                    MemoryBudget& budget) {
  if (spec.num_envs < 1) {
    return InvalidFieldError("num_envs", absl::StrCat("expected a value >= 1, got ", spec.num_envs));
  }
  if (spec.env_offset < 0 || spec.env_offset > kMaxGlobalEnvs - spec.num_envs) {
    return InvalidFieldError("env_offset",
                             absl::StrCat("expected 0 <= env_offset and env_offset + num_envs (", spec.num_envs,
                                          ") <= 2^32 (the random key's env word), got ", spec.env_offset));
  }
  std::shared_ptr<SceneModel> model(new SceneModel());
  model->name_ = spec.name;
  model->num_envs_ = spec.num_envs;
  model->seed_ = spec.seed;
  model->env_offset_ = spec.env_offset;
  std::set<std::string> entity_names;
  for (size_t ei = 0; ei < spec.entities.size(); ++ei) {
    const EntitySpec& es = spec.entities[ei];
    const std::string efield = absl::StrCat("entities[", ei, "]");
    if (es.name.empty() || es.name.find('/') != std::string::npos) {
      return InvalidFieldError(efield + ".name", "expected a non-empty name without '/'");
    }
    if (!entity_names.insert(es.name).second) {
      return InvalidFieldError(efield + ".name", absl::StrCat("duplicate entity name '", es.name, "'"));
    }
    if (es.links.empty()) return InvalidFieldError(efield + ".links", "expected at least one link");
    const bool is_object = es.kind == EntityKind::kObject;
    if (!is_object && (!es.assets.empty() || !es.env_assets.empty())) {
      return InvalidFieldError(efield + ".assets", "per-env assets are only allowed on OBJECT entities");
    }
    EntityModel em;
    em.name = es.name;
    em.kind = es.kind;
    em.asset_names.push_back("default");
    for (const auto& a : es.assets) em.asset_names.push_back(a.name);
    const int num_assets = static_cast<int>(em.asset_names.size());
    if (es.env_assets.empty()) {
      em.env_assets.assign(spec.num_envs, 0);
    } else {
      if (static_cast<int>(es.env_assets.size()) != spec.num_envs) {
        return InvalidFieldError(
            efield + ".env_assets",
            absl::StrCat("expected ", spec.num_envs, " values (one per env), got ", es.env_assets.size()));
      }
      for (size_t e = 0; e < es.env_assets.size(); ++e) {
        if (es.env_assets[e] < -1 || es.env_assets[e] >= num_assets) {
          return InvalidFieldError(
              absl::StrCat(efield, ".env_assets[", e, "]"),
              absl::StrCat("expected -1 (empty) or an asset index in [0, ", num_assets, "), got ", es.env_assets[e]));
        }
      }
      em.env_assets = es.env_assets;
    }
    for (size_t ai = 0; ai < es.assets.size(); ++ai) {
      if (es.assets[ai].link_shapes.size() != es.links.size()) {
        return InvalidFieldError(absl::StrCat(efield, ".assets[", ai, "].link_shapes"),
                                 absl::StrCat("expected one shape list per link (", es.links.size(), "), got ",
                                              es.assets[ai].link_shapes.size()));
      }
    }
    std::set<std::string> link_names;
    for (size_t li = 0; li < es.links.size(); ++li) {
      const LinkSpec& ls = es.links[li];
      const std::string lfield = absl::StrCat(efield, ".links[", li, "]");
      if (ls.name.empty() || ls.name.find('/') != std::string::npos) {
        return InvalidFieldError(lfield + ".name", "expected a non-empty name without '/'");
      }
      if (!link_names.insert(ls.name).second) {
        return InvalidFieldError(lfield + ".name", absl::StrCat("duplicate link name '", ls.name, "'"));
      }
      LinkModel lm;
      lm.short_name = ls.name;
      lm.name = absl::StrCat(es.name, "/", ls.name);
      lm.entity = EntityIndex(static_cast<int32_t>(ei));
      lm.kind = es.kind;
      if (IsMoving(es.kind)) {
        lm.moving_index = static_cast<int>(model->moving_links_.size());
      } else {
        if (!ls.X_WL.p.allFinite() || !ls.X_WL.R.allFinite()) {
          return InvalidFieldError(lfield + ".pose", "expected finite numbers");
        }
        lm.X_WL = ls.X_WL;
      }
      TAXEL_ASSIGN_OR_RETURN(auto shapes, BuildShapes(ls.shapes, meshes, lfield + ".shapes", budget));
      lm.assets.push_back(std::move(shapes));
      for (size_t ai = 0; ai < es.assets.size(); ++ai) {
        TAXEL_ASSIGN_OR_RETURN(auto asset_shapes,
                               BuildShapes(es.assets[ai].link_shapes[li], meshes,
                                           absl::StrCat(efield, ".assets[", ai, "].link_shapes[", li, "]"), budget));
        lm.assets.push_back(std::move(asset_shapes));
      }
      for (const auto& a : lm.assets) {
        lm.asset_bounds_L.push_back(BoundsOf(a));
        for (const ShapeInstance& s : a) {
          if (s.shape.kind() == geometry::ShapeKind::kImplicit) model->has_implicit_shapes_ = true;
        }
      }
      const LinkIndex index(static_cast<int32_t>(model->links_.size()));
      if (lm.moving_index >= 0) model->moving_links_.push_back(index);
      model->by_qualified_name_[lm.name] = index;
      model->by_short_name_[lm.short_name].push_back(index);
      em.links.push_back(index);
      model->links_.push_back(std::move(lm));
    }
    model->entities_.push_back(std::move(em));
  }
  return std::shared_ptr<const SceneModel>(std::move(model));
}

absl::StatusOr<LinkIndex> SceneModel::FindLink(absl::string_view name, absl::string_view field) const {
  const std::string key(name);
  if (auto it = by_qualified_name_.find(key); it != by_qualified_name_.end()) return it->second;
  if (auto it = by_short_name_.find(key); it != by_short_name_.end()) {
    if (it->second.size() == 1) return it->second[0];
    return InvalidFieldError(field, absl::StrCat("link name '", name, "' is ambiguous (", it->second.size(),
                                                 " entities have it); use 'entity/link'"));
  }
  // An entity with a single link stands for that link ("ball" for "ball/body").
  for (const EntityModel& e : entities_) {
    if (e.name == name && e.links.size() == 1) return e.links[0];
  }
  return FieldError(absl::StatusCode::kNotFound, field, absl::StrCat("unknown link '", name, "'"));
}

size_t SceneModel::memory_bytes() const {
  size_t total = sizeof(*this);
  for (const auto& l : links_) {
    for (const auto& a : l.assets) total += a.capacity() * sizeof(ShapeInstance);
    total += l.name.capacity() + l.short_name.capacity();
  }
  for (const auto& e : entities_) total += e.env_assets.capacity() * sizeof(int32_t);
  // Scaled mesh copies belong to the scenes that use them (each distinct copy counted once).
  std::set<const geometry::MeshSignedDistance*> scaled;
  for (const auto& l : links_) {
    for (const auto& a : l.assets) {
      for (const ShapeInstance& si : a) {
        if (si.scaled_mesh && scaled.insert(si.shape.mesh().get()).second) {
          total += si.shape.mesh()->memory_bytes() + si.shape.mesh()->mesh().memory_bytes();
        }
      }
    }
  }
  return total;
}

}  // namespace taxel::scene
