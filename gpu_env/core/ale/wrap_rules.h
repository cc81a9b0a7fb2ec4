// The wrapper stacks of SB3, CleanRL and gymnasium for one environment (WrapEnv: the presets' and make_vec's
// step on the CPU), on preprocessing.h's shared pieces.
#pragma once

#include "../hd.h"
#include "environment.h"
#include "preprocessing.h"

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
// NoopResetEnv, U{1, noop_max} from the same generator, none when noop_max is 0, then preprocessing.h's
// reset end). AtariEnv.reset(seed) also reapplies the env's mode and difficulty (load_game).

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
