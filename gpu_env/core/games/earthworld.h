// Earthworld: reward, terminal and lives as ALE's EarthworldSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Earthworld.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace earthworld {
constexpr uint16_t kScore = 0xA7;      // Earthworld.cpp: getDecimalScore(0xA7); 10 = game over
constexpr int32_t kFinalScore = 10;

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t score = decimal2(m, kScore);
  set_score(g, score);
  g.terminal = score == kFinalScore;
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace earthworld
}  // namespace games
}  // namespace gpu_env
