// Haunted House: reward, terminal and lives as ALE's HauntedHouseSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/HauntedHouse.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace haunted_house {
constexpr uint16_t kMatches = 0x82;    // HauntedHouse.cpp: getDecimalScore(0x82) = matches used
constexpr uint16_t kLives = 0x96;
constexpr uint16_t kEscaped = 0x99;    // HauntedHouse.cpp: 0x44 = escaped with the urn (+100)
constexpr int32_t kEscapedValue = 0x44;
constexpr int32_t kEscapeReward = 100;
constexpr uint16_t kModeByte = 0xCC;   // HauntedHouse.cpp setMode
constexpr int kMatchesWord = 0;        // extra[kMatchesWord]: ALE m_matches

HD void reset(GameState& g) {
  g.reward = 0;
  g.terminal = 0;
  g.extra[kMatchesWord] = 0;
  g.lives = 9;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  g.reward = 0;
  const int32_t matches = decimal2(m, kMatches);
  if (matches != g.extra[kMatchesWord]) {
    --g.reward;
    g.extra[kMatchesWord] = matches;
  }
  g.lives = ram(m, kLives);
  const bool escaped = ram(m, kEscaped) == kEscapedValue;
  if (escaped) g.reward += kEscapeReward;
  g.terminal = g.lives == 0 || escaped;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace haunted_house
}  // namespace games
}  // namespace gpu_env
