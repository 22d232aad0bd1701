// What the AVX-512 code paths share. They are compiled with a target attribute in files built
// for baseline x86-64 and run only where CpuHasAvx512() (core/common/cpu_features.h) says so.
#ifndef TAXEL_CORE_COMMON_AVX512_H_
#define TAXEL_CORE_COMMON_AVX512_H_

#if defined(__x86_64__)
#include <immintrin.h>

/// A function compiled for AVX-512 F.
#define TAXEL_AVX512 __attribute__((target("avx512f")))

/// GCC 12's AVX-512 intrinsic headers start operations from a self-initialised "undefined"
/// register, which -Wuninitialized and -Wmaybe-uninitialized report at every use (false
/// positives): silenced from TAXEL_AVX512_BEGIN to TAXEL_AVX512_END.
#if defined(__clang__)
#define TAXEL_AVX512_BEGIN _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#else
#define TAXEL_AVX512_BEGIN                                                                   \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"") \
      _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#endif
#define TAXEL_AVX512_END _Pragma("GCC diagnostic pop")

namespace taxel {

/// Round to nearest, no exceptions: the rounding of the explicitly rounded forms
/// (_mm512_add_round_ps, ...). The compiler never contracts those into fused multiply-adds, so each
/// lane rounds as the SSE code it stands in for does.
inline constexpr int kAvx512RoundNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

}  // namespace taxel
#endif  // __x86_64__

#endif  // TAXEL_CORE_COMMON_AVX512_H_
