// gymnasium's AtariPreprocessing for one environment: the frame-skip step (over AtariEnv(frameskip=1)
// here, over any AtariEnv.step in preprocessed_step_over, which WrapEnv below runs for the native pool)
// and the unseeded reset. The CPU library (native/ale_batch.cpp, native/env_pool.cpp) and the CUDA
// kernels (cuda/kernels.h) all run these functions; what differs between them is only where a screen
// goes, which the caller's `Screens` type decides:
//   screens.capture(e, fb, slot)  env e's current picture (frame buffers fb) into obs_buffer[slot];
//   screens.clear(slot)           obs_buffer[slot] = 0.
// slot 0 is the wrapper's obs_buffer[0] (the screen after the last act), slot 1 its obs_buffer[1]
// (the act before). The max-pool of the two and the resize are the caller's.
//
// Facts (gymnasium 1.x, gymnasium/wrappers/atari_preprocessing.py; the code is our own): step() sums
// the rewards of up to frame_skip env steps and stops after one that is terminated or truncated;
// with terminal_on_life_loss a step that loses a life is terminated too (the wrapper compares with
// the lives it saw last and remembers the new count); the screen of step frame_skip-2 goes to
// obs_buffer[1] and of step frame_skip-1 to obs_buffer[0], only when reached. reset() resets the env,
// then acts noop_action `noops` times, resetting again whenever an act ends the game (terminated or
// truncated), then records the lives, puts the screen in obs_buffer[0] and clears obs_buffer[1].
#pragma once

#include "../hd.h"
#include "environment.h"

namespace gpu_env {
namespace ale {

// What one step reports (AtariEnv's, a wrapper's or AtariPreprocessing's): the summed reward and the flags.
struct PreprocessedStep {
  int32_t reward;
  uint8_t terminated;
  uint8_t truncated;
};

// A Screens type that keeps nothing (a step whose screens are not observed).
struct NoScreens {
  HD void capture(const AleEnv&, const uint8_t*, int32_t) {}
  HD void clear(int32_t) {}
};

// The screen the last act left into `slot` (its picture drawn first if it was not: frames.h). Every
// wrapper below marks the acts whose screens it captures as observed, so that drawing is the exception
// (after a reset's no-ops); a wrapper's step also leaves the current screen drawn (ale_observe) for a
// getScreen after it.
template <class Screens>
HD void ale_capture(AleEnv& e, const AleRom& r, uint8_t* fb, Screens& screens, int32_t slot) {
  ale_observe(e, r, fb);
  screens.capture(e, fb, slot);
}

// reset_game, then `noops` acts of noop_action, with reset_game again after any act that ends the
// game or reaches the frame limit; the screen it leaves is drawn.
HD void ale_reset_with_noops(AleEnv& e, const AleRom& r, uint8_t* fb, int32_t noops, int32_t noop_action) {
  ale_reset_game(e, r, fb);
  for (int32_t t = 0; t < noops; ++t) {
    ale_act(e, r, fb, noop_action, kActionNoop, 1.0f, 0.0f, false);
    if (ale_game_over(e, r)) ale_reset_game(e, r, fb);
  }
  ale_observe(e, r, fb);
}

// AtariPreprocessing.step(action) over any AtariEnv.step: `env_step(observed)` runs one env step of
// the action (`observed`: the wrapper reads the screen it leaves) and returns its reward and flags.
// `lives` (in/out) is the wrapper's last seen lives count, read and updated only with
// terminal_on_life_loss.
template <class EnvStep, class Screens>
HD PreprocessedStep preprocessed_step_over(EnvStep& env_step, AleEnv& e, const AleRom& r, uint8_t* fb,
                                           int32_t frame_skip, bool terminal_on_life_loss, int32_t& lives,
                                           Screens& screens) {
  PreprocessedStep out{0, 0, 0};
  for (int32_t t = 0; t < frame_skip; ++t) {
    const PreprocessedStep st = env_step(t >= frame_skip - 2);
    out.reward += st.reward;
    bool terminated = st.terminated != 0;
    if (terminal_on_life_loss) {
      const int32_t now = ale_lives(e, r);
      terminated = terminated || now < lives;
      lives = now;
    }
    out.terminated = terminated ? 1 : 0;
    out.truncated = st.truncated;
    if (terminated || st.truncated) break;
    if (t == frame_skip - 2) ale_capture(e, r, fb, screens, 1);
    if (t == frame_skip - 1) ale_capture(e, r, fb, screens, 0);
  }
  ale_observe(e, r, fb);
  return out;
}

// AtariEnv(frameskip=1).step(action): one ALE act.
struct AleActStep {
  AleEnv& e;
  const AleRom& r;
  uint8_t* fb;
  int32_t action;
  HD PreprocessedStep operator()(bool observed) {
    PreprocessedStep out{ale_act(e, r, fb, action, kActionNoop, 1.0f, 0.0f, observed), 0, 0};
    out.terminated = ale_terminal(e) ? 1 : 0;
    out.truncated = ale_truncated(e, r) ? 1 : 0;
    return out;
  }
};

// AtariPreprocessing.step(action) over AtariEnv(frameskip=1): up to frame_skip ALE acts.
template <class Screens>
HD PreprocessedStep preprocessed_step(AleEnv& e, const AleRom& r, uint8_t* fb, int32_t action, int32_t frame_skip,
                                      bool terminal_on_life_loss, int32_t& lives, Screens& screens) {
  AleActStep env_step{e, r, fb, action};
  return preprocessed_step_over(env_step, e, r, fb, frame_skip, terminal_on_life_loss, lives, screens);
}

// The end of AtariPreprocessing.reset(), after the env's reset and no-ops: the lives are recorded, the
// screen goes to obs_buffer[0] and obs_buffer[1] is cleared.
template <class Screens>
HD void preprocessed_reset_end(AleEnv& e, const AleRom& r, uint8_t* fb, int32_t& lives, Screens& screens) {
  lives = ale_lives(e, r);
  ale_capture(e, r, fb, screens, 0);
  screens.clear(1);
}

// AtariPreprocessing.reset() without a seed, with `noops` no-op acts (the caller draws the count).
template <class Screens>
HD void preprocessed_reset(AleEnv& e, const AleRom& r, uint8_t* fb, int32_t noops, int32_t noop_action,
                           int32_t& lives, Screens& screens) {
  ale_reset_with_noops(e, r, fb, noops, noop_action);
  preprocessed_reset_end(e, r, fb, lives, screens);
}

}  // namespace ale
}  // namespace gpu_env

