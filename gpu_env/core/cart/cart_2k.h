// 2K cartridge: one 2K image mirrored twice in the 4K window; writes are ignored.
#pragma once

#include "cart_state.h"

HD uint8_t cart_2k_peek(const uint8_t* rom, uint16_t address) { return rom[address & 0x07FF]; }
