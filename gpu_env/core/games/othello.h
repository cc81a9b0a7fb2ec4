// Othello: reward, terminal and lives as ALE's OthelloSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Othello.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace othello {
constexpr uint16_t kWhite = 0xCE;      // Othello.cpp: decimal count of white discs
constexpr uint16_t kBlack = 0xD0;      // Othello.cpp: decimal count of black discs
constexpr uint16_t kInput = 0xC0;      // Othello.cpp: 0 while no move is possible
constexpr int32_t kMaxIdleFrames = 50; // Othello.cpp: more than 50 such frames = game over
constexpr uint16_t kModeByte = 0xDE;   // Othello.cpp setMode: mode = RAM[0xDE] - 1
constexpr int kNoInput = 0;            // extra[kNoInput]: ALE m_no_input

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.extra[kNoInput] = 0;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal2(m, kWhite) - decimal2(m, kBlack));
  if (ram(m, kInput) == 0) {
    ++g.extra[kNoInput];
  } else {
    g.extra[kNoInput] = 0;
  }
  g.terminal = g.extra[kNoInput] > kMaxIdleFrames;
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace othello
}  // namespace games
}  // namespace gpu_env
