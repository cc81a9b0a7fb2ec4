// The pools of gpu_env.envpool (EnvPool's rules), gpu_env.ale_vector (ale-py 0.12's vector env), the
// presets "sb3" and "cleanrl" (SB3's AtariWrapper, CleanRL's make_env) and gpu_env.make_vec on backend
// "cpu" (gymnasium's AtariEnv, AtariPreprocessing, FrameStackObservation) on the CPU: per env, the
// rules' reset and step (core/ale/preprocessing.h), the max-pool, grayscale and resize (preprocess.h)
// and the frame stack, run by the pool's own worker threads. Plain C ABI for ctypes.
//
// send() queues requests (env id, action index, paddle strength, reset flag and seed); a worker takes
// one, runs it on that env, keeps the env's outputs in the env's own slots and marks the env complete.
// recv(count) waits until `count` envs are complete and copies them out in completion order, or, given
// `order` (the ids of exactly the envs outstanding), in that order. An env is sent again only after it
// was received (the callers check), so a worker never writes slots that recv is reading. In a pool of
// gymnasium's stack (make_vec's, whose caller always waits for all it sent) the thread in recv takes
// requests too, and the pool starts one worker fewer than its thread count (parallel_for's model: the
// caller is already on a core, and a step never waits for a woken thread to be scheduled in its place).
#include <pthread.h>
#include <sched.h>

#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "ale/environment.h"
#include "ale/mt19937.h"
#include "ale/preprocessing.h"
#include "host_screens.h"
#include "np_random.h"
#include "preprocess.h"

#define GPU_ENV_EXPORT extern "C" __attribute__((visibility("default")))

using gpu_env::ale::AleEnv;
using gpu_env::ale::AleRom;
using gpu_env::ale::PoolEnvState;
using gpu_env::ale::PoolRules;
using gpu_env::ale::PoolStep;
using gpu_env::ale::VecEnvState;
using gpu_env::ale::VecRules;
using gpu_env::ale::WrapEnvState;
using gpu_env::ale::WrapRules;
using gpu_env_native::NpPcg64;
using gpu_env_native::NpRandom;

namespace {

enum Kind : int32_t { kEnvpool = 0, kAleVector = 1, kPreset = 2, kGym = 3 };
// kReport: the env's current outputs, nothing run; kStepReset (presets): a step, then a reset of an env
// whose episode ended, its last stack and info kept as the final ones.
enum Op : int32_t { kStep = 0, kReset = 1, kReport = 2, kStepReset = 3 };
enum PresetObs : int32_t { kSb3Obs = 0, kCleanrlObs = 1 };
// The observation of gymnasium's stack: AtariPreprocessing's frame, AtariEnv's screen (RGB or grayscale, as
// the pool's screens) or its RAM.
enum GymObs : int32_t { kPreprocessedObs = 0, kScreenObs = 1, kRamObs = 2 };
constexpr size_t kRamBytes = static_cast<size_t>(gpu_env::ale::kRamBytes);
constexpr int32_t kPresetInfo = 16;  // the int32 row of a preset's infos (gpu_env_pool_recv)

struct Request {
  int32_t env;
  int32_t op;
  int32_t action;  // an index into the action set
  float strength;
  int64_t seed;  // kReset: < 0 keeps the env's generators, otherwise reseeds ALE and the env's own
};

// One env's outputs as recv copies them (fields a kind does not report stay 0).
struct Outputs {
  float reward;
  float info_reward;
  int32_t int_reward;
  uint8_t terminated;  // the kind's terminated flag
  uint8_t truncated;
  uint8_t done;        // EnvPool: done
  uint8_t game_over;   // EnvPool: info["terminated"]
  uint8_t has_final;   // ale-py same-step: final_obs holds the ended episode's last stack
  int32_t preset[kPresetInfo];  // presets: the infos (gpu_env_pool_recv)
};

struct EnvPool {
  int32_t kind;
  int32_t same_step;
  int32_t default_program;
  const AleRom* rom;
  AleEnv* envs;
  uint8_t* buffers;
  uint64_t stride;
  int32_t n;
  PoolRules pool_rules;
  VecRules vec_rules;
  WrapRules wrap_rules;
  int32_t preset_obs;
  int32_t gym_obs;
  uint8_t terminal_on_life_loss;  // gymnasium's AtariPreprocessing option
  std::vector<int32_t> action_set;
  std::vector<gpu_env::ale::Mt19937> gens;
  std::vector<PoolEnvState> pool_states;
  std::vector<VecEnvState> vec_states;
  std::vector<WrapEnvState> wrap_states;
  std::vector<NpRandom> np_gens;
  std::vector<int32_t> stack_idx;  // ale-py: the next slot of each env's circular stack
  std::vector<Outputs> outputs;
  gpu_env_native::PreprocessBuffers screens;
  gpu_env_native::ObserveSpec spec;
  size_t frame_bytes;  // one resized frame, [dst_h][dst_w][frame_channels]
  int32_t frame_channels;
  int32_t stack_num;
  std::vector<uint8_t> frames;  // [n][frame_bytes] scratch
  std::vector<uint8_t> stacks;  // [n][stack_num][frame]
  std::vector<uint8_t> finals;  // ale-py same-step: [n][stack_num][frame]
  std::vector<int32_t> position;

