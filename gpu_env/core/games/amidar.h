// Amidar: reward, terminal and lives as ALE's AmidarSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Amidar.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace amidar {
constexpr uint16_t kScoreLow = 0xD9;   // Amidar.cpp: getDecimalScore(0xD9, 0xDA, 0xDB)
constexpr uint16_t kScoreMid = 0xDA;
constexpr uint16_t kScoreHigh = 0xDB;
constexpr uint16_t kLives = 0xD6;      // Amidar.cpp: 0x80 = game over, low nibble = lives
constexpr int32_t kGameOver = 0x80;

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  const int32_t b = ram(m, kLives);
  g.terminal = b == kGameOver;
  g.lives = b & 0x0F;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace amidar
}  // namespace games
}  // namespace gpu_env
