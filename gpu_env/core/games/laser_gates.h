// Laser Gates: reward, terminal and lives as ALE's LaserGatesSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/LaserGates.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace laser_gates {
constexpr uint16_t kScoreLow = 0x82;   // LaserGates.cpp: getDecimalScore(0x82, 0x81, 0x80)
constexpr uint16_t kScoreMid = 0x81;
constexpr uint16_t kScoreHigh = 0x80;
constexpr uint16_t kGameOver = 0x83;   // LaserGates.cpp: 0 = game over

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  g.terminal = ram(m, kGameOver) == 0x00;
}

HD int32_t lives(const GameState&) { return 0; }
}  // namespace laser_gates
}  // namespace games
}  // namespace gpu_env
