// Word Zapper: reward, terminal and lives as ALE's WordZapperSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/WordZapper.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace word_zapper {
constexpr uint16_t kWallClock = 0xCF;  // WordZapper.cpp: decimal; 0 = not running (nothing updates)
constexpr uint16_t kWords = 0xDC;      // WordZapper.cpp: score = 2 - (signed) RAM[0xDC]
constexpr int32_t kScoreBase = 2;
constexpr int32_t kFinalScore = 3;     // WordZapper.cpp: 3 words = game over
constexpr uint16_t kTimeLeft = 0xDE;   // WordZapper.cpp: decimal 0 = time up
constexpr uint16_t kModeByte = 0xDB;   // WordZapper.cpp setMode

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  if (decimal2(m, kWallClock) > 0) {
    const int32_t score = kScoreBase - static_cast<int32_t>(static_cast<int8_t>(ram(m, kWords)));
    set_score(g, score);
    g.terminal = score == kFinalScore || decimal2(m, kTimeLeft) == 0;
  }
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace word_zapper
}  // namespace games
}  // namespace gpu_env
