// Chopper Command: reward, terminal and lives as ALE's ChopperCommandSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/ChopperCommand.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace chopper_command {
constexpr uint16_t kScoreLow = 0xEE;   // ChopperCommand.cpp: getDecimalScore(0xEE, 0xEC) x 100
constexpr uint16_t kScoreHigh = 0xEC;
constexpr int32_t kScoreUnit = 100;
constexpr uint16_t kLives = 0xE4;      // ChopperCommand.cpp: low nibble = lives
constexpr uint16_t kStarted = 0xC2;    // ChopperCommand.cpp: bit 0 (ALE m_is_started, unused)
constexpr uint16_t kModeByte = 0xE0;   // ChopperCommand.cpp setMode
constexpr int kIsStarted = 0;          // extra[kIsStarted]: ALE m_is_started

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
  g.extra[kIsStarted] = 0;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal4(m, kScoreLow, kScoreHigh) * kScoreUnit);
  g.lives = ram(m, kLives) & 0x0F;
  g.terminal = g.lives == 0;
  g.extra[kIsStarted] |= ram(m, kStarted) & 0x1;
}

HD int32_t lives(const GameState& g) { return g.lives; }  // ChopperCommand.hpp: no terminal check
}  // namespace chopper_command
}  // namespace games
}  // namespace gpu_env
