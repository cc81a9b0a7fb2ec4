// Tetris: reward, terminal and lives as ALE's TetrisSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Tetris.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace tetris {
constexpr uint16_t kScoreLow = 0xF1;   // Tetris.cpp: getDecimalScore(0x71, 0x72)
constexpr uint16_t kScoreHigh = 0xF2;
constexpr uint16_t kGameOver = 0xF3;   // Tetris.cpp: readRam(0x73) bit 7 = game over
constexpr int kStarted = 0;            // extra[kStarted]: ALE m_started

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 0;
  g.extra[kStarted] = 0;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t score = decimal4(m, kScoreLow, kScoreHigh);
  g.reward = score > g.score ? score - g.score : 0;
  g.score = score;
  g.extra[kStarted] = 1;
  g.terminal = g.extra[kStarted] && (ram(m, kGameOver) & 0x80) != 0;
  if (g.terminal) {
    g.score = 0;
    g.extra[kStarted] = 0;
  }
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }  // m_lives stays 0
}  // namespace tetris
}  // namespace games
}  // namespace gpu_env
