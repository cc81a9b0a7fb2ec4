// Missiles: NUSIZ copies and width, RESMx / RESMPx positioning, and the "Cosmic Ark" starfield bug.
//
// Facts (ALE TIA.cxx computeMissleMaskTable / poke): a missile covers d = (x - pos) mod 160 in
// [copy, copy + width) for the same copy starts as the player (NUSIZ bits 0-2), width 1 << NUSIZ
// bits 4-5. RESMx in HBLANK puts the missile at 2, otherwise at (hpos + 4) mod 160. Clearing RESMPx
// centres the missile on its player (+4, +8 for double, +16 for quad width). Once the Cosmic Ark
// bug is armed, each displayed scanline moves M0 left by 18, 33, 0, 17 pixels in turn (counter 1..3,0),
// stretching it to at least 2 pixels on counter 1 and hiding it on counter 2.
#pragma once

#include "../hd.h"
#include "player.h"

// How the M0 mask was last built (ALE keeps a pointer; we keep the variant).
enum : uint8_t { kMissileMaskNormal = 0, kMissileMaskStretched = 1, kMissileMaskHidden = 2 };

// 1 when a missile with NUSIZ `nusiz` and mask variant `kind` covers distance d (0..159).
HD uint32_t tia_missile_pixel(uint8_t nusiz, uint8_t kind, uint32_t d) {
  uint32_t size = (nusiz >> 4) & 3;
  if (kind == kMissileMaskStretched) size |= 1;
  const uint32_t hit = ((tia_copy_groups(nusiz & 7) >> (d >> 3)) & 1) & ((d & 7) < (1u << size) ? 1u : 0u);
  return kind == kMissileMaskHidden ? 0 : hit;
}

// Distance from a player's position to the missile centre when RESMPx is released.
HD int tia_missile_player_middle(uint8_t nusiz) {
  const uint8_t mode = nusiz & 7;
  return mode == 5 ? 8 : (mode == 7 ? 16 : 4);
}

// Left shift applied by the Cosmic Ark bug on the scanline whose counter becomes `counter` (0..3).
HD int tia_cosmic_ark_shift(uint32_t counter) {
  switch (counter & 3) {
    case 0: return 18;
    case 1: return 33;
    case 2: return 0;
    default: return 17;
  }
}
