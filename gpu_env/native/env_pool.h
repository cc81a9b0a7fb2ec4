// The native thread pool's state (env_pool.cpp: its threads and C ABI; env_pool_clients.cpp: each client's
// reset and step on one env, the observation and the frame stack). Internal to the CPU library.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "ale/environment.h"
#include "ale/mt19937.h"
#include "ale/pool_rules.h"
#include "ale/vector_rules.h"
#include "ale/wrap_rules.h"
#include "host_screens.h"
#include "np_random.h"
#include "preprocess.h"

namespace gpu_env_native {
namespace pool {

using gpu_env::ale::AleEnv;
using gpu_env::ale::AleRom;
using gpu_env::ale::PoolEnvState;
using gpu_env::ale::PoolRules;
using gpu_env::ale::PoolStep;
using gpu_env::ale::VecEnvState;
using gpu_env::ale::VecRules;
using gpu_env::ale::WrapEnvState;
using gpu_env::ale::WrapRules;

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

}  // namespace pool
}  // namespace gpu_env_native
