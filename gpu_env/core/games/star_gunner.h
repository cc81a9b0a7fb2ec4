// Stargunner: reward, terminal and lives as ALE's StarGunnerSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/StarGunner.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace star_gunner {
// StarGunner.cpp: four score digits in the low nibbles of 0x83 (ones) .. 0x86; 10 = blank; x 100.
constexpr uint16_t kDigits = 0x83;
constexpr int kNumDigits = 4;
constexpr int32_t kBlank = 10;
constexpr int32_t kScoreUnit = 100;
constexpr uint16_t kLives = 0x87;      // StarGunner.cpp: 0 = game over; 5 once the game has started
constexpr int32_t kStartLives = 0x05;
constexpr uint16_t kModeByte = 0xF4;   // StarGunner.cpp setMode
constexpr int kGameStarted = 0;        // extra[kGameStarted]: ALE m_game_started

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 5;
  g.extra[kGameStarted] = 0;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  int32_t score = 0;
  int32_t mult = 1;
  for (int d = 0; d < kNumDigits; ++d) {
    int32_t v = ram(m, static_cast<uint16_t>(kDigits + d)) & 0x0F;
    if (v == kBlank) v = 0;
    score += mult * v;
    mult *= 10;
  }
  set_score(g, score * kScoreUnit);
  const int32_t b = ram(m, kLives);
  g.terminal = b == 0;
  g.extra[kGameStarted] |= b == kStartLives ? 1 : 0;
  g.lives = g.extra[kGameStarted] ? (b & 0x0F) : 5;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace star_gunner
}  // namespace games
}  // namespace gpu_env
