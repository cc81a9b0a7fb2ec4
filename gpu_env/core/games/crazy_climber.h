// Crazy Climber: reward, terminal and lives as ALE's CrazyClimberSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/CrazyClimber.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace crazy_climber {
// CrazyClimber.cpp: one decimal digit per byte at 0x82 (ones) .. 0x85 (thousands), score x 100.
constexpr uint16_t kDigit1 = 0x82;
constexpr uint16_t kDigit10 = 0x83;
constexpr uint16_t kDigit100 = 0x84;
constexpr uint16_t kDigit1000 = 0x85;
constexpr int32_t kScoreUnit = 100;
constexpr uint16_t kLives = 0xAA;      // CrazyClimber.cpp: lives; 0 = game over
constexpr uint16_t kModeByte = 0x80;   // CrazyClimber.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 5;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t score = ram(m, kDigit1) + 10 * ram(m, kDigit10) + 100 * ram(m, kDigit100) +
                        1000 * ram(m, kDigit1000);
  set_score(g, score * kScoreUnit);
  if (g.reward < 0) g.reward = 0;
  g.lives = ram(m, kLives);
  g.terminal = g.lives == 0;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace crazy_climber
}  // namespace games
}  // namespace gpu_env
