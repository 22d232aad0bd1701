// Collision shapes and the one dispatch point for their signed distance.
#ifndef TAXEL_CORE_GEOMETRY_SHAPE_H_
#define TAXEL_CORE_GEOMETRY_SHAPE_H_

#include <limits>
#include <memory>

#include "Eigen/Core"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/geometry/aabb.h"
#include "core/geometry/heightfield.h"
#include "core/geometry/implicit_shape.h"
#include "core/geometry/mesh_signed_distance.h"
#include "core/geometry/signed_distance_result.h"

namespace taxel::geometry {

enum class ShapeKind { kSphere, kBox, kCapsule, kCylinder, kHalfSpace, kHeightfield, kMesh, kImplicit };
/// Every ShapeKind, in order.
inline constexpr ShapeKind kShapeKinds[] = {ShapeKind::kSphere,   ShapeKind::kBox,       ShapeKind::kCapsule,
                                            ShapeKind::kCylinder, ShapeKind::kHalfSpace, ShapeKind::kHeightfield,
                                            ShapeKind::kMesh,     ShapeKind::kImplicit};

absl::string_view ShapeKindName(ShapeKind kind);

/// A shape in its own frame S. Value type; heavy data (meshes, heightfields) is shared.
/// Construct with the factories, which validate their parameters.
class Shape {
 public:
  /// Errors: INVALID_ARGUMENT naming `field` when a size is not finite and > 0.
  static absl::StatusOr<Shape> Sphere(double radius, absl::string_view field = "shape");
  static absl::StatusOr<Shape> Box(const Eigen::Vector3d& half_extents, absl::string_view field = "shape");
  /// Axis +z; total length 2·half_length + 2·radius.
  static absl::StatusOr<Shape> Capsule(double radius, double half_length, absl::string_view field = "shape");
  /// Axis +z; total length 2·half_length.
  static absl::StatusOr<Shape> Cylinder(double radius, double half_length, absl::string_view field = "shape");
  /// Solid z ≤ 0 of S; boundary plane z = 0, outward normal +z.
  static Shape HalfSpace();
  static Shape FromHeightfield(std::shared_ptr<const Heightfield> heightfield);
  static Shape FromMesh(std::shared_ptr<const MeshSignedDistance> mesh);
  /// A smooth convex implicit shape (implicit_shape.h); its signed distance is the exact metric one
  /// of implicit_signed_distance.h. @pre implicit != nullptr.
  static Shape FromImplicit(std::shared_ptr<const ImplicitShape> implicit);

  ShapeKind kind() const { return kind_; }
  double radius() const { return radius_; }
  double half_length() const { return half_length_; }
  const Eigen::Vector3d& half_extents() const { return half_extents_; }
  const std::shared_ptr<const Heightfield>& heightfield() const { return heightfield_; }
  const std::shared_ptr<const MeshSignedDistance>& mesh() const { return mesh_; }
  const std::shared_ptr<const ImplicitShape>& implicit() const { return implicit_; }

  /// Bounds of the solid in S (infinite for half-spaces; lo.z = −∞ for heightfields).
  const Aabb& local_bounds() const { return bounds_; }

  /// Signed distance at p_SQ with the bounded semantics of SignedDistanceResult: exact whenever
  /// finite; +inf means outside and farther than max_distance. Thread-safe, no allocation.
  /// `warm_start` (implicit shapes only, else ignored): a previous foot point in S to start the
  /// projection from (see ImplicitSignedDistance); the answer does not depend on it beyond the
  /// solve's tolerance.
  SignedDistanceResult SignedDistance(const Eigen::Vector3d& p_SQ,
                                      double max_distance = std::numeric_limits<double>::infinity(),
                                      const Eigen::Vector3d* warm_start = nullptr) const;

 private:
  Shape() = default;
  void ComputeBounds();

  ShapeKind kind_ = ShapeKind::kSphere;
  double radius_ = 0, half_length_ = 0;
  Eigen::Vector3d half_extents_ = Eigen::Vector3d::Zero();
  std::shared_ptr<const Heightfield> heightfield_;
  std::shared_ptr<const MeshSignedDistance> mesh_;
  std::shared_ptr<const ImplicitShape> implicit_;
  Aabb bounds_;
};

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_SHAPE_H_
