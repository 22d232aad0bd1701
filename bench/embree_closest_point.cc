#include "bench/embree_closest_point.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/common/check.h"
#include "core/geometry/closest_point_triangle.h"

namespace taxel::bench {
namespace {

// What one rtcPointQuery call carries through userPtr.
struct QueryState {
  Eigen::Vector3d p;  // the query point in double (Embree only sees float)
  const Eigen::Vector3d* triangle_vertices;
  double best_d2;
  bool found;
  int32_t best_triangle;
  Eigen::Vector3d best_point;
  int64_t callbacks;
};

// Smallest float ≥ x (x ≥ 0).
float RoundUpToFloat(double x) {
  const float f = static_cast<float>(x);
  return static_cast<double>(f) >= x ? f : std::nextafter(f, INFINITY);
}

// Called by Embree for every triangle whose leaf the query sphere reaches.
bool ClosestPointCallback(RTCPointQueryFunctionArguments* args) {
  QueryState& s = *static_cast<QueryState*>(args->userPtr);
  ++s.callbacks;
  const Eigen::Vector3d* v = s.triangle_vertices + 3 * static_cast<size_t>(args->primID);
  geometry::TriangleFeature feature;
  const Eigen::Vector3d c = geometry::ClosestPointOnTriangle(s.p, v[0], v[1], v[2], &feature);
  const double d2 = (s.p - c).squaredNorm();
  if (!(d2 < s.best_d2 || (!s.found && d2 <= s.best_d2))) return false;
  s.best_d2 = d2;
  s.found = true;
  s.best_triangle = static_cast<int32_t>(args->primID);
  s.best_point = c;
  // Shrink the search sphere so that Embree culls everything farther than this triangle.
  const float r = RoundUpToFloat(std::sqrt(d2));
  if (r >= args->query->radius) return false;
  args->query->radius = r;
  return true;
}

void CheckDevice(RTCDevice device, const char* what) {
  const RTCError err = rtcGetDeviceError(device);
  if (err != RTC_ERROR_NONE) {
    std::fprintf(stderr, "taxel-bench: Embree error %d after %s\n", static_cast<int>(err), what);
    std::abort();
  }
}

}  // namespace

EmbreeClosestPoint::EmbreeClosestPoint(const geometry::TriangleMesh& mesh) {
  device_ = rtcNewDevice(nullptr);
  TAXEL_CHECK(device_ != nullptr);
  scene_ = rtcNewScene(device_);
  RTCGeometry geom = rtcNewGeometry(device_, RTC_GEOMETRY_TYPE_TRIANGLE);
  auto* vb = static_cast<float*>(rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3,
                                                         3 * sizeof(float), mesh.num_vertices()));
  auto* ib = static_cast<unsigned*>(rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                                            3 * sizeof(unsigned), mesh.num_triangles()));
  CheckDevice(device_, "rtcSetNewGeometryBuffer");
  for (int i = 0; i < mesh.num_vertices(); ++i) {
    for (int k = 0; k < 3; ++k) vb[3 * i + k] = static_cast<float>(mesh.vertex(i)[k]);
  }
  triangle_vertices_.resize(3 * static_cast<size_t>(mesh.num_triangles()));
  for (int t = 0; t < mesh.num_triangles(); ++t) {
    for (int k = 0; k < 3; ++k) {
      ib[3 * t + k] = static_cast<unsigned>(mesh.triangle(t)[k]);
      triangle_vertices_[3 * t + k] = mesh.vertex(mesh.triangle(t)[k]);
    }
  }
  rtcCommitGeometry(geom);
  rtcAttachGeometry(scene_, geom);
  rtcReleaseGeometry(geom);
  rtcCommitScene(scene_);
  CheckDevice(device_, "rtcCommitScene");
}

EmbreeClosestPoint::~EmbreeClosestPoint() {
  rtcReleaseScene(scene_);
  rtcReleaseDevice(device_);
}

bool EmbreeClosestPoint::ClosestPoint(const Eigen::Vector3d& p, double max_distance, Result* out) const {
  QueryState s{p, triangle_vertices_.data(), max_distance * max_distance, false, -1, Eigen::Vector3d::Zero(), 0};
  RTCPointQuery query;
  query.x = static_cast<float>(p.x());
  query.y = static_cast<float>(p.y());
  query.z = static_cast<float>(p.z());
  query.time = 0.0f;
  query.radius = std::isinf(max_distance) ? INFINITY : RoundUpToFloat(max_distance);
  RTCPointQueryContext context;
  rtcInitPointQueryContext(&context);
  rtcPointQuery(scene_, &query, &context, ClosestPointCallback, &s);
  out->callbacks = s.callbacks;
  if (!s.found) return false;
  out->squared_distance = s.best_d2;
  out->point = s.best_point;
  out->triangle = s.best_triangle;
  return true;
}

}  // namespace taxel::bench
