// Gopher: reward, terminal and lives as ALE's GopherSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Gopher.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace gopher {
constexpr uint16_t kScoreLow = 0xB2;   // Gopher.cpp: getDecimalScore(0xB2, 0xB1, 0xB0)
constexpr uint16_t kScoreMid = 0xB1;
constexpr uint16_t kScoreHigh = 0xB0;
constexpr uint16_t kCarrots = 0xB4;    // Gopher.cpp: low 3 bits, one per carrot left
constexpr uint16_t kModeByte = 0xD3;   // Gopher.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  const int32_t carrots = ram(m, kCarrots) & 0x7;
  g.terminal = carrots == 0;
  g.lives = (carrots & 1) + ((carrots >> 1) & 1) + ((carrots >> 2) & 1);  // carrots left
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace gopher
}  // namespace games
}  // namespace gpu_env
