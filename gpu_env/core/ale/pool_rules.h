// EnvPool's Atari rules for one environment (gpu_env.envpool's step), on preprocessing.h's shared pieces.
#pragma once

#include "../hd.h"
#include "environment.h"
#include "preprocessing.h"

namespace gpu_env {
namespace ale {

// ---------------------------------------------------------------------------------------------
// EnvPool's Atari rules (envpool/atari/atari_env.h, EnvPool 1.2.5; facts, the code is our own), the
// step of gpu_env.envpool. Screens go to the same two slots as in preprocessing.h: slot 0 is EnvPool's
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
