// Surround: reward, terminal and lives as ALE's SurroundSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Surround.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace surround {
constexpr uint16_t kTheirScore = 0xF6; // Surround.cpp: decimal points of the opponent
constexpr uint16_t kMyScore = 0xF7;    // Surround.cpp: decimal points of the player
constexpr int32_t kWinningPoints = 10;
constexpr uint16_t kModeByte = 0xF9;   // Surround.cpp setMode: RAM[0xF9] == mode + 1

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t theirs = decimal2(m, kTheirScore);
  const int32_t mine = decimal2(m, kMyScore);
  set_score(g, mine - theirs);
  g.terminal = theirs == kWinningPoints || mine == kWinningPoints;
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace surround
}  // namespace games
}  // namespace gpu_env
