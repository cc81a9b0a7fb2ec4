// Mr. Do!: reward, terminal and lives as ALE's MrDoSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/MrDo.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace mr_do {
constexpr uint16_t kScoreLow = 0x82;   // MrDo.cpp: getDecimalScore(0x82, 0x83) x 10
constexpr uint16_t kScoreHigh = 0x83;
constexpr int32_t kScoreUnit = 10;
constexpr uint16_t kLives = 0xDB;
constexpr uint16_t kGameOver = 0xDA;   // MrDo.cpp: 0x40 = game over
constexpr int32_t kGameOverValue = 0x40;
constexpr uint16_t kModeByte = 0x80;   // MrDo.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 4;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal4(m, kScoreLow, kScoreHigh) * kScoreUnit);
  g.lives = ram(m, kLives);
  g.terminal = ram(m, kGameOver) == kGameOverValue;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace mr_do
}  // namespace games
}  // namespace gpu_env
