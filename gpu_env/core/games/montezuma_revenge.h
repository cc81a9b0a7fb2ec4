// Montezuma's Revenge: reward, terminal and lives as ALE's MontezumaRevengeSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/MontezumaRevenge.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace montezuma_revenge {
constexpr uint16_t kScoreLow = 0x95;   // MontezumaRevenge.cpp: getDecimalScore(0x95, 0x94, 0x93)
constexpr uint16_t kScoreMid = 0x94;
constexpr uint16_t kScoreHigh = 0x93;
constexpr uint16_t kLives = 0xBA;      // MontezumaRevenge.cpp: low 3 bits = lives - 1
constexpr uint16_t kState = 0xFE;      // MontezumaRevenge.cpp: 0x60 with no lives = game over
constexpr int32_t kGameOverState = 0x60;

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 6;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  const int32_t l = ram(m, kLives);
  g.terminal = l == 0 && ram(m, kState) == kGameOverState;
  g.lives = (l & 0x7) + 1;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace montezuma_revenge
}  // namespace games
}  // namespace gpu_env
