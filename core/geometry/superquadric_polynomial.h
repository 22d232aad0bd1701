// The polynomial form of the superellipsoid SE and the superelliptic cylinder SEC
// (implicit_shape.h): with s_k = Σ_{i∈k} (y_i/c_i)² + ε over the blocks k of axes (SE: {x}, {y},
// {z}; SEC: {x} with c = h and {y, z} with c = R),
//   ψ(y) = Σ_k s_kⁿ + floor − 1 = (φ(y) + 1)^{2n} − 1.
// ψ has φ's zero set and sign, is a convex function too (sums of convex increasing powers of convex
// s_k), and ∇ψ = 2n(φ + 1)^{2n−1}∇φ is parallel to ∇φ: the closest-point equations with ψ in place
// of φ have the same solutions. It needs no 2n-th root and no division, and its Hessian is diagonal
// (SE) or couples only y and z (SEC):
//   ∂ψ/∂y_i      = 2n w_i s_k^{n−1} y_i,                                    w_i = 1/c_i²
//   ∂²ψ/∂y_i∂y_j = 2n w_i (s_k^{n−1} δ_ij + 2(n − 1) s_k^{n−2} w_j y_i y_j)  (i, j in block k)
// Internal to the probe solve (implicit_signed_distance.cc); header-only so that it inlines there.
#ifndef TAXEL_CORE_GEOMETRY_SUPERQUADRIC_POLYNOMIAL_H_
#define TAXEL_CORE_GEOMETRY_SUPERQUADRIC_POLYNOMIAL_H_

#include <algorithm>
#include <cmath>

#include "Eigen/Core"
#include "core/geometry/implicit_shape.h"

namespace taxel::geometry::internal {

/// x^(1/2n) for x ≥ 0: repeated square roots when n is a power of two (n = 1, 2, 4, ...; several
/// times cheaper than std::pow), else std::pow.
inline double Root2n(double x, int n) {
  if ((n & (n - 1)) != 0) return std::pow(x, 0.5 / n);
  double r = std::sqrt(x);
  for (int k = n; k > 1; k >>= 1) r = std::sqrt(r);
  return r;
}

/// ψ of an SE (kCylinder false) or SEC (true) in scaled coordinates y' = y/L for a length L
/// (metres): derivatives are with respect to y'. Value type, no allocation.
template <bool kCylinder>
class SuperquadricPolynomial {
 public:
  /// ∇'²ψ: its diagonal and its y–z entry (0 for SE).
  struct Hessian {
    Eigen::Vector3d diagonal;
    double yz;
  };

  /// @pre shape.kind() is kSuperellipticCylinder when kCylinder, else kSuperellipsoid; length > 0.
  SuperquadricPolynomial(const ImplicitShape& shape, double length)
      : n_(shape.exponent()),
        eps_(shape.epsilon()),
        floor_(shape.superquadric_floor()),
        two_n1_(2.0 * (n_ - 1)),
        w_((length * length) * shape.inverse_squared_sizes()),
        gw_((2.0 * n_) * w_) {}

  int exponent() const { return n_; }

  /// S = ψ + 1 = Σ_k s_kⁿ + floor (> 0, without the cancellation of ψ near the origin) at y', its
  /// gradient ∇'ψ into *g, and when h is non-null ∇'²ψ into *h. *max_s, when non-null, receives
  /// max_k s_k (S ≤ 3·max_s^n: a caller can tell when powers could overflow).
  double Sum(const Eigen::Vector3d& y, Eigen::Vector3d* g, Hessian* h, double* max_s = nullptr) const {
    const double yv[3] = {y[0], y[1], y[2]};
    double gv[3], hv[3], yz = 0;
    double sum;
    Lanes<double>(yv, gv, h != nullptr ? hv : nullptr, &yz, max_s, &sum);
    *g = Eigen::Vector3d(gv[0], gv[1], gv[2]);
    if (h != nullptr) h->diagonal = Eigen::Vector3d(hv[0], hv[1], hv[2]), h->yz = yz;
    return sum;
  }

