// SceneSpecs written by hand in JSON: the protobuf JSON mapping of taxel.v1.SceneSpec, in which a
// Tensor's `data` may also be a plain (nested) list of numbers instead of base64 bytes.
//
//   "probe_local_pos": {"dtype": "FLOAT64", "shape": [2, 3], "data": [[0, 0, 0], [0.01, 0, 0]]}
//   "probe_radius":    {"data": 0.002}                       // a scalar; dtype FLOAT64 by default
//   "heights":         {"dtype": "FLOAT32", "data": [[0, 0.1], [0.2, 0.3]]}   // shape [2, 2]
//
// A list's nesting gives the shape when "shape" is absent; with "shape" the list may also be flat
// (then it must hold prod(shape) numbers). dtype defaults to FLOAT64; INT32 and BOOL lists must
// hold integers (BOOL: 0 or 1, or true/false). Base64 `data` strings pass through unchanged.
#ifndef TAXEL_CLIENT_CPP_TAXEL_SPEC_JSON_H_
#define TAXEL_CLIENT_CPP_TAXEL_SPEC_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/struct.pb.h"
#include "taxel/v1/scene.pb.h"

namespace taxel {

/// Parses `json` into a SceneSpec. INVALID_ARGUMENT naming the JSON path of the offending value
/// ("sensors[0].probe_local_pos.data[1][2]: expected a number, got \"a\"") or protobuf's message
/// for anything else that is not a SceneSpec.
absl::StatusOr<v1::SceneSpec> SceneSpecFromJson(const std::string& json);

/// As SceneSpecFromJson, for any message that holds Tensors (e.g. a StepRequest).
absl::Status MessageFromJson(const std::string& json, google::protobuf::Message* message);

/// As MessageFromJson, from JSON already parsed into a google.protobuf.Value (e.g. one member of
/// a larger document); `tree` is rewritten in place.
absl::Status MessageFromJsonValue(google::protobuf::Value* tree, google::protobuf::Message* message);

}  // namespace taxel

#endif  // TAXEL_CLIENT_CPP_TAXEL_SPEC_JSON_H_
