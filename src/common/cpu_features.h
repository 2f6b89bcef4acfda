// CPU feature checks shared by the kernels' dispatch: __builtin_cpu_supports asked once per
// process (on first use, so after libgcc's start-up initialisation), and the checks it
// cannot make on every compiler we build with (clang 14, Debian 12's, used by the fuzz
// and thread-safety builds, has no "f16c").
#ifndef INFERA_COMMON_CPU_FEATURES_H_
#define INFERA_COMMON_CPU_FEATURES_H_

#include <cpuid.h>

namespace infera {

// CPUID leaf 1, ECX bit 29. Every CPU with AVX2 has it in practice; checked anyway. The
// OS-support (XSAVE) side is AVX's, which __builtin_cpu_supports("avx2") already checks.
inline bool CpuHasF16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
}

// AVX-512 Foundation (what the fp32 / fp16 AVX-512 kernels need).
inline bool CpuHasAvx512f() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

// AVX2 with FMA (the AVX2 kernels all use both).
inline bool CpuHasAvx2Fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

}  // namespace infera

#endif  // INFERA_COMMON_CPU_FEATURES_H_
