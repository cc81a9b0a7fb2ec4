// Run-time choice of the AVX-512 kernels of the CPU library (screen lookups in screen_format.h, the
// resize in preprocess.cpp, the TIA object overlay in tia_overlay.h). The library is built for baseline
// x86-64 so that one build runs on any x86-64 machine; the AVX-512 kernels are compiled with a per-function
// target attribute and used only when the CPU running them has AVX-512 F, BW, VL and VBMI. They compute the
// same bytes as the scalar code (table lookups and bitmaps; the same float32 multiplies and adds, in the
// same order, without contraction):
// tests/gpu_env/test_simd.py checks both paths against each other in one run.
//
// GPU_ENV_NO_SIMD=1 in the environment (read once, when the library first asks) keeps the scalar code.
#pragma once

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#define GPU_ENV_HAVE_AVX512 1
#include <immintrin.h>
// The instruction sets the AVX-512 kernels use; every function that takes or returns a 512-bit value
// carries it (and is inlined only into functions that do).
#define GPU_ENV_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi")))
#else
#define GPU_ENV_HAVE_AVX512 0
#endif

namespace gpu_env_native {

// Whether the AVX-512 kernels run in this process.
inline bool use_avx512() {
#if GPU_ENV_HAVE_AVX512
  static const bool on = [] {
    const char* off = std::getenv("GPU_ENV_NO_SIMD");
    if (off != nullptr && off[0] != '\0' && std::strcmp(off, "0") != 0) return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi");
  }();
  return on;
#else
  return false;
#endif
}

}  // namespace gpu_env_native
