// Time Pilot: reward, terminal and lives as ALE's TimePilotSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/TimePilot.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace time_pilot {
constexpr uint16_t kScoreLow = 0x8D;   // TimePilot.cpp: getDecimalScore(0x8D, 0x8F) x 100
constexpr uint16_t kScoreHigh = 0x8F;
constexpr int32_t kScoreUnit = 100;
constexpr uint16_t kLives = 0x8B;      // TimePilot.cpp: low 3 bits = lives - 1
constexpr uint16_t kScreen = 0x80;     // TimePilot.cpp: lives are read only on screen 2
constexpr uint16_t kGameOver = 0xA0;   // TimePilot.cpp: non-zero = game over

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 5;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal4(m, kScoreLow, kScoreHigh) * kScoreUnit);
  const int32_t l = ram(m, kLives) & 0x7;
  const int32_t screen = ram(m, kScreen) & 0x0F;
  g.terminal = ram(m, kGameOver) != 0;
  if (screen == 2) g.lives = l + 1;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace time_pilot
}  // namespace games
}  // namespace gpu_env
