// Air Raid: reward, terminal and lives as ALE's AirRaidSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/AirRaid.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace air_raid {
constexpr uint16_t kScoreLow = 0xAA;   // AirRaid.cpp: getDecimalScore(0xAA, 0xA9, 0xA8)
constexpr uint16_t kScoreMid = 0xA9;
constexpr uint16_t kScoreHigh = 0xA8;
constexpr uint16_t kLives = 0xA7;      // AirRaid.cpp: 0xFF = game over
constexpr int32_t kNoLives = 0xFF;

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  g.terminal = ram(m, kLives) == kNoLives;
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace air_raid
}  // namespace games
}  // namespace gpu_env
