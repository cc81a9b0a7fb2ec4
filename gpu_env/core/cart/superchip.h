// The Superchip (SC) 128-byte RAM of F8SC / F6SC carts, as ale-py's Stella core maps it:
// writes to $x000-$x07F store into RAM; reads of $x080-$x0FF return RAM. A read of the write port
// returns the ROM byte of the current bank at that address, and a write to the read port is dropped
// (only the bank hot spots react to writes outside the write port).
#pragma once

#include "cart_state.h"

enum : uint16_t { kSuperchipWritePortEnd = 0x0080, kSuperchipReadPortEnd = 0x0100 };

// ALE re-randomises SC RAM on every reset: low bytes of 128 System RNG draws, in order.
HD void superchip_reset(Cart& cart, const uint32_t* random_values) {
  for (int i = 0; i < kCartSuperchipRamSize; ++i) cart.ram[i] = static_cast<uint8_t>(random_values[i]);
}

// Returns true (and the RAM byte in *value) when a read hits the read port.
HD bool superchip_peek(const Cart& cart, uint16_t address, uint8_t* value) {
  const uint16_t offset = address & kCartAddressMask;
  if (offset >= kSuperchipWritePortEnd && offset < kSuperchipReadPortEnd) {
    *value = cart.ram[offset & 0x7F];
    return true;
  }
  return false;
}

// Returns true when a write was consumed by the write port.
HD bool superchip_poke(Cart& cart, uint16_t address, uint8_t value) {
  const uint16_t offset = address & kCartAddressMask;
  if (offset < kSuperchipWritePortEnd) {
    cart.ram[offset] = value;
    return true;
  }
  return false;
}