namespace gpu_env {
namespace ale {

// ---------------------------------------------------------------------------------------------
// EnvPool's Atari rules (envpool/atari/atari_env.h, EnvPool 1.2.5; facts, the code is our own), the
// step of gpu_env.envpool. Screens go to the same two slots as above: slot 0 is EnvPool's
// maxpool_buf_[0], slot 1 its maxpool_buf_[1]; the max-pool, resize and frame stack are the caller's
// (PoolStep.pool says whether the two are max-pooled, PoolStep.push_all whether the new frame
// fills the whole stack).
//   Reset: noop = U{0, noop_max-1}(the env's own mt19937) + 1 - fire_reset. Unless episodic_life (and
//   the game is not over and elapsed_step < max_episode_steps) reset_game (push_all). Then `noop`
//   NOOP acts (reset_game again, and push_all, on a game over), one FIRE act with fire_reset; the
//   screen goes to slot 0, unpooled.
//   Step: up to frame_skip acts, stopping at a game over; the acts at skip 2 and 1 (counting down)
//   go to slots 0 and 1; pooled only when every act ran. elapsed_step counts steps; done on a game
//   over, on elapsed_step >= max_episode_steps (trunc) and with episodic_life on 0 < lives < last
//   lives. Rewards are summed in float32; reward_clip returns their sign, info_reward is unclipped.

constexpr int32_t kActionFire = 1;  // ALE's PLAYER_A_FIRE

struct PoolRules {
  int32_t frame_skip;
  int32_t noop_max;
  int32_t max_episode_steps;
  uint8_t episodic_life;
  uint8_t reward_clip;
  uint8_t zero_discount_on_life_loss;
  uint8_t fire_reset;
};

// One env's EnvPool state between calls (EnvPool starts with done set and elapsed_step past the limit).
struct PoolEnvState {
  int32_t elapsed_step;
  int32_t lives;
  uint8_t done;
};

struct PoolStep {
  float reward;
  float info_reward;
  float discount;
  uint8_t done;
  uint8_t trunc;
  uint8_t terminated;  // ALE game over (terminal or truncated by the frame limit)
  uint8_t push_all;
  uint8_t pool;
};

// std::uniform_int_distribution<int>(low, high)(g) as libstdc++ (GCC >= 11) draws it from a 32-bit
// generator (Lemire's multiply-and-reject).
HD int32_t mt_uniform_int(Mt19937& g, int32_t low, int32_t high) {
  const uint32_t span = static_cast<uint32_t>(high - low) + 1u;
  uint64_t product = static_cast<uint64_t>(mt_next(g)) * span;
  uint32_t low_bits = static_cast<uint32_t>(product);
  if (low_bits < span) {
    const uint32_t threshold = (0u - span) % span;
    while (low_bits < threshold) {
      product = static_cast<uint64_t>(mt_next(g)) * span;
      low_bits = static_cast<uint32_t>(product);
    }
  }
  return low + static_cast<int32_t>(product >> 32);
}

HD PoolStep pool_output(const AleEnv& e, const AleRom& r, const PoolRules& rules, const PoolEnvState& s) {
  PoolStep out{0.0f, 0.0f, 1.0f, s.done, 0, 0, 0, 0};
  out.trunc = (s.done && s.elapsed_step >= rules.max_episode_steps) ? 1 : 0;
  out.terminated = ale_game_over(e, r) ? 1 : 0;
  return out;
}

// EnvPool's Reset (see above); `gen` is the env's own generator.
template <class Screens>
HD PoolStep pool_reset(AleEnv& e, const AleRom& r, uint8_t* fb, const PoolRules& rules, Mt19937& gen,
                       PoolEnvState& s, Screens& screens) {
  const int32_t noop = mt_uniform_int(gen, 0, rules.noop_max - 1) + 1 - rules.fire_reset;
  bool push_all = false;
  if (!rules.episodic_life || ale_game_over(e, r) || s.elapsed_step >= rules.max_episode_steps) {
    ale_reset_game(e, r, fb);
    s.elapsed_step = 0;
    push_all = true;
  }
  for (int32_t t = 0; t < noop; ++t) {
    ale_act(e, r, fb, kActionNoop, kActionNoop, 1.0f, 0.0f, false);
    if (ale_game_over(e, r)) {
      ale_reset_game(e, r, fb);
      push_all = true;
    }
  }
  if (rules.fire_reset) ale_act(e, r, fb, kActionFire, kActionNoop, 1.0f, 0.0f, true);
  ale_capture(e, r, fb, screens, 0);
  s.done = 0;
  s.lives = ale_lives(e, r);
  PoolStep out = pool_output(e, r, rules, s);
  out.push_all = push_all ? 1 : 0;
  return out;
}

// EnvPool's Step with the ALE action `action` (see above).
template <class Screens>
HD PoolStep pool_step(AleEnv& e, const AleRom& r, uint8_t* fb, const PoolRules& rules, int32_t action,
                      PoolEnvState& s, Screens& screens) {
  float reward = 0.0f;
  bool done = false;
  int32_t skip = rules.frame_skip;
  while (skip > 0 && !done) {
    reward = reward + static_cast<float>(ale_act(e, r, fb, action, kActionNoop, 1.0f, 0.0f, skip <= 2));
    done = ale_game_over(e, r);
    if (skip <= 2) ale_capture(e, r, fb, screens, 2 - skip);
    --skip;
  }
  ale_observe(e, r, fb);
  s.elapsed_step += 1;
  done = done || s.elapsed_step >= rules.max_episode_steps;
  const int32_t lives = ale_lives(e, r);
  if (rules.episodic_life && 0 < lives && lives < s.lives) done = true;
  const float discount = rules.zero_discount_on_life_loss ? ((s.lives == lives && !done) ? 1.0f : 0.0f)
                                                          : (done ? 0.0f : 1.0f);
  s.done = done ? 1 : 0;
  s.lives = lives;
  PoolStep out = pool_output(e, r, rules, s);
  out.info_reward = reward;
  out.reward = rules.reward_clip ? static_cast<float>((reward > 0.0f) - (reward < 0.0f)) : reward;
  out.discount = discount;
  out.pool = skip == 0 ? 1 : 0;
  return out;
}

}  // namespace ale
}  // namespace gpu_env

