// Mario Bros.: reward, terminal and lives as ALE's MarioBrosSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/MarioBros.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace mario_bros {
constexpr uint16_t kScoreLow = 0x8A;   // MarioBros.cpp: getDecimalScore(0x8A, 0x89) x 100
constexpr uint16_t kScoreHigh = 0x89;
constexpr int32_t kScoreUnit = 100;
constexpr uint16_t kLives = 0x87;
constexpr uint16_t kModeByte = 0x80;   // MarioBros.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 0;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal4(m, kScoreLow, kScoreHigh) * kScoreUnit);
  g.lives = ram(m, kLives);
  g.terminal = g.lives == 0;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace mario_bros
}  // namespace games
}  // namespace gpu_env
