// Input ports INPT0-INPT5: paddle pots (capacitor charge timing) and fire buttons.
//
// Facts (ALE TIA.cxx peek, Control.cxx, Paddles.cxx): a pot with resistance 0 always reads
// charged (D7 = 1); one with the maximum resistance (0x7FFFFFFF, e.g. a joystick's unconnected
// pin) or while VBLANK's dump bit holds the capacitors at ground never does. Otherwise the pin
// reads charged once the system cycle counter exceeds (dump release cycle + needed), where needed =
// (uint32)(1.6 * r * 0.01e-6 * 1.19e6) computed in double, and the sum is taken in 32-bit unsigned
// arithmetic (so a release cycle left negative by the per-frame counter reset reads "not charged").
#pragma once

#include "../hd.h"

enum : int32_t { kPotMinResistance = 0, kPotMaxResistance = 0x7FFFFFFF };

// CPU cycles a pot of resistance r needs to charge (only meaningful for 0 < r < max).
HD uint32_t tia_pot_charge_cycles(int32_t r) {
  const double t = 1.6 * static_cast<double>(r) * 0.01E-6;
  return static_cast<uint32_t>(t * 1.19E6);
}

// D7 of INPT0-3 for a pot of resistance r.
HD uint8_t tia_pot_read(int32_t r, uint32_t charge_cycles, uint8_t dump_enabled, int32_t dump_disabled_cycle,
                        uint32_t system_cycles) {
  if (r == kPotMinResistance) return 0x80;
  if (r == kPotMaxResistance || dump_enabled) return 0x00;
  return system_cycles > static_cast<uint32_t>(dump_disabled_cycle) + charge_cycles ? 0x80 : 0x00;
}
