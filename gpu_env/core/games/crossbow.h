// Crossbow: reward, terminal and lives as ALE's CrossbowSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Crossbow.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace crossbow {
constexpr uint16_t kScoreLow = 0x8D;   // Crossbow.cpp: getDecimalScore(0x8D, 0x8C, 0x8B)
constexpr uint16_t kScoreMid = 0x8C;
constexpr uint16_t kScoreHigh = 0x8B;
constexpr uint16_t kGameOver = 0xE7;   // Crossbow.cpp: 0x82 = game over
constexpr int32_t kGameOverValue = 0x82;
constexpr uint16_t kModeByte = 0x8D;   // Crossbow.cpp setMode: mode = RAM[0x8D] - 1

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  g.terminal = ram(m, kGameOver) == kGameOverValue;
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace crossbow
}  // namespace games
}  // namespace gpu_env
