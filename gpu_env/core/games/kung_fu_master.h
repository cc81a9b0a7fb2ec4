// Kung-Fu Master: reward, terminal and lives as ALE's KungFuMasterSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/KungFuMaster.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace kung_fu_master {
constexpr uint16_t kScoreLow = 0x9A;   // KungFuMaster.cpp: getDecimalScore(0x9A, 0x99, 0x98)
constexpr uint16_t kScoreMid = 0x99;
constexpr uint16_t kScoreHigh = 0x98;
constexpr uint16_t kLives = 0x9D;      // KungFuMaster.cpp: 0xFF = game over, low 3 bits = lives - 1

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 4;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  const int32_t b = ram(m, kLives);
  g.terminal = b == 0xFF;
  g.lives = (b & 0x7) + 1;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace kung_fu_master
}  // namespace games
}  // namespace gpu_env
