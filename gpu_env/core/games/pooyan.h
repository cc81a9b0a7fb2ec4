// Pooyan: reward, terminal and lives as ALE's PooyanSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Pooyan.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace pooyan {
constexpr uint16_t kScoreLow = 0x8A;   // Pooyan.cpp: getDecimalScore(0x8A, 0x89, 0x88)
constexpr uint16_t kScoreMid = 0x89;
constexpr uint16_t kScoreHigh = 0x88;
constexpr uint16_t kLives = 0x96;      // Pooyan.cpp: low 3 bits = lives - 1
constexpr uint16_t kState = 0x98;      // Pooyan.cpp: 0x05 with no lives = game over
constexpr uint16_t kModeByte = 0xBD;   // Pooyan.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  const int32_t l = ram(m, kLives);
  g.terminal = l == 0x0 && ram(m, kState) == 0x05;
  g.lives = (l & 0x7) + 1;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace pooyan
}  // namespace games
}  // namespace gpu_env
