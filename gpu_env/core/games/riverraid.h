// River Raid: reward, terminal and lives as ALE's RiverRaidSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/RiverRaid.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace riverraid {
// RiverRaid.cpp: six score digits, one per byte at 0xCD (hundred-thousands), 0xCF, 0xD1, 0xD3,
// 0xD5, 0xD7 (ones), stored as digit * 8; any other value reads as 0.
constexpr uint16_t kDigit1 = 0xD7;
constexpr uint16_t kDigit10 = 0xD5;
constexpr uint16_t kDigit100 = 0xD3;
constexpr uint16_t kDigit1000 = 0xD1;
constexpr uint16_t kDigit10000 = 0xCF;
constexpr uint16_t kDigit100000 = 0xCD;
constexpr uint16_t kLivesByte = 0xC0;  // RiverRaid.cpp: 0x58 = 4 lives, 0x59 = 1, else v / 8 + 1
constexpr int32_t kFourLives = 0x58;
constexpr int32_t kOneLife = 0x59;
constexpr int kLivesWord = 0;          // extra[kLivesWord]: ALE m_lives_byte

template <class Mem>
HD int32_t digit(Mem& m, uint16_t addr) {
  const int32_t v = ram(m, addr);
  return (v % 8 == 0 && v <= 72) ? v / 8 : 0;
}

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 0;
  g.extra[kLivesWord] = kFourLives;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t score = digit(m, kDigit1) + 10 * digit(m, kDigit10) + 100 * digit(m, kDigit100) +
                        1000 * digit(m, kDigit1000) + 10000 * digit(m, kDigit10000) +
                        100000 * digit(m, kDigit100000);
  set_score(g, score);
  const int32_t b = ram(m, kLivesByte);
  g.terminal = b == kFourLives && g.extra[kLivesWord] == kOneLife;
  g.extra[kLivesWord] = b;
}

HD int32_t lives(const GameState& g) {
  if (g.terminal) return 0;
  const int32_t b = g.extra[kLivesWord];
  return b == kFourLives ? 4 : (b == kOneLife ? 1 : b / 8 + 1);
}
}  // namespace riverraid
}  // namespace games
}  // namespace gpu_env
