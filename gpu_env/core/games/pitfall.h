// Pitfall!: reward, terminal and lives as ALE's PitfallSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Pitfall.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace pitfall {
constexpr uint16_t kScoreLow = 0xD7;   // Pitfall.cpp: getDecimalScore(0xD7, 0xD6, 0xD5)
constexpr uint16_t kScoreMid = 0xD6;
constexpr uint16_t kScoreHigh = 0xD5;
constexpr uint16_t kLives = 0x80;      // Pitfall.cpp: high nibble 0xA = 3 lives, 0x8 = 2, else 1
constexpr uint16_t kLogoTimer = 0x9E;  // Pitfall.cpp: non-zero with no lives = game over
constexpr int32_t kStartScore = 2000;  // Pitfall.cpp reset(): the game starts at 2,000 points

HD void reset(GameState& g) {
  g.reward = 0;
  g.score = kStartScore;
  g.terminal = 0;
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  const int32_t l = ram(m, kLives) >> 4;
  g.terminal = l == 0 && ram(m, kLogoTimer) != 0;
  g.lives = l == 0xA ? 3 : (l == 0x8 ? 2 : 1);
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace pitfall
}  // namespace games
}  // namespace gpu_env
