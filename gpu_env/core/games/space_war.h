// Space War: reward, terminal and lives as ALE's SpaceWarSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/SpaceWar.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace space_war {
constexpr uint16_t kScore = 0xA7;      // SpaceWar.cpp: getDecimalScore(0xA7); 10 = game over
constexpr int32_t kFinalScore = 10;
constexpr uint16_t kTimer = 0x80;      // SpaceWar.cpp: 0 = time up
constexpr uint16_t kModeByte = 0xA7;   // SpaceWar.cpp setMode: decimal value of 0xA7 == mode

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t score = decimal2(m, kScore);
  set_score(g, score);
  g.terminal = score == kFinalScore || ram(m, kTimer) == 0;
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace space_war
}  // namespace games
}  // namespace gpu_env
