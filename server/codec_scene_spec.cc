// Scene and sensor specs: decoding with field paths, and the inverse encoders.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/common/field_error.h"
#include "core/common/status_macros.h"
#include "server/codec.h"
#include "server/codec_implicit.h"

namespace taxel::server {
namespace {

using scene::EntityKind;
using sensors::SensorKind;

absl::StatusOr<EntityKind> DecodeEntityKind(v1::EntityKind kind, absl::string_view field) {
  switch (kind) {
    case v1::ROBOT: return EntityKind::kRobot;
    case v1::OBJECT: return EntityKind::kObject;
    case v1::PROJECTILE: return EntityKind::kProjectile;
    case v1::TERRAIN: return EntityKind::kTerrain;
    case v1::STATIC: return EntityKind::kStatic;
    default: return InvalidFieldError(field, "expected ROBOT, OBJECT, PROJECTILE, TERRAIN or STATIC");
  }
}

absl::StatusOr<SensorKind> DecodeSensorKind(v1::SensorKind kind, absl::string_view field) {
  switch (kind) {
    case v1::CONTACT_PROBE: return SensorKind::kContactProbe;
    case v1::CONTACT_DEPTH_PROBE: return SensorKind::kContactDepthProbe;
    case v1::KINEMATIC_TAXEL: return SensorKind::kKinematicTaxel;
    case v1::ELASTOMER_TAXEL: return SensorKind::kElastomerTaxel;
    case v1::PROXIMITY_TAXEL: return SensorKind::kProximityTaxel;
    default:
      return InvalidFieldError(field,
                               "expected CONTACT_PROBE, CONTACT_DEPTH_PROBE, KINEMATIC_TAXEL, ELASTOMER_TAXEL or "
                               "PROXIMITY_TAXEL");
  }
}

absl::StatusOr<geometry::SdfBackend> DecodeSdfBackend(v1::SdfBackend backend, absl::string_view field) {
  switch (backend) {
    case v1::EXACT: return geometry::SdfBackend::kExact;
    case v1::GRID: return geometry::SdfBackend::kGrid;
    default:
      return InvalidFieldError(field, absl::StrCat("expected EXACT (0) or GRID (1), got ", static_cast<int>(backend)));
  }
}

absl::StatusOr<std::vector<double>> Doubles(const v1::Tensor& t, absl::string_view field) {
  TAXEL_ASSIGN_OR_RETURN(TensorView view, ViewTensor(t, field));
  std::vector<double> storage;
  TAXEL_ASSIGN_OR_RETURN(absl::Span<const double> values, RealValues(view, field, &storage));
  return std::vector<double>(values.begin(), values.end());
}

absl::StatusOr<scene::ShapeSpec> DecodeShape(const v1::Shape& s, const std::string& field) {
  scene::ShapeSpec out;
  if (s.has_pose()) {
    TAXEL_ASSIGN_OR_RETURN(out.X_LS, DecodePose(s.pose(), field + ".pose"));
  }
  using geometry::ShapeKind;
  switch (s.geometry_case()) {
    case v1::Shape::kSphere:
      out.kind = ShapeKind::kSphere;
      out.radius = s.sphere().radius();
      break;
    case v1::Shape::kBox:
      out.kind = ShapeKind::kBox;
      if (s.box().half_extents_size() != 3) {
        return InvalidFieldError(field + ".box.half_extents",
                                 absl::StrCat("expected 3 values, got ", s.box().half_extents_size()));
      }
      out.half_extents = Eigen::Vector3d(s.box().half_extents(0), s.box().half_extents(1), s.box().half_extents(2));
      break;
    case v1::Shape::kCapsule:
      out.kind = ShapeKind::kCapsule;
      out.radius = s.capsule().radius();
      out.half_length = s.capsule().half_length();
      break;
    case v1::Shape::kCylinder:
      out.kind = ShapeKind::kCylinder;
      out.radius = s.cylinder().radius();
      out.half_length = s.cylinder().half_length();
      break;
    case v1::Shape::kHalfSpace: out.kind = ShapeKind::kHalfSpace; break;
    case v1::Shape::kHeightfield: {
      out.kind = ShapeKind::kHeightfield;
      const std::string hf = field + ".heightfield.heights";
      TAXEL_ASSIGN_OR_RETURN(TensorView view, ViewTensor(s.heightfield().heights(), hf));
      if (view.shape.size() != 2) {
        return InvalidFieldError(hf, absl::StrCat("expected shape [rows, cols], got ", ShapeString(view.shape)));
      }
      TAXEL_ASSIGN_OR_RETURN(out.hf_heights, Doubles(s.heightfield().heights(), hf));
      out.hf_rows = static_cast<int>(view.shape[0]);
      out.hf_cols = static_cast<int>(view.shape[1]);
      out.hf_dx = s.heightfield().dx();
      out.hf_dy = s.heightfield().dy();
      break;
    }
    case v1::Shape::kMesh:
      out.kind = ShapeKind::kMesh;
      out.mesh_id = s.mesh().mesh_id();
      if (s.mesh().scale_size() == 3) {
        out.mesh_scale = Eigen::Vector3d(s.mesh().scale(0), s.mesh().scale(1), s.mesh().scale(2));
      } else if (s.mesh().scale_size() != 0) {
        return InvalidFieldError(field + ".mesh.scale",
                                 absl::StrCat("expected 3 values or none, got ", s.mesh().scale_size()));
      }
      break;
    case v1::Shape::kImplicit: {
      out.kind = ShapeKind::kImplicit;
      TAXEL_ASSIGN_OR_RETURN(out.implicit, internal::DecodeImplicit(s.implicit(), field + ".implicit"));
      break;
    }
    default:
      return InvalidFieldError(
          field, "expected one of sphere, box, capsule, cylinder, half_space, heightfield, mesh, implicit");
  }
  return out;
}

absl::StatusOr<std::vector<scene::ShapeSpec>> DecodeShapes(const google::protobuf::RepeatedPtrField<v1::Shape>& shapes,
                                                           const std::string& field) {
  std::vector<scene::ShapeSpec> out;
  for (int i = 0; i < shapes.size(); ++i) {
    TAXEL_ASSIGN_OR_RETURN(auto s, DecodeShape(shapes[i], absl::StrCat(field, "[", i, "]")));
    out.push_back(std::move(s));
  }
  return out;
}

void EncodeShape(const scene::ShapeSpec& s, v1::Shape* out) {
  EncodePose(s.X_LS, out->mutable_pose());
  using geometry::ShapeKind;
  switch (s.kind) {
    case ShapeKind::kSphere: out->mutable_sphere()->set_radius(s.radius); break;
    case ShapeKind::kBox:
      out->mutable_box()->mutable_half_extents()->Assign(s.half_extents.data(), s.half_extents.data() + 3);
      break;
    case ShapeKind::kCapsule:
      out->mutable_capsule()->set_radius(s.radius);
      out->mutable_capsule()->set_half_length(s.half_length);
      break;
    case ShapeKind::kCylinder:
      out->mutable_cylinder()->set_radius(s.radius);
      out->mutable_cylinder()->set_half_length(s.half_length);
      break;
    case ShapeKind::kHalfSpace: out->mutable_half_space(); break;
    case ShapeKind::kHeightfield: {
      auto* hf = out->mutable_heightfield();
      EncodeDoubles({s.hf_rows, s.hf_cols}, s.hf_heights, hf->mutable_heights());
      hf->set_dx(s.hf_dx);
      hf->set_dy(s.hf_dy);
      break;
    }
    case ShapeKind::kMesh:
      out->mutable_mesh()->set_mesh_id(s.mesh_id);
      if (s.mesh_scale != Eigen::Vector3d::Ones()) {
        out->mutable_mesh()->mutable_scale()->Assign(s.mesh_scale.data(), s.mesh_scale.data() + 3);
      }
      break;
    case ShapeKind::kImplicit: internal::EncodeImplicit(s.implicit, out->mutable_implicit()); break;
  }
}

// [N, 3] or [rows, cols, 3] → points (+ grid dims).
absl::Status DecodePoints(const v1::Tensor& t, const std::string& field, std::vector<Eigen::Vector3d>* out, int* rows,
                          int* cols) {
  TAXEL_ASSIGN_OR_RETURN(TensorView view, ViewTensor(t, field));
  const auto& sh = view.shape;
  const bool flat = sh.size() == 2 && sh[1] == 3;
  const bool grid = sh.size() == 3 && sh[2] == 3;
  if (!flat && !grid)
    return InvalidFieldError(field, absl::StrCat("expected shape [N, 3] or [rows, cols, 3], got ", ShapeString(sh)));
  std::vector<double> storage;
  TAXEL_ASSIGN_OR_RETURN(absl::Span<const double> v, RealValues(view, field, &storage));
  out->resize(v.size() / 3);
  for (size_t k = 0; k < out->size(); ++k) (*out)[k] = Eigen::Vector3d(v[3 * k], v[3 * k + 1], v[3 * k + 2]);
  if (grid) {
    *rows = static_cast<int>(sh[0]);
    *cols = static_cast<int>(sh[1]);
  }
  return absl::OkStatus();
}

void DecodeNonlinearLaw(const v1::NonlinearLawOptions& m, contact::NonlinearLawParams* p) {
  if (m.has_stiffness()) p->stiffness = m.stiffness();
  if (m.has_exponent()) p->exponent = m.exponent();
  if (m.has_damping()) p->damping = m.damping();
  if (m.has_damping_depth()) p->damping_depth = m.damping_depth();
  if (m.has_static_friction()) p->static_friction = m.static_friction();
  if (m.has_dynamic_friction()) p->dynamic_friction = m.dynamic_friction();
  if (m.has_stiction_speed()) p->stiction_speed = m.stiction_speed();
  if (m.has_transition_speed()) p->transition_speed = m.transition_speed();
}

void EncodeNonlinearLaw(const contact::NonlinearLawParams& p, v1::NonlinearLawOptions* m) {
  m->set_stiffness(p.stiffness);
  m->set_exponent(p.exponent);
  m->set_damping(p.damping);
  m->set_damping_depth(p.damping_depth);
  if (p.static_friction) m->set_static_friction(*p.static_friction);
  m->set_dynamic_friction(p.dynamic_friction);
  m->set_stiction_speed(p.stiction_speed);
  m->set_transition_speed(p.transition_speed);
}

absl::Status DecodeImperfections(const v1::ImperfectionOptions& m, const std::string& f, int64_t n, int rows, int cols,
                                 sensors::ImperfectionSpec* out) {
  out->probe_radius_noise = m.probe_radius_noise();
  if (m.has_probe_gain()) {
    const std::string g = f + ".probe_gain";
    TAXEL_ASSIGN_OR_RETURN(TensorView view, ViewTensor(m.probe_gain(), g));
    const bool scalar = view.num_elements == 1 && view.shape.size() <= 1;
    const bool per_probe = (view.shape.size() == 1 && view.shape[0] == n) ||
                           (rows > 0 && view.shape.size() == 2 && view.shape[0] == rows && view.shape[1] == cols);
    if (!scalar && !per_probe) {
      return InvalidFieldError(
          g, absl::StrCat("expected a scalar or one value per probe ([", n, "]), got ", ShapeString(view.shape)));
    }
    TAXEL_ASSIGN_OR_RETURN(out->probe_gain, Doubles(m.probe_gain(), g));
  }
  if (m.probe_gain_resample_range_size() == 2) {
    out->probe_gain_resample_range = std::make_pair(m.probe_gain_resample_range(0), m.probe_gain_resample_range(1));
  } else if (m.probe_gain_resample_range_size() != 0) {
    return InvalidFieldError(
        f + ".probe_gain_resample_range",
        absl::StrCat("expected [lo, hi] or nothing, got ", m.probe_gain_resample_range_size(), " values"));
  }
  out->crosstalk_strength = m.crosstalk_strength();
  out->crosstalk_sigma = m.crosstalk_sigma();
  if (m.has_crosstalk_kernel()) {
    const std::string kf = f + ".crosstalk_kernel";
    TAXEL_ASSIGN_OR_RETURN(TensorView view, ViewTensor(m.crosstalk_kernel(), kf));
    if (view.shape.size() == 2) {
      out->crosstalk_kernel_layers = 1;
      out->crosstalk_kernel_rows = static_cast<int>(view.shape[0]);
      out->crosstalk_kernel_cols = static_cast<int>(view.shape[1]);
    } else if (view.shape.size() == 3 && (view.shape[0] == 2 || view.shape[0] == 3)) {
      out->crosstalk_kernel_layers = static_cast<int>(view.shape[0]);
      out->crosstalk_kernel_rows = static_cast<int>(view.shape[1]);
      out->crosstalk_kernel_cols = static_cast<int>(view.shape[2]);
    } else {
      return InvalidFieldError(
          kf, absl::StrCat("expected shape [N, M], [2, N, M] or [3, N, M], got ", ShapeString(view.shape)));
    }
    TAXEL_ASSIGN_OR_RETURN(out->crosstalk_kernel, Doubles(m.crosstalk_kernel(), kf));
  }
  out->crosstalk_border = m.crosstalk_border() == v1::CROSSTALK_BORDER_RENORMALIZE
                              ? sensors::CrosstalkBorder::kRenormalize
                              : sensors::CrosstalkBorder::kZero;
  out->hysteresis_strength = m.hysteresis_strength();
  out->hysteresis_tau = m.hysteresis_tau();
  out->random_walk = m.random_walk();
  out->noise = m.noise();
  out->bias = m.bias();
  out->resolution = m.resolution();
  out->dead_taxel_probability = m.dead_taxel_probability();
  if (m.dead_taxel_value_range_size() == 2) {
    out->dead_taxel_value_range = {m.dead_taxel_value_range(0), m.dead_taxel_value_range(1)};
  } else if (m.dead_taxel_value_range_size() != 0) {
    return InvalidFieldError(f + ".dead_taxel_value_range", absl::StrCat("expected [lo, hi] or nothing, got ",
                                                                         m.dead_taxel_value_range_size(), " values"));
  }
  out->delay = m.delay();
  out->jitter = m.jitter();
  out->history_length = m.history_length();
  out->update_period = m.update_period() == 0 ? 1 : m.update_period();
  return absl::OkStatus();
}

void EncodeImperfections(const sensors::ImperfectionSpec& s, v1::ImperfectionOptions* m) {
  m->set_probe_radius_noise(s.probe_radius_noise);
  if (s.probe_gain.size() == 1) {
    if (s.probe_gain[0] != 1.0) EncodeDoubles({}, s.probe_gain, m->mutable_probe_gain());
  } else {
    EncodeDoubles({static_cast<int64_t>(s.probe_gain.size())}, s.probe_gain, m->mutable_probe_gain());
  }
  if (s.probe_gain_resample_range) {
    m->add_probe_gain_resample_range(s.probe_gain_resample_range->first);
    m->add_probe_gain_resample_range(s.probe_gain_resample_range->second);
  }
  m->set_crosstalk_strength(s.crosstalk_strength);
  m->set_crosstalk_sigma(s.crosstalk_sigma);
  if (!s.crosstalk_kernel.empty()) {
    std::vector<int64_t> shape;
    if (s.crosstalk_kernel_layers > 1) shape.push_back(s.crosstalk_kernel_layers);
    shape.push_back(s.crosstalk_kernel_rows);
    shape.push_back(s.crosstalk_kernel_cols);
    EncodeDoubles(shape, s.crosstalk_kernel, m->mutable_crosstalk_kernel());
  }
  m->set_crosstalk_border(s.crosstalk_border == sensors::CrosstalkBorder::kRenormalize
                              ? v1::CROSSTALK_BORDER_RENORMALIZE
                              : v1::CROSSTALK_BORDER_ZERO);
  m->set_hysteresis_strength(s.hysteresis_strength);
  m->set_hysteresis_tau(s.hysteresis_tau);
  m->set_random_walk(s.random_walk);
  m->set_noise(s.noise);
  m->set_bias(s.bias);
  m->set_resolution(s.resolution);
  m->set_dead_taxel_probability(s.dead_taxel_probability);
  if (s.dead_taxel_value_range.first != 0 || s.dead_taxel_value_range.second != 0) {
    m->add_dead_taxel_value_range(s.dead_taxel_value_range.first);
    m->add_dead_taxel_value_range(s.dead_taxel_value_range.second);
  }
  m->set_delay(s.delay);
  m->set_jitter(s.jitter);
  m->set_history_length(s.history_length);
  m->set_update_period(s.update_period);
}

}  // namespace

v1::EntityKind EncodeEntityKind(scene::EntityKind kind) {
  switch (kind) {
    case EntityKind::kRobot: return v1::ROBOT;
    case EntityKind::kObject: return v1::OBJECT;
    case EntityKind::kProjectile: return v1::PROJECTILE;
    case EntityKind::kTerrain: return v1::TERRAIN;
    case EntityKind::kStatic: return v1::STATIC;
  }
  return v1::ENTITY_KIND_UNSPECIFIED;
}

v1::SdfBackend EncodeSdfBackend(geometry::SdfBackend backend) {
  return backend == geometry::SdfBackend::kGrid ? v1::GRID : v1::EXACT;
}

v1::SensorKind EncodeSensorKind(sensors::SensorKind kind) {
  switch (kind) {
    case SensorKind::kContactProbe: return v1::CONTACT_PROBE;
    case SensorKind::kContactDepthProbe: return v1::CONTACT_DEPTH_PROBE;
    case SensorKind::kKinematicTaxel: return v1::KINEMATIC_TAXEL;
    case SensorKind::kElastomerTaxel: return v1::ELASTOMER_TAXEL;
    case SensorKind::kProximityTaxel: return v1::PROXIMITY_TAXEL;
  }
  return v1::SENSOR_KIND_UNSPECIFIED;
}

absl::StatusOr<sensors::SensorSpec> DecodeSensorSpec(const v1::SensorSpec& s, absl::string_view field_view) {
  const std::string field(field_view);
  sensors::SensorSpec out;
  out.name = s.name();
  TAXEL_ASSIGN_OR_RETURN(out.kind, DecodeSensorKind(s.kind(), field + ".kind"));
  out.link = s.link();
  if (!s.has_probe_local_pos())
    return InvalidFieldError(field + ".probe_local_pos", "required ([N, 3] or [rows, cols, 3])");
  int rows = 0, cols = 0;
  TAXEL_RETURN_IF_ERROR(
      DecodePoints(s.probe_local_pos(), field + ".probe_local_pos", &out.probe_local_pos, &rows, &cols));
  out.grid_rows = rows;
  out.grid_cols = cols;
  const int64_t n = static_cast<int64_t>(out.probe_local_pos.size());
  if (!s.has_probe_radius())
    return InvalidFieldError(field + ".probe_radius", "required (a scalar or one value per probe)");
  {
    const std::string f = field + ".probe_radius";
    TAXEL_ASSIGN_OR_RETURN(TensorView view, ViewTensor(s.probe_radius(), f));
    const bool scalar = view.num_elements == 1 && view.shape.size() <= 1;
    const bool per_probe = (view.shape.size() == 1 && view.shape[0] == n) ||
                           (rows > 0 && view.shape.size() == 2 && view.shape[0] == rows && view.shape[1] == cols);
    if (!scalar && !per_probe) {
      return InvalidFieldError(
          f, absl::StrCat("expected a scalar, [", n, "]", rows > 0 ? absl::StrCat(" or [", rows, ", ", cols, "]") : "",
                          ", got ", ShapeString(view.shape)));
    }
    TAXEL_ASSIGN_OR_RETURN(out.probe_radius, Doubles(s.probe_radius(), f));
  }
  if (s.has_probe_local_normal()) {
    const std::string f = field + ".probe_local_normal";
    TAXEL_ASSIGN_OR_RETURN(TensorView view, ViewTensor(s.probe_local_normal(), f));
    if (view.shape.size() == 1 && view.shape[0] == 3) {
      TAXEL_ASSIGN_OR_RETURN(auto v, Doubles(s.probe_local_normal(), f));
      out.probe_local_normal = {Eigen::Vector3d(v[0], v[1], v[2])};
    } else {
      int nr = 0, nc = 0;
      TAXEL_RETURN_IF_ERROR(DecodePoints(s.probe_local_normal(), f, &out.probe_local_normal, &nr, &nc));
      if (static_cast<int64_t>(out.probe_local_normal.size()) != n) {
        return InvalidFieldError(
            f, absl::StrCat("expected [3] or one normal per probe (", n, "), got ", ShapeString(view.shape)));
      }
    }
  }
  out.filter_links.assign(s.filter_links().begin(), s.filter_links().end());
  TAXEL_ASSIGN_OR_RETURN(out.sdf_backend, DecodeSdfBackend(s.sdf_backend(), field + ".sdf_backend"));
  const auto& cp = s.contact_probe();
  if (cp.has_contact_threshold()) out.contact_threshold = cp.contact_threshold();
  if (cp.has_release_threshold()) out.release_threshold = cp.release_threshold();
  const auto& kt = s.kinematic_taxel();
  auto& k = out.spring_damper;
  if (kt.has_normal_stiffness()) k.normal_stiffness = kt.normal_stiffness();
  if (kt.has_normal_damping()) k.normal_damping = kt.normal_damping();
  if (kt.has_exponent()) k.exponent = kt.exponent();
  if (kt.has_shear_damping()) k.shear_damping = kt.shear_damping();
  if (kt.has_twist_damping()) k.twist_damping = kt.twist_damping();
  out.force_law = kt.force_law() == v1::NONLINEAR ? sensors::SensorSpec::ForceLaw::kNonlinear
                                                  : sensors::SensorSpec::ForceLaw::kSpringDamper;
  DecodeNonlinearLaw(kt.nonlinear_law(), &out.nonlinear);
  out.track_links.assign(s.track_links().begin(), s.track_links().end());
  if (s.n_sample_points() != 0) out.n_sample_points = s.n_sample_points();
  TAXEL_RETURN_IF_ERROR(
      DecodeImperfections(s.imperfections(), field + ".imperfections", n, rows, cols, &out.imperfections));
  const auto& el = s.elastomer();
  auto& e = out.elastomer;
  if (el.has_lambda_d()) e.lambda_d = el.lambda_d();
  if (el.has_dilate_scale()) e.dilate_scale = el.dilate_scale();
  if (el.has_normal_exponent()) e.normal_exponent = el.normal_exponent();
  if (el.has_compressibility()) e.compressibility = el.compressibility();
  if (el.has_elastomer_thickness()) e.elastomer_thickness = el.elastomer_thickness();
  if (el.has_lambda_s()) e.lambda_s = el.lambda_s();
  if (el.has_shear_scale()) e.shear_scale = el.shear_scale();
  if (el.has_contact_threshold()) e.contact_threshold = el.contact_threshold();
  if (el.has_release_threshold()) e.release_threshold = el.release_threshold();
  if (el.has_use_fft()) e.use_fft = el.use_fft();
  const auto& px = s.proximity();
  auto& q = out.proximity;
  if (px.has_stiffness()) q.stiffness = px.stiffness();
  if (px.has_shear_coupling()) q.shear_coupling = px.shear_coupling();
  if (px.has_twist_scalar()) q.twist_scalar = px.twist_scalar();
  if (px.has_density_scalar()) q.density_scalar = px.density_scalar();
  return out;
}

absl::StatusOr<scene::SceneSpec> DecodeSceneSpec(const v1::SceneSpec& s) {
  scene::SceneSpec out;
  out.name = s.name();
  out.num_envs = s.num_envs();
  out.seed = s.seed();
  out.env_offset = s.env_offset();  // range checked with num_envs by scene::SceneModel::Build
  for (int ei = 0; ei < s.entities_size(); ++ei) {
    const v1::Entity& e = s.entities(ei);
    const std::string ef = absl::StrCat("entities[", ei, "]");
    scene::EntitySpec es;
    es.name = e.name();
    TAXEL_ASSIGN_OR_RETURN(es.kind, DecodeEntityKind(e.kind(), ef + ".kind"));
    for (int li = 0; li < e.links_size(); ++li) {
      const v1::Link& l = e.links(li);
      const std::string lf = absl::StrCat(ef, ".links[", li, "]");
      scene::LinkSpec ls;
      ls.name = l.name();
      TAXEL_ASSIGN_OR_RETURN(ls.shapes, DecodeShapes(l.shapes(), lf + ".shapes"));
      if (l.has_pose()) {
        if (scene::IsMoving(es.kind)) {
          return InvalidFieldError(lf + ".pose",
                                   "only TERRAIN and STATIC links have a fixed pose; moving links get theirs "
                                   "from each step");
        }
        TAXEL_ASSIGN_OR_RETURN(ls.X_WL, DecodePose(l.pose(), lf + ".pose"));
      }
      es.links.push_back(std::move(ls));
    }
    for (int ai = 0; ai < e.assets_size(); ++ai) {
      scene::AssetSpec as;
      as.name = e.assets(ai).name();
      for (int li = 0; li < e.assets(ai).link_shapes_size(); ++li) {
        TAXEL_ASSIGN_OR_RETURN(auto shapes,
                               DecodeShapes(e.assets(ai).link_shapes(li).shapes(),
                                            absl::StrCat(ef, ".assets[", ai, "].link_shapes[", li, "].shapes")));
        as.link_shapes.push_back(std::move(shapes));
      }
      es.assets.push_back(std::move(as));
    }
    es.env_assets.assign(e.env_assets().begin(), e.env_assets().end());
    out.entities.push_back(std::move(es));
  }
  for (int i = 0; i < s.sensors_size(); ++i) {
    TAXEL_ASSIGN_OR_RETURN(auto sensor, DecodeSensorSpec(s.sensors(i), absl::StrCat("sensors[", i, "]")));
    out.sensors.push_back(std::move(sensor));
  }
  const v1::ContactMatrixSpec& cm = s.contact_matrix();
  out.contact_matrix.bodies.assign(cm.bodies().begin(), cm.bodies().end());
  if (cm.partners_size() > 0) out.contact_matrix.partners.assign(cm.partners().begin(), cm.partners().end());
  out.contact_matrix.source =
      cm.source() == v1::REPORTED ? contact::ContactSource::kReported : contact::ContactSource::kEstimated;
  out.contact_matrix.friction = cm.friction();
  DecodeNonlinearLaw(cm.law(), &out.contact_matrix.law);
  if (cm.sample_spacing() != 0) out.contact_matrix.sample_spacing = cm.sample_spacing();
  TAXEL_ASSIGN_OR_RETURN(out.contact_matrix.sdf_backend,
                         DecodeSdfBackend(cm.sdf_backend(), "contact_matrix.sdf_backend"));
  out.contact_matrix.gradients = cm.gradients();
  return out;
}

void EncodeSensorSpec(const sensors::SensorSpec& s, v1::SensorSpec* out) {
  out->set_name(s.name);
  out->set_kind(EncodeSensorKind(s.kind));
  out->set_link(s.link);
  std::vector<double> flat;
  for (const auto& p : s.probe_local_pos) flat.insert(flat.end(), {p.x(), p.y(), p.z()});
  const int64_t n = static_cast<int64_t>(s.probe_local_pos.size());
  if (s.grid_rows > 0) {
    EncodeDoubles({s.grid_rows, s.grid_cols, 3}, flat, out->mutable_probe_local_pos());
  } else {
    EncodeDoubles({n, 3}, flat, out->mutable_probe_local_pos());
  }
  if (s.probe_radius.size() == 1) {
    EncodeDoubles({}, s.probe_radius, out->mutable_probe_radius());
  } else {
    EncodeDoubles({static_cast<int64_t>(s.probe_radius.size())}, s.probe_radius, out->mutable_probe_radius());
  }
  if (!s.probe_local_normal.empty()) {
    std::vector<double> normals;
    for (const auto& p : s.probe_local_normal) normals.insert(normals.end(), {p.x(), p.y(), p.z()});
    if (s.probe_local_normal.size() == 1) {
      EncodeDoubles({3}, normals, out->mutable_probe_local_normal());
    } else {
      EncodeDoubles({static_cast<int64_t>(s.probe_local_normal.size()), 3}, normals, out->mutable_probe_local_normal());
    }
  }
  for (const auto& f : s.filter_links) out->add_filter_links(f);
  out->set_sdf_backend(EncodeSdfBackend(s.sdf_backend));
  out->mutable_contact_probe()->set_contact_threshold(s.contact_threshold);
  if (s.release_threshold) out->mutable_contact_probe()->set_release_threshold(*s.release_threshold);
  auto* k = out->mutable_kinematic_taxel();
  k->set_normal_stiffness(s.spring_damper.normal_stiffness);
  k->set_normal_damping(s.spring_damper.normal_damping);
  k->set_exponent(s.spring_damper.exponent);
  k->set_shear_damping(s.spring_damper.shear_damping);
  k->set_twist_damping(s.spring_damper.twist_damping);
  k->set_force_law(s.force_law == sensors::SensorSpec::ForceLaw::kNonlinear ? v1::NONLINEAR : v1::SPRING_DAMPER);
  EncodeNonlinearLaw(s.nonlinear, k->mutable_nonlinear_law());
  for (const auto& t : s.track_links) out->add_track_links(t);
  out->set_n_sample_points(s.n_sample_points);
  EncodeImperfections(s.imperfections, out->mutable_imperfections());
  auto* e = out->mutable_elastomer();
  e->set_lambda_d(s.elastomer.lambda_d);
  e->set_dilate_scale(s.elastomer.dilate_scale);
  e->set_normal_exponent(s.elastomer.normal_exponent);
  e->set_compressibility(s.elastomer.compressibility);
  e->set_elastomer_thickness(s.elastomer.elastomer_thickness);
  e->set_lambda_s(s.elastomer.lambda_s);
  e->set_shear_scale(s.elastomer.shear_scale);
  e->set_contact_threshold(s.elastomer.contact_threshold);
  e->set_release_threshold(s.elastomer.release_threshold);
  e->set_use_fft(s.elastomer.use_fft);
  auto* q = out->mutable_proximity();
  q->set_stiffness(s.proximity.stiffness);
  q->set_shear_coupling(s.proximity.shear_coupling);
  q->set_twist_scalar(s.proximity.twist_scalar);
  q->set_density_scalar(s.proximity.density_scalar);
}

void EncodeSceneSpec(const scene::SceneSpec& s, v1::SceneSpec* out) {
  out->set_name(s.name);
  out->set_num_envs(s.num_envs);
  out->set_seed(s.seed);
  out->set_env_offset(s.env_offset);
  for (const auto& e : s.entities) {
    v1::Entity* pe = out->add_entities();
    pe->set_name(e.name);
    pe->set_kind(EncodeEntityKind(e.kind));
    for (const auto& l : e.links) {
      v1::Link* pl = pe->add_links();
      pl->set_name(l.name);
      for (const auto& sh : l.shapes) EncodeShape(sh, pl->add_shapes());
      if (!scene::IsMoving(e.kind)) EncodePose(l.X_WL, pl->mutable_pose());
    }
    for (const auto& a : e.assets) {
      v1::Asset* pa = pe->add_assets();
      pa->set_name(a.name);
      for (const auto& shapes : a.link_shapes) {
        v1::ShapeList* list = pa->add_link_shapes();
        for (const auto& sh : shapes) EncodeShape(sh, list->add_shapes());
      }
    }
    pe->mutable_env_assets()->Assign(e.env_assets.begin(), e.env_assets.end());
  }
  for (const auto& s2 : s.sensors) EncodeSensorSpec(s2, out->add_sensors());
  if (s.contact_matrix.enabled()) {
    v1::ContactMatrixSpec* cm = out->mutable_contact_matrix();
    for (const auto& b : s.contact_matrix.bodies) cm->add_bodies(b);
    for (const auto& p : s.contact_matrix.partners) cm->add_partners(p);
    cm->set_source(s.contact_matrix.source == contact::ContactSource::kReported ? v1::REPORTED : v1::ESTIMATED);
    cm->set_friction(s.contact_matrix.friction);
    EncodeNonlinearLaw(s.contact_matrix.law, cm->mutable_law());
    cm->set_sample_spacing(s.contact_matrix.sample_spacing);
    cm->set_sdf_backend(EncodeSdfBackend(s.contact_matrix.sdf_backend));
    cm->set_gradients(s.contact_matrix.gradients);
  }
}

}  // namespace taxel::server
