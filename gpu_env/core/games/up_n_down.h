// Up'n Down: reward, terminal and lives as ALE's UpNDownSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/UpNDown.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace up_n_down {
constexpr uint16_t kScoreLow = 0x82;   // UpNDown.cpp: getDecimalScore(0x82, 0x81, 0x80)
constexpr uint16_t kScoreMid = 0x81;
constexpr uint16_t kScoreHigh = 0x80;
constexpr uint16_t kLives = 0x86;      // UpNDown.cpp: low nibble = lives - 1
constexpr uint16_t kDeathTimer = 0x94; // UpNDown.cpp: > 0x40 with no lives = game over
constexpr int32_t kDeathThreshold = 0x40;

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 5;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  const int32_t l = ram(m, kLives) & 0x0F;
  g.terminal = ram(m, kDeathTimer) > kDeathThreshold && l == 0;
  g.lives = l + 1;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace up_n_down
}  // namespace games
}  // namespace gpu_env
