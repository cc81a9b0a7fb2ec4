// Blackjack: reward, terminal and lives as ALE's BlackjackSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Blackjack.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace blackjack {
constexpr uint16_t kChipsLow = 0x89;   // Blackjack.cpp: getDecimalScore(0x89, 0x86) = chips
constexpr uint16_t kChipsHigh = 0x86;
constexpr int32_t kBustHigh = 0x0B;    // Blackjack.cpp: 0x86 == 0x0B and 0x89 == 0xBB = bust
constexpr int32_t kBustLow = 0xBB;
constexpr int32_t kWinningChips = 1000;

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const bool bust = ram(m, kChipsHigh) == kBustHigh && ram(m, kChipsLow) == kBustLow;
  const int32_t score = bust ? 0 : decimal4(m, kChipsLow, kChipsHigh);
  set_score(g, score);
  g.terminal = bust || score >= kWinningChips;
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace blackjack
}  // namespace games
}  // namespace gpu_env
