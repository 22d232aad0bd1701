#include "core/geometry/heightfield.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/common/field_error.h"
#include "core/geometry/closest_point_triangle.h"

namespace taxel::geometry {

absl::StatusOr<std::shared_ptr<const Heightfield>> Heightfield::Create(int rows, int cols, double dx, double dy,
                                                                       std::vector<double> heights,
                                                                       absl::string_view field) {
  if (rows < 2 || cols < 2) {
    return InvalidFieldError(field, absl::StrCat("expected at least 2x2 samples, got ", rows, "x", cols));
  }
  if (!(dx > 0) || !(dy > 0) || !std::isfinite(dx) || !std::isfinite(dy)) {
    return InvalidFieldError(field, absl::StrCat("sample spacing must be finite and > 0, got dx=", dx, " dy=", dy));
  }
  if (heights.size() != static_cast<size_t>(rows) * cols) {
    return InvalidFieldError(absl::StrCat(field, ".heights"),
                             absl::StrCat("expected ", rows, "*", cols, "=", static_cast<int64_t>(rows) * cols,
                                          " values, got ", heights.size()));
  }
  for (size_t k = 0; k < heights.size(); ++k) {
    if (!std::isfinite(heights[k])) {
      return InvalidFieldError(absl::StrCat(field, ".heights[", k, "]"), "expected a finite number");
    }
  }
  std::shared_ptr<Heightfield> hf(new Heightfield());
  hf->rows_ = rows, hf->cols_ = cols, hf->dx_ = dx, hf->dy_ = dy;
  hf->x0_ = -0.5 * (cols - 1) * dx;
  hf->y0_ = -0.5 * (rows - 1) * dy;
  hf->heights_ = std::move(heights);
  const int ncx = cols - 1, ncy = rows - 1;
  hf->cell_min_.resize(static_cast<size_t>(ncx) * ncy);
  hf->cell_max_.resize(hf->cell_min_.size());
  double top = -INFINITY;
  for (int i = 0; i < ncy; ++i) {
    for (int j = 0; j < ncx; ++j) {
      const double a = hf->height(i, j), b = hf->height(i, j + 1), c = hf->height(i + 1, j),
                   d = hf->height(i + 1, j + 1);
      hf->cell_min_[static_cast<size_t>(i) * ncx + j] = std::min({a, b, c, d});
      hf->cell_max_[static_cast<size_t>(i) * ncx + j] = std::max({a, b, c, d});
      top = std::max({top, a, b, c, d});
    }
  }
  hf->bounds_.lo = Eigen::Vector3d(hf->x0_, hf->y0_, -INFINITY);
  hf->bounds_.hi = Eigen::Vector3d(-hf->x0_, -hf->y0_, top);
  return std::shared_ptr<const Heightfield>(std::move(hf));
}

double Heightfield::HeightAt(double x, double y) const {
  const double u = std::clamp((x - x0_) / dx_, 0.0, static_cast<double>(cols_ - 1));
  const double v = std::clamp((y - y0_) / dy_, 0.0, static_cast<double>(rows_ - 1));
  const int j = std::min(static_cast<int>(u), cols_ - 2);
  const int i = std::min(static_cast<int>(v), rows_ - 2);
  const double fu = u - j, fv = v - i;
  const double h00 = height(i, j), h01 = height(i, j + 1), h10 = height(i + 1, j), h11 = height(i + 1, j + 1);
  if (fu >= fv) return h00 + fu * (h01 - h00) + fv * (h11 - h01);  // triangle (i,j),(i,j+1),(i+1,j+1)
  return h00 + fv * (h10 - h00) + fu * (h11 - h10);                // triangle (i,j),(i+1,j+1),(i+1,j)
}

SignedDistanceResult Heightfield::Query(const Eigen::Vector3d& p, double max_distance) const {
  const double x1 = -x0_, y1 = -y0_;
  const bool in_footprint = p.x() >= x0_ && p.x() <= x1 && p.y() >= y0_ && p.y() <= y1;
  const double cx = std::clamp(p.x(), x0_, x1), cy = std::clamp(p.y(), y0_, y1);
  const Eigen::Vector3d on_surface(cx, cy, HeightAt(cx, cy));
  const bool inside = in_footprint && p.z() < on_surface.z();
  // A surface point we already know bounds |sd| from above.
  const double upper = (p - on_surface).norm();
  const double limit = inside ? upper : std::min(upper, max_distance);
  // A little slack (relative 1e-12, absolute 1e-12 of a cell) so that rounding cannot lose the
  // triangle under the projection point itself, whose d2 may come out a few ulps above upper²
  // (a finite answer may exceed max_distance; it is still exact).
  const double slack = 1e-12 * std::max(dx_, dy_);
  double best2 = limit * limit * (1 + 1e-12) + slack * slack;
  bool found = false;
  SignedDistanceResult r;

  // Side walls: (x0 or x1, clamp(y), z) and (clamp(x), y0 or y1, z) lie on the solid's boundary
  // when z is at or below the edge profile there.
  const Eigen::Vector3d wall_points[4] = {{x0_, cy, p.z()}, {x1, cy, p.z()}, {cx, y0_, p.z()}, {cx, y1, p.z()}};
  const Eigen::Vector3d wall_normals[4] = {-Eigen::Vector3d::UnitX(), Eigen::Vector3d::UnitX(),
                                           -Eigen::Vector3d::UnitY(), Eigen::Vector3d::UnitY()};
  for (int w = 0; w < 4; ++w) {
    const Eigen::Vector3d& c = wall_points[w];
    if (c.z() > HeightAt(c.x(), c.y())) continue;
    const double d2 = (p - c).squaredNorm();
    if (d2 < best2 || (!found && d2 <= best2)) {
      best2 = d2, found = true;
      r.closest = c, r.normal = wall_normals[w], r.triangle = -1, r.feature = TriangleFeature::kFace;
    }
  }

  // Top surface: the cells whose footprint is within the current bound.
  const double reach = std::sqrt(best2);
  const int ncx = cols_ - 1, ncy = rows_ - 1;
  // Clamped in double before the conversion: for a far point the cell index overflows int.
  auto first_cell = [](double u, int n) { return static_cast<int>(std::clamp(std::floor(u), 0.0, double(n))); };
  auto last_cell = [](double u, int n) { return static_cast<int>(std::clamp(std::floor(u), -1.0, double(n - 1))); };
  const int j0 = first_cell((p.x() - reach - x0_) / dx_, ncx);
  const int j1 = last_cell((p.x() + reach - x0_) / dx_, ncx);
  const int i0 = first_cell((p.y() - reach - y0_) / dy_, ncy);
  const int i1 = last_cell((p.y() + reach - y0_) / dy_, ncy);
  for (int i = i0; i <= i1; ++i) {
    for (int j = j0; j <= j1; ++j) {
      const size_t cell = static_cast<size_t>(i) * ncx + j;
      const double cx0 = x0_ + j * dx_, cy0 = y0_ + i * dy_;
      const double ex = std::max({cx0 - p.x(), p.x() - (cx0 + dx_), 0.0});
      const double ey = std::max({cy0 - p.y(), p.y() - (cy0 + dy_), 0.0});
      const double ez = std::max({cell_min_[cell] - p.z(), p.z() - cell_max_[cell], 0.0});
      if (ex * ex + ey * ey + ez * ez > best2) continue;
      const Eigen::Vector3d s00 = Sample(i, j), s01 = Sample(i, j + 1), s10 = Sample(i + 1, j),
                            s11 = Sample(i + 1, j + 1);
      const Eigen::Vector3d* tris[2][3] = {{&s00, &s01, &s11}, {&s00, &s11, &s10}};
      for (int h = 0; h < 2; ++h) {
        TriangleFeature f;
        const Eigen::Vector3d c = ClosestPointOnTriangle(p, *tris[h][0], *tris[h][1], *tris[h][2], &f);
        const double d2 = (p - c).squaredNorm();
        if (d2 < best2 || (!found && d2 <= best2)) {
          best2 = d2, found = true;
          r.closest = c;
          r.normal = (*tris[h][1] - *tris[h][0]).cross(*tris[h][2] - *tris[h][0]).normalized();
          r.triangle = static_cast<int32_t>(2 * cell + h);
          r.feature = f;
        }
      }
    }
  }
  if (!found) {
    // Nothing nearer than the projection point: rounding can lose that point itself (its own
    // triangle's d2 may come out a few ulps above upper²), and it is on the surface. Outside,
    // it answers only when it is within reach.
    if (!inside && !(upper <= max_distance)) return SignedDistanceResult();  // nothing within reach
    best2 = upper * upper;
    r.closest = on_surface;
    r.normal = Eigen::Vector3d::UnitZ();
  }
  const double d = std::sqrt(best2);
  r.distance = inside ? -d : d;
  if (d > 1e-12 * std::max(dx_, dy_)) r.normal = (p - r.closest) / r.distance;
  return r;
}

}  // namespace taxel::geometry
