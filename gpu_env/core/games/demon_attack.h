// Demon Attack: reward, terminal and lives as ALE's DemonAttackSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/DemonAttack.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace demon_attack {
constexpr uint16_t kScoreLow = 0x85;   // DemonAttack.cpp: getDecimalScore(0x85, 0x83, 0x81)
constexpr uint16_t kScoreMid = 0x83;
constexpr uint16_t kScoreHigh = 0x81;
// DemonAttack.cpp: 0x81/0x83/0x85 = 0xAB/0xCD/0xEA is the power-on pattern, read as score 0.
constexpr int32_t kBootHigh = 0xAB;
constexpr int32_t kBootMid = 0xCD;
constexpr int32_t kBootLow = 0xEA;
constexpr uint16_t kLivesShown = 0xF2; // DemonAttack.cpp: lives displayed (lives - 1)
constexpr uint16_t kDisplayFlag = 0xF1;// DemonAttack.cpp: 0xBD with no lives shown = game over
constexpr int32_t kGameOverFlag = 0xBD;
constexpr uint16_t kModeByte = 0xEA;   // DemonAttack.cpp setMode
constexpr int kLevelChange = 0;        // extra[kLevelChange]: ALE m_level_change

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 4;
  g.extra[kLevelChange] = 0;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  int32_t score = decimal6(m, kScoreLow, kScoreMid, kScoreHigh);
  if (ram(m, kScoreHigh) == kBootHigh && ram(m, kScoreMid) == kBootMid &&
      ram(m, kScoreLow) == kBootLow) {
    score = 0;
  }
  set_score(g, score);
  const int32_t shown = ram(m, kLivesShown);
  const int32_t flag = ram(m, kDisplayFlag);
  g.terminal = shown == 0 && flag == kGameOverFlag && !g.extra[kLevelChange];
  g.lives = shown + 1;
  g.extra[kLevelChange] = 0;
}

// DemonAttack.cpp setMode: sets m_level_change after the select presses.
template <class Mem>
HD void set_mode_end(GameState& g, int32_t, Mem&) {
  g.extra[kLevelChange] = 1;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace demon_attack
}  // namespace games
}  // namespace gpu_env
