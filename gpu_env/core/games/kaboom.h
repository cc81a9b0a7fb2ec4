// Kaboom!: reward, terminal and lives as ALE's KaboomSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Kaboom.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace kaboom {
constexpr uint16_t kScoreLow = 0xA5;   // Kaboom.cpp: getDecimalScore(0xA5, 0xA4, 0xA3)
constexpr uint16_t kScoreMid = 0xA4;
constexpr uint16_t kScoreHigh = 0xA3;
constexpr uint16_t kLives = 0xA1;      // Kaboom.cpp: 0 = game over
constexpr int32_t kMaxScore = 999999;  // Kaboom.cpp: the maximum score ends the game

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  g.terminal = ram(m, kLives) == 0x0 || g.score == kMaxScore;
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace kaboom
}  // namespace games
}  // namespace gpu_env
