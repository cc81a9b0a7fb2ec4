// Wizard of Wor: reward, terminal and lives as ALE's WizardOfWorSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/WizardOfWor.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace wizard_of_wor {
constexpr uint16_t kScoreLow = 0x86;   // WizardOfWor.cpp: getDecimalScore(0x86, 0x88) x 100
constexpr uint16_t kScoreHigh = 0x88;
constexpr int32_t kScoreOffset = 8000; // WizardOfWor.cpp: values >= 8000 have 8000 removed
constexpr int32_t kScoreUnit = 100;
constexpr uint16_t kLives = 0x8D;      // WizardOfWor.cpp: low nibble
constexpr uint16_t kState = 0xF4;      // WizardOfWor.cpp: 0xF8 with no lives = game over
constexpr int32_t kGameOverState = 0xF8;
constexpr uint16_t kWaiting = 0xD7;    // WizardOfWor.cpp: bit 0 clear = waiting; lives read then

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  int32_t score = decimal4(m, kScoreLow, kScoreHigh);
  if (score >= kScoreOffset) score -= kScoreOffset;
  set_score(g, score * kScoreUnit);
  const int32_t l = ram(m, kLives) & 0x0F;
  const int32_t state = ram(m, kState);
  const bool waiting = (ram(m, kWaiting) & 0x1) == 0;
  g.terminal = l == 0 && state == kGameOverState;
  if (waiting) g.lives = l;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace wizard_of_wor
}  // namespace games
}  // namespace gpu_env
