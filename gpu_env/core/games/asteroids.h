// Asteroids: reward, terminal and lives as ALE's AsteroidsSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Asteroids.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace asteroids {
constexpr uint16_t kScoreLow = 0xBE;   // Asteroids.cpp: getDecimalScore(0xBE, 0xBD) x 10
constexpr uint16_t kScoreHigh = 0xBD;
constexpr int32_t kScoreUnit = 10;
constexpr int32_t kWrapScore = 100000; // Asteroids.cpp: the score wraps at 100,000
constexpr uint16_t kLives = 0xBC;      // Asteroids.cpp: high nibble = lives
constexpr uint16_t kModeByte = 0x80;   // Asteroids.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 4;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t score = decimal4(m, kScoreLow, kScoreHigh) * kScoreUnit;
  g.reward = score - g.score;
  if (g.reward < 0) g.reward += kWrapScore;
  g.score = score;
  g.lives = ram(m, kLives) >> 4;
  g.terminal = g.lives == 0;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace asteroids
}  // namespace games
}  // namespace gpu_env
