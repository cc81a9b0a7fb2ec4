// James Bond 007: reward, terminal and lives as ALE's JamesBondSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/JamesBond.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace jamesbond {
constexpr uint16_t kScoreLow = 0xDC;   // JamesBond.cpp: getDecimalScore(0xDC, 0xDD, 0xDE)
constexpr uint16_t kScoreMid = 0xDD;
constexpr uint16_t kScoreHigh = 0xDE;
constexpr uint16_t kLives = 0x86;      // JamesBond.cpp: low nibble = lives - 1
constexpr uint16_t kScreen = 0x8C;     // JamesBond.cpp: 0x68 with no lives = game over
constexpr int32_t kGameOverScreen = 0x68;
constexpr uint16_t kModeByte = 0x8C;   // JamesBond.cpp setMode: mode or mode + 0x48

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 6;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  const int32_t l = ram(m, kLives) & 0x0F;
  g.terminal = l == 0 && ram(m, kScreen) == kGameOverScreen;
  g.lives = l + 1;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace jamesbond
}  // namespace games
}  // namespace gpu_env
