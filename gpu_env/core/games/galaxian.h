// Galaxian: reward, terminal and lives as ALE's GalaxianSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Galaxian.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace galaxian {
constexpr uint16_t kScoreLow = 0xAE;   // Galaxian.cpp: getDecimalScore(0xAE, 0xAD, 0xAC)
constexpr uint16_t kScoreMid = 0xAD;
constexpr uint16_t kScoreHigh = 0xAC;
constexpr int32_t kWrapScore = 1000000;// Galaxian.cpp: the score wraps at 1,000,000
constexpr uint16_t kGameOver = 0xBF;   // Galaxian.cpp: bit 7 = game over
constexpr uint16_t kLives = 0xB9;      // Galaxian.cpp: lives - 1
constexpr uint16_t kModeByte = 0xB3;   // Galaxian.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t score = decimal6(m, kScoreLow, kScoreMid, kScoreHigh);
  g.reward = score - g.score;
  if (g.reward < 0) g.reward = (kWrapScore - g.score) + score;
  g.score = score;
  g.terminal = (ram(m, kGameOver) & 0x80) != 0;
  g.lives = g.terminal ? 0 : ram(m, kLives) + 1;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace galaxian
}  // namespace games
}  // namespace gpu_env
