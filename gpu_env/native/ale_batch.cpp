// Batched CPU entry points of the ALE-level environment (gpu_env/core/ale/environment.h), run on
// std::threads across environments. Plain C ABI for ctypes (gpu_env/ale_native.py).
//
// Memory is owned by the caller: `envs` is an array of AleEnv (gpu_env_ale_env_size() bytes each),
// `buffers` holds each env's two frame buffers at `stride` bytes per env. A ROM handle
// (gpu_env_ale_rom_new) owns copies of the ROM image, the starting actions and the setMode streams.
#include <cstddef>
#include <cstring>
#include <vector>

#include "ale/environment.h"
#include "ale/params.h"
#include "ale/preprocessing.h"
#include "parallel.h"
#include "preprocess.h"
#include "host_screens.h"
#include "screen_format.h"

#define GPU_ENV_EXPORT extern "C" __attribute__((visibility("default")))

using gpu_env::ale::AleEnv;
using gpu_env::ale::AleRom;
using gpu_env_native::PackedRgb;
using gpu_env_native::ScreenFormat;
using gpu_env_native::parallel_for;

namespace {

struct RomHandle {
  AleRom rom;
  std::vector<uint8_t> image;
  std::vector<int32_t> starting;
  std::vector<int32_t> programs;
};

uint8_t* env_buffers(uint8_t* buffers, uint64_t stride, int32_t i) {
  return buffers + stride * static_cast<uint64_t>(i);
}

}  // namespace

GPU_ENV_EXPORT uint32_t gpu_env_ale_env_size() { return static_cast<uint32_t>(sizeof(AleEnv)); }

GPU_ENV_EXPORT int32_t gpu_env_ale_param_count() { return gpu_env::ale::kParamCount; }

GPU_ENV_EXPORT void* gpu_env_ale_rom_new(const int32_t* params, float repeat_action_probability, const uint8_t* rom,
                                         uint32_t rom_size, const int32_t* starting, int32_t num_starting,
                                         const int32_t* programs, int32_t num_program_words) {
  RomHandle* h = new RomHandle();
  h->image.assign(rom, rom + rom_size);
  h->starting.assign(starting, starting + num_starting);
  h->programs.assign(programs, programs + num_program_words);
  h->programs.push_back(gpu_env::ale::kOpEnd);
  h->rom = gpu_env::ale::rom_from_params(params, h->image.data(), rom_size, h->starting.data(), num_starting,
                                         h->programs.data(), repeat_action_probability);
  return h;
}

GPU_ENV_EXPORT void gpu_env_ale_rom_free(void* handle) { delete static_cast<RomHandle*>(handle); }

// The ROM of a handle (for native/env_pool.cpp).
GPU_ENV_EXPORT const AleRom* gpu_env_ale_rom_of(const void* handle) { return &static_cast<const RomHandle*>(handle)->rom; }

// loadROM on the envs with mask[i], seed seeds[i].
GPU_ENV_EXPORT void gpu_env_ale_load(const void* handle, AleEnv* envs, int32_t n, uint8_t* buffers, uint64_t stride,
                                     const uint8_t* mask, const uint32_t* seeds, int32_t default_program,
                                     int32_t num_threads) {
  const AleRom& r = static_cast<const RomHandle*>(handle)->rom;
  parallel_for(n, num_threads, [&](int32_t i) {
    if (mask[i]) {
      gpu_env::ale::ale_load_rom(envs[i], r, env_buffers(buffers, stride, i), seeds[i], default_program);
    }
  });
}

GPU_ENV_EXPORT void gpu_env_ale_reset(const void* handle, AleEnv* envs, int32_t n, uint8_t* buffers, uint64_t stride,
                                      const uint8_t* mask, int32_t num_threads) {
  const AleRom& r = static_cast<const RomHandle*>(handle)->rom;
  parallel_for(n, num_threads, [&](int32_t i) {
    if (mask[i]) gpu_env::ale::ale_reset_game(envs[i], r, env_buffers(buffers, stride, i));
  });
}

