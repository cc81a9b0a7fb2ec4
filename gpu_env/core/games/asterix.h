// Asterix: reward, terminal and lives as ALE's AsterixSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Asterix.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace asterix {
constexpr uint16_t kScoreLow = 0xE0;   // Asterix.cpp: getDecimalScore(0xE0, 0xDF, 0xDE)
constexpr uint16_t kScoreMid = 0xDF;
constexpr uint16_t kScoreHigh = 0xDE;
constexpr uint16_t kLives = 0xD3;         // Asterix.cpp: low nibble = lives
constexpr uint16_t kDeathCounter = 0xC7;  // Asterix.cpp: 1 on the last life = game over

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  g.lives = ram(m, kLives) & 0x0F;
  g.terminal = ram(m, kDeathCounter) == 0x01 && g.lives == 1;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace asterix
}  // namespace games
}  // namespace gpu_env
