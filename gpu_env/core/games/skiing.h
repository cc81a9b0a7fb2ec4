// Skiing: reward, terminal and lives as ALE's SkiingSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Skiing.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace skiing {
constexpr uint16_t kCentisLow = 0xEA;  // Skiing.cpp: getDecimalScore(0xEA, 0xE9) = centiseconds
constexpr uint16_t kCentisHigh = 0xE9;
constexpr uint16_t kMinutes = 0xE8;    // Skiing.cpp: raw minutes
constexpr int32_t kCentisPerMinute = 6000;
constexpr uint16_t kEndFlag = 0x91;    // Skiing.cpp: 0xFF = run finished
constexpr int32_t kEndValue = 0xFF;

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t centis = decimal4(m, kCentisLow, kCentisHigh);
  const int32_t score = ram(m, kMinutes) * kCentisPerMinute + centis;
  g.reward = g.score - score;  // Skiing.cpp: elapsed time is a penalty
  g.score = score;
  g.terminal = ram(m, kEndFlag) == kEndValue;
}

// Skiing.cpp isLegal: every FIRE action is illegal (ALE plays NOOP instead).
HD bool is_legal(int action) {
  return !(action == 1 || (action >= 10 && action <= 17));
}

HD int32_t lives(const GameState&) { return 0; }
}  // namespace skiing
}  // namespace games
}  // namespace gpu_env
