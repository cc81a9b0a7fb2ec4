// Space Invaders: reward, terminal and lives as ALE's SpaceInvadersSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/SpaceInvaders.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace space_invaders {
constexpr uint16_t kScoreLow = 0xE8;   // SpaceInvaders.cpp: getDecimalScore(0xE8, 0xE6)
constexpr uint16_t kScoreHigh = 0xE6;
constexpr int32_t kWrapScore = 10000;  // SpaceInvaders.cpp: the score wraps at 10,000
constexpr uint16_t kLives = 0xC9;
constexpr uint16_t kGameOver = 0x98;   // SpaceInvaders.cpp: bit 7 = game over
constexpr uint16_t kModeByte = 0xDC;   // SpaceInvaders.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t score = decimal4(m, kScoreLow, kScoreHigh);
  g.reward = score - g.score;
  if (g.reward < 0) g.reward = (kWrapScore - g.score) + score;
  g.score = score;
  g.lives = ram(m, kLives);
  g.terminal = (ram(m, kGameOver) & 0x80) != 0 || g.lives == 0;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace space_invaders
}  // namespace games
}  // namespace gpu_env