namespace gpu_env {
namespace ale {

// ---------------------------------------------------------------------------------------------
// ale-py 0.12's vector env (src/ale/vector/preprocessed_env.cpp, v0.12.1; facts, the code is our own),
// the step of gpu_env.ale_vector. Screens go to slot 0 (raw_frames_[0]) and slot 1 (raw_frames_[1]);
// the caller max-pools them (with VecRules.maxpool), resizes slot 0 and pushes it onto the stack.
//   Reset (after the caller's reseed, if any): reset_game; one FIRE act with fire_reset; then
//   U{0, max(noop_max-1, 0)}(the env's own mt19937) - fire_reset NOOP acts (reset_game on a game
//   over); the screen to slot 0, slot 1 cleared; the counters restart.
//   Step: up to frame_skip acts with the paddle strength; after each, elapsed_steps counts a frame,
//   and the loop stops on a game over, on elapsed >= max_episode_steps or (episodic_life) on a life
//   lost (0 < lives < the lives at the step's start); otherwise the acts at skip 2 and 1 (counting
//   down) go to slots 1 and 0. The integer reward is clamped to [-1, 1] with reward_clipping.

struct VecRules {
  int32_t frame_skip;
  int32_t noop_max;
  int32_t max_episode_steps;
  uint8_t maxpool;
  uint8_t fire_reset;
  uint8_t episodic_life;
  uint8_t life_loss_info;
  uint8_t reward_clipping;
};

struct VecEnvState {
  int32_t elapsed;
  int32_t lives;
  int32_t reward;
  uint8_t game_over;
  uint8_t life_lost;
};

HD bool vec_episode_over(const VecRules& rules, const VecEnvState& s) {
  return s.game_over || s.elapsed >= rules.max_episode_steps || (rules.episodic_life && s.life_lost);
}

HD bool vec_terminated(const VecRules& rules, const VecEnvState& s) {
  return s.game_over || ((rules.life_loss_info || rules.episodic_life) && s.life_lost);
}

HD bool vec_truncated(const VecRules& rules, const VecEnvState& s) {
  return s.elapsed >= rules.max_episode_steps && !vec_terminated(rules, s);
}

template <class Screens>
HD void vec_reset(AleEnv& e, const AleRom& r, uint8_t* fb, const VecRules& rules, Mt19937& gen, VecEnvState& s,
                  Screens& screens) {
  ale_reset_game(e, r, fb);
  if (rules.fire_reset) ale_act(e, r, fb, kActionFire, kActionNoop, 1.0f, 0.0f, false);
  int32_t noops = mt_uniform_int(gen, 0, rules.noop_max > 0 ? rules.noop_max - 1 : 0) - rules.fire_reset;
  for (; noops > 0; --noops) {
    ale_act(e, r, fb, kActionNoop, kActionNoop, 1.0f, 0.0f, false);
    if (ale_game_over(e, r)) ale_reset_game(e, r, fb);
  }
  ale_capture(e, r, fb, screens, 0);
  screens.clear(1);
  s = VecEnvState{0, ale_lives(e, r), 0, 0, 0};
}

template <class Screens>
HD void vec_step(AleEnv& e, const AleRom& r, uint8_t* fb, const VecRules& rules, int32_t action, float strength,
                 VecEnvState& s, Screens& screens) {
  int32_t reward = 0;
  for (int32_t skip = rules.frame_skip; skip > 0; --skip) {
    reward += ale_act(e, r, fb, action, kActionNoop, strength, 0.0f, skip <= 2);
    s.game_over = ale_game_over(e, r) ? 1 : 0;
    s.elapsed += 1;
    const int32_t lives = ale_lives(e, r);
    s.life_lost = (lives < s.lives && lives > 0) ? 1 : 0;
    if (s.game_over || s.elapsed >= rules.max_episode_steps || (rules.episodic_life && s.life_lost)) break;
    if (skip <= 2) ale_capture(e, r, fb, screens, skip - 1);
  }
  ale_observe(e, r, fb);
  s.lives = ale_lives(e, r);
  if (rules.reward_clipping) reward = reward > 1 ? 1 : (reward < -1 ? -1 : reward);
  s.reward = reward;
}

}  // namespace ale
}  // namespace gpu_env

