// Zaxxon: reward, terminal and lives as ALE's ZaxxonSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Zaxxon.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace zaxxon {
constexpr uint16_t kScoreLow = 0xE9;   // Zaxxon.cpp: getDecimalScore(0xE9, 0xE8) x 100
constexpr uint16_t kScoreHigh = 0xE8;
constexpr int32_t kScoreUnit = 100;
constexpr uint16_t kLives = 0xEA;      // Zaxxon.cpp: low 3 bits
constexpr uint16_t kModeByte = 0x82;   // Zaxxon.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 5;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal4(m, kScoreLow, kScoreHigh) * kScoreUnit);
  const int32_t l = ram(m, kLives) & 0x7;
  g.terminal = l == 0;
  g.lives = l;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace zaxxon
}  // namespace games
}  // namespace gpu_env
