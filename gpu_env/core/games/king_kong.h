// King Kong: reward, terminal and lives as ALE's KingkongSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Kingkong.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace king_kong {
constexpr uint16_t kScoreLow = 0x83;   // Kingkong.cpp: getDecimalScore(0x83, 0x82)
constexpr uint16_t kScoreHigh = 0x82;
constexpr uint16_t kLives = 0xEE;
constexpr uint16_t kModeByte = 0xEC;   // Kingkong.cpp setMode: RAM[0xEC] == 2 * mode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal4(m, kScoreLow, kScoreHigh));
  g.lives = ram(m, kLives);
  g.terminal = g.lives == 0;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace king_kong
}  // namespace games
}  // namespace gpu_env