// ALEInterface::act(actions[i], strengths[i]) on the masked envs; rewards[i] = the summed reward (0 elsewhere).
// The screen each act leaves is drawn (a getScreen may follow); with ALE's frameskip > 1 the frames before
// the last one are not (core/frames.h).
GPU_ENV_EXPORT void gpu_env_ale_act(const void* handle, AleEnv* envs, int32_t n, uint8_t* buffers, uint64_t stride,
                                    const int32_t* actions, const float* strengths, const uint8_t* mask,
                                    int32_t* rewards, int32_t num_threads) {
  const AleRom& r = static_cast<const RomHandle*>(handle)->rom;
  parallel_for(n, num_threads, [&](int32_t i) {
    rewards[i] = mask[i] ? gpu_env::ale::ale_act(envs[i], r, env_buffers(buffers, stride, i), actions[i],
                                                  kActionNoop, strengths[i], 0.0f, true)
                         : 0;
  });
}

GPU_ENV_EXPORT void gpu_env_ale_set_mode(AleEnv* envs, int32_t n, const uint8_t* mask, int32_t mode, int32_t program) {
  for (int32_t i = 0; i < n; ++i) {
    if (mask[i]) {
      envs[i].mode = mode;
      envs[i].program = program;
    }
  }
}

GPU_ENV_EXPORT void gpu_env_ale_set_difficulty(AleEnv* envs, int32_t n, const uint8_t* mask, int32_t difficulty) {
  for (int32_t i = 0; i < n; ++i) {
    if (mask[i]) envs[i].difficulty = difficulty;
  }
}

// Per env: terminal, truncated, lives, frame number, episode frame number, pal.
GPU_ENV_EXPORT void gpu_env_ale_query(const void* handle, const AleEnv* envs, int32_t n, int32_t* out) {
  const AleRom& r = static_cast<const RomHandle*>(handle)->rom;
  for (int32_t i = 0; i < n; ++i) {
    const AleEnv& e = envs[i];
    int32_t* o = out + 6 * i;
    o[0] = gpu_env::ale::ale_terminal(e) ? 1 : 0;
    o[1] = gpu_env::ale::ale_truncated(e, r) ? 1 : 0;
    o[2] = gpu_env::ale::ale_lives(e, r);
    o[3] = e.frame_number;
    o[4] = e.episode_frame_number;
    o[5] = e.pal;
  }
}

// Per env (core/frames.h FrameRecord): TIA updates run drawing their picture and run without drawing it;
// frames drawn again because their picture was read, for the part a shorter frame left, and interrupted
// frames (uint32[n][5]).
GPU_ENV_EXPORT void gpu_env_ale_frame_counts(const AleEnv* envs, int32_t n, uint32_t* out) {
  for (int32_t i = 0; i < n; ++i) {
    const FrameRecord& f = envs[i].frames;
    uint32_t* o = out + 5 * i;
    o[0] = f.drawn;
    o[1] = f.skipped;
    o[2] = f.redrawn_read;
    o[3] = f.redrawn_part;
    o[4] = f.redrawn_interrupted;
  }
}

GPU_ENV_EXPORT void gpu_env_ale_ram(const AleEnv* envs, int32_t n, uint8_t* out) {
  for (int32_t i = 0; i < n; ++i) std::memcpy(out + 128 * i, envs[i].console.riot.ram, 128);
}

// Each env's current picture into out[i]: uint8[height][160] (format 0: palette indices, 1: grayscale)
// or uint8[height][160][3] (format 2: RGB), threaded across envs. `tables` holds the palettes of
// gpu_env/palettes.py, NTSC then PAL: grayscale uint8[2][256] for format 1, RGB uint8[2][256][3] for
// format 2 (unused for 0); env i uses the PAL one when its power-on probe decided PAL. Rows past the
// env's own TIA height (never the case for a consistent batch) are zeroed.
GPU_ENV_EXPORT void gpu_env_ale_screens_format(const AleEnv* envs, int32_t n, const uint8_t* buffers, uint64_t stride,
                                               int32_t height, int32_t format, const uint8_t* tables, uint8_t* out,
                                               int32_t num_threads) {
  const ScreenFormat fmt = static_cast<ScreenFormat>(format);
  const int32_t channels = gpu_env_native::screen_channels(fmt);
  const size_t row_bytes = static_cast<size_t>(gpu_env_native::kScreenWidth) * static_cast<size_t>(channels);
  PackedRgb rgb[2];
  if (fmt == ScreenFormat::kRgb) {
    gpu_env_native::pack_rgb(tables, rgb[0]);
    gpu_env_native::pack_rgb(tables + 3 * gpu_env_native::kPaletteSize, rgb[1]);
  }
  parallel_for(n, num_threads, [&](int32_t i) {
    const AleEnv& e = envs[i];
    const Tia& t = e.console.tia;
    const int32_t rows = t.height < height ? t.height : height;
    const uint8_t* screen = buffers + stride * static_cast<uint64_t>(i) +
                            static_cast<size_t>(gpu_env_native::kScreenWidth) * static_cast<size_t>(t.height) *
                                static_cast<size_t>(t.current_buffer);
    const int32_t which = e.pal != 0 ? 1 : 0;
    uint8_t* o = out + row_bytes * static_cast<size_t>(height) * static_cast<size_t>(i);
    const uint8_t* gray = tables + gpu_env_native::kPaletteSize * which;  // read for format 1 only
    gpu_env_native::screen_convert(screen, rows, fmt, gray, &rgb[which], o);
    if (rows < height) {
      std::memset(o + row_bytes * static_cast<size_t>(rows), 0, row_bytes * static_cast<size_t>(height - rows));
    }
  });
}

