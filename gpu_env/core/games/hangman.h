// Hangman: reward, terminal and lives as ALE's HangmanSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Hangman.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace hangman {
constexpr uint16_t kComputerScore = 0xEC;  // Hangman.cpp: getDecimalScore(0xEC)
constexpr uint16_t kPlayerScore = 0xEB;    // Hangman.cpp: getDecimalScore(0xEB)
constexpr uint16_t kTimer = 0xF1;          // Hangman.cpp: 255 then 0 = timed out
constexpr uint16_t kModeByte = 0xEE;       // Hangman.cpp setMode
constexpr int kComputer = 0;               // extra[kComputer]: ALE m_computerScore
constexpr int kPlayer = 1;                 // extra[kPlayer]: ALE m_playerScore
constexpr int kTimerNow = 2;               // extra[kTimerNow]: ALE m_timerArray[0]
constexpr int kTimerBefore = 3;            // extra[kTimerBefore]: ALE m_timerArray[1]

HD void reset(GameState& g) {
  g.reward = 0;
  g.terminal = 0;
  g.extra[kComputer] = 0;
  g.extra[kPlayer] = 0;
  g.extra[kTimerNow] = -1;
  g.extra[kTimerBefore] = -1;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t computer = decimal2(m, kComputerScore);
  const int32_t player = decimal2(m, kPlayerScore);
  g.reward = (player - g.extra[kPlayer]) - (computer - g.extra[kComputer]);
  g.extra[kComputer] = computer;
  g.extra[kPlayer] = player;
  g.extra[kTimerBefore] = g.extra[kTimerNow];
  g.extra[kTimerNow] = ram(m, kTimer);
  const bool timed_out = g.extra[kTimerNow] == 0 && g.extra[kTimerBefore] == 255;
  g.terminal = g.reward != 0 || timed_out;
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace hangman
}  // namespace games
}  // namespace gpu_env
