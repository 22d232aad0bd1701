// Hand-offs through the uninstrumented libgrpc, made visible to ThreadSanitizer. An object that
// one thread builds and gRPC then calls back on another thread is ordered by libgrpc's own
// synchronisation, which TSan cannot see; these two calls state that order (no-ops outside TSan).
#ifndef TAXEL_SERVER_TSAN_HANDOFF_H_
#define TAXEL_SERVER_TSAN_HANDOFF_H_

#if defined(__SANITIZE_THREAD__)
#define TAXEL_TSAN_HANDOFF 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TAXEL_TSAN_HANDOFF 1
#endif
#endif

#ifdef TAXEL_TSAN_HANDOFF
#include <sanitizer/tsan_interface.h>
#endif

namespace taxel::server {

/// Call before handing `object` to gRPC (the operation whose callbacks will use it).
inline void PublishToGrpc(void* object) {
#ifdef TAXEL_TSAN_HANDOFF
  __tsan_release(object);
#else
  (void)object;
#endif
}

/// Call first in each gRPC callback on `object`.
inline void ReceiveFromGrpc(void* object) {
#ifdef TAXEL_TSAN_HANDOFF
  __tsan_acquire(object);
#else
  (void)object;
#endif
}

}  // namespace taxel::server

#endif  // TAXEL_SERVER_TSAN_HANDOFF_H_
