// Yars' Revenge: reward, terminal and lives as ALE's YarsRevengeSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/YarsRevenge.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace yars_revenge {
constexpr uint16_t kScoreLow = 0xE2;   // YarsRevenge.cpp: getDecimalScore(0xE2, 0xE1, 0xE0)
constexpr uint16_t kScoreMid = 0xE1;
constexpr uint16_t kScoreHigh = 0xE0;
constexpr uint16_t kLives = 0x9E;      // YarsRevenge.cpp: high nibble
constexpr uint16_t kModeByte = 0xE3;   // YarsRevenge.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 4;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  const int32_t l = ram(m, kLives) >> 4;
  g.terminal = l == 0;
  g.lives = l;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace yars_revenge
}  // namespace games
}  // namespace gpu_env
