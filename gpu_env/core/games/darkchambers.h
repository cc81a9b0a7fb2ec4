// Dark Chambers: reward, terminal and lives as ALE's DarkChambersSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/DarkChambers.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace darkchambers {
constexpr uint16_t kLevel = 0xD5;      // DarkChambers.cpp: level; a drop = game over
constexpr uint16_t kScoreLow = 0xCC;   // DarkChambers.cpp: getDecimalScore(0xCC, 0xCF) x 10
constexpr uint16_t kScoreHigh = 0xCF;
constexpr int32_t kScoreUnit = 10;
constexpr uint16_t kHealth = 0xCA;     // DarkChambers.cpp: low 5 bits = health; 0 = game over
constexpr int kLevelWord = 0;          // extra[kLevelWord]: ALE m_level
constexpr int kHealthWord = 1;         // extra[kHealthWord]: ALE m_health

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.extra[kHealthWord] = 0;
  g.extra[kLevelWord] = 0;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  g.reward = 0;
  const int32_t level = ram(m, kLevel);
  if (level < g.extra[kLevelWord]) {
    g.terminal = 1;
    return;
  }
  g.extra[kLevelWord] = level;
  const int32_t score = decimal4(m, kScoreLow, kScoreHigh) * kScoreUnit;
  if (score < g.score) {
    g.terminal = 1;
  } else {
    set_score(g, score);
  }
  g.extra[kHealthWord] = ram(m, kHealth) & 0x1F;
  if (g.extra[kHealthWord] == 0) g.terminal = 1;
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace darkchambers
}  // namespace games
}  // namespace gpu_env
