// Phoenix: reward, terminal and lives as ALE's PhoenixSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Phoenix.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace phoenix {
// Phoenix.cpp: score = (getDecimalScore(0xC8, 0xC9) * 10 + high nibble of 0xC7) * 10.
constexpr uint16_t kScoreLow = 0xC8;
constexpr uint16_t kScoreHigh = 0xC9;
constexpr uint16_t kScoreTop = 0xC7;
constexpr uint16_t kState = 0xCC;      // Phoenix.cpp: 0x80 = game over
constexpr int32_t kGameOverState = 0x80;
constexpr uint16_t kLives = 0xCB;      // Phoenix.cpp: low 3 bits

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 5;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  int32_t score = decimal4(m, kScoreLow, kScoreHigh) * 10;
  score += ram(m, kScoreTop) >> 4;
  set_score(g, score * 10);
  g.terminal = ram(m, kState) == kGameOverState;
  g.lives = ram(m, kLives) & 0x7;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace phoenix
}  // namespace games
}  // namespace gpu_env
