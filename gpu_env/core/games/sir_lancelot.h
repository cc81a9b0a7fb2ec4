// Sir Lancelot: reward, terminal and lives as ALE's SirLancelotSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/SirLancelot.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace sir_lancelot {
constexpr uint16_t kScoreLow = 0xA0;   // SirLancelot.cpp: getDecimalScore(0xA0, 0x9F, 0x9E)
constexpr uint16_t kScoreMid = 0x9F;
constexpr uint16_t kScoreHigh = 0x9E;
constexpr uint16_t kLives = 0xA9;
constexpr uint16_t kState = 0xA7;      // SirLancelot.cpp: 0xA0 with no lives = game over
constexpr int32_t kGameOverState = 0xA0;

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  g.lives = ram(m, kLives);
  g.terminal = g.lives == 0 && ram(m, kState) == kGameOverState;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace sir_lancelot
}  // namespace games
}  // namespace gpu_env
