// Per-environment bookkeeping of ALE's RomSettings, and the RAM-decoding helpers every game uses.
//
// ALE (v0.12.1, src/ale/games/RomSettings.hpp) keeps, per game, the reward of the last frame, the
// score it was computed from, a terminal flag and a lives counter, plus a few game-specific
// counters. GameState holds all of them as int32 words so a batch of states is one flat int32
// array [num_envs, kGameStateWords] on the host and on the device.
//
// RAM is read through `Mem::peek(uint16_t addr)` (the console bus, or a recorded trace). ALE reads
// RIOT RAM with readRam(offset) = System::peek(0x80 + (offset & 0x7F))
// (src/ale/games/RomUtils.cpp), so every address below is already the bus address 0x80..0xFF;
// the one game that reads cartridge RAM (Klax) peeks the cart's read port directly.
#pragma once

#include "../hd.h"

namespace gpu_env {
namespace games {

constexpr int kGameExtraWords = 8;
constexpr int kGameStateWords = 4 + kGameExtraWords;

struct GameState {
  int32_t reward;    // ALE m_reward: reward of the last emulated frame
  int32_t score;     // ALE m_score: the score that reward was computed against
  int32_t lives;     // ALE m_lives (raw; what ALE's lives() reports comes from game_lives)
  int32_t terminal;  // ALE m_terminal: 0 or 1
  int32_t extra[kGameExtraWords];  // game-specific counters, named by each game's header
};

// Clears every word (the state a freshly constructed RomSettings has before its reset()).
HD void game_state_zero(GameState& g) {
  g.reward = 0;
  g.score = 0;
  g.lives = 0;
  g.terminal = 0;
  for (int i = 0; i < kGameExtraWords; ++i) g.extra[i] = 0;
}

// The fields nearly every RomSettings::reset() clears: reward, score, terminal.
HD void reset_reward_score_terminal(GameState& g) {
  g.reward = 0;
  g.score = 0;
  g.terminal = 0;
}

// New score -> reward = score - previous score (the pattern of most RomSettings::step).
HD void set_score(GameState& g, int32_t score) {
  g.reward = score - g.score;
  g.score = score;
}

// lives() of most games: 0 once terminal, else the counter.
HD int32_t lives_unless_terminal(const GameState& g) { return g.terminal ? 0 : g.lives; }

// RomSettings::lives() default: 1 while playing, 0 once terminal.
HD int32_t lives_default(const GameState& g) { return g.terminal ? 0 : 1; }

// One RAM byte as int.
template <class Mem>
HD int32_t ram(Mem& m, uint16_t addr) {
  return static_cast<int32_t>(m.peek(addr));
}

// ALE getDecimalScore(index): 10 * high nibble + low nibble (nibbles above 9 are kept as they are).
template <class Mem>
HD int32_t decimal2(Mem& m, uint16_t addr) {
  const int32_t v = ram(m, addr);
  return 10 * (v >> 4) + (v & 0x0F);
}

// ALE getDecimalScore(lower, higher): two BCD bytes, low digits first.
template <class Mem>
HD int32_t decimal4(Mem& m, uint16_t lower, uint16_t higher) {
  return decimal2(m, lower) + 100 * decimal2(m, higher);
}

// ALE getDecimalScore(lower, middle, higher): three BCD bytes, low digits first.
template <class Mem>
HD int32_t decimal6(Mem& m, uint16_t lower, uint16_t middle, uint16_t higher) {
  return decimal4(m, lower, middle) + 10000 * decimal2(m, higher);
}

}  // namespace games
}  // namespace gpu_env
