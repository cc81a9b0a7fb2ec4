// Bank Heist: reward, terminal and lives as ALE's BankHeistSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/BankHeist.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace bank_heist {
constexpr uint16_t kScoreLow = 0xDA;   // BankHeist.cpp: getDecimalScore(0xDA, 0xD9, 0xD8)
constexpr uint16_t kScoreMid = 0xD9;
constexpr uint16_t kScoreHigh = 0xD8;
constexpr uint16_t kDeathTimer = 0xCE; // BankHeist.cpp: 1 with no lives left = game over
constexpr uint16_t kLives = 0xD5;
constexpr uint16_t kModeByte = 0x80;   // BankHeist.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 5;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  const int32_t death_timer = ram(m, kDeathTimer);
  g.lives = ram(m, kLives);
  g.terminal = death_timer == 0x01 && g.lives == 0x00;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace bank_heist
}  // namespace games
}  // namespace gpu_env
