// Human Cannonball: reward, terminal and lives as ALE's HumanCannonballSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/HumanCannonball.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace human_cannonball {
constexpr uint16_t kScore = 0xB6;      // HumanCannonball.cpp: decimal hits (also mode + 1 at select)
constexpr uint16_t kMisses = 0xB7;     // HumanCannonball.cpp: decimal misses (players at select)
constexpr int32_t kLimit = 7;          // HumanCannonball.cpp: 7 hits or 7 misses = game over
constexpr int kMissesWord = 0;         // extra[kMissesWord]: ALE m_misses

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.extra[kMissesWord] = 0;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t score = decimal2(m, kScore);
  set_score(g, score);
  g.extra[kMissesWord] = decimal2(m, kMisses);
  g.terminal = score == kLimit || g.extra[kMissesWord] == kLimit;
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace human_cannonball
}  // namespace games
}  // namespace gpu_env