  std::mutex mutex;
  std::condition_variable work;
  std::condition_variable completed_cv;
  std::deque<Request> queue;
  std::deque<int32_t> completed;
  // How many completed envs recv waits for (none waiting: no count reaches it): a worker wakes recv only
  // when its completion reaches the count, not once per env.
  size_t recv_wants = SIZE_MAX;
  // Gymnasium's stack: where the thread that runs env i's request writes its stack (row i, env order), so
  // that recv need not copy the observations; null: recv copies them (gpu_env_pool_obs_rows). Without a
  // frame stack (stack_num 1) a request with rows keeps no copy of its frame: recv's "obs" is then only
  // right through rows (PoolEngine always sets them).
  uint8_t* obs_rows = nullptr;
  bool stop = false;
  std::vector<std::thread> workers;

  size_t stack_bytes() const { return frame_bytes * static_cast<size_t>(stack_num); }
  uint8_t* stack_of(int32_t i) { return stacks.data() + stack_bytes() * static_cast<size_t>(i); }
  uint8_t* frame_of(int32_t i) { return frames.data() + frame_bytes * static_cast<size_t>(i); }
  void observe(int32_t i, gpu_env_native::HostScreens& slots, bool pool);
  void push(int32_t i, bool push_all, bool channels_first);
  void push_vector(int32_t i, bool clear);
  void linear_stack(int32_t i, uint8_t* out);
  void run(const Request& q);
  void run_envpool(const Request& q, gpu_env_native::HostScreens& slots);
  void run_vector(const Request& q, gpu_env_native::HostScreens& slots);
  void run_preset(const Request& q);
  void run_gym(const Request& q, gpu_env_native::HostScreens& slots);
  void gym_frame(const AleEnv& e, const uint8_t* fb, gpu_env_native::HostScreens& slots, uint8_t* target);
  void emit_preset(int32_t i, const AleEnv& e, const uint8_t* fb, bool pooled);
  void preset_info(int32_t i, int32_t* row) const;
  Outputs vector_outputs(int32_t i) const;
  void serve();
  void complete(int32_t env);
  bool caller_works() const { return kind == kGym; }
};

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

void EnvPool::run(const Request& q) {
  if (kind == kPreset) {
    run_preset(q);
    return;
  }
  gpu_env_native::HostScreens slots{screens, q.env};
  if (kind == kEnvpool) {
    run_envpool(q, slots);
  } else if (kind == kAleVector) {
    run_vector(q, slots);
  } else {
    run_gym(q, slots);
  }
}

void EnvPool::serve() {
  for (;;) {
    Request q;
    {
      std::unique_lock<std::mutex> lock(mutex);
      work.wait(lock, [this] { return stop || !queue.empty(); });
      if (stop) return;
      q = queue.front();
      queue.pop_front();
    }
    run(q);
    complete(q.env);
  }
}

void EnvPool::complete(int32_t env) {
  bool reached = false;
  {
    std::lock_guard<std::mutex> lock(mutex);
    completed.push_back(env);
    reached = completed.size() >= recv_wants;
  }
  if (reached) completed_cv.notify_all();
}

}  // namespace

// The ROM of a gpu_env_ale_rom_new handle (native/ale_batch.cpp).
extern "C" const AleRom* gpu_env_ale_rom_of(const void* handle);

