// Ball: one copy, width 1 << CTRLPF bits 4-5, vertically delayable (VDELBL).
//
// Facts (ALE TIA.cxx computeBallMaskTable / poke RESBL): the ball covers d = (x - pos) mod 160 in
// [0, width). RESBL in HBLANK puts it at 2, otherwise at (hpos + 4) mod 160; ALE adds four
// game-specific corrections for RESBL a few CPU cycles after HMOVE (see tia_resbl_position).
#pragma once

#include "../hd.h"

HD uint32_t tia_ball_pixel(uint8_t ctrlpf, uint32_t d) { return d < (1u << ((ctrlpf >> 4) & 3)) ? 1u : 0u; }

// Ball position after RESBL at horizontal clock hpos (0..227), `since_hmove` colour clocks after the last HMOVE.
HD int tia_resbl_position(int hpos, int since_hmove) {
  if (since_hmove == 18 * 3 && (hpos == 60 || hpos == 69)) return 10;
  if (since_hmove == 3 * 3 && hpos == 18) return 3;
  if (since_hmove == 7 * 3 && hpos == 30) return 6;
  if (since_hmove == 6 * 3 && hpos == 27) return 5;
  return hpos < 68 ? 2 : ((hpos - 68) + 4) % 160;
}
