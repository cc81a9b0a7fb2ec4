// Turmoil: reward, terminal and lives as ALE's TurmoilSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Turmoil.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace turmoil {
// Turmoil.cpp: score = (getDecimalScore(0x89, 0x8A) + RAM[0xD3]) * 10.
constexpr uint16_t kScoreLow = 0x89;
constexpr uint16_t kScoreHigh = 0x8A;
constexpr uint16_t kScoreExtra = 0xD3;
constexpr int32_t kScoreUnit = 10;
constexpr uint16_t kLives = 0xB9;
constexpr uint16_t kState = 0xC5;      // Turmoil.cpp: 0x01 with no lives = game over
constexpr uint16_t kModeByte = 0xEA;   // Turmoil.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 4;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, (decimal4(m, kScoreLow, kScoreHigh) + ram(m, kScoreExtra)) * kScoreUnit);
  const int32_t l = ram(m, kLives);
  g.terminal = l == 0 && ram(m, kState) == 0x01;
  g.lives = l;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace turmoil
}  // namespace games
}  // namespace gpu_env
