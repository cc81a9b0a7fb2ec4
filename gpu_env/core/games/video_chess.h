// Video Chess: reward, terminal and lives as ALE's VideoChessSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/VideoChess.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace video_chess {
constexpr uint16_t kTurn = 0xE1;       // VideoChess.cpp: 0x82 = white (player) to move
constexpr int32_t kWhiteToMove = 0x82;
constexpr uint16_t kCheckmate = 0xEE;  // VideoChess.cpp: 0x00 = black mated, 0x01 = white mated
constexpr int32_t kBlackMated = 0x00;
constexpr int32_t kWhiteMated = 0x01;
constexpr uint16_t kModeByte = 0xEA;   // VideoChess.cpp setMode

HD void reset(GameState& g) {
  g.reward = 0;
  g.terminal = 0;
  g.lives = 1;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  g.reward = 0;
  if (ram(m, kTurn) == kWhiteToMove) {
    const int32_t mate = ram(m, kCheckmate);
    if (mate == kBlackMated) {
      g.reward += 1;
      g.terminal = 1;
    } else if (mate == kWhiteMated) {
      g.reward -= 1;
      g.terminal = 1;
    }
  }
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace video_chess
}  // namespace games
}  // namespace gpu_env
