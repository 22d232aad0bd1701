#include "server/codec_implicit.h"

#include "absl/strings/str_cat.h"
#include "core/common/field_error.h"

namespace taxel::server::internal {

absl::StatusOr<scene::ImplicitSpec> DecodeImplicit(const v1::Implicit& s, const std::string& field) {
  scene::ImplicitSpec out;
  using geometry::ImplicitKind;
  switch (s.kind_case()) {
    case v1::Implicit::kSphere:
      out.kind = ImplicitKind::kSphere;
      out.radius = s.sphere().radius();
      break;
    case v1::Implicit::kSuperellipsoid: {
      const auto& se = s.superellipsoid();
      out.kind = ImplicitKind::kSuperellipsoid;
      out.n = se.n();
      if (se.semi_axes_size() != 3) {
        return InvalidFieldError(field + ".superellipsoid.semi_axes",
                                 absl::StrCat("expected 3 values, got ", se.semi_axes_size()));
      }
      out.semi_axes = Eigen::Vector3d(se.semi_axes(0), se.semi_axes(1), se.semi_axes(2));
      break;
    }
    case v1::Implicit::kSmoothPolytope: {
      const auto& p = s.smooth_polytope();
      out.kind = ImplicitKind::kSmoothPolytope;
      if (p.normals_size() % 3 != 0) {
        return InvalidFieldError(field + ".smooth_polytope.normals",
                                 absl::StrCat("expected 3 values per plane, got ", p.normals_size()));
      }
      // Sized before copying: a huge list is refused, not copied.
      const int planes = p.normals_size() / 3;
      if (planes > geometry::kMaxPolytopePlanes) {
        return InvalidFieldError(
            field + ".smooth_polytope.normals",
            absl::StrCat("expected at most ", geometry::kMaxPolytopePlanes, " planes, got ", planes));
      }
      if (p.offsets_size() != planes) {
        return InvalidFieldError(field + ".smooth_polytope.offsets",
                                 absl::StrCat("expected one offset per plane (", planes, "), got ", p.offsets_size()));
      }
      for (int i = 0; i < planes; ++i) {
        out.normals.emplace_back(p.normals(3 * i), p.normals(3 * i + 1), p.normals(3 * i + 2));
      }
      out.offsets.assign(p.offsets().begin(), p.offsets().end());
      out.beta = p.beta();
      break;
    }
    case v1::Implicit::kSuperellipticCylinder:
      out.kind = ImplicitKind::kSuperellipticCylinder;
      out.n = s.superelliptic_cylinder().n();
      out.radius = s.superelliptic_cylinder().radius();
      out.half_length = s.superelliptic_cylinder().half_length();
      break;
    case v1::Implicit::kTruncatedCone: {
      const auto& c = s.truncated_cone();
      out.kind = ImplicitKind::kTruncatedCone;
      out.beta = c.beta();
      out.bottom_radius = c.bottom_radius();
      out.top_radius = c.top_radius();
      out.a = c.a();
      out.b = c.b();
      break;
    }
    default:
      return InvalidFieldError(
          field, "expected one of sphere, superellipsoid, smooth_polytope, superelliptic_cylinder, truncated_cone");
  }
  return out;
}

void EncodeImplicit(const scene::ImplicitSpec& s, v1::Implicit* out) {
  using geometry::ImplicitKind;
  switch (s.kind) {
    case ImplicitKind::kSphere: out->mutable_sphere()->set_radius(s.radius); break;
    case ImplicitKind::kSuperellipsoid:
      out->mutable_superellipsoid()->set_n(s.n);
      out->mutable_superellipsoid()->mutable_semi_axes()->Assign(s.semi_axes.data(), s.semi_axes.data() + 3);
      break;
    case ImplicitKind::kSmoothPolytope: {
      auto* p = out->mutable_smooth_polytope();
      for (const Eigen::Vector3d& a : s.normals) p->mutable_normals()->Add(a.data(), a.data() + 3);
      p->mutable_offsets()->Assign(s.offsets.begin(), s.offsets.end());
      p->set_beta(s.beta);
      break;
    }
    case ImplicitKind::kSuperellipticCylinder: {
      auto* c = out->mutable_superelliptic_cylinder();
      c->set_n(s.n);
      c->set_radius(s.radius);
      c->set_half_length(s.half_length);
      break;
    }
    case ImplicitKind::kTruncatedCone: {
      auto* c = out->mutable_truncated_cone();
      c->set_beta(s.beta);
      c->set_bottom_radius(s.bottom_radius);
      c->set_top_radius(s.top_radius);
      c->set_a(s.a);
      c->set_b(s.b);
      break;
    }
  }
}

}  // namespace taxel::server::internal
