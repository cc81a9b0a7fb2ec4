// Battle Zone: reward, terminal and lives as ALE's BattleZoneSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/BattleZone.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace battle_zone {
// BattleZone.cpp: score digits in nibbles of 0x9D (high nibble = thousands) and 0x9E (low nibble =
// ten-thousands, high nibble = hundred-thousands); a nibble of 10 is a blank (= 0). Score x 1000.
constexpr uint16_t kScoreA = 0x9D;
constexpr uint16_t kScoreB = 0x9E;
constexpr int32_t kBlank = 10;
constexpr int32_t kScoreUnit = 1000;
constexpr uint16_t kLives = 0xBA;      // BattleZone.cpp: low nibble = lives
constexpr uint16_t kModeByte = 0xA1;   // BattleZone.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 5;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t a = ram(m, kScoreA);
  const int32_t b = ram(m, kScoreB);
  int32_t d0 = a >> 4;
  if (d0 == kBlank) d0 = 0;
  int32_t d1 = b & 0x0F;
  if (d1 == kBlank) d1 = 0;
  int32_t d2 = b >> 4;
  if (d2 == kBlank) d2 = 0;
  set_score(g, (d0 + 10 * d1 + 100 * d2) * kScoreUnit);
  g.lives = ram(m, kLives) & 0x0F;
  g.terminal = g.lives == 0;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace battle_zone
}  // namespace games
}  // namespace gpu_env
