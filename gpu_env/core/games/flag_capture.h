// Flag Capture: reward, terminal and lives as ALE's FlagCaptureSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/FlagCapture.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace flag_capture {
constexpr uint16_t kScore = 0xEA;      // FlagCapture.cpp: getDecimalScore(0xEA)
constexpr uint16_t kTimer = 0xEB;      // FlagCapture.cpp: decimal 0 = time up
constexpr uint16_t kModeByte = 0xD6;   // FlagCapture.cpp setMode

HD void reset(GameState& g) { reset_reward_score_terminal(g); }

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, decimal2(m, kScore));
  g.terminal = decimal2(m, kTimer) == 0;
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace flag_capture
}  // namespace games
}  // namespace gpu_env
