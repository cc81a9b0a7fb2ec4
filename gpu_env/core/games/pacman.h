// Pac-Man: reward, terminal and lives as ALE's PacmanSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Pacman.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace pacman {
constexpr uint16_t kScoreLow = 0xCC;   // Pacman.cpp: getDecimalScore(0xCC, 0xCE, 0xD0)
constexpr uint16_t kScoreMid = 0xCE;
constexpr uint16_t kScoreHigh = 0xD0;
constexpr uint16_t kLives = 0x98;      // Pacman.cpp: lives - 1
constexpr uint16_t kAnimation = 0xE4;  // Pacman.cpp: 0x3F on the last life = game over
constexpr int32_t kGameOverAnimation = 0x3F;
constexpr uint16_t kModeByte = 0xCC;   // Pacman.cpp setMode: mode = RAM[0xCC] - 1, 0xE6 == 0
constexpr uint16_t kPlayersByte = 0xE6;

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 4;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  g.lives = ram(m, kLives) + 1;
  g.terminal = g.lives == 1 && ram(m, kAnimation) == kGameOverAnimation;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace pacman
}  // namespace games
}  // namespace gpu_env
