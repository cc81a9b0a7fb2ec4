// TIA object bits and collision latches, as bitmasks: one OR per pixel, no branches.
//
// Facts (ALE src/ale/emucore/TIA.hxx/TIA.cxx, Stella 2.x era): the per-pixel "enabled objects" byte
// uses P0=0x01, M0=0x02, P1=0x04, M1=0x08, BL=0x10, PF=0x20, with the CTRLPF score bit at 0x40 and the
// priority bit at 0x80 (ALE serializes this byte, so the values are part of the state format). The
// 15 collision latches are kept in a 16-bit word whose bit order matches the CXxx read-out below.
#pragma once

#include "../hd.h"

enum : uint8_t {
  kTiaP0 = 0x01,
  kTiaM0 = 0x02,
  kTiaP1 = 0x04,
  kTiaM1 = 0x08,
  kTiaBL = 0x10,
  kTiaPF = 0x20,
  kTiaScore = 0x40,
  kTiaPriority = 0x80,
};

// Collision latch bits (ALE's myCollision layout).
enum : uint16_t {
  kCxM0P1 = 0x0001, kCxM0P0 = 0x0002, kCxM1P0 = 0x0004, kCxM1P1 = 0x0008,
  kCxP0PF = 0x0010, kCxP0BL = 0x0020, kCxP1PF = 0x0040, kCxP1BL = 0x0080,
  kCxM0PF = 0x0100, kCxM0BL = 0x0200, kCxM1PF = 0x0400, kCxM1BL = 0x0800,
  kCxBLPF = 0x1000, kCxP0P1 = 0x2000, kCxM0M1 = 0x4000,
};

// The latches set by one pixel whose visible objects are `objects` (kTia* bits, 6 low bits used).
HD uint16_t tia_collisions_of(uint8_t objects) {
  const uint32_t p0 = objects & 1, m0 = (objects >> 1) & 1, p1 = (objects >> 2) & 1;
  const uint32_t m1 = (objects >> 3) & 1, bl = (objects >> 4) & 1, pf = (objects >> 5) & 1;
  return static_cast<uint16_t>((m0 & p1) | ((m0 & p0) << 1) | ((m1 & p0) << 2) | ((m1 & p1) << 3) |
                               ((p0 & pf) << 4) | ((p0 & bl) << 5) | ((p1 & pf) << 6) | ((p1 & bl) << 7) |
                               ((m0 & pf) << 8) | ((m0 & bl) << 9) | ((m1 & pf) << 10) | ((m1 & bl) << 11) |
                               ((bl & pf) << 12) | ((p0 & p1) << 13) | ((m0 & m1) << 14));
}

// D7/D6 of the collision register at TIA read address `reg` (0..7: CXM0P ... CXPPMM).
HD uint8_t tia_collision_read(uint16_t latches, uint8_t reg) {
  // Each register reports two latches: the lower-numbered one on D7, the next on D6 (CXBLPF has only D7).
  const uint32_t hi = (latches >> (2 * reg)) & 1;
  const uint32_t lo = reg == 6 ? 0 : (latches >> (2 * reg + 1)) & 1;
  if (reg == 7) {
    return static_cast<uint8_t>((((latches >> 13) & 1) << 7) | (((latches >> 14) & 1) << 6));
  }
  return static_cast<uint8_t>((hi << 7) | (lo << 6));
}

// The latches object `object` (one kTia* bit) is part of.
HD uint16_t tia_latches_of(uint8_t object) {
  return static_cast<uint16_t>(tia_collisions_of(0x3F) & ~tia_collisions_of(static_cast<uint8_t>(0x3F & ~object)));
}
