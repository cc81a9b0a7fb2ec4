// Centipede: reward, terminal and lives as ALE's CentipedeSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Centipede.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace centipede {
constexpr uint16_t kScoreLow = 0xF6;   // Centipede.cpp: getDecimalScore(118, 117, 116)
constexpr uint16_t kScoreMid = 0xF5;
constexpr uint16_t kScoreHigh = 0xF4;
constexpr uint16_t kLives = 0xED;      // Centipede.cpp: bits 4..6 = lives - 1
constexpr uint16_t kGameOver = 0xA6;   // Centipede.cpp: bit 6 = game over
constexpr int32_t kGameOverBit = 0x40;
constexpr uint16_t kModeByte = 0xA7;   // Centipede.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  if (g.reward < 0) g.reward = 0;
  g.lives = ((ram(m, kLives) >> 4) & 0x7) + 1;
  g.terminal = (ram(m, kGameOver) & kGameOverBit) != 0;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace centipede
}  // namespace games
}  // namespace gpu_env
