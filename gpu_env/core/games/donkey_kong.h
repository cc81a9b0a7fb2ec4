// Donkey Kong: reward, terminal and lives as ALE's DonkeyKongSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/DonkeyKong.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace donkey_kong {
constexpr uint16_t kScoreLow = 0x88;   // DonkeyKong.cpp: getDecimalScore(0x88, 0x87) x 100
constexpr uint16_t kScoreHigh = 0x87;
constexpr int32_t kScoreUnit = 100;
constexpr uint16_t kLives = 0xA3;
constexpr uint16_t kStateA = 0x8F;     // DonkeyKong.cpp: 0x03 here and 0x1F at 0x8B = game over
constexpr uint16_t kStateB = 0x8B;

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 2;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal4(m, kScoreLow, kScoreHigh) * kScoreUnit);
  g.lives = ram(m, kLives);
  g.terminal = g.lives == 0 && ram(m, kStateA) == 0x03 && ram(m, kStateB) == 0x1F;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace donkey_kong
}  // namespace games
}  // namespace gpu_env
