// Name This Game: reward, terminal and lives as ALE's NameThisGameSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/NameThisGame.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace name_this_game {
constexpr uint16_t kScoreLow = 0xC6;   // NameThisGame.cpp: getDecimalScore(0xC6, 0xC5, 0xC4)
constexpr uint16_t kScoreMid = 0xC5;
constexpr uint16_t kScoreHigh = 0xC4;
constexpr uint16_t kLives = 0xC7;      // NameThisGame.cpp: low 3 bits
constexpr uint16_t kModeByte = 0xDE;   // NameThisGame.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  g.lives = ram(m, kLives) & 0x7;
  g.terminal = g.lives == 0;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace name_this_game
}  // namespace games
}  // namespace gpu_env
