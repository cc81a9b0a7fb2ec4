// CUDA kernels of gpu_env's device backend (gpu_env/backends/cuda/): the ALE environment of
// core/ale/environment.h and gymnasium's AtariPreprocessing step of core/ale/preprocessing.h (the
// functions the CPU library runs), one thread per environment, state in device memory, plus the
// observation kernels (screens, grayscale, max-pool, INTER_AREA resize, frame stack).
//
// Compiled as device code by NVRTC through CuPy (gpu_env/backends/cuda/module.py, which assembles the unit
// with gpu_env.cuda_source.device_source) and by `nvcc --ptx` in the tests; the tests also compile it
// for the host with g++ (tests/gpu_env/cuda_host_shim.h) to run the kernels on the CPU.
//
// Layout (see docs/gpu_backend.md):
// * envs: AleEnv[n], array of structs, one per environment (the same struct the CPU library uses);
// * buffers: each env's two TIA frame buffers, `stride` bytes apart (2 * 160 * max height);
// * status: int32[kStatusWords, n], struct of arrays, refreshed by every kernel that changes an env:
//   terminal, truncated, lives, frame number, episode frame number, PAL;
// * per-ROM constants: the int32 `params` vector of native/ale_batch.cpp (same order), the ROM
//   image, starting actions and setMode programs, all device arrays.
// Every env kernel takes an optional index list `idx` (nullptr: envs 0..count-1): masked work is
// compacted on the host side so that warps hold only envs that run (divergence handling).
//
// Compile-time options (macros given as NVRTC -D options by gpu_env/backends/cuda/module.py):
//   GPU_ENV_CUDA_LOCAL_COPY  1: copy an env's AleEnv into thread-local memory for the kernel and
//                            back (local memory is interleaved per thread, so the warp's accesses
//                            coalesce); 0: work on the AoS array in global memory in place.
//   GPU_ENV_CUDA_GAME_ID     >= 0: the game id is a compile-time constant (one module per game);
//                            -1: read from params. (Measured: only 3 % less PTX, since the
//                            registry's game_step is not inlined and keeps its switch.)
#pragma once

#include "../ale/environment.h"
#include "../ale/params.h"
#include "../ale/preprocessing.h"
#include "../ale/vector_rules.h"
#include "../hd.h"

#ifndef GPU_ENV_CUDA_LOCAL_COPY
#define GPU_ENV_CUDA_LOCAL_COPY 0
#endif
#ifndef GPU_ENV_CUDA_GAME_ID
#define GPU_ENV_CUDA_GAME_ID -1
#endif

