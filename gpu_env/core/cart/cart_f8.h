// F8: two 4K banks selected by touching $xFF8 (bank 0) or $xFF9 (bank 1), on reads and on writes.
// ale-py resets to bank 1 (two ROMs, which it special-cases by MD5 as "F8 swapped", to bank 0).
#pragma once

#include "cart_state.h"

enum : uint16_t { kF8FirstHotspot = 0x0FF8, kF8BankCount = 2, kF8ResetBank = 1 };

HD void cart_f8_access(Cart& cart, uint16_t address) {
  const int bank = cart_hotspot_bank(address & kCartAddressMask, kF8FirstHotspot, kF8BankCount);
  if (bank >= 0) cart.bank = static_cast<uint16_t>(bank);
}

HD uint8_t cart_f8_peek(Cart& cart, const uint8_t* rom, uint16_t address) {
  cart_f8_access(cart, address);
  return cart_bank_rom(cart, rom)[address & kCartAddressMask];
}
