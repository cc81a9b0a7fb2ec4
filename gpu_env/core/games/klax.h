// Klax: reward, terminal and lives as ALE's KlaxSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Klax.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace klax {
// Klax.cpp reads the F6SC cartridge RAM through its read port (System::peek of 0xF0xx).
constexpr uint16_t kScoreLow = 0xF0B4;   // Klax.cpp: BCD score, low byte first
constexpr uint16_t kScoreMid = 0xF0B5;
constexpr uint16_t kScoreHigh = 0xF0B6;
constexpr uint16_t kMisses = 0xF0EE;     // Klax.cpp: tiles missed
constexpr uint16_t kMaxMisses = 0xF0E9;  // Klax.cpp: misses allowed
constexpr uint16_t kLevel = 0xF09D;      // Klax.cpp: 0x99 = last level done
constexpr int32_t kFinalLevel = 0x99;
constexpr uint16_t kModeByte = 0xF0EA;   // Klax.cpp setMode (cart RAM)
constexpr uint16_t kGameActive = 0xA8;   // Klax.cpp: 4 = game running (RIOT RAM)
constexpr int32_t kActive = 4;
constexpr uint16_t kWell = 0xB3;         // Klax.cpp: 25 well cells at 0xB3..
constexpr int kWellCells = 25;

template <class Mem>
HD bool is_block(Mem& m, int i) {
  const int32_t t = ram(m, static_cast<uint16_t>(kWell + i));
  return t != 0 && t != 2 && t != 6 && t != 10 && t != 14;  // Klax.cpp: non-block cell values
}

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  const int32_t misses = ram(m, kMisses);
  const int32_t max_misses = ram(m, kMaxMisses);
  const bool active = ram(m, kGameActive) == kActive;
  int blocks = 0;
  for (int i = 0; i < kWellCells; ++i) blocks += is_block(m, i) ? 1 : 0;
  const int32_t level = ram(m, kLevel);
  g.terminal = (max_misses > 0 && misses == max_misses) || (active && blocks == kWellCells) ||
               level == kFinalLevel;
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace klax
}  // namespace games
}  // namespace gpu_env
