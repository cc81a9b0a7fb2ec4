// Tutankham: reward, terminal and lives as ALE's TutankhamSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Tutankham.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace tutankham {
constexpr uint16_t kScoreLow = 0x9C;   // Tutankham.cpp: getDecimalScore(0x9C, 0x9A)
constexpr uint16_t kScoreHigh = 0x9A;
constexpr uint16_t kLives = 0x9E;      // Tutankham.cpp: low 2 bits
constexpr uint16_t kState = 0x81;      // Tutankham.cpp: anything but 0x84 with no lives = game over
constexpr int32_t kAliveState = 0x84;
constexpr uint16_t kModeByte = 0xAB;   // Tutankham.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal4(m, kScoreLow, kScoreHigh));
  const int32_t l = ram(m, kLives);
  g.terminal = l == 0 && ram(m, kState) != kAliveState;
  g.lives = l & 0x3;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace tutankham
}  // namespace games
}  // namespace gpu_env
