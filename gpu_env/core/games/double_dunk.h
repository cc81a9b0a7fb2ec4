// Double Dunk: reward, terminal and lives as ALE's DoubleDunkSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/DoubleDunk.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace double_dunk {
constexpr uint16_t kMyScore = 0xF6;    // DoubleDunk.cpp: decimal points
constexpr uint16_t kOpponentScore = 0xF7;
constexpr int32_t kWinningPoints = 24;
constexpr uint16_t kGameState = 0xFE;  // DoubleDunk.cpp: 0xE7 once the game has ended
constexpr int32_t kEnded = 0xE7;

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t mine = decimal2(m, kMyScore);
  const int32_t theirs = decimal2(m, kOpponentScore);
  set_score(g, mine - theirs);
  g.terminal = (mine >= kWinningPoints || theirs >= kWinningPoints) && ram(m, kGameState) == kEnded;
}

HD int32_t lives(const GameState&) { return 0; }
}  // namespace double_dunk
}  // namespace games
}  // namespace gpu_env
