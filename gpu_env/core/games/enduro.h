// Enduro: reward, terminal and lives as ALE's EnduroSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Enduro.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace enduro {
constexpr uint16_t kLevel = 0xAD;      // Enduro.cpp: day number (0 before the race starts)
constexpr uint16_t kCarsLow = 0xAB;    // Enduro.cpp: getDecimalScore(0xAB, 0xAC) = cars left
constexpr uint16_t kCarsHigh = 0xAC;
constexpr int32_t kDay1Cars = 200;     // Enduro.cpp: 200 cars on day 1, 300 on later days
constexpr int32_t kLaterDayCars = 300;
constexpr uint16_t kDeath = 0xAF;      // Enduro.cpp: 0xFF = game over
constexpr int32_t kDeathValue = 0xFF;

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  int32_t score = 0;
  const int32_t level = ram(m, kLevel);
  if (level != 0) {
    int32_t passed = decimal4(m, kCarsLow, kCarsHigh);
    passed = (level == 1 ? kDay1Cars : kLaterDayCars) - passed;
    if (level >= 2) score = kDay1Cars + (level - 2) * kLaterDayCars;
    score += passed;
  }
  set_score(g, score);
  g.terminal = ram(m, kDeath) == kDeathValue;
}

HD int32_t lives(const GameState&) { return 0; }
}  // namespace enduro
}  // namespace games
}  // namespace gpu_env
