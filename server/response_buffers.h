// Memory for large responses that gRPC sends without copying: a grpc::Slice over a buffer that
// returns to a process-wide pool when gRPC releases the slice (after the bytes are written to the
// socket). Step after step, a large response is written into memory that is already mapped: a
// fresh 12.6 MB allocation costs ~3000 page faults (~4 ms on the development VM, ten times the
// copy itself).
#ifndef TAXEL_SERVER_RESPONSE_BUFFERS_H_
#define TAXEL_SERVER_RESPONSE_BUFFERS_H_

#include <cstddef>

#include "grpcpp/support/slice.h"

namespace taxel::server {

/// Responses below this size get an ordinary gRPC slice (malloc, no pooling).
constexpr size_t kMinPooledResponseBytes = 256 << 10;
/// Idle pooled buffers are freed beyond this total (bytes).
constexpr size_t kMaxIdleResponseBytes = 256 << 20;

/// A slice of exactly `size` bytes; `*data` points at them, writable until the slice is handed to
/// gRPC. Thread-safe. A pooled buffer is reused for a later request of at most its capacity and
/// at least half of it.
grpc::Slice NewResponseSlice(size_t size, char** data);

/// Bytes held by idle pooled buffers (for tests and metrics).
size_t IdleResponseBytes();

}  // namespace taxel::server

#endif  // TAXEL_SERVER_RESPONSE_BUFFERS_H_
