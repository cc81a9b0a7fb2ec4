// gymnasium's AtariPreprocessing over AtariEnv(frameskip=1), for one environment: the frame-skip
// step and the unseeded reset. The CPU library (native/ale_batch.cpp) and the CUDA kernels
// (cuda/kernels.h) both run these functions; what differs between them is only where a screen goes,
// which the caller's `Screens` type decides:
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

// What one preprocessed step reports: the summed reward and the wrapper's flags.
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

// reset_game, then `noops` acts of noop_action, with reset_game again after any act that ends the
// game or reaches the frame limit.
HD void ale_reset_with_noops(AleEnv& e, const AleRom& r, uint8_t* fb, int32_t noops, int32_t noop_action) {
  ale_reset_game(e, r, fb);
  for (int32_t t = 0; t < noops; ++t) {
    ale_act(e, r, fb, noop_action, kActionNoop, 1.0f, 0.0f);
    if (ale_game_over(e, r)) ale_reset_game(e, r, fb);
  }
}

// AtariPreprocessing.step(action): up to frame_skip ALE acts; `lives` (in/out) is the wrapper's last
// seen lives count, read and updated only with terminal_on_life_loss.
template <class Screens>
HD PreprocessedStep preprocessed_step(AleEnv& e, const AleRom& r, uint8_t* fb, int32_t action, int32_t frame_skip,
                                      bool terminal_on_life_loss, int32_t& lives, Screens& screens) {
  PreprocessedStep out{0, 0, 0};
  for (int32_t t = 0; t < frame_skip; ++t) {
    out.reward += ale_act(e, r, fb, action, kActionNoop, 1.0f, 0.0f);
    bool terminated = ale_terminal(e);
    const bool truncated = ale_truncated(e, r);
    if (terminal_on_life_loss) {
      const int32_t now = ale_lives(e, r);
      terminated = terminated || now < lives;
      lives = now;
    }
    out.terminated = terminated ? 1 : 0;
    out.truncated = truncated ? 1 : 0;
    if (terminated || truncated) break;
    if (t == frame_skip - 2) screens.capture(e, fb, 1);
    if (t == frame_skip - 1) screens.capture(e, fb, 0);
  }
  return out;
}

// AtariPreprocessing.reset() without a seed, with `noops` no-op acts (the caller draws the count).
template <class Screens>
HD void preprocessed_reset(AleEnv& e, const AleRom& r, uint8_t* fb, int32_t noops, int32_t noop_action,
                           int32_t& lives, Screens& screens) {
  ale_reset_with_noops(e, r, fb, noops, noop_action);
  lives = ale_lives(e, r);
  screens.capture(e, fb, 0);
  screens.clear(1);
}

}  // namespace ale
}  // namespace gpu_env
