// Errors that name the request field they are about. The field path travels as data — a payload
// of the absl::Status — next to the message "<field>: <description>", so that the server's one
// mapping to gRPC (server/grpc_status.h) builds a google.rpc.BadRequest field violation, and a
// caller that decoded a sub-message prefixes the path, without reading the message text back.
#ifndef TAXEL_CORE_COMMON_FIELD_ERROR_H_
#define TAXEL_CORE_COMMON_FIELD_ERROR_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace taxel {

/// The type URL under which a status carries its field path (the payload is the path's bytes).
inline constexpr absl::string_view kFieldPathTypeUrl = "type.taxel/field-path";

/// A status of `code` about the request field `field` (a path as the request spells it:
/// "entities[1].links[0].shapes[2].sphere.radius", "poses[3][1]"): its message is exactly
/// "<field>: <description>" and its field path payload is `field`.
/// `description` says what was expected and what came instead ("expected a finite value > 0,
/// got -1"). An empty `field` gives a plain status whose message is `description`, without the
/// payload.
/// @pre code != absl::StatusCode::kOk.
absl::Status FieldError(absl::StatusCode code, absl::string_view field, absl::string_view description);

/// FieldError(absl::StatusCode::kInvalidArgument, field, description): the common case.
absl::Status InvalidFieldError(absl::string_view field, absl::string_view description);

/// The field path `status` carries, or nullopt when it names no field (OK, or made without
/// FieldError). Never parses the message.
std::optional<std::string> FieldOf(const absl::Status& status);

/// The message of `status` after "<field>: " when it carries a field path (FieldError's
/// `description`), else the whole message.
absl::string_view DescriptionOf(const absl::Status& status);

/// `status` with `prefix` prepended to both its field path and its message (the path of the
/// sub-message it was decoded from, e.g. "spec." for CreateScene's SceneSpec); the code and any
/// other payloads stay. A status without a field path, an OK status or an empty prefix is
/// returned unchanged.
absl::Status PrefixField(const absl::Status& status, absl::string_view prefix);

}  // namespace taxel

#endif  // TAXEL_CORE_COMMON_FIELD_ERROR_H_
