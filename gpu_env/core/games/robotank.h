// Robot Tank: reward, terminal and lives as ALE's RoboTankSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/RoboTank.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace robotank {
constexpr uint16_t kDeadSquadrons = 0xB6;  // RoboTank.cpp: score = squadrons * 12 + tanks
constexpr uint16_t kDeadTanks = 0xB5;
constexpr int32_t kTanksPerSquadron = 12;
constexpr uint16_t kEndFlag = 0xB4;    // RoboTank.cpp: 0xFF with no lives = game over
constexpr uint16_t kLives = 0xA8;      // RoboTank.cpp: low nibble = lives - 1

HD void reset(GameState& g) {
  reset_reward_score_terminal(g);
  g.lives = 4;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  set_score(g, ram(m, kDeadSquadrons) * kTanksPerSquadron + ram(m, kDeadTanks));
  const int32_t flag = ram(m, kEndFlag);
  const int32_t l = ram(m, kLives);
  g.terminal = l == 0 && flag == 0xFF;
  g.lives = (l & 0x0F) + 1;
}

HD int32_t lives(const GameState& g) { return lives_unless_terminal(g); }
}  // namespace robotank
}  // namespace games
}  // namespace gpu_env
