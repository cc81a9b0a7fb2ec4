// F6SC: F6 bank switching plus the 128-byte Superchip RAM; ale-py resets to bank 0.
#pragma once

#include "cart_f6.h"
#include "superchip.h"

HD uint8_t cart_f6sc_peek(Cart& cart, const uint8_t* rom, uint16_t address) {
  uint8_t value = 0;
  if (superchip_peek(cart, address, &value)) return value;
  return cart_f6_peek(cart, rom, address);
}

HD void cart_f6sc_poke(Cart& cart, uint16_t address, uint8_t value) {
  if (!superchip_poke(cart, address, value)) cart_f6_access(cart, address);
}
