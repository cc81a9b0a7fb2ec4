// Q*bert: reward, terminal and lives as ALE's QBertSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/QBert.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace qbert {
constexpr uint16_t kLivesByte = 0x88;  // QBert.cpp: signed lives; 0xFE = game over
constexpr int32_t kGameOver = 0xFE;
constexpr uint16_t kScoreLow = 0xDB;   // QBert.cpp: getDecimalScore(0xDB, 0xDA, 0xD9)
constexpr uint16_t kScoreMid = 0xDA;
constexpr uint16_t kScoreHigh = 0xD9;
constexpr int kLastLives = 0;          // extra[kLastLives]: ALE m_last_lives (signed byte)

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.extra[kLastLives] = 2;
  g.lives = 4;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t v = ram(m, kLivesByte);
  // QBert.cpp: 0x02 right after 0xFF (-1) is the wrap to a new game, also game over.
  g.terminal = v == kGameOver || (v == 0x02 && g.extra[kLastLives] == -1);
  const int32_t as_signed = static_cast<int32_t>(static_cast<int8_t>(v));
  if (g.extra[kLastLives] - 1 == as_signed) --g.lives;
  g.extra[kLastLives] = as_signed;
  if (!g.terminal) {
    set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  } else {
    g.reward = 0;
  }
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace qbert
}  // namespace games
}  // namespace gpu_env