  /// Sum on one value (T = double) or on a vector of lanes (a GCC vector of doubles: the same
  /// operations lane by lane, hence the same bits), S into *sum: y, g and h_diagonal are the three
  /// coordinates, *h_yz (only when h_diagonal is non-null) the y–z entry. Inlined everywhere, so
  /// that a vector instantiation compiles with its caller's instruction set; it calls no function
  /// and takes and gives vectors by pointer only (a vector passed by value to a function compiled
  /// without AVX would change the ABI).
  template <class T>
  __attribute__((always_inline)) inline void Lanes(const T* y, T* g, T* h_diagonal, T* h_yz, T* max_s, T* sum) const {
    const T yy[3] = {w_[0] * y[0] * y[0], w_[1] * y[1] * y[1], w_[2] * y[2] * y[2]};  // (y_i/c_i)²
    // SEC: block 1 holds y and z (s[2] = s[1]).
    const T s[3] = {yy[0] + eps_, kCylinder ? yy[1] + yy[2] + eps_ : yy[1] + eps_,
                    kCylinder ? yy[1] + yy[2] + eps_ : yy[2] + eps_};
    if (max_s != nullptr) {  // std::max(s0, std::max(s1, s2)), lane by lane
      const T m12 = s[1] < s[2] ? s[2] : s[1];
      *max_s = s[0] < m12 ? m12 : s[0];
    }
    // s^{n−2} of every block (n ≤ 4 unrolled, else one square-and-multiply loop for the three);
    // n = 1 has s^{n−1} = 1 and no s^{n−2} term (it comes times n − 1).
    T pow_n2[3], pow_n1[3];
    const T zero = T{}, one = T{} + 1.0;  // 0 and 1 in every lane
    switch (n_) {
      case 1:
        for (int i = 0; i < 3; ++i) pow_n2[i] = zero, pow_n1[i] = one;
        break;
      case 2:
        for (int i = 0; i < 3; ++i) pow_n2[i] = one, pow_n1[i] = s[i];
        break;
      case 3:
        for (int i = 0; i < 3; ++i) pow_n2[i] = s[i], pow_n1[i] = s[i] * s[i];
        break;
      case 4:
        for (int i = 0; i < 3; ++i) pow_n2[i] = s[i] * s[i], pow_n1[i] = pow_n2[i] * s[i];
        break;
      default: {
        T x[3] = {s[0], s[1], s[2]};
        for (int i = 0; i < 3; ++i) pow_n2[i] = one;
        for (int k = n_ - 2; k > 0; k >>= 1) {
          if (k & 1) {
            for (int i = 0; i < 3; ++i) pow_n2[i] *= x[i];
          }
          for (int i = 0; i < 3; ++i) x[i] *= x[i];
        }
        for (int i = 0; i < 3; ++i) pow_n1[i] = pow_n2[i] * s[i];
      }
    }
    for (int i = 0; i < 3; ++i) g[i] = gw_[i] * pow_n1[i] * y[i];
    if (h_diagonal != nullptr) {
      for (int i = 0; i < 3; ++i) h_diagonal[i] = gw_[i] * (pow_n1[i] + two_n1_ * pow_n2[i] * yy[i]);
      *h_yz = kCylinder ? gw_[1] * two_n1_ * pow_n2[1] * w_[2] * y[1] * y[2] : zero;
    }
    *sum = pow_n1[0] * s[0] + pow_n1[1] * s[1] + (kCylinder ? zero : pow_n1[2] * s[2]) + floor_;
  }

  /// H·x for a Hessian from Sum.
  static Eigen::Vector3d Times(const Hessian& h, const Eigen::Vector3d& x) {
    return {h.diagonal[0] * x[0], h.diagonal[1] * x[1] + h.yz * x[2], h.diagonal[2] * x[2] + h.yz * x[1]};
  }
  static Eigen::Matrix3d Dense(const Hessian& h) {
    Eigen::Matrix3d d = h.diagonal.asDiagonal();
    d(1, 2) = d(2, 1) = h.yz;
    return d;
  }

 private:
  int n_;
  double eps_, floor_;
  double two_n1_;       // 2(n − 1)
  Eigen::Vector3d w_;   // (L/c_i)²
  Eigen::Vector3d gw_;  // 2n·w_i
};

}  // namespace taxel::geometry::internal

#endif  // TAXEL_CORE_GEOMETRY_SUPERQUADRIC_POLYNOMIAL_H_
