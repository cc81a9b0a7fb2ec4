// Adventure: reward, terminal and lives as ALE's AdventureSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Adventure.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace adventure {
constexpr uint16_t kChaliceRoom = 0xB9;      // Adventure.cpp: chalice location byte
constexpr int32_t kYellowCastle = 0x12;      // Adventure.cpp: chalice in the yellow castle -> win
constexpr uint16_t kPlayerStatus = 0xE0;     // Adventure.cpp: player status byte
constexpr int32_t kPlayerEaten = 2;          // Adventure.cpp: status 2 = eaten by a dragon
constexpr uint16_t kModeByte = 0xDD;         // Adventure.cpp setMode: mode = (RAM[0xDD] >> 1) & 3

HD void reset(GameState& g) {
  g.reward = 0;
  g.terminal = 0;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const bool won = ram(m, kChaliceRoom) == kYellowCastle;
  if (won) g.reward = 1;  // ALE never clears the reward before reset()
  const bool eaten = ram(m, kPlayerStatus) == kPlayerEaten;
  g.terminal = eaten || won;
}

HD int32_t lives(const GameState&) { return 1; }  // Adventure.hpp: lives() is always 1
}  // namespace adventure
}  // namespace games
}  // namespace gpu_env
