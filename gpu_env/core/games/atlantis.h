// Atlantis: reward, terminal and lives as ALE's AtlantisSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Atlantis.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace atlantis {
constexpr uint16_t kScoreLow = 0xA2;   // Atlantis.cpp: getDecimalScore(0xA2, 0xA3, 0xA1) x 100
constexpr uint16_t kScoreMid = 0xA3;
constexpr uint16_t kScoreHigh = 0xA1;
constexpr int32_t kScoreUnit = 100;
constexpr uint16_t kLives = 0xF1;      // Atlantis.cpp: 0xFF = game over
constexpr int32_t kNoLives = 0xFF;
constexpr uint16_t kModeByte = 0x8D;   // Atlantis.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 6;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t old_score = g.score;
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh) * kScoreUnit);
  g.lives = ram(m, kLives);
  g.terminal = g.lives == kNoLives;
  if (g.terminal) {  // Atlantis.cpp: no reward (and no score change) on the game-over frame
    g.reward = 0;
    g.score = old_score;
  }
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace atlantis
}  // namespace games
}  // namespace gpu_env
