// Atlantis II: reward, terminal and lives as ALE's Atlantis2Settings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Atlantis2.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace atlantis2 {
constexpr uint16_t kScoreLow = 0xA1;   // Atlantis2.cpp: getDecimalScore(0xA1, 0xA2, 0xA3)
constexpr uint16_t kScoreMid = 0xA2;
constexpr uint16_t kScoreHigh = 0xA3;
constexpr uint16_t kLives = 0xF1;      // Atlantis2.cpp: 0xFF = game over
constexpr int32_t kNoLives = 0xFF;

HD void reset(GameState& g) { reset_reward_score_terminal(g); }  // m_lives is not reset

template <class Mem>
HD void step(GameState& g, Mem& m) {
  g.lives = ram(m, kLives);
  g.terminal = g.lives == kNoLives;
  if (g.terminal) {
    g.reward = 0;
  } else {
    set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  }
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace atlantis2
}  // namespace games
}  // namespace gpu_env
