// Ms. Pac-Man: reward, terminal and lives as ALE's MsPacmanSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/MsPacman.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace ms_pacman {
constexpr uint16_t kScoreLow = 0xF8;   // MsPacman.cpp: getDecimalScore(0xF8, 0xF9, 0xFA)
constexpr uint16_t kScoreMid = 0xF9;
constexpr uint16_t kScoreHigh = 0xFA;
constexpr uint16_t kLives = 0xFB;      // MsPacman.cpp: low nibble = lives - 1
constexpr uint16_t kDeathTimer = 0xA7; // MsPacman.cpp: 0x53 with no lives = game over
constexpr int32_t kGameOverTimer = 0x53;
constexpr uint16_t kModeByte = 0x99;   // MsPacman.cpp setMode, with 0xA1
constexpr uint16_t kVariantByte = 0xA1;

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  const int32_t l = ram(m, kLives) & 0x0F;
  g.terminal = l == 0 && ram(m, kDeathTimer) == kGameOverTimer;
  g.lives = (l & 0x7) + 1;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace ms_pacman
}  // namespace games
}  // namespace gpu_env
