// gymnasium's AtariPreprocessing for one environment: the frame-skip step (over AtariEnv(frameskip=1)
// here, over any AtariEnv.step in preprocessed_step_over, which WrapEnv (wrap_rules.h) runs for the native pool)
// and the unseeded reset. The CPU library (native/ale_batch.cpp, native/env_pool.cpp) and the CUDA
// kernels (cuda/kernels.h) all run these functions; what differs between them is only where a screen
// goes, which the caller's `Screens` type decides (the other libraries' rules, on the same pieces: pool_rules.h
// for EnvPool, vector_rules.h for ale-py's vector env, wrap_rules.h for SB3, CleanRL and gymnasium's stack):
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
