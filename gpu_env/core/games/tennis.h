// Tennis: reward, terminal and lives as ALE's TennisSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Tennis.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace tennis {
constexpr uint16_t kMyScore = 0xC5;     // Tennis.cpp: the player's "score" counter (raw)
constexpr uint16_t kTheirScore = 0xC6;  // Tennis.cpp: the opponent's "score" counter
constexpr uint16_t kMyPoints = 0xC7;    // Tennis.cpp: the player's "points" (6 with a lead of 2, or 7, ends)
constexpr uint16_t kTheirPoints = 0xC8; // Tennis.cpp: the opponent's "points"
constexpr uint16_t kModeByte = 0x80;   // Tennis.cpp setMode
constexpr int kPrevDeltaPoints = 0;    // extra[kPrevDeltaPoints]: ALE m_prev_delta_points
constexpr int kPrevDeltaScore = 1;     // extra[kPrevDeltaScore]: ALE m_prev_delta_score

HD void reset(GameState& g) {
  g.reward = 0;
  g.terminal = 0;
  g.extra[kPrevDeltaPoints] = 0;
  g.extra[kPrevDeltaScore] = 0;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t my_score = ram(m, kMyScore);
  const int32_t their_score = ram(m, kTheirScore);
  const int32_t my_points = ram(m, kMyPoints);
  const int32_t their_points = ram(m, kTheirPoints);
  const int32_t delta_score = my_score - their_score;
  const int32_t delta_points = my_points - their_points;
  if (g.extra[kPrevDeltaPoints] != delta_points) {
    g.reward = delta_points - g.extra[kPrevDeltaPoints];
  } else if (g.extra[kPrevDeltaScore] != delta_score) {
    g.reward = delta_score - g.extra[kPrevDeltaScore];
  } else {
    g.reward = 0;
  }
  g.extra[kPrevDeltaPoints] = delta_points;
  g.extra[kPrevDeltaScore] = delta_score;
  g.terminal = (my_points >= 6 && delta_points >= 2) || (their_points >= 6 && -delta_points >= 2) ||
               (my_points == 7 || their_points == 7);
}

HD int32_t lives(const GameState&) { return 0; }
}  // namespace tennis
}  // namespace games
}  // namespace gpu_env
