#include "core/geometry/shape.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/common/field_error.h"
#include "core/geometry/implicit_signed_distance.h"
#include "core/geometry/primitive_signed_distance.h"

namespace taxel::geometry {
namespace {

absl::Status CheckPositive(double value, absl::string_view field, absl::string_view name) {
  if (!(value > 0) || !std::isfinite(value)) {
    return InvalidFieldError(absl::StrCat(field, ".", name), absl::StrCat("expected a finite value > 0, got ", value));
  }
  return absl::OkStatus();
}

}  // namespace

absl::string_view ShapeKindName(ShapeKind kind) {
  switch (kind) {
    case ShapeKind::kSphere: return "sphere";
    case ShapeKind::kBox: return "box";
    case ShapeKind::kCapsule: return "capsule";
    case ShapeKind::kCylinder: return "cylinder";
    case ShapeKind::kHalfSpace: return "half_space";
    case ShapeKind::kHeightfield: return "heightfield";
    case ShapeKind::kMesh: return "mesh";
    case ShapeKind::kImplicit: return "implicit";
  }
  return "unknown";
}

absl::StatusOr<Shape> Shape::Sphere(double radius, absl::string_view field) {
  if (auto s = CheckPositive(radius, field, "radius"); !s.ok()) return s;
  Shape shape;
  shape.kind_ = ShapeKind::kSphere;
  shape.radius_ = radius;
  shape.ComputeBounds();
  return shape;
}

absl::StatusOr<Shape> Shape::Box(const Eigen::Vector3d& half_extents, absl::string_view field) {
  for (int a = 0; a < 3; ++a) {
    if (auto s = CheckPositive(half_extents[a], field, absl::StrCat("half_extents[", a, "]")); !s.ok()) return s;
  }
  Shape shape;
  shape.kind_ = ShapeKind::kBox;
  shape.half_extents_ = half_extents;
  shape.ComputeBounds();
  return shape;
}

absl::StatusOr<Shape> Shape::Capsule(double radius, double half_length, absl::string_view field) {
  if (auto s = CheckPositive(radius, field, "radius"); !s.ok()) return s;
  if (auto s = CheckPositive(half_length, field, "half_length"); !s.ok()) return s;
  Shape shape;
  shape.kind_ = ShapeKind::kCapsule;
  shape.radius_ = radius;
  shape.half_length_ = half_length;
  shape.ComputeBounds();
  return shape;
}

absl::StatusOr<Shape> Shape::Cylinder(double radius, double half_length, absl::string_view field) {
  if (auto s = CheckPositive(radius, field, "radius"); !s.ok()) return s;
  if (auto s = CheckPositive(half_length, field, "half_length"); !s.ok()) return s;
  Shape shape;
  shape.kind_ = ShapeKind::kCylinder;
  shape.radius_ = radius;
  shape.half_length_ = half_length;
  shape.ComputeBounds();
  return shape;
}

Shape Shape::HalfSpace() {
  Shape shape;
  shape.kind_ = ShapeKind::kHalfSpace;
  shape.ComputeBounds();
  return shape;
}

Shape Shape::FromHeightfield(std::shared_ptr<const Heightfield> heightfield) {
  Shape shape;
  shape.kind_ = ShapeKind::kHeightfield;
  shape.heightfield_ = std::move(heightfield);
  shape.ComputeBounds();
  return shape;
}

Shape Shape::FromMesh(std::shared_ptr<const MeshSignedDistance> mesh) {
  Shape shape;
  shape.kind_ = ShapeKind::kMesh;
  shape.mesh_ = std::move(mesh);
  shape.ComputeBounds();
  return shape;
}

Shape Shape::FromImplicit(std::shared_ptr<const ImplicitShape> implicit) {
  Shape shape;
  shape.kind_ = ShapeKind::kImplicit;
  shape.implicit_ = std::move(implicit);
  shape.ComputeBounds();
  return shape;
}

void Shape::ComputeBounds() {
  switch (kind_) {
    case ShapeKind::kSphere:
      bounds_ = Aabb::FromCenterHalf(Eigen::Vector3d::Zero(), Eigen::Vector3d::Constant(radius_));
      break;
    case ShapeKind::kBox: bounds_ = Aabb::FromCenterHalf(Eigen::Vector3d::Zero(), half_extents_); break;
    case ShapeKind::kCapsule:
      bounds_ =
          Aabb::FromCenterHalf(Eigen::Vector3d::Zero(), Eigen::Vector3d(radius_, radius_, radius_ + half_length_));
      break;
    case ShapeKind::kCylinder:
      bounds_ = Aabb::FromCenterHalf(Eigen::Vector3d::Zero(), Eigen::Vector3d(radius_, radius_, half_length_));
      break;
    case ShapeKind::kHalfSpace:
      bounds_ = Aabb::Infinite();
      bounds_.hi.z() = 0;
      break;
    case ShapeKind::kHeightfield: bounds_ = heightfield_->bounds(); break;
    case ShapeKind::kMesh: bounds_ = mesh_->mesh().bounds(); break;
    case ShapeKind::kImplicit: bounds_ = implicit_->local_bounds(); break;
  }
}

SignedDistanceResult Shape::SignedDistance(const Eigen::Vector3d& p, double max_distance,
                                           const Eigen::Vector3d* warm_start) const {
  switch (kind_) {
    case ShapeKind::kSphere: return SphereSignedDistance(radius_, p);
    case ShapeKind::kBox: return BoxSignedDistance(half_extents_, p);
    case ShapeKind::kCapsule: return CapsuleSignedDistance(radius_, half_length_, p);
    case ShapeKind::kCylinder: return CylinderSignedDistance(radius_, half_length_, p);
    case ShapeKind::kHalfSpace: return HalfSpaceSignedDistance(p);
    case ShapeKind::kHeightfield: return heightfield_->Query(p, max_distance);
    case ShapeKind::kMesh: return mesh_->Query(p, max_distance);
    case ShapeKind::kImplicit: return ImplicitSignedDistance(*implicit_, p, max_distance, warm_start);
  }
  return {};
}

}  // namespace taxel::geometry