// The first n outputs of gpu_env::ale::Mt19937 seeded with `seed` (checks against std::mt19937 / numpy),
// and their nextDouble() values.
GPU_ENV_EXPORT void gpu_env_ale_mt_draws(uint32_t seed, int32_t n, uint32_t* out, double* out_double) {
  gpu_env::ale::Mt19937 a, b;
  gpu_env::ale::mt_seed(a, seed);
  gpu_env::ale::mt_seed(b, seed);
  for (int32_t i = 0; i < n; ++i) {
    out[i] = gpu_env::ale::mt_next(a);
    out_double[i] = gpu_env::ale::mt_next_double(b);
  }
}

// Env i's System RNG (which = 0) or sticky-action RNG (which = 1): 624 state words and the index.
GPU_ENV_EXPORT void gpu_env_ale_rng_state(const AleEnv* envs, int32_t i, int32_t which, uint32_t* words,
                                          uint32_t* index) {
  const gpu_env::ale::Mt19937& g = which == 0 ? envs[i].system_rng : envs[i].env_rng;
  for (int k = 0; k < gpu_env::ale::kMtStateWords; ++k) words[k] = g.mt[k];
  *index = g.index;
}


// gymnasium's AtariPreprocessing over AtariEnv(frameskip=1), one vector step in one call. Env i does,
// by modes[i]: 0 nothing; 1 AtariPreprocessing.step of actions[i] (preprocessed_step of
// core/ale/preprocessing.h; rewards[i] the summed reward, terminated[i] / truncated[i] as the wrapper
// reports them; lives[i] carries the wrapper's last seen lives in and out); 2 AtariPreprocessing.reset
// without a seed with noops[i] no-ops (preprocessed_reset; reward 0, not terminated). Screens go to
// buf0/buf1 ([N][height][160] grayscale or [N][height][160][3] RGB: `channels`, through `tables` as
// gpu_env_ale_screens_format). When `out` is not null, every env's observation then follows in the
// same thread: buf0[i] max-pooled with buf1[i] in place when `pool`, and resized (preprocess.h; the
// resize arguments as for gpu_env_preprocess_observe) into out[i]. When `stack` is not null too
// (uint8[N][stack_size][obs], a FrameStackObservation's frames, newest last), out[i] then goes into
// env i's stack as gpu_env/preprocess.py FrameStack does (reset envs: every slot; the others: pushed)
// and the whole stack is copied to stacked[i] (the observation the caller gets), by the same thread.
// Resets are handed out first: one costs about as much as 20 steps, and taken last it would leave the
// other threads idle.
GPU_ENV_EXPORT void gpu_env_ale_step_observe(const void* handle, AleEnv* envs, int32_t n, uint8_t* buffers,
                                             uint64_t stride, const uint8_t* modes, const int32_t* actions,
                                             const int32_t* noops, int32_t noop_action, int32_t frame_skip,
                                             int32_t terminal_on_life_loss, int32_t* lives, const uint8_t* tables,
                                             int32_t channels, int32_t height, uint8_t* buf0, uint8_t* buf1,
                                             int32_t* rewards, uint8_t* terminated, uint8_t* truncated, int32_t pool,
                                             int32_t dst_h, int32_t dst_w, int32_t integer_path,
                                             const int32_t* x_index, const float* x_weight, int32_t kx,
                                             const int32_t* y_index, const float* y_weight, int32_t ky, uint8_t* out,
                                             uint8_t* stack, int32_t stack_size, uint8_t* stacked, int32_t num_threads) {
  const AleRom& r = static_cast<const RomHandle*>(handle)->rom;
  const gpu_env_native::PreprocessBuffers b = gpu_env_native::make_buffers(channels, tables, height, buf0, buf1);
  const gpu_env_native::ObserveSpec spec{height, 160, channels, dst_h, dst_w, integer_path != 0,
                                         {x_index, x_weight, kx}, {y_index, y_weight, ky}};
  const size_t out_bytes = static_cast<size_t>(dst_h) * dst_w * channels;
  std::vector<int32_t> order;
  order.reserve(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    if (modes[i] == 2) order.push_back(i);
  }
  for (int32_t i = 0; i < n; ++i) {
    if (modes[i] != 2) order.push_back(i);
  }
  parallel_for(n, num_threads, [&](int32_t k) {
    const int32_t i = order[static_cast<size_t>(k)];
    AleEnv& e = envs[i];
    uint8_t* fb = env_buffers(buffers, stride, i);
    gpu_env_native::HostScreens screens{b, i};
    gpu_env::ale::PreprocessedStep step{0, 0, 0};
    if (modes[i] == 1) {
      step = gpu_env::ale::preprocessed_step(e, r, fb, actions[i], frame_skip, terminal_on_life_loss != 0, lives[i],
                                             screens);
    } else if (modes[i] == 2) {
      gpu_env::ale::preprocessed_reset(e, r, fb, noops[i], noop_action, lives[i], screens);
    }
    rewards[i] = step.reward;
    terminated[i] = step.terminated;
    truncated[i] = step.truncated;
    if (out != nullptr) {
      uint8_t* frame = out + out_bytes * static_cast<size_t>(i);
      gpu_env_native::observe_frame(spec, buf0 + b.frame_bytes * static_cast<size_t>(i),
                                    pool ? buf1 + b.frame_bytes * static_cast<size_t>(i) : nullptr, frame);
      if (stack != nullptr) {
        const size_t stack_bytes = out_bytes * static_cast<size_t>(stack_size);
        uint8_t* own = stack + stack_bytes * static_cast<size_t>(i);
        if (modes[i] == 2) {
          for (int32_t k = 0; k < stack_size; ++k) std::memcpy(own + out_bytes * static_cast<size_t>(k), frame, out_bytes);
        } else {
          std::memmove(own, own + out_bytes, stack_bytes - out_bytes);
          std::memcpy(own + stack_bytes - out_bytes, frame, out_bytes);
        }
        std::memcpy(stacked + stack_bytes * static_cast<size_t>(i), own, stack_bytes);
      }
    }
  });
}

