// The one place where absl::Status becomes grpc::Status.
#ifndef TAXEL_SERVER_GRPC_STATUS_H_
#define TAXEL_SERVER_GRPC_STATUS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/status.h"

namespace taxel::server {

/// Maps the code one to one and keeps the message. An INVALID_ARGUMENT or OUT_OF_RANGE status
/// that carries a field path (FieldError, core/common/field_error.h) also carries a
/// google.rpc.Status with a google.rpc.BadRequest detail of one field violation: the path, and
/// the message after "<path>: " as its description. A status without the path gets no detail,
/// whatever its message looks like: the message text is never parsed. `field_prefix` is
/// prepended to the path and the message of a status that carries a path (PrefixField, e.g.
/// "spec." for a field of CreateScene's sub-message).
grpc::Status ToGrpcStatus(const absl::Status& status, absl::string_view field_prefix = "");

/// `status` with its message cut to at most 1024 bytes (marked "... (N bytes)"), so that an
/// error that quotes a request's value (a 100 kB scene name) still fits the client's metadata
/// limit. The details (BadRequest) are kept.
grpc::Status BoundedStatus(const grpc::Status& status);

}  // namespace taxel::server

#endif  // TAXEL_SERVER_GRPC_STATUS_H_
