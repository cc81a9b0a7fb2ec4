// Venture: reward, terminal and lives as ALE's VentureSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Venture.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace venture {
constexpr uint16_t kScoreLow = 0xC8;   // Venture.cpp: getDecimalScore(0xC8, 0xC7) x 100
constexpr uint16_t kScoreHigh = 0xC7;
constexpr int32_t kScoreUnit = 100;
constexpr uint16_t kLives = 0xC6;      // Venture.cpp: low 3 bits = lives - 1
constexpr uint16_t kAudio = 0xCD;      // Venture.cpp: 0xFF, with bit 7 of 0xBF, on the last life = over
constexpr uint16_t kDeath = 0xBF;

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 4;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal4(m, kScoreLow, kScoreHigh) * kScoreUnit);
  const int32_t l = ram(m, kLives);
  g.terminal = l == 0 && ram(m, kAudio) == 0xFF && (ram(m, kDeath) & 0x80) != 0;
  g.lives = (l & 0x7) + 1;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace venture
}  // namespace games
}  // namespace gpu_env
