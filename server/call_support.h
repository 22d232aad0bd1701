// What every call of the service shares on the transport side: parsing a raw request, the
// statuses of a call that is not run, and the handler boundary that no exception crosses.
#ifndef TAXEL_SERVER_CALL_SUPPORT_H_
#define TAXEL_SERVER_CALL_SUPPORT_H_

#include <chrono>
#include <exception>
#include <new>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/common/field_error.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "server/codec.h"
#include "server/log.h"

namespace taxel::server {

using Clock = std::chrono::steady_clock;

inline double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

/// The request queue is full.
inline grpc::Status Busy() {
  return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "server busy: the request queue is full; retry later");
}

/// The server is draining: the request was not run.
inline grpc::Status ShuttingDown() {
  return grpc::Status(grpc::StatusCode::UNAVAILABLE, "server is shutting down; the request was not run");
}

/// The last line of defence of "nothing on the request path takes the process down": every size
/// a request controls is reserved before it is allocated (core/common/memory_budget.h), so an
/// allocation failure here means the machine itself ran out of memory (RESOURCE_EXHAUSTED); any
/// other exception is a bug, reported as INTERNAL.
template <typename Fn>
absl::Status GuardAllocation(Fn fn) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    Log(LogLevel::kError, "out_of_memory", {});
    return absl::ResourceExhaustedError("server: out of memory while handling the request");
  } catch (const std::exception& e) {  // e.g. std::length_error from a container
    Log(LogLevel::kError, "internal_error", {{"what", e.what()}});
    return absl::InternalError("server: internal error while handling the request");
  }
}

/// Parses a request message from a raw call's bytes: INVALID_ARGUMENT when protobuf cannot parse
/// them (garbage, truncation, nesting deeper than protobuf's recursion limit) and when an enum
/// field holds a number its enum does not declare.
template <typename Request>
absl::Status ParseRequest(const grpc::ByteBuffer& bytes, Request* request) {
  grpc::ByteBuffer copy(bytes);  // shares the slices; Deserialize consumes its argument
  if (!grpc::SerializationTraits<Request>::Deserialize(&copy, request).ok()) {
    return InvalidFieldError(
        "request", absl::StrCat("not a valid ", Request::descriptor()->full_name(), " (protobuf parse failed)"));
  }
  return CheckEnumValues(*request);
}

/// ParseRequest, adding the time it took to `*seconds` (it counts as decoding, not queueing).
template <typename Request>
absl::Status ParseRequestTimed(const grpc::ByteBuffer& bytes, Request* request, double* seconds) {
  const auto start = Clock::now();
  absl::Status status = ParseRequest(bytes, request);
  *seconds += Seconds(start, Clock::now());
  return status;
}

}  // namespace taxel::server

#endif  // TAXEL_SERVER_CALL_SUPPORT_H_
