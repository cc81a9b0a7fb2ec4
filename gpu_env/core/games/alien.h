// Alien: reward, terminal and lives as ALE's AlienSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Alien.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace alien {
// Alien.cpp: five score digits, one per byte, each stored as digit << 3 (0x80 = blank = 0).
constexpr uint16_t kDigit1 = 0x8B;
constexpr uint16_t kDigit10 = 0x89;
constexpr uint16_t kDigit100 = 0x87;
constexpr uint16_t kDigit1000 = 0x85;
constexpr uint16_t kDigit10000 = 0x83;
constexpr int32_t kBlankDigit = 0x80;
constexpr int32_t kScoreUnit = 10;     // Alien.cpp: displayed score x 10
constexpr uint16_t kLives = 0xC0;      // Alien.cpp: low nibble = lives; 0 = game over
constexpr uint16_t kModeByte = 0x81;   // Alien.cpp setMode

template <class Mem>
HD int32_t digit(Mem& m, uint16_t addr) {
  const int32_t v = ram(m, addr);
  return v == kBlankDigit ? 0 : (v >> 3);
}

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 3;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t score = digit(m, kDigit1) + 10 * digit(m, kDigit10) + 100 * digit(m, kDigit100) +
                        1000 * digit(m, kDigit1000) + 10000 * digit(m, kDigit10000);
  set_score(g, score * kScoreUnit);
  const int32_t l = ram(m, kLives) & 0x0F;
  g.terminal = l <= 0;
  g.lives = l;
}

// Alien.cpp setMode: after selecting the mode ALE re-reads the lives nibble.
template <class Mem>
HD void set_mode_end(GameState& g, int32_t, Mem& m) {
  g.lives = ram(m, kLives) & 0x0F;
}

HD int32_t lives(const GameState& g) { return g.lives; }  // Alien.hpp: no terminal check
}  // namespace alien
}  // namespace games
}  // namespace gpu_env
