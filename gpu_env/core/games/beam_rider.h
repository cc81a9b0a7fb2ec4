// Beamrider: reward, terminal and lives as ALE's BeamRiderSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/BeamRider.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace beam_rider {
constexpr uint16_t kScoreLow = 0x89;   // BeamRider.cpp: getDecimalScore(9, 10, 11)
constexpr uint16_t kScoreMid = 0x8A;
constexpr uint16_t kScoreHigh = 0x8B;
constexpr uint16_t kLives = 0x85;      // BeamRider.cpp: lives - 1
constexpr uint16_t kLifeLost = 0x8C;   // BeamRider.cpp: a decrease counts only once this is 1
constexpr uint16_t kGameOver = 0x85;   // BeamRider.cpp: readRam(5) == 255 = game over

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  const int32_t new_lives = ram(m, kLives) + 1;
  if (new_lives == g.lives - 1) {
    if (ram(m, kLifeLost) == 0x01) g.lives = new_lives;
  } else {
    g.lives = new_lives;
  }
  g.terminal = ram(m, kGameOver) == 255;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace beam_rider
}  // namespace games
}  // namespace gpu_env
