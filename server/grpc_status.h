// The one place where absl::Status becomes grpc::Status.
#ifndef TAXEL_SERVER_GRPC_STATUS_H_
#define TAXEL_SERVER_GRPC_STATUS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/status.h"

namespace taxel::server {

/// Maps the code one to one and keeps the message. INVALID_ARGUMENT and OUT_OF_RANGE also carry a
/// google.rpc.Status with a google.rpc.BadRequest detail: Taxel's messages have the form
/// "<field path>: <what was expected>", which becomes one field violation. `field_prefix` is
/// prepended to the field path (e.g. "spec." for CreateScene, whose spec is a sub-message).
grpc::Status ToGrpcStatus(const absl::Status& status, absl::string_view field_prefix = "");

/// `status` with `prefix` prepended to its message when the message names a field (the field path
/// of a sub-message, e.g. "spec." for CreateScene); other statuses unchanged.
absl::Status PrefixFieldPath(const absl::Status& status, absl::string_view prefix);

/// `status` with its message cut to at most 1024 bytes (marked "... (N bytes)"), so that an
/// error that quotes a request's value (a 100 kB scene name) still fits the client's metadata
/// limit. The details (BadRequest) are kept.
grpc::Status BoundedStatus(const grpc::Status& status);

/// Splits "<field>: <description>" (the field is the text before the first ": " when it contains
/// no spaces); returns false when the message has no field.
bool SplitFieldMessage(absl::string_view message, absl::string_view* field, absl::string_view* description);

}  // namespace taxel::server

#endif  // TAXEL_SERVER_GRPC_STATUS_H_
