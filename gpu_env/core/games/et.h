// E.T. the Extra-Terrestrial: reward, terminal and lives as ALE's EtSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Et.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace et {
constexpr uint16_t kScoreLow = 0xE1;   // Et.cpp: getDecimalScore(0xE1, 0xE0, 0xDF)
constexpr uint16_t kScoreMid = 0xE0;
constexpr uint16_t kScoreHigh = 0xDF;
constexpr uint16_t kLives = 0xE5;      // Et.cpp: lives - 1, kept in a (signed) char
constexpr uint16_t kGameState = 0x80;  // Et.cpp: 8 = game over screen
constexpr int32_t kGameOverState = 8;
constexpr uint16_t kModeByte = 0xEA;   // Et.cpp setMode: mode = RAM[0xEA] - 1

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 0;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  g.lives = static_cast<int32_t>(static_cast<int8_t>(ram(m, kLives) + 1));
  g.terminal = g.lives == 0 && ram(m, kGameState) == kGameOverState;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace et
}  // namespace games
}  // namespace gpu_env
