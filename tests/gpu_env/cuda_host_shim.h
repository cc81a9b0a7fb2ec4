// Test-only: lets core/cuda/kernels.h compile as ordinary C++ so its kernels can run on the CPU
// (tests/gpu_env/test_cuda_host.py). This checks the kernels' logic, their indexing under a real
// launch configuration and the backend's plumbing; it says nothing about CUDA itself (no warps, no
// device memory model, no NVRTC).
//
// Launches run concurrently: gpu_env_shim_launch_<kernel>(grid, block, workers, args) starts
// `workers` std::threads that share the grid's (block, thread) pairs round-robin, each with its own
// (thread_local) blockIdx / threadIdx, so every emulated CUDA thread sees the ids it would see on a
// GPU, and threads of different blocks (and of one block) run at the same time. `args` is an array
// of pointers to the arguments, as cuLaunchKernel takes them.
#pragma once
#include <math.h>
#include <stdint.h>

#include <atomic>
#include <cstddef>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline

struct ShimDim3 {
  unsigned x, y, z;
};
static thread_local ShimDim3 blockIdx = {0, 0, 0}, threadIdx = {0, 0, 0}, blockDim = {1, 1, 1},
                             gridDim = {1, 1, 1};

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

namespace gpu_env_shim {

// Workers inside a kernel right now, and the most seen at once since the last reset (tests read it to
// check that launches really overlap).
inline std::atomic<int> active{0}, peak{0};

template <class... A, std::size_t... I>
void call(void (*kernel)(A...), void** args, std::index_sequence<I...>) {
  kernel(*static_cast<std::remove_reference_t<A>*>(args[I])...);
}

// Runs kernel over grid x block emulated threads on `workers` std::threads (round-robin).
template <class... A>
void launch(void (*kernel)(A...), unsigned grid, unsigned block, unsigned workers, void** args) {
  const uint64_t total = static_cast<uint64_t>(grid) * block;
  if (total == 0) return;
  if (workers == 0) workers = 1;
  if (workers > total) workers = static_cast<unsigned>(total);
  auto work = [=](unsigned w) {
    gridDim.x = grid;
    blockDim.x = block;
    for (uint64_t k = w; k < total; k += workers) {
      blockIdx.x = static_cast<unsigned>(k / block);
      threadIdx.x = static_cast<unsigned>(k % block);
      const int now = ++active;
      int seen = peak.load();
      while (now > seen && !peak.compare_exchange_weak(seen, now)) {
      }
      call(kernel, args, std::index_sequence_for<A...>{});
      --active;
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(workers);
  for (unsigned w = 0; w < workers; ++w) pool.emplace_back(work, w);
  for (auto& t : pool) t.join();
}

}  // namespace gpu_env_shim

extern "C" int gpu_env_shim_peak_concurrency(int reset) {
  const int seen = gpu_env_shim::peak.load();
  if (reset) gpu_env_shim::peak.store(0);
  return seen;
}

#define GPU_ENV_SHIM_LAUNCHER(name)                                                                    \
  extern "C" void gpu_env_shim_launch_##name(unsigned grid, unsigned block, unsigned workers, void** args) { \
    gpu_env_shim::launch(&name, grid, block, workers, args);                                          \
  }