namespace gpu_env {
namespace ale {

// ---------------------------------------------------------------------------------------------
// SB3's AtariWrapper and CleanRL's make_env over gymnasium.make(id) (stable_baselines3 2.x
// common/atari_wrappers.py, SB3's Monitor and gymnasium's RecordEpisodeStatistics; facts, the code is
// our own): the step of gpu_env.presets "sb3" and "cleanrl". Outermost first:
//   FireResetEnv (when the action set has FIRE), EpisodicLifeEnv, MaxAndSkipEnv(skip), NoopResetEnv
//   (noop_max), the episode statistics (Monitor / RecordEpisodeStatistics), AtariEnv.
// AtariEnv.step: `frameskip` ALE acts (a range [low, high) is drawn per step from the env's own numpy
// generator); AtariEnv.reset(seed): with a seed, the generator is reseeded and loadROM(ale_seed) runs,
// then reset_game. The statistics count every AtariEnv step since its last reset and report the
// episode (return, length) in the info of a step that ends the game. NoopResetEnv.reset: reset, draw
// U{1, noop_max} from the generator, that many NOOP steps, resetting (with the same seed) after any
// that ends the game. MaxAndSkipEnv.step: up to `skip` steps, stopping after one that ends the game;
// step skip-2 writes obs_buffer[0] (slot 0), step skip-1 obs_buffer[1] (slot 1); the buffer is never
// cleared; it returns the max of both. EpisodicLifeEnv.step: was_real_done = the game ended; a life
// lost (0 < lives < lives seen last) ends the episode too. Its reset: a real reset after a real end,
// otherwise a NOOP step (resetting if that ends the game). FireResetEnv.reset: reset, step FIRE,
// step 2 (each re-resetting on an end) and returns step 2's observation with an empty info.
// The observation leaves through `screens.emit(e, fb, pooled)` when the outermost wrapper returns it:
// pooled = the max of slots 0 and 1, otherwise the current screen. Every info is AtariEnv's of the last
// AtariEnv call (kind 1, or 2 when that call was a seeded reset), or {} after FireResetEnv (kind 0).
// gymnasium's own stack (gpu_env.make_vec on backend "cpu"; ale-py 0.12.1's AtariEnv, gymnasium 1.x's
// AtariPreprocessing) runs on the same AtariEnv: base_step/base_reset alone, or AtariPreprocessing's
// preprocessed_step/preprocessed_reset (its no-ops: `noop_reset`, which gymnasium's reset shares with
// NoopResetEnv, U{1, noop_max} from the same generator, none when noop_max is 0, then the top of this
// file's reset end). AtariEnv.reset(seed) also reapplies the env's mode and difficulty (load_game).

struct WrapRules {
  int32_t frameskip_low;
  int32_t frameskip_high;  // > 0: AtariEnv's frameskip is drawn from [low, high) per step
  int32_t noop_max;
  int32_t skip;  // MaxAndSkipEnv's skip (presets), AtariPreprocessing's frame_skip (gymnasium's stack)
  uint8_t fire_reset;
};

struct WrapEnvState {
  int32_t lives;  // EpisodicLifeEnv.lives (presets), AtariPreprocessing.lives (gymnasium's stack)
  uint8_t was_real_done;
  int32_t ep_return;  // the statistics since the last AtariEnv reset
  int32_t ep_length;
  uint8_t info_kind;  // the info of the last call: 0 {}, 1 AtariEnv's, 2 AtariEnv's with seeds
  uint8_t episode;    // that info has "episode" = (episode_return, episode_length)
  int32_t episode_return;
  int32_t episode_length;
};

using WrapStep = PreprocessedStep;

// One env of the stack: `seeded` says whether this reset call carries a seed (reseeding the generator
// with rng.reseed() and loading the ROM with `ale_seed`).
template <class Screens, class Rng>
struct WrapEnv {
  AleEnv& e;
  const AleRom& r;
  uint8_t* fb;
  const WrapRules& rules;
  const int32_t* action_set;
  WrapEnvState& s;
  Screens& screens;
  Rng& rng;
  int32_t default_program;

