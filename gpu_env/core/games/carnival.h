// Carnival: reward, terminal and lives as ALE's CarnivalSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Carnival.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace carnival {
constexpr uint16_t kScoreLow = 0xAE;   // Carnival.cpp: getDecimalScore(0xAE, 0xAD) x 10
constexpr uint16_t kScoreHigh = 0xAD;
constexpr int32_t kScoreUnit = 10;
constexpr uint16_t kAmmo = 0x83;       // Carnival.cpp: no bullets left = game over

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal4(m, kScoreLow, kScoreHigh) * kScoreUnit);
  g.terminal = ram(m, kAmmo) < 1;
}

HD int32_t lives(const GameState&) { return 0; }
}  // namespace carnival
}  // namespace games
}  // namespace gpu_env
