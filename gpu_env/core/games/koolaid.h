// Kool-Aid Man: reward, terminal and lives as ALE's KoolaidSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Koolaid.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace koolaid {
constexpr uint16_t kScoreLow = 0x81;   // Koolaid.cpp: getDecimalScore(0x81, 0x80) x 100
constexpr uint16_t kScoreHigh = 0x80;
constexpr int32_t kScoreUnit = 100;
constexpr uint16_t kGameOver = 0xD1;   // Koolaid.cpp: 0x80 = game over
constexpr int32_t kGameOverValue = 0x80;

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal4(m, kScoreLow, kScoreHigh) * kScoreUnit);
  g.terminal = ram(m, kGameOver) == kGameOverValue;
}

HD int32_t lives(const GameState&) { return 0; }
}  // namespace koolaid
}  // namespace games
}  // namespace gpu_env
