// The pools of gpu_env.envpool (EnvPool's rules), gpu_env.ale_vector (ale-py 0.12's vector env), the
// presets "sb3" and "cleanrl" (SB3's AtariWrapper, CleanRL's make_env) and gpu_env.make_vec on backend
// "cpu" (gymnasium's AtariEnv, AtariPreprocessing, FrameStackObservation) on the CPU: per env, the
// rules' reset and step, the max-pool, grayscale and resize and the frame stack (env_pool_clients.cpp), run by
// the pool's own worker threads (here, with the plain C ABI for ctypes).
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

#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "env_pool.h"

#define GPU_ENV_EXPORT extern "C" __attribute__((visibility("default")))

namespace gpu_env_native {
namespace pool {

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

}  // namespace pool
}  // namespace gpu_env_native

using gpu_env_native::NpPcg64;
using gpu_env_native::NpRandom;
using namespace gpu_env_native::pool;  // the C ABI below is the pool's door

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