  // AtariEnv.step; `observed`: a wrapper reads the screen it leaves.
  HD WrapStep base_step(int32_t action, bool observed) {
    const int32_t frames = rules.frameskip_high > 0 ? rng.integers(rules.frameskip_low, rules.frameskip_high)
                                                    : rules.frameskip_low;
    WrapStep out{0, 0, 0};
    for (int32_t f = 0; f < frames; ++f) {
      out.reward += ale_act(e, r, fb, action_set[action], kActionNoop, 1.0f, 0.0f, observed && f == frames - 1);
    }
    out.terminated = ale_terminal(e) ? 1 : 0;
    out.truncated = ale_truncated(e, r) ? 1 : 0;
    s.ep_return += out.reward;
    s.ep_length += 1;
    s.info_kind = 1;
    s.episode = (out.terminated || out.truncated) ? 1 : 0;
    if (s.episode) {
      s.episode_return = s.ep_return;
      s.episode_length = s.ep_length;
    }
    return out;
  }

  HD void base_reset(bool seeded, uint32_t ale_seed) {
    if (seeded) {
      rng.reseed();
      // AtariEnv.load_game: loadROM, then setMode/setDifficulty of the env's own settings (ALE's setMode
      // and setDifficulty only store them for the next reset_game).
      const int32_t mode = e.mode;
      const int32_t program = e.program;
      const int32_t difficulty = e.difficulty;
      ale_load_rom(e, r, fb, ale_seed, default_program);
      e.mode = mode;
      e.program = program;
      e.difficulty = difficulty;
    }
    ale_reset_game(e, r, fb);
    s.ep_return = 0;
    s.ep_length = 0;
    s.info_kind = seeded ? 2 : 1;
    s.episode = 0;
  }