// Import support (gpu_env/ale_native.py load_ale_state): the env's frame-buffer index in use, and setters
// for what an ale-py cloneState() holds beyond the console (frame counters, mode, difficulty, RNGs).
GPU_ENV_EXPORT int32_t gpu_env_ale_current_buffer(const AleEnv* envs, int32_t i) {
  return envs[i].console.tia.current_buffer;
}

GPU_ENV_EXPORT void gpu_env_ale_import_extra(AleEnv* envs, int32_t i, const int32_t* words, int32_t num_words,
                                             int32_t frame_number, int32_t episode_frame_number, int32_t mode,
                                             int32_t program, int32_t difficulty, const uint32_t* system_rng,
                                             int32_t system_rng_index, const uint32_t* env_rng, int32_t env_rng_index) {
  AleEnv& e = envs[i];
  frames_forget(e.frames);  // the caller wrote the frame buffers (gpu_env/backends/native.py load_ale_state)
  if (num_words >= gpu_env::games::kGameStateWords) {
    e.game.reward = words[0];
    e.game.score = words[1];
    e.game.lives = words[2];
    e.game.terminal = words[3];
    for (int k = 0; k < gpu_env::games::kGameExtraWords; ++k) e.game.extra[k] = words[4 + k];
  }
  e.frame_number = frame_number;
  e.episode_frame_number = episode_frame_number;
  e.mode = mode;
  e.program = program;
  e.difficulty = difficulty;
  if (system_rng != nullptr) {
    for (int k = 0; k < gpu_env::ale::kMtStateWords; ++k) e.system_rng.mt[k] = system_rng[k];
    e.system_rng.index = static_cast<uint32_t>(system_rng_index);
  }
  if (env_rng != nullptr) {
    for (int k = 0; k < gpu_env::ale::kMtStateWords; ++k) e.env_rng.mt[k] = env_rng[k];
    e.env_rng.index = static_cast<uint32_t>(env_rng_index);
  }
}
