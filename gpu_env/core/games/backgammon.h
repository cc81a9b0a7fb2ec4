// Backgammon: reward, terminal and lives as ALE's BackgammonSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Backgammon.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace backgammon {
// Backgammon.cpp: signed piece counts; 0x80 = player's borne-off pieces (negated), 0x8E =
// computer's borne-off pieces, points at 0x81..0x8D and 0x8F..0x9B (>0 computer, <0 player).
constexpr uint16_t kPlayerOut = 0x80;
constexpr uint16_t kComputerOut = 0x8E;
constexpr uint16_t kPointsA = 0x81;
constexpr uint16_t kPointsAEnd = 0x8D;
constexpr uint16_t kPointsB = 0x8F;
constexpr uint16_t kPointsBEnd = 0x9B;
constexpr int32_t kPieces = 15;
constexpr uint16_t kModeByte = 0xDC;   // Backgammon.cpp setMode: select until RAM[0xDC] == 3

template <class Mem>
HD int32_t pieces(Mem& m, uint16_t addr) {
  return static_cast<int32_t>(static_cast<int8_t>(m.peek(addr)));
}

HD void reset(GameState& g) {
  g.reward = 0;
  g.terminal = 0;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  // Backgammon.cpp keeps the counts in int8_t.
  const int8_t player_out = static_cast<int8_t>(-pieces(m, kPlayerOut));
  const int8_t computer_out = static_cast<int8_t>(pieces(m, kComputerOut));
  int8_t player_in = 0;
  int8_t computer_in = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const uint16_t first = pass == 0 ? kPointsA : kPointsB;
    const uint16_t last = pass == 0 ? kPointsAEnd : kPointsBEnd;
    for (uint16_t a = first; a <= last; ++a) {
      const int32_t p = pieces(m, a);
      if (p > 0) {
        computer_in = static_cast<int8_t>(computer_in + p);
      } else if (p < 0) {
        player_in = static_cast<int8_t>(player_in - p);
      }
    }
  }
  const bool valid = computer_in + computer_out == kPieces && player_in + player_out == kPieces;
  if (valid) {
    if (player_out == kPieces) {
      g.terminal = 1;
      g.reward = 1;
    } else if (computer_out == kPieces) {
      g.terminal = 1;
      g.reward = -1;
    }
  }
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace backgammon
}  // namespace games
}  // namespace gpu_env
