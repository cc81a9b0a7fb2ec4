// Solaris: reward, terminal and lives as ALE's SolarisSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Solaris.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace solaris {
constexpr uint16_t kScoreLow = 0xDC;   // Solaris.cpp: getDecimalScore(0xDC, 0xDD, 0xDE) x 10
constexpr uint16_t kScoreMid = 0xDD;
constexpr uint16_t kScoreHigh = 0xDE;
constexpr int32_t kScoreUnit = 10;
constexpr uint16_t kLives = 0xD9;      // Solaris.cpp: 0 = game over, low nibble = lives

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh) * kScoreUnit);
  const int32_t b = ram(m, kLives);
  g.terminal = b == 0;
  g.lives = b & 0x0F;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace solaris
}  // namespace games
}  // namespace gpu_env
