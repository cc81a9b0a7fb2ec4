// Pong: reward, terminal and lives as ALE's PongSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Pong.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace pong {
constexpr uint16_t kCpuScore = 0x8D;     // Pong.cpp: readRam(13), the computer's points
constexpr uint16_t kPlayerScore = 0x8E;  // Pong.cpp: readRam(14), the player's points
constexpr int32_t kWinningPoints = 21;   // Pong.cpp: game over when either side has 21
constexpr uint16_t kModeByte = 0x96;     // Pong.cpp setMode

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t cpu = ram(m, kCpuScore);
  const int32_t player = ram(m, kPlayerScore);
  set_score(g, player - cpu);
  g.terminal = cpu == kWinningPoints || player == kWinningPoints;
}

HD int32_t lives(const GameState&) { return 0; }
}  // namespace pong
}  // namespace games
}  // namespace gpu_env
