// Krull: reward, terminal and lives as ALE's KrullSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Krull.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace krull {
constexpr uint16_t kScoreLow = 0x9E;   // Krull.cpp: getDecimalScore(0x9E, 0x9D, 0x9C)
constexpr uint16_t kScoreMid = 0x9D;
constexpr uint16_t kScoreHigh = 0x9C;
constexpr uint16_t kLives = 0x9F;      // Krull.cpp: low 3 bits = lives - 1
constexpr uint16_t kStateA = 0xA2;     // Krull.cpp: 0x03 here and 0x80 at 0x80 = game over
constexpr uint16_t kStateB = 0x80;

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  const int32_t l = ram(m, kLives);
  g.terminal = l == 0 && ram(m, kStateA) == 0x03 && ram(m, kStateB) == 0x80;
  g.lives = (l & 0x7) + 1;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace krull
}  // namespace games
}  // namespace gpu_env