namespace gpu_env {
namespace cuda {

using ale::AleEnv;
using ale::AleRom;

enum : int {
  kStatusTerminal,
  kStatusTruncated,
  kStatusLives,
  kStatusFrame,
  kStatusEpisodeFrame,
  kStatusPal,
  kStatusWords,
};

// The batch's ROM and settings as one device-resident bundle.
struct RomArgs {
  const int32_t* params;
  const uint8_t* rom;
  const int32_t* starting;
  const int32_t* programs;
  uint32_t rom_size;
  int32_t num_starting;
  float repeat_action_probability;
};

__device__ __forceinline__ AleRom make_rom(const RomArgs& a) {
  AleRom r = ale::rom_from_params(a.params, a.rom, a.rom_size, a.starting, a.num_starting, a.programs,
                                  a.repeat_action_probability);
#if GPU_ENV_CUDA_GAME_ID >= 0
  r.game_id = GPU_ENV_CUDA_GAME_ID;
#endif
  return r;
}

// The env this thread works on, or -1.
__device__ __forceinline__ int32_t env_index(const int32_t* idx, int32_t count) {
  const int32_t k = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  if (k >= count) return -1;
  return idx ? idx[k] : k;
}

__device__ __forceinline__ uint8_t* env_buffers(uint8_t* buffers, uint64_t stride, int32_t i) {
  return buffers + stride * static_cast<uint64_t>(i);
}

__device__ __forceinline__ void write_status(const AleEnv& e, const AleRom& r, int32_t* status, int32_t i,
                                             int32_t n) {
  status[kStatusTerminal * n + i] = ale::ale_terminal(e) ? 1 : 0;
  status[kStatusTruncated * n + i] = ale::ale_truncated(e, r) ? 1 : 0;
  status[kStatusLives * n + i] = ale::ale_lives(e, r);
  status[kStatusFrame * n + i] = e.frame_number;
  status[kStatusEpisodeFrame * n + i] = e.episode_frame_number;
  status[kStatusPal * n + i] = e.pal;
}

// Runs `fn(AleEnv&)` on env i, in place or on a thread-local copy (GPU_ENV_CUDA_LOCAL_COPY).
template <class Fn>
__device__ __forceinline__ void with_env(AleEnv* envs, int32_t i, Fn fn) {
#if GPU_ENV_CUDA_LOCAL_COPY
  AleEnv local = envs[i];
  fn(local);
  envs[i] = local;
#else
  fn(envs[i]);
#endif
}

// Palette indices (a row of 16 bytes) -> grayscale through `gray` (256 entries).
__device__ __forceinline__ uint4 gray16(uint4 v, const uint8_t* gray) {
  uint32_t w[4] = {v.x, v.y, v.z, v.w};
  for (int k = 0; k < 4; ++k) {
    const uint32_t x = w[k];
    w[k] = static_cast<uint32_t>(gray[x & 0xFF]) | (static_cast<uint32_t>(gray[(x >> 8) & 0xFF]) << 8) |
           (static_cast<uint32_t>(gray[(x >> 16) & 0xFF]) << 16) | (static_cast<uint32_t>(gray[x >> 24]) << 24);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// Copies env e's current picture, mapped to grayscale, into out (160 * height bytes, 16-aligned).
__device__ __forceinline__ void copy_gray_screen(const AleEnv& e, const uint8_t* buffers, const uint8_t* gray_tables,
                                                 uint8_t* out) {
  const Tia& t = e.console.tia;
  const uint32_t bytes = 160u * static_cast<uint32_t>(t.height);
  const uint4* src = reinterpret_cast<const uint4*>(buffers + static_cast<uint32_t>(t.current_buffer) * bytes);
  uint4* dst = reinterpret_cast<uint4*>(out);
  const uint8_t* gray = gray_tables + 256 * (e.pal ? 1 : 0);
  for (uint32_t k = 0; k < bytes / 16u; ++k) dst[k] = gray16(src[k], gray);
}

// Where the shared preprocessing step (core/ale/preprocessing.h) puts an env's screens on the device:
// obs_buffer[0] is own0, obs_buffer[1] is own1 (`bytes` each), as grayscale.
struct GrayScreens {
  const uint8_t* gray_tables;
  uint8_t* own0;
  uint8_t* own1;
  uint64_t bytes;

  __device__ void capture(const AleEnv& e, const uint8_t* fb, int32_t slot) {
    copy_gray_screen(e, fb, gray_tables, slot == 0 ? own0 : own1);
  }
  __device__ void clear(int32_t slot) {
    uint8_t* p = slot == 0 ? own0 : own1;
    for (uint64_t k = 0; k < bytes; ++k) p[k] = 0;
  }
};

}  // namespace cuda
}  // namespace gpu_env

// ------------------------------------------------------------------------------------------------
// Environment kernels (extern "C": CuPy looks them up by name). Sizes: n = batch size,
// count = number of envs this launch runs (idx has count entries, or is null and count == n).

#define GPU_ENV_ROM_PARAMS                                                                                 \
  const int32_t *params, const uint8_t *rom, uint32_t rom_size, const int32_t *starting, int32_t num_starting, \
      const int32_t *programs, float repeat_action_probability
#define GPU_ENV_ROM_ARGS \
  gpu_env::cuda::RomArgs { params, rom, starting, programs, rom_size, num_starting, repeat_action_probability }

// sizeof(AleEnv) on the device (the host checks it against its own layout).
extern "C" __global__ void gpu_env_env_size(uint32_t* out) {
  out[0] = static_cast<uint32_t>(sizeof(gpu_env::ale::AleEnv));
  out[1] = static_cast<uint32_t>(sizeof(Console));
  out[2] = static_cast<uint32_t>(gpu_env::ale::kParamCount);
}

// loadROM with random_seed = seeds[i].
extern "C" __global__ void gpu_env_load(GPU_ENV_ROM_PARAMS, gpu_env::ale::AleEnv* envs, uint8_t* buffers,
                                        uint64_t stride, int32_t* status, const int32_t* idx, int32_t count,
                                        int32_t n, const uint32_t* seeds, int32_t default_program) {
  using namespace gpu_env::cuda;
  const int32_t i = env_index(idx, count);
  if (i < 0) return;
  const AleRom r = make_rom(GPU_ENV_ROM_ARGS);
  uint8_t* b = env_buffers(buffers, stride, i);
  with_env(envs, i, [&](AleEnv& e) {
    gpu_env::ale::ale_load_rom(e, r, b, seeds[i], default_program);
    write_status(e, r, status, i, n);
  });
}

// ALE reset_game() (system reset, 60 NOOPs, RESET presses, setMode, starting actions) on the device.
extern "C" __global__ void gpu_env_reset(GPU_ENV_ROM_PARAMS, gpu_env::ale::AleEnv* envs, uint8_t* buffers,
                                         uint64_t stride, int32_t* status, const int32_t* idx, int32_t count,
                                         int32_t n) {
  using namespace gpu_env::cuda;
  const int32_t i = env_index(idx, count);
  if (i < 0) return;
  const AleRom r = make_rom(GPU_ENV_ROM_ARGS);
  uint8_t* b = env_buffers(buffers, stride, i);
  with_env(envs, i, [&](AleEnv& e) {
    gpu_env::ale::ale_reset_game(e, r, b);
    write_status(e, r, status, i, n);
  });
}

// ALEInterface::act(actions[i], strengths[i]) (frameskip frames, sticky actions); rewards[i] = sum.
extern "C" __global__ void gpu_env_act(GPU_ENV_ROM_PARAMS, gpu_env::ale::AleEnv* envs, uint8_t* buffers,
                                       uint64_t stride, int32_t* status, const int32_t* idx, int32_t count,
                                       int32_t n, const int32_t* actions, const float* strengths,
                                       int32_t* rewards) {
  using namespace gpu_env::cuda;
  const int32_t i = env_index(idx, count);
  if (i < 0) return;
  const AleRom r = make_rom(GPU_ENV_ROM_ARGS);
  uint8_t* b = env_buffers(buffers, stride, i);
  with_env(envs, i, [&](AleEnv& e) {
    rewards[i] = gpu_env::ale::ale_act(e, r, b, actions[i], kActionNoop, strengths[i], 0.0f, true);
    write_status(e, r, status, i, n);
  });
}

// The env step of make_vec(backend="cuda") (gpu_env/backends/cuda/vec.py), autoreset included, no host round
// trip. Env i with resetting[i] (resetting may be null: none) is reset instead of stepped:
// noop_table[i, noop_cursor[i]++] no-ops (noop_table null: none), then with `preprocess`
// preprocessed_reset of core/ale/preprocessing.h (pp_lives[i] = lives, pp0 = the gray screen,
// pp1 = 0), without it ale_reset_with_noops; its reward is 0 and its flags are 0. Any other env is
// stepped with actions[i] (actions null: left alone): preprocess != 0 runs preprocessed_step (`skip`
// acts, early exit, the gray screens of the last two acts into pp0/pp1); preprocess == 0 runs one ALE
// act (the batch's frameskip), terminated = ALE's terminal, truncated = the frame limit (the same
// function with one act and no screens). noop_cursor never passes noop_depth (the host refills the
// table at least every noop_depth steps; an exhausted table gives 0 no-ops).
extern "C" __global__ void gpu_env_vec_step(GPU_ENV_ROM_PARAMS, gpu_env::ale::AleEnv* envs, uint8_t* buffers,
                                            uint64_t stride, int32_t* status, int32_t n, const int32_t* actions,
                                            const uint8_t* resetting, int32_t preprocess, int32_t skip,
                                            int32_t terminal_on_life_loss, const uint8_t* gray_tables, uint8_t* pp0,
                                            uint8_t* pp1, uint64_t pp_stride, int32_t* pp_lives,
                                            const int32_t* noop_table, int32_t noop_depth, int32_t* noop_cursor,
                                            int32_t noop_action, float* rewards, uint8_t* terminated,
                                            uint8_t* truncated) {
  using namespace gpu_env::cuda;
  const int32_t i = env_index(nullptr, n);
  if (i < 0) return;
  const bool reset = resetting != nullptr && resetting[i] != 0;
  if (!reset && actions == nullptr) return;
  const AleRom r = make_rom(GPU_ENV_ROM_ARGS);
  uint8_t* b = env_buffers(buffers, stride, i);
  GrayScreens screens{gray_tables, pp0 ? pp0 + pp_stride * static_cast<uint64_t>(i) : nullptr,
                      pp1 ? pp1 + pp_stride * static_cast<uint64_t>(i) : nullptr, pp_stride};
  with_env(envs, i, [&](AleEnv& e) {
    gpu_env::ale::PreprocessedStep step{0, 0, 0};
    if (reset) {
      int32_t noops = 0;
      if (noop_table != nullptr && noop_cursor[i] < noop_depth) {
        noops = noop_table[static_cast<int64_t>(i) * noop_depth + noop_cursor[i]];
        noop_cursor[i] += 1;
      }
      if (preprocess) {
        gpu_env::ale::preprocessed_reset(e, r, b, noops, noop_action, pp_lives[i], screens);
      } else {
        gpu_env::ale::ale_reset_with_noops(e, r, b, noops, noop_action);
      }
    } else if (preprocess) {
      step = gpu_env::ale::preprocessed_step(e, r, b, actions[i], skip, terminal_on_life_loss != 0, pp_lives[i],
                                             screens);
    } else {
      gpu_env::ale::NoScreens none;
      int32_t unused_lives = 0;
      step = gpu_env::ale::preprocessed_step(e, r, b, actions[i], 1, false, unused_lives, none);
    }
    rewards[i] = static_cast<float>(step.reward);
    terminated[i] = step.terminated;
    truncated[i] = step.truncated;
    write_status(e, r, status, i, n);
  });
}

// setMode / setDifficulty bookkeeping (they take effect at the next reset_game).
extern "C" __global__ void gpu_env_set_mode(gpu_env::ale::AleEnv* envs, const int32_t* idx, int32_t count,
                                            int32_t mode, int32_t program, int32_t set_mode, int32_t difficulty,
                                            int32_t set_difficulty) {
  const int32_t i = gpu_env::cuda::env_index(idx, count);
  if (i < 0) return;
  if (set_mode) {
    envs[i].mode = mode;
    envs[i].program = program;
  }
  if (set_difficulty) envs[i].difficulty = difficulty;
}

// Recomputes the status words (after a state was written into `envs` from the host).
extern "C" __global__ void gpu_env_status(GPU_ENV_ROM_PARAMS, gpu_env::ale::AleEnv* envs, uint8_t* buffers,
                                          uint64_t stride, int32_t* status, const int32_t* idx, int32_t count,
                                          int32_t n) {
  using namespace gpu_env::cuda;
  const int32_t i = env_index(idx, count);
  if (i < 0) return;
  (void)buffers;
  (void)stride;
  const AleRom r = make_rom(GPU_ENV_ROM_ARGS);
  write_status(envs[i], r, status, i, n);
}

// ------------------------------------------------------------------------------------------------
// Observation kernels: one thread per output element (coalesced), grid-stride loops.

// ALE getRAM(): out uint8[n, 128].
extern "C" __global__ void gpu_env_ram(const gpu_env::ale::AleEnv* envs, int32_t n, uint8_t* out) {
  const uint64_t total = static_cast<uint64_t>(n) * 128u;
  for (uint64_t k = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    out[k] = envs[k / 128u].console.riot.ram[k % 128u];
  }
}

// ALE getScreen / getScreenGrayscale / getScreenRGB: out uint8[n, height, 160 (, 3)]; `table` is
// null (palette indices), the gray tables uint8[2, 256] (channels = 1) or the RGB tables
// uint8[2, 256, 3] (channels = 3); row 1 of a table is used for PAL-detected envs.
extern "C" __global__ void gpu_env_screen(const gpu_env::ale::AleEnv* envs, int32_t n, const uint8_t* buffers,
                                          uint64_t stride, int32_t height, const uint8_t* table, int32_t channels,
                                          uint8_t* out) {
  const uint64_t per_env = 160ull * static_cast<uint64_t>(height);
  const uint64_t total = static_cast<uint64_t>(n) * per_env;
  for (uint64_t k = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint64_t i = k / per_env, p = k % per_env;
    const Tia& t = envs[i].console.tia;
    const uint8_t v = buffers[stride * i + static_cast<uint64_t>(t.current_buffer) * 160u * t.height + p];
    if (table == nullptr) {
      out[k] = v;
    } else {
      const uint8_t* row = table + 256 * channels * (envs[i].pal ? 1 : 0);
      for (int32_t c = 0; c < channels; ++c) out[k * channels + c] = row[v * channels + c];
    }
  }
}

// gymnasium's max-pool of the last two frames: a[k] = max(a[k], b[k]) for the envs in idx
// (`per_env` bytes each, `stride` apart; idx null: envs 0..count-1).
extern "C" __global__ void gpu_env_max_pool(uint8_t* a, const uint8_t* b, uint64_t stride, uint64_t per_env,
                                            const int32_t* idx, int32_t count) {
  const uint64_t total = static_cast<uint64_t>(count) * per_env;
  for (uint64_t k = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint64_t j = k / per_env;
    const uint64_t i = idx ? static_cast<uint64_t>(idx[j]) : j;
    const uint64_t o = stride * i + k % per_env;
    const uint8_t x = a[o], y = b[o];
    a[o] = x > y ? x : y;
  }
}

// cv2.resize(INTER_AREA), general (non-integer factor) path, with the arithmetic of the CPU library's
// resize (native/preprocess.cpp): per output pixel, for each y tap j, row_j = sum over x taps k of
// src[yi_j][xi_k] * xw_k (float32, multiply then add, in tap order, starting from tap 0's product), then
// out = sum over j of row_j * yw_j in the same way, rounded half to even and clamped to [0, 255].
// Taps: xi int32[kx, out_w], xw float32[kx, out_w], yi int32[ky, out_h], yw float32[ky, out_h].
// src uint8[n, src_h, src_w] (gray), dst uint8[n, out_h, out_w]. No FMA: __fmul_rn / __fadd_rn.
extern "C" __global__ void gpu_env_area_resize(const uint8_t* src, int32_t n, int32_t src_h, int32_t src_w,
                                               uint8_t* dst, int32_t out_h, int32_t out_w, const int32_t* xi,
                                               const float* xw, int32_t kx, const int32_t* yi, const float* yw,
                                               int32_t ky) {
  const uint64_t per_env = static_cast<uint64_t>(out_h) * out_w;
  const uint64_t total = static_cast<uint64_t>(n) * per_env;
  for (uint64_t k = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint64_t i = k / per_env;
    const int32_t p = static_cast<int32_t>(k % per_env);
    const int32_t oy = p / out_w, ox = p % out_w;
    const uint8_t* frame = src + i * static_cast<uint64_t>(src_h) * src_w;
    float acc = 0.0f;
    for (int32_t j = 0; j < ky; ++j) {
      const uint8_t* row = frame + static_cast<int64_t>(yi[j * out_h + oy]) * src_w;
      float r = __fmul_rn(static_cast<float>(row[xi[ox]]), xw[ox]);
      for (int32_t q = 1; q < kx; ++q) {
        r = __fadd_rn(r, __fmul_rn(static_cast<float>(row[xi[q * out_w + ox]]), xw[q * out_w + ox]));
      }
      const float term = __fmul_rn(r, yw[j * out_h + oy]);
      acc = j == 0 ? term : __fadd_rn(acc, term);
    }
    float v = rintf(acc);
    v = v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v);
    dst[k] = static_cast<uint8_t>(v);
  }
}

// cv2.resize(INTER_AREA) when both factors are integers (fy = src_h / out_h, fx = src_w / out_w):
// 2x2 blocks as (sum + 2) >> 2, other factors as rint(float(sum) * inv_area) (as native/preprocess.cpp).
extern "C" __global__ void gpu_env_area_resize_int(const uint8_t* src, int32_t n, int32_t src_h, int32_t src_w,
                                                   uint8_t* dst, int32_t out_h, int32_t out_w, float inv_area) {
  const int32_t fy = src_h / out_h, fx = src_w / out_w;
  const uint64_t per_env = static_cast<uint64_t>(out_h) * out_w;
  const uint64_t total = static_cast<uint64_t>(n) * per_env;
  for (uint64_t k = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint64_t i = k / per_env;
    const int32_t p = static_cast<int32_t>(k % per_env);
    const int32_t oy = p / out_w, ox = p % out_w;
    const uint8_t* frame = src + i * static_cast<uint64_t>(src_h) * src_w;
    int32_t sum = 0;
    for (int32_t y = 0; y < fy; ++y) {
      for (int32_t x = 0; x < fx; ++x) sum += frame[(oy * fy + y) * src_w + ox * fx + x];
    }
    if (fx == 2 && fy == 2) {
      dst[k] = static_cast<uint8_t>((sum + 2) >> 2);
    } else {
      dst[k] = static_cast<uint8_t>(rintf(__fmul_rn(static_cast<float>(sum), inv_area)));
    }
  }
}

// gymnasium FrameStackObservation (padding "reset") for a batch: stack uint8[n, depth, per_frame].
// mode[i]: 0 leave, 1 push frame[i] (drop the oldest), 2 fill all `depth` slots with frame[i].
extern "C" __global__ void gpu_env_frame_stack(uint8_t* stack, const uint8_t* frames, int32_t n, int32_t depth,
                                               uint64_t per_frame, const uint8_t* mode) {
  const uint64_t total = static_cast<uint64_t>(n) * per_frame;
  for (uint64_t k = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint64_t i = k / per_frame, p = k % per_frame;
    const uint8_t m = mode[i];
    if (m == 0) continue;
    uint8_t* s = stack + i * static_cast<uint64_t>(depth) * per_frame + p;
    const uint8_t v = frames[k];
    if (m == 1) {
      for (int32_t d = 0; d + 1 < depth; ++d) s[d * per_frame] = s[(d + 1) * per_frame];
      s[(depth - 1) * per_frame] = v;
    } else {
      for (int32_t d = 0; d < depth; ++d) s[d * per_frame] = v;
    }
  }
}
