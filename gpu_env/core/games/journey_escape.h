// Journey Escape: reward, terminal and lives as ALE's JourneyEscapeSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/JourneyEscape.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace journey_escape {
constexpr uint16_t kScoreLow = 0x92;   // JourneyEscape.cpp: getDecimalScore(0x92, 0x91, 0x90)
constexpr uint16_t kScoreMid = 0x91;
constexpr uint16_t kScoreHigh = 0x90;
constexpr int32_t kStartBonus = 50000; // JourneyEscape.cpp: the 50,000 start bonus is no reward
constexpr uint16_t kMinutes = 0x95;    // JourneyEscape.cpp: clock; 0:00 = game over
constexpr uint16_t kSeconds = 0x96;

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t score = decimal6(m, kScoreLow, kScoreMid, kScoreHigh);
  int32_t reward = score - g.score;
  if (reward == kStartBonus) reward = 0;
  g.reward = reward;
  g.score = score;
  g.terminal = ram(m, kMinutes) == 0 && ram(m, kSeconds) == 0;
}

HD int32_t lives(const GameState&) { return 0; }
}  // namespace journey_escape
}  // namespace games
}  // namespace gpu_env
