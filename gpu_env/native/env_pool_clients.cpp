// Each client's reset and step on one env of the native thread pool (env_pool.h): EnvPool's rules, ale-py's
// vector env, the SB3/CleanRL presets and gymnasium's stack (core/ale/pool_rules.h, vector_rules.h,
// wrap_rules.h), the max-pool, grayscale and resize (preprocess.h) and the frame stack.
#include <cstring>
#include <vector>

#include "env_pool.h"

namespace gpu_env_native {
namespace pool {

void EnvPool::observe(int32_t i, gpu_env_native::HostScreens& slots, bool pool) {
  gpu_env_native::observe_frame(spec, slots.slot(0), pool ? slots.slot(1) : nullptr, frame_of(i));
}

// The frame appended to env i's stack (the oldest dropped), or written to every slot (push_all: EnvPool's
// and FrameStackObservation's reset); channels_first (EnvPool's layout) writes an RGB frame as three planes.
void EnvPool::push(int32_t i, bool push_all, bool channels_first) {
  const uint8_t* frame = frame_of(i);
  uint8_t* own = stack_of(i);
  uint8_t* last = own + stack_bytes() - frame_bytes;
  if (!push_all) std::memmove(own, own + frame_bytes, stack_bytes() - frame_bytes);
  const int32_t channels = channels_first ? frame_channels : 1;
  if (channels == 1) {
    std::memcpy(last, frame, frame_bytes);
  } else {
    const size_t plane = frame_bytes / static_cast<size_t>(channels);
    for (size_t p = 0; p < plane; ++p) {
      for (int32_t c = 0; c < channels; ++c) last[plane * static_cast<size_t>(c) + p] = frame[p * channels + c];
    }
  }
  if (push_all) {
    for (int32_t k = 0; k + 1 < stack_num; ++k) std::memcpy(own + frame_bytes * static_cast<size_t>(k), last, frame_bytes);
  }
}

// ale-py's stack: a circular buffer (zeroed on a reset), the frame written at the next slot.
void EnvPool::push_vector(int32_t i, bool clear) {
  uint8_t* own = stack_of(i);
  int32_t& idx = stack_idx[static_cast<size_t>(i)];
  if (clear) {
    std::memset(own, 0, stack_bytes());
    idx = 0;
  }
  std::memcpy(own + frame_bytes * static_cast<size_t>(idx), frame_of(i), frame_bytes);
  idx = (idx + 1) % stack_num;
}

// Env i's stack, oldest frame first.
void EnvPool::linear_stack(int32_t i, uint8_t* out) {
  if (kind != kAleVector) {
    std::memcpy(out, stack_of(i), stack_bytes());
    return;
  }
  const int32_t idx = stack_idx[static_cast<size_t>(i)];
  for (int32_t k = 0; k < stack_num; ++k) {
    const size_t from = static_cast<size_t>((idx + k) % stack_num);
    std::memcpy(out + frame_bytes * static_cast<size_t>(k), stack_of(i) + frame_bytes * from, frame_bytes);
  }
}

void EnvPool::run_envpool(const Request& q, gpu_env_native::HostScreens& slots) {
  const int32_t i = q.env;
  AleEnv& e = envs[i];
  uint8_t* fb = buffers + stride * static_cast<uint64_t>(i);
  PoolEnvState& s = pool_states[static_cast<size_t>(i)];
  PoolStep out;
  if (q.op == kReset || s.done) {
    out = gpu_env::ale::pool_reset(e, *rom, fb, pool_rules, gens[static_cast<size_t>(i)], s, slots);
  } else {
    out = gpu_env::ale::pool_step(e, *rom, fb, pool_rules, action_set[static_cast<size_t>(q.action)], s, slots);
  }
  observe(i, slots, out.pool != 0);
  push(i, out.push_all != 0, true);
  outputs[static_cast<size_t>(i)] = Outputs{out.reward, out.info_reward, 0, 0, out.trunc, out.done, out.terminated, 0};
}

Outputs EnvPool::vector_outputs(int32_t i) const {
  const VecEnvState& s = vec_states[static_cast<size_t>(i)];
  Outputs o{};
  o.int_reward = s.reward;
  o.terminated = gpu_env::ale::vec_terminated(vec_rules, s) ? 1 : 0;
  o.truncated = gpu_env::ale::vec_truncated(vec_rules, s) ? 1 : 0;
  return o;
}

void EnvPool::run_vector(const Request& q, gpu_env_native::HostScreens& slots) {
  const int32_t i = q.env;
  AleEnv& e = envs[i];
  uint8_t* fb = buffers + stride * static_cast<uint64_t>(i);
  VecEnvState& s = vec_states[static_cast<size_t>(i)];
  gpu_env::ale::Mt19937& gen = gens[static_cast<size_t>(i)];
  auto reset = [&](int64_t seed) {
    if (seed >= 0) {
      gpu_env::ale::ale_load_rom(e, *rom, fb, static_cast<uint32_t>(seed), default_program);
      gpu_env::ale::mt_seed(gen, static_cast<uint32_t>(seed));
    }
    gpu_env::ale::vec_reset(e, *rom, fb, vec_rules, gen, s, slots);
    observe(i, slots, vec_rules.maxpool != 0);
    push_vector(i, true);
  };
  if (q.op == kReport) {
    outputs[static_cast<size_t>(i)] = vector_outputs(i);
    return;
  }
  if (q.op == kReset || (!same_step && gpu_env::ale::vec_episode_over(vec_rules, s))) {
    reset(q.op == kReset ? q.seed : -1);
    outputs[static_cast<size_t>(i)] = vector_outputs(i);
    return;
  }
  gpu_env::ale::vec_step(e, *rom, fb, vec_rules, action_set[static_cast<size_t>(q.action)], q.strength, s, slots);
  observe(i, slots, vec_rules.maxpool != 0);
  push_vector(i, false);
  Outputs o = vector_outputs(i);
  if (same_step && gpu_env::ale::vec_episode_over(vec_rules, s)) {
    linear_stack(i, finals.data() + stack_bytes() * static_cast<size_t>(i));
    reset(-1);
    o.has_final = 1;
  }
  outputs[static_cast<size_t>(i)] = o;
}

// The Screens of the preset wrappers: slots 0 and 1 are MaxAndSkipEnv's obs_buffer; emit writes the
// observation's frame.
struct PresetScreens {
  EnvPool& p;
  int32_t i;
  void capture(const AleEnv& e, const uint8_t* fb, int32_t which) {
    gpu_env_native::HostScreens{p.screens, i}.capture(e, fb, which);
  }
  void emit(const AleEnv& e, const uint8_t* fb, bool pooled) { p.emit_preset(i, e, fb, pooled); }
};

// The frame of env i's observation from the max of its two slots (pooled) or its current RGB screen:
// SB3's WarpFrame (cv2 RGB2GRAY, then the INTER_AREA resize) or CleanRL's ResizeObservation (INTER_AREA on
// RGB) then GrayscaleObservation (float64 weights 0.2125, 0.7154, 0.0721, summed in order, truncated).
void EnvPool::emit_preset(int32_t i, const AleEnv& e, const uint8_t* fb, bool pooled) {
  thread_local std::vector<uint8_t> rgb_scratch;
  thread_local std::vector<uint8_t> small_scratch;
  std::vector<uint8_t>& rgb_v = rgb_scratch;  // one thread-local lookup per call, none per pixel
  std::vector<uint8_t>& small_v = small_scratch;
  const size_t rgb_bytes = screens.frame_bytes;
  const size_t pixels = rgb_bytes / 3;
  rgb_v.resize(rgb_bytes);
  uint8_t* rgb = rgb_v.data();
  const gpu_env_native::HostScreens slots{screens, i};
  const uint8_t* a = rgb;
  const uint8_t* b = rgb;
  if (pooled) {
    a = slots.slot(0);
    b = slots.slot(1);
  } else {
    gpu_env_native::write_screen(e, fb, screens, rgb);
  }
  if (preset_obs == kSb3Obs) {
    small_v.resize(pixels);
    uint8_t* gray = small_v.data();
    for (size_t p = 0; p < pixels; ++p) {
      const uint32_t r = a[3 * p] > b[3 * p] ? a[3 * p] : b[3 * p];
      const uint32_t g = a[3 * p + 1] > b[3 * p + 1] ? a[3 * p + 1] : b[3 * p + 1];
      const uint32_t bl = a[3 * p + 2] > b[3 * p + 2] ? a[3 * p + 2] : b[3 * p + 2];
      gray[p] = static_cast<uint8_t>((r * 9798u + g * 19235u + bl * 3735u + 16384u) >> 15);
    }
    gpu_env_native::observe_frame(spec, gray, nullptr, frame_of(i));
    return;
  }
  if (pooled) {
    for (size_t k = 0; k < rgb_bytes; ++k) rgb[k] = a[k] > b[k] ? a[k] : b[k];
  }
  const size_t out_pixels = frame_bytes;
  small_v.resize(out_pixels * 3);
  uint8_t* small = small_v.data();
  gpu_env_native::observe_frame(spec, rgb, nullptr, small);
  uint8_t* frame = frame_of(i);
  for (size_t p = 0; p < out_pixels; ++p) {
    double v = static_cast<double>(small[3 * p]) * 0.2125;
    v = v + static_cast<double>(small[3 * p + 1]) * 0.7154;
    v = v + static_cast<double>(small[3 * p + 2]) * 0.0721;
    frame[p] = static_cast<uint8_t>(static_cast<int32_t>(v));
  }
}

// Row entries 0-6 of env i's preset info: the info's kind (0 {}, 1 AtariEnv's, 2 with seeds), whether it
// has "episode", the episode's return and length, lives, episode frame number, frame number.
void EnvPool::preset_info(int32_t i, int32_t* row) const {
  const WrapEnvState& s = wrap_states[static_cast<size_t>(i)];
  const AleEnv& e = envs[i];
  row[0] = s.info_kind;
  row[1] = s.episode;
  row[2] = s.episode_return;
  row[3] = s.episode_length;
  row[4] = gpu_env::ale::ale_lives(e, *rom);
  row[5] = e.episode_frame_number;
  row[6] = e.frame_number;
}

void EnvPool::run_preset(const Request& q) {
  const int32_t i = q.env;
  if (q.op == kReport) return;
  const size_t k = static_cast<size_t>(i);
  PresetScreens sc{*this, i};
  gpu_env::ale::WrapEnv<PresetScreens, NpRandom> w{envs[i], *rom, buffers + stride * static_cast<uint64_t>(i),
                                                   wrap_rules, action_set.data(), wrap_states[k], sc, np_gens[k],
                                                   default_program};
  Outputs o{};
  if (q.op == kReset) {
    w.reset(q.seed >= 0, static_cast<uint32_t>(q.seed));
    push(i, true, true);
  } else {
    const gpu_env::ale::WrapStep st = w.step(q.action);
    push(i, false, true);
    o.int_reward = st.reward;
    o.reward = static_cast<float>((st.reward > 0) - (st.reward < 0));
    o.terminated = st.terminated;
    o.truncated = st.truncated;
    if (q.op == kStepReset && (st.terminated || st.truncated)) {
      linear_stack(i, finals.data() + stack_bytes() * k);
      preset_info(i, o.preset + 7);
      w.reset(false, 0);
      push(i, true, true);
      o.has_final = 1;
    }
  }
  preset_info(i, o.preset);
  o.preset[14] = wrap_states[k].was_real_done;
  o.preset[15] = wrap_states[k].lives;
  outputs[k] = o;
}

// Env i's observation in gymnasium's stack into `target`: AtariPreprocessing's (slot 0 max-pooled with
// slot 1 when its frame_skip > 1, resized), the screen the env's last call left, or its RAM.
void EnvPool::gym_frame(const AleEnv& e, const uint8_t* fb, gpu_env_native::HostScreens& slots, uint8_t* target) {
  if (gym_obs == kPreprocessedObs) {
    gpu_env_native::observe_frame(spec, slots.slot(0), wrap_rules.skip > 1 ? slots.slot(1) : nullptr, target);
  } else if (gym_obs == kScreenObs) {
    gpu_env_native::write_screen(e, fb, screens, target);
  } else {
    std::memcpy(target, e.console.riot.ram, kRamBytes);
  }
}

// gymnasium's stack on env i: a reset (seeded with q.seed >= 0) or a step; the frame goes on its stack.
void EnvPool::run_gym(const Request& q, gpu_env_native::HostScreens& slots) {
  const int32_t i = q.env;
  const size_t k = static_cast<size_t>(i);
  uint8_t* fb = buffers + stride * static_cast<uint64_t>(i);
  // Without FrameStackObservation the frame is the observation: with the caller's rows it is written there
  // once and nowhere else (an RGB screen is 100 KB: a second copy cost 3-4 % of a random policy's
  // evaluation), and a report writes it again from what the env's last call left (its screens, RAM).
  uint8_t* row = obs_rows != nullptr ? obs_rows + stack_bytes() * k : nullptr;
  if (q.op == kReport) {
    if (row != nullptr && stack_num == 1) gym_frame(envs[i], fb, slots, row);
    if (row != nullptr && stack_num != 1) linear_stack(i, row);
    return;
  }
  gpu_env::ale::WrapEnv<gpu_env_native::HostScreens, NpRandom> w{envs[i], *rom, fb, wrap_rules, action_set.data(),
                                                                 wrap_states[k], slots, np_gens[k], default_program};
  const bool preprocessed = gym_obs == kPreprocessedObs;
  Outputs o{};
  if (q.op == kReset) {
    const bool seeded = q.seed >= 0;
    if (preprocessed) {
      w.preprocessed_reset(seeded, static_cast<uint32_t>(q.seed));
    } else {
      w.base_reset(seeded, static_cast<uint32_t>(q.seed));
      gpu_env::ale::ale_observe(envs[i], *rom, fb);
    }
  } else {
    const gpu_env::ale::WrapStep st = preprocessed ? w.preprocessed_step(q.action, terminal_on_life_loss != 0)
                                                   : w.base_step(q.action, true);
    o.int_reward = st.reward;
    o.terminated = st.terminated;
    o.truncated = st.truncated;
  }
  if (stack_num == 1) {  // no FrameStackObservation: the frame is the whole stack
    gym_frame(envs[i], fb, slots, row != nullptr ? row : stack_of(i));
  } else {
    gym_frame(envs[i], fb, slots, frame_of(i));
    push(i, q.op == kReset, false);
    if (row != nullptr) linear_stack(i, row);
  }
  outputs[k] = o;
}

}  // namespace pool
}  // namespace gpu_env_native
