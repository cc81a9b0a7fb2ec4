// Video Pinball: reward, terminal and lives as ALE's VideoPinballSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/VideoPinball.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace video_pinball {
constexpr uint16_t kScoreLow = 0xB0;   // VideoPinball.cpp: getDecimalScore(0xB0, 0xB2, 0xB4)
constexpr uint16_t kScoreMid = 0xB2;
constexpr uint16_t kScoreHigh = 0xB4;
constexpr uint16_t kGameOver = 0xAF;   // VideoPinball.cpp: bit 0 = game over
constexpr uint16_t kBall = 0x99;       // VideoPinball.cpp: low 3 bits = ball number
constexpr uint16_t kExtraBall = 0xA8;  // VideoPinball.cpp: bit 0 = extra ball
constexpr int32_t kBalls = 4;          // VideoPinball.cpp: lives = 4 + extra - ball
constexpr uint16_t kModeByte = 0xC1;   // VideoPinball.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  g.terminal = (ram(m, kGameOver) & 0x1) != 0;
  g.lives = kBalls + (ram(m, kExtraBall) & 0x1) - (ram(m, kBall) & 0x7);
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace video_pinball
}  // namespace games
}  // namespace gpu_env
