// Road Runner: reward, terminal and lives as ALE's RoadRunnerSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/RoadRunner.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace road_runner {
// RoadRunner.cpp: four score digits in the low nibbles of 0xC9 (ones) .. 0xCC, 0xA = blank; x 100.
constexpr uint16_t kDigits = 0xC9;
constexpr int kNumDigits = 4;
constexpr int32_t kBlank = 0xA;
constexpr int32_t kScoreUnit = 100;
constexpr uint16_t kLives = 0xC4;      // RoadRunner.cpp: low 3 bits = lives - 1
constexpr uint16_t kYVelocity = 0xB9;  // RoadRunner.cpp: either non-zero on the last life = game over
constexpr uint16_t kXVelocity = 0xBD;

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  int32_t score = 0;
  int32_t mult = 1;
  for (int d = 0; d < kNumDigits; ++d) {
    int32_t v = ram(m, static_cast<uint16_t>(kDigits + d)) & 0x0F;
    if (v == kBlank) v = 0;
    score += mult * v;
    mult *= 10;
  }
  set_score(g, score * kScoreUnit);
  const int32_t l = ram(m, kLives) & 0x7;
  g.terminal = l == 0 && (ram(m, kYVelocity) != 0 || ram(m, kXVelocity) != 0);
  g.lives = l + 1;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace road_runner
}  // namespace games
}  // namespace gpu_env
