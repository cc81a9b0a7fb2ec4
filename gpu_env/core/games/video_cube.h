// Video Cube: reward, terminal and lives as ALE's VideoCubeSettings computes them.
// Facts (addresses, formulas): ALE v0.12.1 src/ale/games/supported/VideoCube.cpp.
// Addresses are bus addresses (ALE's readRam(offset) peeks 0x80 | offset).
#pragma once

#include "game_state.h"

namespace gpu_env {
namespace games {
namespace video_cube {
constexpr uint16_t kFaces = 0xA0;      // VideoCube.cpp: 6 faces x 9 blocks from 0xA0
constexpr int kNumFaces = 6;
constexpr int kBlocksPerFace = 9;
constexpr uint16_t kTimer = 0xDB;      // VideoCube.cpp: 255 then 0 = timed out (reward -1)
constexpr uint16_t kModeByte = 0xFB;   // VideoCube.cpp setMode: low 5 bits
constexpr uint16_t kCubeByte = 0x9F;   // VideoCube.cpp setMode: decimal cube number
constexpr int kCubeNumber = 0;         // extra[kCubeNumber]: ALE m_cubeNumber
constexpr int kFaceCount = 1;          // extra[kFaceCount]: ALE m_faceCount
constexpr int kTimerNow = 2;           // extra[kTimerNow]: ALE m_timerArray[0]
constexpr int kTimerBefore = 3;        // extra[kTimerBefore]: ALE m_timerArray[1]

HD void reset(GameState& g) {
  g.extra[kCubeNumber] = 1;
  g.reward = 0;
  g.extra[kFaceCount] = 0;
  g.terminal = 0;
}

template <class Mem>
HD void step(GameState& g, Mem& m) {
  int32_t complete = 0;
  for (int f = 0; f < kNumFaces; ++f) {
    const uint16_t base = static_cast<uint16_t>(kFaces + f * kBlocksPerFace);
    const int32_t first = ram(m, base);
    bool same = true;
    for (int b = 1; b < kBlocksPerFace && same; ++b) {
      same = ram(m, static_cast<uint16_t>(base + b)) == first;
    }
    if (same) ++complete;
  }
  g.extra[kTimerBefore] = g.extra[kTimerNow];
  g.extra[kTimerNow] = ram(m, kTimer);
  const bool timed_out = g.extra[kTimerNow] == 0 && g.extra[kTimerBefore] == 255;
  g.reward = timed_out ? -1 : complete - g.extra[kFaceCount];
  g.extra[kFaceCount] = complete;
  g.terminal = timed_out || complete == kNumFaces;
}

// VideoCube.cpp setMode: modes >= 100 also choose the cube number (mode / 100).
HD void set_mode_begin(GameState& g, int32_t mode) {
  if (mode >= 100) g.extra[kCubeNumber] = mode / 100;
}

HD int32_t lives(const GameState& g) { return lives_default(g); }
}  // namespace video_cube
}  // namespace games
}  // namespace gpu_env
