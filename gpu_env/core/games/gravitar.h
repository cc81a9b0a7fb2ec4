// Gravitar: reward, terminal and lives as ALE's GravitarSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Gravitar.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace gravitar {
constexpr uint16_t kScoreLow = 0x89;   // Gravitar.cpp: getDecimalScore(9, 8, 7)
constexpr uint16_t kScoreMid = 0x88;
constexpr uint16_t kScoreHigh = 0x87;
constexpr uint16_t kScreen = 0x81;     // Gravitar.cpp: 1 = game over, 0 = title (6 lives)
constexpr uint16_t kLives = 0x84;      // Gravitar.cpp: lives - 1
constexpr int32_t kTitleLives = 6;
constexpr uint16_t kModeByte = 0x80;   // Gravitar.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 6;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  const int32_t screen = ram(m, kScreen);
  g.terminal = screen == 0x01;
  g.lives = screen == 0x00 ? kTitleLives : ram(m, kLives) + 1;
}

// Gravitar.cpp setMode: starting lives per mode, set after the select presses.
template <class Mem>
HD void set_mode_end(GameState& g, int32_t mode, Mem&) {
  switch (mode) {
    case 0:
    case 2: g.lives = 6; break;
    case 1: g.lives = 15; break;
    case 3: g.lives = 100; break;
    case 4: g.lives = 25; break;
    default: break;
  }
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace gravitar
}  // namespace games
}  // namespace gpu_env
