// TSan builds only (cmake/Sanitizers.cmake links this into every executable): makes the
// absl::Mutex and absl::CondVar of Debian's uninstrumented Abseil visible to ThreadSanitizer.
//
// Debian's gRPC guards its queues, call state and thread pools with absl::Mutex, whose lock and
// unlock are atomics and futex calls inside libabsl_synchronization.so that TSan never sees. It
// then reports every hand-off between gRPC's threads (a call's state written by one, read by the
// next that takes the mutex) as a race, thousands per test. Abseil carries TSan annotations of its
// own, compiled in only when Abseil itself is built with -fsanitize=thread.
//
// The definitions below interpose the exported functions that gRPC calls (the executable's
// definition wins over the shared library's for every caller, libgrpc included), do what the
// annotated Abseil would, and call the real function through dlsym(RTLD_NEXT):
//   Lock, successful TryLock, return of a CondVar wait   -> __tsan_acquire(mutex)
//   Unlock, start of a CondVar wait (it unlocks)         -> __tsan_release(mutex)
// Reader locks are not interposed: Debian's gRPC 1.51 does not import them (`nm -D --undefined-only
// libgrpc.so.29 libgpr.so.29 libgrpc++.so.1.51 | c++filt | grep absl`), and neither does our code.
// The annotations only add happens-before edges, so they can hide a race but never invent one.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/base/options.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include <sanitizer/tsan_interface.h>

#if !ABSL_OPTION_USE_INLINE_NAMESPACE
#error "the mangled names below assume Abseil's inline namespace (Debian: absl::debian3)"
#endif

namespace {

#define TAXEL_TSAN_STR2(x) #x
#define TAXEL_TSAN_STR(x) TAXEL_TSAN_STR2(x)

// The next definition (libabsl_synchronization.so's) of the function whose Itanium-mangled name is
// _ZN4absl<len><inline namespace><rest>; aborts when there is none.
template <typename Fn>
Fn Real(const char* rest) {
  const std::string ns = TAXEL_TSAN_STR(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  const std::string name = "_ZN4absl" + std::to_string(ns.size()) + ns + rest;
  void* fn = dlsym(RTLD_NEXT, name.c_str());
  if (fn == nullptr) {
    std::fprintf(stderr, "tsan_absl_sync: %s not found after the executable: %s\n", name.c_str(), dlerror());
    std::abort();
  }
  return reinterpret_cast<Fn>(fn);
}

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

void Mutex::Lock() {
  static const auto real = Real<void (*)(Mutex*)>("5Mutex4LockEv");
  real(this);
  __tsan_acquire(this);
}

bool Mutex::TryLock() {
  static const auto real = Real<bool (*)(Mutex*)>("5Mutex7TryLockEv");
  const bool locked = real(this);
  if (locked) __tsan_acquire(this);
  return locked;
}

void Mutex::Unlock() {
  static const auto real = Real<void (*)(Mutex*)>("5Mutex6UnlockEv");
  __tsan_release(this);
  real(this);
}

void CondVar::Wait(Mutex* mu) {
  static const auto real = Real<void (*)(CondVar*, Mutex*)>("7CondVar4WaitEPNS0_5MutexE");
  __tsan_release(mu);
  real(this, mu);
  __tsan_acquire(mu);
}

bool CondVar::WaitWithTimeout(Mutex* mu, Duration timeout) {
  static const auto real =
      Real<bool (*)(CondVar*, Mutex*, Duration)>("7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE");
  __tsan_release(mu);
  const bool timed_out = real(this, mu, timeout);
  __tsan_acquire(mu);
  return timed_out;
}

bool CondVar::WaitWithDeadline(Mutex* mu, Time deadline) {
  static const auto real = Real<bool (*)(CondVar*, Mutex*, Time)>("7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  __tsan_release(mu);
  const bool timed_out = real(this, mu, deadline);
  __tsan_acquire(mu);
  return timed_out;
}

ABSL_NAMESPACE_END
}  // namespace absl
