// Colour priority: which of the four colour registers (0 BK, 1 PF, 2 P0, 3 P1) a pixel shows.
//
// Facts (ALE TIA constructor, myPriorityEncoder): without CTRLPF priority, P0/M0 beat P1/M1, which
// beat PF/BL; in score mode the playfield takes P0's colour on the left half and P1's on the right,
// and then P1/M1 do not cover a left-half playfield pixel. With priority, PF/BL beat P0/M0 beat
// P1/M1, and the score bit is ignored. One ale-py quirk: when the playfield is the only enabled
// object and both score and priority are set, the playfield still takes the score colours.
#pragma once

#include "../hd.h"
#include "collisions.h"

HD uint32_t tia_priority_color(uint8_t objects, uint8_t priority_score, uint32_t right_half) {
  const uint32_t p0 = objects & (kTiaP0 | kTiaM0), p1 = objects & (kTiaP1 | kTiaM1);
  const uint32_t pf = objects & kTiaPF, bl = objects & kTiaBL;
  if (priority_score & kTiaPriority) {
    return (pf | bl) ? 1u : (p0 ? 2u : (p1 ? 3u : 0u));
  }
  uint32_t c = bl ? 1u : 0u;
  if (pf) c = (priority_score & kTiaScore) ? 2u + right_half : 1u;
  if (p1) c = c != 2 ? 3u : 2u;
  if (p0) c = 2u;
  return c;
}
