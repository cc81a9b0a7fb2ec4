// Basic Math: reward, terminal and lives as ALE's BasicMathSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/BasicMath.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace basic_math {
constexpr uint16_t kScore = 0x84;      // BasicMath.cpp: getDecimalScore(0x84) = problems right
constexpr uint16_t kDone = 0x86;       // BasicMath.cpp: non-zero decimal value = game over
constexpr uint16_t kModeByte = 0xC5;   // BasicMath.cpp setMode

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal2(m, kScore));
  g.terminal = decimal2(m, kDone) != 0;
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace basic_math
}  // namespace games
}  // namespace gpu_env