// A pool over the caller's envs and frame buffers (as gpu_env_ale_step_observe takes them). `config`: kind
// (0 EnvPool, 1 ale-py vector, 2 preset, 3 gymnasium's stack), same_step (ale-py's SameStep autoreset),
// default_program (the setMode program a reseeding loadROM runs), then 8 rules: for EnvPool and ale-py
// frame_skip, noop_max, max_episode_steps, then for EnvPool episodic_life, reward_clip,
// zero_discount_on_life_loss, fire_reset, and for ale-py maxpool, fire_reset, episodic_life,
// life_loss_info, reward_clipping; for a preset AtariEnv's frameskip low and high (high 0: fixed),
// noop_max, MaxAndSkipEnv's skip, fire_reset and the observation (0 SB3's, 1 CleanRL's; the screens are
// RGB, `channels` 3); for gymnasium's stack the same four (AtariEnv's frameskip low and high,
// AtariPreprocessing's noop_max and frame_skip), fire_reset 0, the observation (GymObs: 0
// AtariPreprocessing's, 1 the screen in `channels`, 2 the RAM) and terminal_on_life_loss. Env i's own
// generator is std::mt19937(seeds[i]); `action_set` maps action indices to ALE actions. Screens:
// `channels`, `tables`, `height`, buf0/buf1 as for gpu_env_ale_step_observe; the resize as for
// gpu_env_preprocess_observe (its tap tables must outlive the pool); `stack_num` frames per observation.
// With affinity_offset >= 0, worker t runs on core (affinity_offset + t) modulo the cores (ale-py's
// thread_affinity_offset).
GPU_ENV_EXPORT void* gpu_env_pool_new(const void* rom, AleEnv* envs, int32_t n, uint8_t* buffers, uint64_t stride,
                                      const int32_t* config, const uint32_t* seeds, const int32_t* action_set,
                                      int32_t num_actions, const uint8_t* tables, int32_t channels, int32_t height,
                                      uint8_t* buf0, uint8_t* buf1, int32_t dst_h, int32_t dst_w,
                                      int32_t integer_path, const int32_t* x_index, const float* x_weight, int32_t kx,
                                      const int32_t* y_index, const float* y_weight, int32_t ky, int32_t stack_num,
                                      int32_t num_threads, int32_t affinity_offset) {
  EnvPool* p = new EnvPool();
  p->kind = config[0];
  p->same_step = config[1];
  p->default_program = config[2];
  const int32_t* c = config + 3;
  p->pool_rules = PoolRules{c[0], c[1], c[2], static_cast<uint8_t>(c[3]), static_cast<uint8_t>(c[4]),
                            static_cast<uint8_t>(c[5]), static_cast<uint8_t>(c[6])};
  p->vec_rules = VecRules{c[0], c[1], c[2], static_cast<uint8_t>(c[3]), static_cast<uint8_t>(c[4]),
                          static_cast<uint8_t>(c[5]), static_cast<uint8_t>(c[6]), static_cast<uint8_t>(c[7])};
  p->wrap_rules = WrapRules{c[0], c[1], c[2], c[3], static_cast<uint8_t>(c[4])};
  p->preset_obs = c[5];
  p->gym_obs = c[5];
  p->terminal_on_life_loss = static_cast<uint8_t>(c[6]);
  p->rom = gpu_env_ale_rom_of(rom);
  p->envs = envs;
  p->buffers = buffers;
  p->stride = stride;
  p->n = n;
  p->action_set.assign(action_set, action_set + num_actions);
  p->gens.resize(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) gpu_env::ale::mt_seed(p->gens[static_cast<size_t>(i)], seeds[i]);
  // EnvPool's constructor: done, and elapsed_step past the limit (the first reset resets the game).
  p->pool_states.assign(static_cast<size_t>(n), PoolEnvState{c[2] + 1, 0, 1});
  p->vec_states.assign(static_cast<size_t>(n), VecEnvState{c[2] + 1, 0, 0, 0, 0});
  p->wrap_states.assign(static_cast<size_t>(n), WrapEnvState{0, 1, 0, 0, 0, 0, 0, 0});
  p->np_gens.assign(static_cast<size_t>(n), NpRandom{});
  p->stack_idx.assign(static_cast<size_t>(n), 0);
  p->outputs.assign(static_cast<size_t>(n), Outputs{});
  p->screens = gpu_env_native::make_buffers(channels, tables, height, buf0, buf1);
  const bool preset = p->kind == kPreset;
  const int32_t resize_channels = preset && p->preset_obs == kSb3Obs ? 1 : channels;
  p->spec = gpu_env_native::ObserveSpec{height, 160, resize_channels, dst_h, dst_w, integer_path != 0,
                                        {x_index, x_weight, kx}, {y_index, y_weight, ky}};
  p->frame_channels = preset ? 1 : channels;
  p->frame_bytes = static_cast<size_t>(dst_h) * static_cast<size_t>(dst_w) * static_cast<size_t>(p->frame_channels);
  if (p->kind == kGym && p->gym_obs == kScreenObs) p->frame_bytes = p->screens.frame_bytes;
  if (p->kind == kGym && p->gym_obs == kRamObs) p->frame_bytes = kRamBytes;
  p->stack_num = stack_num;
  p->frames.assign(p->frame_bytes * static_cast<size_t>(n), 0);
  p->stacks.assign(p->stack_bytes() * static_cast<size_t>(n), 0);
  p->finals.assign(p->same_step || preset ? p->stack_bytes() * static_cast<size_t>(n) : 0, 0);
  p->position.assign(static_cast<size_t>(n), 0);
  const int32_t threads = (num_threads < 1 ? 1 : num_threads) - (p->caller_works() ? 1 : 0);
  for (int32_t t = 0; t < threads; ++t) p->workers.emplace_back([p] { p->serve(); });
  const int32_t cores = static_cast<int32_t>(std::thread::hardware_concurrency());
  for (int32_t t = 0; affinity_offset >= 0 && cores > 0 && t < threads; ++t) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((affinity_offset + t) % cores, &set);
    pthread_setaffinity_np(p->workers[static_cast<size_t>(t)].native_handle(), sizeof(cpu_set_t), &set);
  }
  return p;
}

