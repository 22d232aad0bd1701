// Example implicit shapes and the four shape pairs of the iDCOL success-rate test and of the
// `implicit_pair/*` benchmarks (one definition for both).
#ifndef TAXEL_CORE_GEOMETRY_IMPLICIT_GENERATORS_H_
#define TAXEL_CORE_GEOMETRY_IMPLICIT_GENERATORS_H_

#include <string>
#include <vector>

#include "core/geometry/implicit_shape.h"

namespace taxel::geometry {

/// Hexagonal prism: six sides 2 cm from the axis (z), caps at ±1.5 cm; β = 20.
ImplicitShape HexagonalPrism();
/// A 3 cm cube with one corner cut off by the plane 2 cm from its centre along (1, 1, 1); β = 20.
ImplicitShape CutCube();

struct ImplicitPairType {
  std::string name;  ///< se_se, poly_poly, poly_se, tc_sec
  ImplicitShape shape1, shape2;
};

/// se_se: SE(4, 3×2×1.5 cm) – SE(8, 2×1.5×1 cm); poly_poly: HexagonalPrism – CutCube; poly_se:
/// HexagonalPrism – SE(4); tc_sec: TC(β 20, Rb 2 cm, Rt 1 cm, a 3 cm, b 2 cm) – SEC(4, R 1 cm, h 2.5 cm).
std::vector<ImplicitPairType> ImplicitPairTypes();

}  // namespace taxel::geometry

#endif  // TAXEL_CORE_GEOMETRY_IMPLICIT_GENERATORS_H_
