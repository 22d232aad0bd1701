// Run-time CPU feature checks for the code paths compiled with __attribute__((target("avx2"))) or
// target("avx512f").
#ifndef TAXEL_CORE_COMMON_CPU_FEATURES_H_
#define TAXEL_CORE_COMMON_CPU_FEATURES_H_

namespace taxel {

/// True when the CPU runs AVX2 and POPCNT (every AVX2 CPU has both); checked once per process.
/// Always false off x86-64, where those paths are not compiled.
inline bool CpuHasAvx2() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
  return has;
#else
  return false;
#endif
}

/// True when the CPU runs AVX2 and FMA (the normals' AVX2 path, core/common/rng.cc); checked once
/// per process. Always false off x86-64.
inline bool CpuHasAvx2Fma() {
#if defined(__x86_64__)
  static const bool has = CpuHasAvx2() && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

/// True when the CPU and the OS run AVX-512 F (the 512-bit registers and their mask registers);
/// checked once per process. Always false off x86-64.
inline bool CpuHasAvx512() {
#if defined(__x86_64__)
  static const bool has = CpuHasAvx2() && __builtin_cpu_supports("avx512f");
  return has;
#else
  return false;
#endif
}

}  // namespace taxel

#endif  // TAXEL_CORE_COMMON_CPU_FEATURES_H_
