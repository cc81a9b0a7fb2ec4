// F6: four 4K banks selected by touching $xFF6..$xFF9, on reads and on writes; ale-py resets to bank 0.
#pragma once

#include "cart_state.h"

enum : uint16_t { kF6FirstHotspot = 0x0FF6, kF6BankCount = 4, kF6ResetBank = 0 };

HD void cart_f6_access(Cart& cart, uint16_t address) {
  const int bank = cart_hotspot_bank(address & kCartAddressMask, kF6FirstHotspot, kF6BankCount);
  if (bank >= 0) cart.bank = static_cast<uint16_t>(bank);
}

HD uint8_t cart_f6_peek(Cart& cart, const uint8_t* rom, uint16_t address) {
  cart_f6_access(cart, address);
  return cart_bank_rom(cart, rom)[address & kCartAddressMask];
}
