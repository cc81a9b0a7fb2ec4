// Berzerk: reward, terminal and lives as ALE's BerzerkSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Berzerk.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace berzerk {
constexpr uint16_t kScoreLow = 0xDF;   // Berzerk.cpp: getDecimalScore(95, 94, 93)
constexpr uint16_t kScoreMid = 0xDE;
constexpr uint16_t kScoreHigh = 0xDD;
constexpr uint16_t kLives = 0xDA;      // Berzerk.cpp: lives - 1; 0xFF = game over
constexpr uint16_t kModeByte = 0x80;   // Berzerk.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  const int32_t b = ram(m, kLives);
  g.terminal = b == 0xFF;
  g.lives = b + 1;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace berzerk
}  // namespace games
}  // namespace gpu_env
