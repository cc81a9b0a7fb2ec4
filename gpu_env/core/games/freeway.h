// Freeway: reward, terminal and lives as ALE's FreewaySettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Freeway.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace freeway {
constexpr uint16_t kScore = 0xE7;      // Freeway.cpp: getDecimalScore(103) = crossings
constexpr uint16_t kGameOver = 0x96;   // Freeway.cpp: readRam(22) == 1 = time up
constexpr uint16_t kModeByte = 0x80;   // Freeway.cpp setMode

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t score = decimal2(m, kScore);
  int32_t reward = score - g.score;
  if (reward < 0) reward = 0;  // Freeway.cpp clamps the reward to [0, 1]
  if (reward > 1) reward = 1;
  g.reward = reward;
  g.score = score;
  g.terminal = ram(m, kGameOver) == 1;
}

HD int32_t lives(const GameState&) { return 0; }
}  // namespace freeway
}  // namespace games
}  // namespace gpu_env
