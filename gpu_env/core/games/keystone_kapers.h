// Keystone Kapers: reward, terminal and lives as ALE's KeystoneKapersSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/KeystoneKapers.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace keystone_kapers {
constexpr uint16_t kScoreLow = 0x9C;   // KeystoneKapers.cpp: getDecimalScore(0x9C, 0x9B)
constexpr uint16_t kScoreHigh = 0x9B;
constexpr uint16_t kLives = 0x96;
constexpr uint16_t kState = 0x88;      // KeystoneKapers.cpp: 0 with no lives = game over

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal4(m, kScoreLow, kScoreHigh));
  g.lives = ram(m, kLives);
  g.terminal = g.lives == 0 && ram(m, kState) == 0x00;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace keystone_kapers
}  // namespace games
}  // namespace gpu_env
