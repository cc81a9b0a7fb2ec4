// TRON: Deadly Discs: reward, terminal and lives as ALE's TrondeadSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Trondead.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace trondead {
constexpr uint16_t kScoreLow = 0xBF;   // Trondead.cpp: getDecimalScore(0xBF, 0xBE, 0xBD)
constexpr uint16_t kScoreMid = 0xBE;
constexpr uint16_t kScoreHigh = 0xBD;
constexpr uint16_t kHits = 0xC8;       // Trondead.cpp: hits taken; 5 = game over
constexpr int32_t kMaxHits = 5;

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 5;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  const int32_t hits = ram(m, kHits);
  g.terminal = hits == kMaxHits;
  g.lives = kMaxHits - hits;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace trondead
}  // namespace games
}  // namespace gpu_env
