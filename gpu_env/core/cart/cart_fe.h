// FE (Activision, 8K): in ale-py's Stella core the bank is simply address line A13 of each access:
// $Dxxx-style addresses (A13 = 0) read the second 4K of the image, $Fxxx-style (A13 = 1) the first.
// (Real FE hardware snoops JSR/RTS stack traffic; code in each bank runs at addresses with the
// matching A13, so following A13 is what Stella does.) No state, writes are ignored.
#pragma once

#include "cart_state.h"

enum : uint16_t { kFeBankLine = 0x2000 };

HD uint8_t cart_fe_peek(const uint8_t* rom, uint16_t address) {
  const uint32_t bank_offset = (address & kFeBankLine) ? 0u : 4096u;
  return rom[bank_offset + (address & kCartAddressMask)];
}
