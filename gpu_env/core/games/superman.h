// Superman: reward, terminal and lives as ALE's SupermanSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/Superman.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace superman {
constexpr uint16_t kSeconds = 0xE2;    // Superman.cpp: decimal seconds of the clock
constexpr uint16_t kMinutes = 0xE3;    // Superman.cpp: decimal minutes
constexpr uint16_t kRoomLow = 0x80;    // Superman.cpp: room pointer, 0xF2AC = the Daily Planet
constexpr uint16_t kRoomHigh = 0x81;
constexpr int32_t kDailyPlanet = 0xF2AC;
constexpr uint16_t kForm = 0x9F;       // Superman.cpp: bit 6 = Clark Kent
constexpr int32_t kClarkKentBit = 0x40;
constexpr int32_t kMaxSeconds = 99 * 60 + 59;  // Superman.cpp: reward = max time - time taken
constexpr int kTime = 0;               // extra[kTime]: ALE m_time_in_seconds

HD void reset(GameState& g) {
  g.reward = 0;
  g.terminal = 0;
  g.extra[kTime] = 0;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  const int32_t seconds = decimal2(m, kSeconds);
  const int32_t minutes = decimal2(m, kMinutes);
  g.extra[kTime] = minutes * 60 + seconds;
  const int32_t room = ram(m, kRoomLow) + (ram(m, kRoomHigh) << 8);
  const bool clark = (ram(m, kForm) & kClarkKentBit) != 0;
  g.terminal = clark && room == kDailyPlanet;
  g.reward = g.terminal ? kMaxSeconds - g.extra[kTime] : 0;
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace superman
}  // namespace games
}  // namespace gpu_env
