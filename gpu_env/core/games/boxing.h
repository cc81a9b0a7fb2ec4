// Boxing: reward, terminal and lives as ALE's BoxingSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Boxing.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace boxing {
constexpr uint16_t kMyScore = 0x92;    // Boxing.cpp: decimal points; 0xC0 = KO (100)
constexpr uint16_t kOpponentScore = 0x93;
constexpr int32_t kKnockOutByte = 0xC0;
constexpr int32_t kKnockOut = 100;
constexpr uint16_t kMinutes = 0x90;    // Boxing.cpp: clock minutes in the high nibble
constexpr uint16_t kSeconds = 0x91;    // Boxing.cpp: clock seconds, BCD

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  int32_t mine = decimal2(m, kMyScore);
  int32_t theirs = decimal2(m, kOpponentScore);
  if (ram(m, kMyScore) == kKnockOutByte) mine = kKnockOut;
  if (ram(m, kOpponentScore) == kKnockOutByte) theirs = kKnockOut;
  set_score(g, mine - theirs);
  if (mine == kKnockOut || theirs == kKnockOut) {
    g.terminal = 1;
  } else {
    const int32_t minutes = ram(m, kMinutes) >> 4;
    const int32_t s = ram(m, kSeconds);
    const int32_t seconds = (s & 0x0F) + (s >> 4) * 10;
    g.terminal = minutes == 0 && seconds == 0;
  }
}

HD int32_t lives(const GameState&) { return 0; }
}  // namespace boxing
}  // namespace games
}  // namespace gpu_env
