// ABI version of the gpu_env CPU library; gpu_env.binding refuses a library built from other sources.
#include "hd.h"
#include "simd.h"

#define GPU_ENV_ABI_VERSION 6

extern "C" __attribute__((visibility("default"))) int gpu_env_abi_version() { return GPU_ENV_ABI_VERSION; }

// 1 when the AVX-512 kernels of simd.h run in this process (the CPU has them and GPU_ENV_NO_SIMD is unset).
extern "C" __attribute__((visibility("default"))) int gpu_env_simd_kernels() {
  return gpu_env_native::use_avx512() ? 1 : 0;
}
