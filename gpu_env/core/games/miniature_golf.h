// Miniature Golf: reward, terminal and lives as ALE's MiniatureGolfSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/MiniatureGolf.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace miniature_golf {
constexpr uint16_t kLeftStatus = 0x87;  // MiniatureGolf.cpp: decimal strokes shown on the left
constexpr uint16_t kRightStatus = 0x88; // MiniatureGolf.cpp: decimal par shown on the right (0 = none)
constexpr uint16_t kLevelByte = 0xAF;   // MiniatureGolf.cpp: decimal hole number; 0 = game over
constexpr int kLevel = 0;               // extra[kLevel]: ALE m_levelNumber
constexpr int kPar = 1;                 // extra[kPar]: ALE m_levelPar
constexpr int kHits = 2;                // extra[kHits]: ALE m_hits
constexpr int kLeft = 3;                // extra[kLeft]: ALE m_leftStatus
constexpr int kHitsAtStart = 4;         // extra[kHitsAtStart]: ALE m_hitsAtStartOfLevel

HD void reset(GameState& g) {
  g.reward = 0;
  g.terminal = 0;
  g.extra[kLevel] = 0;
  g.extra[kPar] = 0;
  g.extra[kHits] = 0;
  g.extra[kLeft] = 0;
  g.extra[kHitsAtStart] = 0;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  g.reward = 0;
  const int32_t left = decimal2(m, kLeftStatus);
  const int32_t right = decimal2(m, kRightStatus);
  const int32_t level = decimal2(m, kLevelByte);
  if (level != g.extra[kLevel]) {  // a hole was finished: reward = par - strokes on that hole
    const int32_t total = g.extra[kLeft] + g.extra[kHits];
    const int32_t hole_hits = total - g.extra[kHitsAtStart];
    if (hole_hits > 0) g.reward = g.extra[kPar] - hole_hits;
    if (level == 0) g.terminal = 1;
    g.extra[kLevel] = level;
    g.extra[kHits] = 0;
    g.extra[kHitsAtStart] = g.extra[kLeft];
  }
  if (right != 0) {
    g.extra[kPar] = right;
  } else {
    if (left < g.extra[kLeft]) g.extra[kHits] += g.extra[kLeft];
    g.extra[kLeft] = left;
  }
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace miniature_golf
}  // namespace games
}  // namespace gpu_env
