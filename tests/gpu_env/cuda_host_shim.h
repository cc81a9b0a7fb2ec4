// Test-only: lets core/cuda/kernels.h compile as ordinary C++ so its kernels can run on the CPU
// (tests/gpu_env/test_cuda_host.py). This checks the kernels' logic and the backend's plumbing;
// it says nothing about CUDA itself (no warps, no device memory, no NVRTC).
#pragma once
#include <math.h>
#include <stdint.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline

struct ShimDim3 {
  unsigned x, y, z;
};
static ShimDim3 blockIdx = {0, 0, 0}, threadIdx = {0, 0, 0}, blockDim = {1, 1, 1}, gridDim = {1, 1, 1};

struct uint4 {
  uint32_t x, y, z, w;
};
inline uint4 make_uint4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return uint4{a, b, c, d}; }
inline float __fmul_rn(float a, float b) {
  volatile float r = a * b;
  return r;
}
inline float __fadd_rn(float a, float b) {
  volatile float r = a + b;
  return r;
}

extern "C" void gpu_env_shim_set_thread(unsigned block, unsigned thread, unsigned block_dim, unsigned grid_dim) {
  blockIdx.x = block;
  threadIdx.x = thread;
  blockDim.x = block_dim;
  gridDim.x = grid_dim;
}
