// Entombed: reward, terminal and lives as ALE's EntombedSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Entombed.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace entombed {
constexpr uint16_t kScore = 0xE3;      // Entombed.cpp: raw byte = depth score
constexpr uint16_t kLives = 0xC7;      // Entombed.cpp: low 2 bits = lives; 0 = game over

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, ram(m, kScore));
  g.terminal = (ram(m, kLives) & 0x03) == 0;
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace entombed
}  // namespace games
}  // namespace gpu_env
