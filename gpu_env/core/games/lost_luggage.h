// Lost Luggage: reward, terminal and lives as ALE's LostLuggageSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/LostLuggage.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace lost_luggage {
constexpr uint16_t kScoreLow = 0x96;   // LostLuggage.cpp: getDecimalScore(0x96, 0x95, 0x94)
constexpr uint16_t kScoreMid = 0x95;
constexpr uint16_t kScoreHigh = 0x94;
constexpr uint16_t kLives = 0xCA;
constexpr uint16_t kStateA = 0xC8;     // LostLuggage.cpp: 0x0A, with 0xA5 and 0xA9 zero = game over
constexpr uint16_t kStateB = 0xA5;
constexpr uint16_t kStateC = 0xA9;
constexpr uint16_t kModeByte = 0x94;   // LostLuggage.cpp setMode: RAM[0x94] == 1 + 3 * mode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  g.lives = ram(m, kLives);
  g.terminal = g.lives == 0 && ram(m, kStateA) == 0x0A && ram(m, kStateB) == 0x00 &&
               ram(m, kStateC) == 0x00;
}

// LostLuggage.cpp isLegal: every FIRE action is illegal (ALE plays NOOP instead).
HD bool is_legal(int action) {
  return !(action == 1 || (action >= 10 && action <= 17));
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace lost_luggage
}  // namespace games
}  // namespace gpu_env