  // NoopResetEnv.reset and AtariPreprocessing.reset's no-ops (none with noop_max 0: nothing drawn).
  HD void noop_reset(bool seeded, uint32_t ale_seed) {
    base_reset(seeded, ale_seed);
    const int32_t noops = rules.noop_max > 0 ? rng.integers(1, rules.noop_max + 1) : 0;
    for (int32_t t = 0; t < noops; ++t) {
      const WrapStep st = base_step(0, false);
      if (st.terminated || st.truncated) base_reset(seeded, ale_seed);
    }
  }

  HD WrapStep max_and_skip(int32_t action) {
    WrapStep total{0, 0, 0};
    for (int32_t i = 0; i < rules.skip; ++i) {
      const WrapStep st = base_step(action, i >= rules.skip - 2);
      if (i == rules.skip - 2) ale_capture(e, r, fb, screens, 0);
      if (i == rules.skip - 1) ale_capture(e, r, fb, screens, 1);
      total.reward += st.reward;
      total.terminated = st.terminated;
      total.truncated = st.truncated;
      if (st.terminated || st.truncated) break;
    }
    return total;
  }

  HD WrapStep life_step(int32_t action) {
    WrapStep st = max_and_skip(action);
    s.was_real_done = (st.terminated || st.truncated) ? 1 : 0;
    const int32_t lives = ale_lives(e, r);
    if (0 < lives && lives < s.lives) st.terminated = 1;
    s.lives = lives;
    return st;
  }

  // EpisodicLifeEnv.reset; returns whether its observation is the pooled one.
  HD bool life_reset(bool seeded, uint32_t ale_seed) {
    bool pooled = false;
    if (s.was_real_done) {
      noop_reset(seeded, ale_seed);
    } else {
      const WrapStep st = max_and_skip(0);
      pooled = true;
      if (st.terminated || st.truncated) {
        noop_reset(seeded, ale_seed);
        pooled = false;
      }
    }
    s.lives = ale_lives(e, r);
    return pooled;
  }

  // The outermost reset: emits its observation.
  HD void reset(bool seeded, uint32_t ale_seed) {
    if (!rules.fire_reset) {
      const bool pooled = life_reset(seeded, ale_seed);
      ale_observe(e, r, fb);
      screens.emit(e, fb, pooled);
      return;
    }
    life_reset(seeded, ale_seed);
    WrapStep st = life_step(1);
    if (st.terminated || st.truncated) life_reset(seeded, ale_seed);
    st = life_step(2);
    ale_observe(e, r, fb);
    screens.emit(e, fb, true);
    if (st.terminated || st.truncated) life_reset(seeded, ale_seed);
    s.info_kind = 0;
    s.episode = 0;
  }

  // The outermost step: emits its observation; the reward is unclipped (the caller takes its sign).
  HD WrapStep step(int32_t action) {
    const WrapStep st = life_step(action);
    ale_observe(e, r, fb);
    screens.emit(e, fb, true);
    return st;
  }

  // gymnasium's AtariPreprocessing over this AtariEnv (the facts at the top of this file): `rules.skip`
  // is its frame_skip, s.lives its lives; the screens go to slots 0 and 1, the caller max-pools them.
  struct BaseStep {
    WrapEnv& w;
    int32_t action;
    HD WrapStep operator()(bool observed) { return w.base_step(action, observed); }
  };

  HD WrapStep preprocessed_step(int32_t action, bool terminal_on_life_loss) {
    BaseStep env_step{*this, action};
    return preprocessed_step_over(env_step, e, r, fb, rules.skip, terminal_on_life_loss, s.lives, screens);
  }

  HD void preprocessed_reset(bool seeded, uint32_t ale_seed) {
    noop_reset(seeded, ale_seed);
    preprocessed_reset_end(e, r, fb, s.lives, screens);
  }
};

}  // namespace ale
}  // namespace gpu_env
