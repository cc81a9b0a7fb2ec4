// Private Eye: reward, terminal and lives as ALE's PrivateEyeSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/PrivateEye.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace private_eye {
constexpr uint16_t kScoreLow = 0xCA;   // PrivateEye.cpp: getDecimalScore(0xCA, 0xC9, 0xC8)
constexpr uint16_t kScoreMid = 0xC9;
constexpr uint16_t kScoreHigh = 0xC8;
constexpr uint16_t kCopyrightTimer = 0xC2;  // PrivateEye.cpp: anything but 0 or 1 = game over
constexpr int32_t kStartScore = 1000;  // PrivateEye.cpp reset(): the game starts at 1,000 points
constexpr uint16_t kModeByte = 0x80;   // PrivateEye.cpp setMode

HD void reset(GameState& g) {
  g.reward = 0;
  g.score = kStartScore;
  g.terminal = 0;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal6(m, kScoreLow, kScoreMid, kScoreHigh));
  const int32_t t = ram(m, kCopyrightTimer);
  g.terminal = t != 0x00 && t != 0x01;
}

HD int32_t lives(const GameState&) { return 0; }
}  // namespace private_eye
}  // namespace games
}  // namespace gpu_env
