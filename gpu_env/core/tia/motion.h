// HMOVE: how far each object moves for an HMOVE strobed at CPU cycle x of the line, and when the
// HMOVE blank ("comb") is switched on — reproducing ale-py's (Stella 2.x) empirical motion table.
//
// Facts (ALE TIA.cxx ourCompleteMotionTable / ourHMOVEBlankEnableCycles): the nominal motion of a
// 4-bit HMxx value h is -h for h < 8 and 16 - h otherwise. Strobed in cycles 0-20 the motion is
// clamped from below by a cycle-dependent bound; in cycles 21-54 nothing moves; in cycles 55-74
// objects move left by a cycle-dependent amount plus the leftward part of their nominal motion;
// cycle 75 gives the nominal motion. The closed forms below were checked against the whole table.
// The HMOVE blank is armed for strobes in cycles 0-20 and 75 (when the ROM allows HMOVE blanks).
#pragma once

#include "../hd.h"

HD int tia_motion(int cycle, int hm) {
  const int nominal = hm < 8 ? -hm : 16 - hm;
  if (cycle <= 20) {
    const int bound = cycle - 10 - ((cycle - 2) >> 2);  // arithmetic shift = floor division
    return nominal > bound ? nominal : bound;
  }
  if (cycle <= 54) return 0;
  if (cycle <= 74) {
    const int left = nominal - (cycle - 61 - ((cycle - 54) >> 2));
    return left < 0 ? left : 0;
  }
  return nominal;
}

HD bool tia_hmove_blank_cycle(int cycle) { return cycle <= 20 || cycle == 75; }
