// H.E.R.O.: reward, terminal and lives as ALE's HeroSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Hero.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace hero {
constexpr uint16_t kScoreLow = 0xB9;   // Hero.cpp: getDecimalScore(0xB9, 0xB8, 0xB7)
constexpr uint16_t kScoreMid = 0xB8;
constexpr uint16_t kScoreHigh = 0xB7;
constexpr uint16_t kLives = 0xB3;
constexpr uint16_t kModeByte = 0x80;   // Hero.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 4;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  g.lives = ram(m, kLives);
  g.terminal = g.lives == 0;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace hero
}  // namespace games
}  // namespace gpu_env
