// Ice Hockey: reward, terminal and lives as ALE's IceHockeySettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/IceHockey.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace ice_hockey {
constexpr uint16_t kMyScore = 0x8A;    // IceHockey.cpp: decimal goals
constexpr uint16_t kOpponentScore = 0x8B;
constexpr uint16_t kMinutes = 0x87;    // IceHockey.cpp: clock; 0:00 = game over
constexpr uint16_t kSeconds = 0x86;
constexpr uint16_t kModeByte = 0x80;   // IceHockey.cpp setMode

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t score = decimal2(m, kMyScore) - decimal2(m, kOpponentScore);
  int32_t reward = score - g.score;
  if (reward > 1) reward = 1;  // IceHockey.cpp: min(reward, 1)
  g.reward = reward;
  g.score = score;
  g.terminal = ram(m, kMinutes) == 0 && ram(m, kSeconds) == 0;
}

HD int32_t lives(const GameState&) { return 0; }
}  // namespace ice_hockey
}  // namespace games
}  // namespace gpu_env
