// Fishing Derby: reward, terminal and lives as ALE's FishingDerbySettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/FishingDerby.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace fishing_derby {
constexpr uint16_t kMyScore = 0xBD;    // FishingDerby.cpp: decimal pounds; 0x99 = game over
constexpr uint16_t kOpponentScore = 0xBE;
constexpr int32_t kFinalByte = 0x99;

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t mine = decimal2(m, kMyScore);  // never negative, ALE's max(.., 0) is a no-op
  const int32_t theirs = decimal2(m, kOpponentScore);
  set_score(g, mine - theirs);
  g.terminal = ram(m, kMyScore) == kFinalByte || ram(m, kOpponentScore) == kFinalByte;
}

HD int32_t lives(const GameState&) { return 0; }
}  // namespace fishing_derby
}  // namespace games
}  // namespace gpu_env
