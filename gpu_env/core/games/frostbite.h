// Frostbite: reward, terminal and lives as ALE's FrostbiteSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Frostbite.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace frostbite {
constexpr uint16_t kScoreLow = 0xCA;   // Frostbite.cpp: getDecimalScore(0xCA, 0xC9, 0xC8)
constexpr uint16_t kScoreMid = 0xC9;
constexpr uint16_t kScoreHigh = 0xC8;
constexpr uint16_t kLives = 0xCC;      // Frostbite.cpp: low nibble = lives - 1
constexpr uint16_t kFlag = 0xF1;       // Frostbite.cpp: bit 7 with no lives = game over
constexpr uint16_t kModeByte = 0x80;   // Frostbite.cpp setMode

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 4;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  const int32_t l = ram(m, kLives) & 0x0F;
  const int32_t flag = ram(m, kFlag) & 0x80;
  g.terminal = l == 0 && flag != 0;
  g.lives = l + 1;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace frostbite
}  // namespace games
}  // namespace gpu_env
