#include "core/geometry/signed_distance_hessian.h"

#include <cmath>

#include "Eigen/Geometry"
#include "Eigen/LU"

namespace taxel::geometry {
namespace {

using Matrix3 = Eigen::Matrix3d;
using Vector3 = Eigen::Vector3d;

// (I − nnᵀ − Y)/sd: the Hessian off the surface for a closest-point map of derivative Y.
Matrix3 FromClosestPointMap(const Vector3& n, const Matrix3& Y, double sd) {
  if (sd == 0 || !std::isfinite(sd)) return Matrix3::Zero();
  return (Matrix3::Identity() - n * n.transpose() - Y) / sd;
}

Matrix3 Box(const Vector3& h, const Vector3& q, const SignedDistanceResult& r) {
  // Inside, the distance is that of one face plane: flat.
  if (!(r.distance > 0)) return Matrix3::Zero();
  // Outside, y = clamp(q, −h, h): each coordinate within its slab follows q.
  Matrix3 Y = Matrix3::Zero();
  for (int a = 0; a < 3; ++a) Y(a, a) = std::abs(q[a]) < h[a] ? 1.0 : 0.0;
  return FromClosestPointMap(r.normal, Y, r.distance);
}

Matrix3 Capsule(double half_length, const Vector3& q, const SignedDistanceResult& r) {
  // sd = |q − s| − R with s the nearest point of the core segment.
  const double rho = (q - Vector3(0, 0, std::clamp(q.z(), -half_length, half_length))).norm();
  if (rho == 0) return Matrix3::Zero();
  Matrix3 S = Matrix3::Zero();  // ∂s/∂q: the segment's interior follows q along z
  if (std::abs(q.z()) < half_length) S(2, 2) = 1;
  return FromClosestPointMap(r.normal, S, rho);
}

Matrix3 Cylinder(double radius, double half_length, const Vector3& q, const SignedDistanceResult& r) {
  const double rho = std::hypot(q.x(), q.y());
  const double dr = rho - radius, dz = std::abs(q.z()) - half_length;
  if (rho == 0) return Matrix3::Zero();
  const bool rim = dr > 0 && dz > 0;
  const bool side = !rim && dr >= dz;
  if (!rim && !side) return Matrix3::Zero();  // a cap: flat
  // The radial part of y = (R·ρ̂, y_z) moves with ρ̂: ∂(Rρ̂)/∂q = (R/ρ)(P_xy − ρ̂ρ̂ᵀ).
  const Vector3 u(q.x() / rho, q.y() / rho, 0);
  Matrix3 Y = Matrix3::Zero();
  Y.topLeftCorner<2, 2>().setIdentity();
  Y -= u * u.transpose();
  Y *= radius / rho;
  if (side) Y(2, 2) = 1;  // beside the side y_z = q_z; on the rim y_z = ±l
  return FromClosestPointMap(r.normal, Y, r.distance);
}

// ∂y/∂q for the closest feature of a triangle with corners a, b, c.
Matrix3 TriangleFeatureMap(const Vector3& a, const Vector3& b, const Vector3& c, TriangleFeature f, const Vector3& n) {
  const Vector3* edge[2] = {nullptr, nullptr};
  switch (f) {
    case TriangleFeature::kFace: return Matrix3::Identity() - n * n.transpose();
    case TriangleFeature::kVertex0:
    case TriangleFeature::kVertex1:
    case TriangleFeature::kVertex2: return Matrix3::Zero();
    case TriangleFeature::kEdge01: edge[0] = &a, edge[1] = &b; break;
    case TriangleFeature::kEdge12: edge[0] = &b, edge[1] = &c; break;
    case TriangleFeature::kEdge20: edge[0] = &c, edge[1] = &a; break;
  }
  const Vector3 e = (*edge[1] - *edge[0]).normalized();
  return e * e.transpose();
}

Matrix3 Mesh(const MeshSignedDistance& mesh, const SignedDistanceResult& r) {
  if (r.triangle < 0 || r.feature == TriangleFeature::kFace) return Matrix3::Zero();
  const TriangleMesh& m = mesh.mesh();
  const Triangle& t = m.triangle(r.triangle);
  const Matrix3 Y = TriangleFeatureMap(m.vertex(t[0]), m.vertex(t[1]), m.vertex(t[2]), r.feature, r.normal);
  return FromClosestPointMap(r.normal, Y, r.distance);
}

Matrix3 HeightfieldHessian(const Heightfield& hf, const SignedDistanceResult& r) {
  // Walls (triangle −1) and faces are flat.
  if (r.triangle < 0 || r.feature == TriangleFeature::kFace) return Matrix3::Zero();
  // Triangle 2·cell + h of cell (i, j): h = 0 is (i,j),(i,j+1),(i+1,j+1); h = 1 is
  // (i,j),(i+1,j+1),(i+1,j) (Heightfield::Query). Only edge directions matter: corners relative
  // to sample (i, j).
  const int ncx = hf.cols() - 1;
  const int cell = r.triangle / 2, h = r.triangle % 2;
  const int i = cell / ncx, j = cell % ncx;
  auto corner = [&](int di, int dj) { return Vector3(dj * hf.dx(), di * hf.dy(), hf.height(i + di, j + dj)); };
  const Vector3 s00 = corner(0, 0), s01 = corner(0, 1), s10 = corner(1, 0), s11 = corner(1, 1);
  const Matrix3 Y = h == 0 ? TriangleFeatureMap(s00, s01, s11, r.feature, r.normal)
                           : TriangleFeatureMap(s00, s11, s10, r.feature, r.normal);
  return FromClosestPointMap(r.normal, Y, r.distance);
}

/// The implicit shape: with the unit normal N = ∇φ/|∇φ| at the foot y and the shape operator
/// W = P·∇²φ·P/|∇φ| (P = I − NNᵀ), q = y + sd·N gives (I + sd·W)·∂y/∂q = P, so
/// ∇²sd = ∂N/∂q = W·(I + sd·W)⁻¹ (for the sphere: P/(R + sd) = P/|q|). Singular on the medial axis.
Matrix3 ImplicitHessian(const ImplicitShape& shape, const SignedDistanceResult& r) {
  const Matrix3 w = shape.ShapeOperator(r.closest);
  const Matrix3 a = Matrix3::Identity() + r.distance * w;
  if (std::abs(a.determinant()) < 1e-9) return Matrix3::Zero();
  const Matrix3 hessian = w * a.inverse();
  return 0.5 * (hessian + hessian.transpose());
}

}  // namespace

Eigen::Matrix3d SignedDistanceHessian(const Shape& shape, const Eigen::Vector3d& q, const SignedDistanceResult& r) {
  switch (shape.kind()) {
    case ShapeKind::kSphere: {
      const double len = q.norm();
      if (len == 0) return Matrix3::Zero();
      return (Matrix3::Identity() - r.normal * r.normal.transpose()) / len;
    }
    case ShapeKind::kBox: return Box(shape.half_extents(), q, r);
    case ShapeKind::kCapsule: return Capsule(shape.half_length(), q, r);
    case ShapeKind::kCylinder: return Cylinder(shape.radius(), shape.half_length(), q, r);
    case ShapeKind::kHalfSpace: return Matrix3::Zero();
    case ShapeKind::kHeightfield: return HeightfieldHessian(*shape.heightfield(), r);
    case ShapeKind::kMesh: return Mesh(*shape.mesh(), r);
    case ShapeKind::kImplicit: return ImplicitHessian(*shape.implicit(), r);
    default: break;  // kinds added later fall back to "not differentiable" until they get a case
  }
  return Matrix3::Zero();
}

}  // namespace taxel::geometry
