// Assault: reward, terminal and lives as ALE's AssaultSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Assault.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace assault {
constexpr uint16_t kScoreLow = 0x82;   // Assault.cpp: getDecimalScore(0x82, 0x81, 0x80)
constexpr uint16_t kScoreMid = 0x81;
constexpr uint16_t kScoreHigh = 0x80;
constexpr uint16_t kLives = 0xE5;      // Assault.cpp: lives; 0 = game over

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 4;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  g.lives = ram(m, kLives);
  g.terminal = g.lives == 0;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace assault
}  // namespace games
}  // namespace gpu_env
