// Seaquest: reward, terminal and lives as ALE's SeaquestSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Seaquest.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace seaquest {
constexpr uint16_t kScoreLow = 0xBA;   // Seaquest.cpp: getDecimalScore(0xBA, 0xB9, 0xB8)
constexpr uint16_t kScoreMid = 0xB9;
constexpr uint16_t kScoreHigh = 0xB8;
constexpr uint16_t kGameOver = 0xA3;   // Seaquest.cpp: non-zero = game over
constexpr uint16_t kLives = 0xBB;      // Seaquest.cpp: lives - 1

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 4;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  g.terminal = ram(m, kGameOver) != 0;
  g.lives = ram(m, kLives) + 1;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace seaquest
}  // namespace games
}  // namespace gpu_env
