// Kangaroo: reward, terminal and lives as ALE's KangarooSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Kangaroo.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace kangaroo {
constexpr uint16_t kScoreLow = 0xA8;   // Kangaroo.cpp: getDecimalScore(0xA8, 0xA7) x 100
constexpr uint16_t kScoreHigh = 0xA7;
constexpr int32_t kScoreUnit = 100;
constexpr uint16_t kLives = 0xAD;      // Kangaroo.cpp: 0xFF = game over, low 3 bits = lives - 1
constexpr uint16_t kModeByte = 0xBA;   // Kangaroo.cpp setMode: mode or mode + 0x80

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal4(m, kScoreLow, kScoreHigh) * kScoreUnit);
  const int32_t b = ram(m, kLives);
  g.terminal = b == 0xFF;
  g.lives = (b & 0x7) + 1;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace kangaroo
}  // namespace games
}  // namespace gpu_env
