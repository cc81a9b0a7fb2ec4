// Video Checkers: reward, terminal and lives as ALE's VideoCheckersSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/VideoCheckers.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace video_checkers {
// VideoCheckers.cpp: board squares at 0x80..0x87, 0x89..0x90, 0x92..0x99, 0x9B..0xA2;
// 0x10/0x20 = black piece (man/king), 0x90/0xA0 = white piece.
constexpr uint16_t kBoard = 0x80;
constexpr int kRuns = 4;
constexpr int kSquaresPerRun = 8;
constexpr int kRunStride = 9;          // runs start at 0x80, 0x89, 0x92, 0x9B
constexpr uint16_t kModeByte = 0xF6;   // VideoCheckers.cpp setMode: modes >= 11 are stored + 6
constexpr int32_t kFirstReverseMode = 11;
constexpr int kReverse = 0;            // extra[kReverse]: ALE m_reverse_checkers (set by setMode)

HD void reset(GameState& g) {
  g.reward = 0;
  g.terminal = 0;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  int black = 0;
  int white = 0;
  for (int run = 0; run < kRuns; ++run) {
    for (int i = 0; i < kSquaresPerRun; ++i) {
      const int32_t s = ram(m, static_cast<uint16_t>(kBoard + run * kRunStride + i));
      if (s == 0x10 || s == 0x20) {
        ++black;
      } else if (s == 0x90 || s == 0xA0) {
        ++white;
      }
    }
  }
  if (black == 0) {  // the reward persists until the next reset, as in ALE
    g.reward = g.extra[kReverse] ? 1 : -1;
    g.terminal = 1;
  } else if (white == 0) {
    g.reward = g.extra[kReverse] ? -1 : 1;
    g.terminal = 1;
  }
}

// VideoCheckers.cpp setMode: decides "reverse checkers" before the select presses.
HD void set_mode_begin(GameState& g, int32_t mode) {
  g.extra[kReverse] = mode >= kFirstReverseMode ? 1 : 0;
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace video_checkers
}  // namespace games
}  // namespace gpu_env
