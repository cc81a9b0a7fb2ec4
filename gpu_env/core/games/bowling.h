// Bowling: reward, terminal and lives as ALE's BowlingSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Bowling.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace bowling {
constexpr uint16_t kScoreLow = 0xA1;   // Bowling.cpp: getDecimalScore(0xA1, 0xA6)
constexpr uint16_t kScoreHigh = 0xA6;
constexpr uint16_t kFrame = 0xA4;      // Bowling.cpp: frame number > 0x10 = game over
constexpr int32_t kLastFrame = 0x10;
constexpr uint16_t kModeByte = 0x82;   // Bowling.cpp setMode: readRam(2)

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal4(m, kScoreLow, kScoreHigh));
  g.terminal = ram(m, kFrame) > kLastFrame;
}

HD int32_t lives(const GameState&) { return 0; }
}  // namespace bowling
}  // namespace games
}  // namespace gpu_env
