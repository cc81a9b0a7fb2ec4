// Players: copies and widths from NUSIZ, reflection, and RESPx timing, as ale-py's TIA draws them.
//
// Facts (ALE TIA.cxx computePlayerMaskTable / computePlayerPositionResetWhenTable / poke RESP0):
// * A player's graphic bit at pixel x depends on d = (x - pos) mod 160. Copies start at d = 0
//   and, per NUSIZ mode, at +16 (modes 1, 3), +32 (2, 3, 6), +64 (4, 6); each shows 8 pixels,
//   MSB first. Double (mode 5) and quad (mode 7) width start one pixel late: d in 1..16 / 1..32.
// * After RESPx (except in a copy's 4-pixel "delay" window) the first copy is suppressed until
//   the mask is next rebuilt (NUSIZ write, HMOVE, or end of a displayed scanline).
// * RESPx in HBLANK puts the player at 3, otherwise at (hpos + 5) mod 160.
#pragma once

#include "../hd.h"

// Bit mask over 8-pixel groups (d >> 3) holding a copy start, per NUSIZ mode 0..7 (5 and 7: one copy).
HD uint32_t tia_copy_groups(uint32_t mode) {
  switch (mode & 7) {
    case 1: return 0x005;   // 0, 16
    case 2: return 0x011;   // 0, 32
    case 3: return 0x015;   // 0, 16, 32
    case 4: return 0x101;   // 0, 64
    case 6: return 0x111;   // 0, 32, 64
    default: return 0x001;
  }
}

// Graphic-bit mask (0x80 >> k, or 0) of a player at distance d (0..159) from its position.
HD uint8_t tia_player_mask(uint32_t mode, uint32_t skip_first, uint32_t d) {
  mode &= 7;
  if (mode == 5 || mode == 7) {
    const uint32_t shift = mode == 5 ? 1 : 2;
    const uint32_t e = d - 1;  // wraps to a huge value for d == 0
    return (!skip_first && e < (8u << shift)) ? static_cast<uint8_t>(0x80u >> (e >> shift)) : 0;
  }
  const uint32_t groups = tia_copy_groups(mode) & ~(skip_first ? 1u : 0u);
  return ((groups >> (d >> 3)) & 1) ? static_cast<uint8_t>(0x80u >> (d & 7)) : 0;
}

// Bit-reversed byte (REFPx).
HD uint8_t tia_reverse8(uint8_t b) {
  b = static_cast<uint8_t>(((b & 0xF0) >> 4) | ((b & 0x0F) << 4));
  b = static_cast<uint8_t>(((b & 0xCC) >> 2) | ((b & 0x33) << 2));
  return static_cast<uint8_t>(((b & 0xAA) >> 1) | ((b & 0x55) << 1));
}

// Where a RESPx to new position `newx` falls relative to the copies of a player at `oldx`:
// -1 inside a copy's 4-pixel delay window, 1 inside a copy's drawn pixels, 0 elsewhere.
HD int tia_player_reset_when(uint32_t mode, uint32_t oldx, uint32_t newx) {
  mode &= 7;
  const uint32_t d = (newx + 160 - oldx) % 160;
  const uint32_t width = mode == 5 ? 16 : (mode == 7 ? 32 : 8);
  // The reference table covers newx up to oldx + 236 (wrapping once); d < 160 covers the same copies.
  const uint32_t groups = tia_copy_groups(mode);
  for (uint32_t g = 0; g < 9; ++g) {
    if (!((groups >> g) & 1)) continue;
    const uint32_t start = g * 8;
    if (d >= start + 4 && d < start + 4 + width) return 1;
  }
  for (uint32_t g = 0; g < 9; ++g) {
    if (!((groups >> g) & 1)) continue;
    const uint32_t start = g * 8;
    if (d >= start && d < start + 4) return -1;
  }
  return 0;
}
