// E0 (Parker Bros): the 4K window is four 1K quarters. Quarters 0-2 show any of the eight 1K slices,
// selected by touching $xFE0-$xFE7 / $xFE8-$xFEF / $xFF0-$xFF7 (reads and writes); quarter 3 always
// shows slice 7. ale-py resets to slices 4, 5, 6 (+7).
#pragma once

#include "cart_state.h"

enum : uint16_t { kE0FirstHotspot = 0x0FE0, kE0LastHotspot = 0x0FF7, kE0SliceSize = 1024, kE0FixedSlice = 7 };

HD void cart_e0_reset(Cart& cart) {
  cart.slices[0] = 4;
  cart.slices[1] = 5;
  cart.slices[2] = 6;
  cart.slices[3] = kE0FixedSlice;
}

HD void cart_e0_access(Cart& cart, uint16_t address) {
  const uint16_t offset = address & kCartAddressMask;
  if (offset >= kE0FirstHotspot && offset <= kE0LastHotspot) {
    cart.slices[(offset - kE0FirstHotspot) >> 3] = offset & 0x07;
  }
}

HD uint8_t cart_e0_peek(Cart& cart, const uint8_t* rom, uint16_t address) {
  cart_e0_access(cart, address);
  const uint16_t offset = address & kCartAddressMask;
  return rom[cart.slices[offset >> 10] * static_cast<uint32_t>(kE0SliceSize) + (offset & 0x03FF)];
}
