// Casino: reward, terminal and lives as ALE's CasinoSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Casino.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace casino {
constexpr uint16_t kChipsLow = 0x95;   // Casino.cpp: getDecimalScore(0x95, 0x8C) = chips
constexpr uint16_t kChipsHigh = 0x8C;
constexpr uint16_t kModeByte = 0xD4;   // Casino.cpp: game variation (3 = poker solitaire)
constexpr int32_t kPokerSolitaire = 3;
constexpr uint16_t kAwarding = 0x9E;   // Casino.cpp: 0xAA = finished awarding (mode 3); bet otherwise
constexpr int32_t kFinishedAwarding = 0xAA;
constexpr uint16_t kInput = 0xD3;      // Casino.cpp: bit 7 = input disabled
constexpr int32_t kInputDisabled = 0x80;

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t score = decimal4(m, kChipsLow, kChipsHigh);
  if (ram(m, kModeByte) == kPokerSolitaire) {
    const bool finished = ram(m, kAwarding) == kFinishedAwarding;
    g.reward = score - g.score;
    g.terminal = score > 0 && finished;
  } else {
    const bool input_disabled = (ram(m, kInput) & kInputDisabled) != 0;
    if (!input_disabled) g.reward = score - g.score;  // otherwise the last reward stays
    const int32_t bet = decimal2(m, kAwarding);
    g.terminal = score == 0 || (bet > 0 && input_disabled);
  }
  g.score = score;
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace casino
}  // namespace games
}  // namespace gpu_env
