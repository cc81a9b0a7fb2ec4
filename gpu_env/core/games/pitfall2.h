// Pitfall II: Lost Caverns: reward, terminal and lives as ALE's Pitfall2Settings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Pitfall2.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace pitfall2 {
constexpr uint16_t kScoreLow = 0xC9;   // Pitfall2.cpp: getDecimalScore(0xC9, 0xC8, 0xC7)
constexpr uint16_t kScoreMid = 0xC8;
constexpr uint16_t kScoreHigh = 0xC7;
constexpr int32_t kStartScore = 4000;  // Pitfall2.cpp reset(): the game starts at 4,000 points
constexpr int32_t kMaxScore = 199000;  // Pitfall2.cpp: the maximum score ends the game

HD void reset(GameState& g) {
  g.reward = 0;
  g.score = kStartScore;
  g.terminal = 0;
  g.lives = 1;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  g.lives = 1;
  g.terminal = g.score == kMaxScore;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace pitfall2
}  // namespace games
}  // namespace gpu_env
