// ale-py 0.12's vector-env rules for one environment (gpu_env.ale_vector's step), on preprocessing.h's shared pieces.
#pragma once

#include "../hd.h"
#include "environment.h"
#include "preprocessing.h"

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
