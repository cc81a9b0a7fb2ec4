// Delayed register writes: how many colour clocks ahead of the write the picture is drawn with the
// old register value (ALE TIA.cxx ourPokeDelayTable, poke).
//
// Facts: VBLANK, REFP0/1 and GRP0/1 take effect 1 clock late; NUSIZ0/1 and RESM0/1 8 clocks late;
// PF0/1/2 a delay of 4, 5, 2 or 3 clocks chosen by ((hpos / 3) & 3); every other register at once.
#pragma once

#include "../hd.h"

HD int tia_write_delay(uint8_t reg, int hpos) {
  switch (reg) {
    case 0x01: case 0x0B: case 0x0C: case 0x1B: case 0x1C: return 1;
    case 0x04: case 0x05: case 0x12: case 0x13: return 8;
    case 0x0D: case 0x0E: case 0x0F: {
      const int phase = (hpos / 3) & 3;
      return phase == 0 ? 4 : (phase == 1 ? 5 : (phase == 2 ? 2 : 3));
    }
    default: return 0;
  }
}
