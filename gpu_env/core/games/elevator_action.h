// Elevator Action: reward, terminal and lives as ALE's ElevatorActionSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/ElevatorAction.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace elevator_action {
constexpr uint16_t kScoreLow = 0x89;   // ElevatorAction.cpp: getDecimalScore(0x89, 0x88, 0x87)
constexpr uint16_t kScoreMid = 0x88;
constexpr uint16_t kScoreHigh = 0x87;
constexpr uint16_t kLives = 0x83;
constexpr uint16_t kScreen = 0x81;     // ElevatorAction.cpp: 0 = start screen

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 4;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  g.lives = ram(m, kLives);
  const bool start_screen = ram(m, kScreen) == 0x00;
  g.terminal = g.lives == 0 && !start_screen;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace elevator_action
}  // namespace games
}  // namespace gpu_env
