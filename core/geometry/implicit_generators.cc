#include "core/geometry/implicit_generators.h"

#include <cmath>

namespace taxel::geometry {

ImplicitShape HexagonalPrism() {
  std::vector<Eigen::Vector3d> normals;
  std::vector<double> offsets;
  for (int k = 0; k < 6; ++k) {
    normals.emplace_back(std::cos(k * M_PI / 3), std::sin(k * M_PI / 3), 0);
    offsets.push_back(0.02);
  }
  normals.emplace_back(0, 0, 1);
  normals.emplace_back(0, 0, -1);
  offsets.insert(offsets.end(), {0.015, 0.015});
  return *ImplicitShape::SmoothPolytope(normals, offsets, 20);
}

ImplicitShape CutCube() {
  std::vector<Eigen::Vector3d> normals = {
      Eigen::Vector3d::UnitX(), -Eigen::Vector3d::UnitX(), Eigen::Vector3d::UnitY(), -Eigen::Vector3d::UnitY(),
      Eigen::Vector3d::UnitZ(), -Eigen::Vector3d::UnitZ(), Eigen::Vector3d(1, 1, 1)};
  std::vector<double> offsets = {0.015, 0.015, 0.015, 0.015, 0.015, 0.015, 0.02 * std::sqrt(3.0)};
  return *ImplicitShape::SmoothPolytope(normals, offsets, 20);
}

std::vector<ImplicitPairType> ImplicitPairTypes() {
  const ImplicitShape se4 = *ImplicitShape::Superellipsoid(4, {0.03, 0.02, 0.015});
  return {
      {"se_se", se4, *ImplicitShape::Superellipsoid(8, {0.02, 0.015, 0.01})},
      {"poly_poly", HexagonalPrism(), CutCube()},
      {"poly_se", HexagonalPrism(), se4},
      {"tc_sec", *ImplicitShape::TruncatedCone(20, 0.02, 0.01, 0.03, 0.02),
       *ImplicitShape::SuperellipticCylinder(4, 0.01, 0.025)},
  };
}

}  // namespace taxel::geometry
