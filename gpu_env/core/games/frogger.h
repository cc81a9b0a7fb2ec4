// Frogger: reward, terminal and lives as ALE's FroggerSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Frogger.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace frogger {
constexpr uint16_t kScoreLow = 0xCE;   // Frogger.cpp: getDecimalScore(0xCE, 0xCC)
constexpr uint16_t kScoreHigh = 0xCC;
constexpr uint16_t kLives = 0xD0;      // Frogger.cpp: 0xFF = game over
constexpr int32_t kNoLives = 0xFF;
constexpr uint16_t kModeByte = 0xDD;   // Frogger.cpp setMode: RAM[0xDD] == 1 + 2 * mode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 4;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal4(m, kScoreLow, kScoreHigh));
  g.lives = ram(m, kLives);
  g.terminal = g.lives == kNoLives;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace frogger
}  // namespace games
}  // namespace gpu_env
