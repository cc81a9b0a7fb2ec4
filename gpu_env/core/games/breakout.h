// Breakout: reward, terminal and lives as ALE's BreakoutSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Breakout.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace breakout {
constexpr uint16_t kScoreLow = 0xCD;   // Breakout.cpp: readRam(77): ones and tens nibbles
constexpr uint16_t kScoreHigh = 0xCC;  // Breakout.cpp: readRam(76): hundreds in the low nibble
constexpr uint16_t kLives = 0xB9;      // Breakout.cpp: readRam(57)
constexpr int32_t kStartLives = 5;     // Breakout.cpp: the game has started once lives read 5
constexpr uint16_t kModeByte = 0xB2;   // Breakout.cpp setMode
constexpr int kStarted = 0;            // extra[kStarted]: ALE m_started

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 5;
  g.extra[kStarted] = 0;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t x = ram(m, kScoreLow);
  const int32_t y = ram(m, kScoreHigh);
  set_score(g, (x & 0x0F) + 10 * ((x & 0xF0) >> 4) + 100 * (y & 0x0F));
  const int32_t b = ram(m, kLives);
  if (!g.extra[kStarted] && b == kStartLives) g.extra[kStarted] = 1;
  g.terminal = g.extra[kStarted] && b == 0;
  g.lives = b;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace breakout
}  // namespace games
}  // namespace gpu_env
