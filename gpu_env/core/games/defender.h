// Defender: reward, terminal and lives as ALE's DefenderSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Defender.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace defender {
// Defender.cpp: six score digits in the low nibbles of 0x9C (ones) .. 0xA1; nibble 0xA = blank.
constexpr uint16_t kDigits = 0x9C;
constexpr int kNumDigits = 6;
constexpr int32_t kBlank = 0xA;
constexpr uint16_t kLives = 0xC2;      // Defender.cpp: lives; 0 = game over
constexpr uint16_t kModeByte = 0x9B;   // Defender.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  int32_t mult = 1;
  int32_t score = 0;
  for (int d = 0; d < kNumDigits; ++d) {
    int32_t v = ram(m, static_cast<uint16_t>(kDigits + d)) & 0x0F;
    if (v == kBlank) v = 0;
    score += v * mult;
    mult *= 10;
  }
  set_score(g, score);
  g.lives = ram(m, kLives);
  g.terminal = g.lives == 0;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace defender
}  // namespace games
}  // namespace gpu_env
