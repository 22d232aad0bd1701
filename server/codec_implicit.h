// Codec of taxel.v1.Implicit (the smooth implicit shapes) ↔ scene::ImplicitSpec; used by the
// scene-spec codec for Shape.implicit. Decoding checks only what the wire's layout needs (counts of
// repeated fields); the parameters themselves are validated when the scene builds the shape
// (geometry::ImplicitShape's factories), with the same field paths.
#ifndef TAXEL_SERVER_CODEC_IMPLICIT_H_
#define TAXEL_SERVER_CODEC_IMPLICIT_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/scene/scene_spec.h"
#include "taxel/v1/service.pb.h"

namespace taxel::server::internal {

/// `field` is the path of the Implicit message ("...shapes[2].implicit"). Errors: no kind set, a
/// superellipsoid without 3 semi-axes, polytope normals not in triples, more than
/// geometry::kMaxPolytopePlanes planes, or not one offset per plane.
absl::StatusOr<scene::ImplicitSpec> DecodeImplicit(const v1::Implicit& s, const std::string& field);
void EncodeImplicit(const scene::ImplicitSpec& s, v1::Implicit* out);

}  // namespace taxel::server::internal

#endif  // TAXEL_SERVER_CODEC_IMPLICIT_H_