GPU_ENV_EXPORT void gpu_env_pool_free(void* pool) {
  EnvPool* p = static_cast<EnvPool*>(pool);
  {
    std::lock_guard<std::mutex> lock(p->mutex);
    p->stop = true;
  }
  p->work.notify_all();
  for (std::thread& t : p->workers) t.join();
  delete p;
}

// Queue `count` requests: env ids[k] with op ops[k] (0 step, 1 reset, 2 report), action index
// actions[k], paddle strength strengths[k] and (for a reset) seed seeds[k] (< 0: no reseed).
GPU_ENV_EXPORT void gpu_env_pool_send(void* pool, const int32_t* ids, const int32_t* ops, const int32_t* actions,
                                      const float* strengths, const int64_t* seeds, int32_t count) {
  EnvPool* p = static_cast<EnvPool*>(pool);
  {
    std::lock_guard<std::mutex> lock(p->mutex);
    for (int32_t k = 0; k < count; ++k) p->queue.push_back(Request{ids[k], ops[k], actions[k], strengths[k], seeds[k]});
  }
  p->work.notify_all();
}

// Wait for `count` completed envs and write them out: row k is the k-th completed env, or, with
// `order` (the ids of exactly the envs outstanding), env order[k]. `out` holds 14 pointers, each
// written where not null: env id (int32), stacked observation (uint8), final observation (uint8,
// zeros unless has_final), reward (float32), unclipped reward (float32), integer reward (int32),
// terminated, truncated, done, game over (uint8 each), lives, elapsed steps, frame number, episode
// frame number (int32 each); RAM (uint8[128]) follows at out[14], a preset's infos (int32[16]) at out[15]:
// entries 0-6 the returned info (EnvPool::preset_info), 7-13 the final info (with has_final), 14
// EpisodicLifeEnv.was_real_done, 15 EpisodicLifeEnv.lives.
GPU_ENV_EXPORT void gpu_env_pool_recv(void* pool, int32_t count, const int32_t* order, void* const* out) {
  EnvPool* p = static_cast<EnvPool*>(pool);
  std::vector<int32_t> got(static_cast<size_t>(count));
  {
    std::unique_lock<std::mutex> lock(p->mutex);
    while (p->caller_works() && !p->queue.empty()) {
      const Request q = p->queue.front();
      p->queue.pop_front();
      lock.unlock();
      p->run(q);
      p->complete(q.env);
      lock.lock();
    }
    p->recv_wants = static_cast<size_t>(count);
    p->completed_cv.wait(lock, [&] { return p->completed.size() >= p->recv_wants; });
    p->recv_wants = SIZE_MAX;
    for (int32_t k = 0; k < count; ++k) {
      got[static_cast<size_t>(k)] = p->completed.front();
      p->completed.pop_front();
    }
  }
  if (order != nullptr) {
    for (int32_t k = 0; k < count; ++k) p->position[static_cast<size_t>(order[k])] = k;
  }
  const size_t sb = p->stack_bytes();
  auto i32 = [&](int idx) { return static_cast<int32_t*>(out[idx]); };
  auto u8 = [&](int idx) { return static_cast<uint8_t*>(out[idx]); };
  auto f32 = [&](int idx) { return static_cast<float*>(out[idx]); };
  for (int32_t k = 0; k < count; ++k) {
    const int32_t i = got[static_cast<size_t>(k)];
    const size_t row = static_cast<size_t>(order != nullptr ? p->position[static_cast<size_t>(i)] : k);
    const Outputs& o = p->outputs[static_cast<size_t>(i)];
    const AleEnv& e = p->envs[i];
    if (out[0]) i32(0)[row] = i;
    if (out[1]) p->linear_stack(i, u8(1) + sb * row);
    if (out[2]) {
      if (o.has_final) {
        std::memcpy(u8(2) + sb * row, p->finals.data() + sb * static_cast<size_t>(i), sb);
      } else {
        std::memset(u8(2) + sb * row, 0, sb);
      }
    }
    if (out[3]) f32(3)[row] = o.reward;
    if (out[4]) f32(4)[row] = o.info_reward;
    if (out[5]) i32(5)[row] = o.int_reward;
    if (out[6]) u8(6)[row] = o.terminated;
    if (out[7]) u8(7)[row] = o.truncated;
    if (out[8]) u8(8)[row] = o.done;
    if (out[9]) u8(9)[row] = o.game_over;
    if (out[10]) {
      i32(10)[row] = p->kind == kEnvpool  ? p->pool_states[static_cast<size_t>(i)].lives
                     : p->kind == kGym    ? gpu_env::ale::ale_lives(e, *p->rom)
                                          : p->vec_states[static_cast<size_t>(i)].lives;
    }
    if (out[11]) {
      i32(11)[row] = p->kind == kEnvpool ? p->pool_states[static_cast<size_t>(i)].elapsed_step
                                         : p->vec_states[static_cast<size_t>(i)].elapsed;
    }
    if (out[12]) i32(12)[row] = e.frame_number;
    if (out[13]) i32(13)[row] = e.episode_frame_number;
    if (out[14]) std::memcpy(u8(14) + kRamBytes * row, e.console.riot.ram, kRamBytes);
    if (out[15]) std::memcpy(i32(15) + kPresetInfo * row, o.preset, sizeof(o.preset));
  }
}

// Gymnasium's stack: have every request from now on write its env's stack to row `env` of `rows`
// ([n][stack]; null: stop). Only while no request is running.
GPU_ENV_EXPORT void gpu_env_pool_obs_rows(void* pool, uint8_t* rows) { static_cast<EnvPool*>(pool)->obs_rows = rows; }

// Set the numpy generators of envs ids[k] (presets, gymnasium's stack): state k is uint64[6] (state high
// and low words, increment high and low, has_uint32, uinteger, as PCG64.state holds them); into the generator that
// draws (`now` != 0) or the one a seeded reset restores. Only for envs not running a request.
GPU_ENV_EXPORT void gpu_env_pool_np_random(void* pool, const int32_t* ids, const uint64_t* states, int32_t count,
                                           int32_t now) {
  EnvPool* p = static_cast<EnvPool*>(pool);
  for (int32_t k = 0; k < count; ++k) {
    const uint64_t* v = states + 6 * static_cast<size_t>(k);
    const NpPcg64 g{v[0], v[1], v[2], v[3], static_cast<uint32_t>(v[4]), static_cast<uint32_t>(v[5])};
    NpRandom& r = p->np_gens[static_cast<size_t>(ids[k])];
    (now ? r.now : r.seeded) = g;
  }
}
