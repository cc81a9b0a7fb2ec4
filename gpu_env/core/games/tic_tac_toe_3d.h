// 3-D Tic-Tac-Toe: reward, terminal and lives as ALE's TicTacToe3dSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/TicTacToe3d.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace tic_tac_toe_3d {
constexpr uint16_t kPcLow = 0xFE;      // TicTacToe3d.cpp: 0xF310 on the stack = game decided
constexpr uint16_t kPcHigh = 0xFF;
constexpr int32_t kDecidedLow = 0x10;
constexpr int32_t kDecidedHigh = 0xF3;
constexpr uint16_t kWinner = 0xE1;     // TicTacToe3d.cpp: 0x08 = the player won
constexpr int32_t kPlayerWon = 0x08;
constexpr uint16_t kGridFirst = 0x9A;  // TicTacToe3d.cpp: 64 cells; none empty = draw
constexpr uint16_t kGridLast = 0xD9;
constexpr uint16_t kModeByte = 0x88;   // TicTacToe3d.cpp setMode

HD void reset(GameState& g) {
  g.reward = 0;
  g.terminal = 0;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  g.reward = 0;
  const int32_t lo = ram(m, kPcLow);
  const int32_t hi = ram(m, kPcHigh);
  const int32_t winner = ram(m, kWinner);
  if (hi == kDecidedHigh && lo == kDecidedLow) {
    g.reward = winner == kPlayerWon ? 1 : -1;
    g.terminal = 1;
  }
  for (uint16_t a = kGridFirst; a <= kGridLast; ++a) {
    if (ram(m, a) == 0) return;
  }
  g.terminal = 1;
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace tic_tac_toe_3d
}  // namespace games
}  // namespace gpu_env
