// 4K cartridge: the image fills the 4K window; no bank switching, writes are ignored.
#pragma once

#include "cart_state.h"

HD uint8_t cart_4k_peek(const uint8_t* rom, uint16_t address) { return rom[address & kCartAddressMask]; }
