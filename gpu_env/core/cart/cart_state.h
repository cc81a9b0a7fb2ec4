// Cartridge state shared by every bank-switching scheme (one plain struct per environment).
//
// Conventions for all cart_* functions:
// * `address` is the full 16-bit address the CPU put on the bus; the console calls the cartridge
//   only when A12 is set ((address & 0x1000) != 0). Most schemes look at the low 12 bits only, but
//   FE selects its bank with A13, exactly as ale-py's Stella core does.
// * `rom` / `rom_size` is the whole ROM image as loaded from the file (gpu_env.roms.load_rom).
// * `system_cycles` is the console's cycle counter at the access (after the CPU charged the whole
//   instruction, as ale-py's low-compatibility CPU does); only DPC uses it.
#pragma once

#include "../hd.h"

enum CartScheme : uint8_t {
  kCart2K = 0,
  kCart4K = 1,
  kCartF8 = 2,
  kCartF6 = 3,
  kCartF6SC = 4,
  kCartF8SC = 5,
  kCartE0 = 6,
  kCartFE = 7,
  kCartDPC = 8,
  kCartSchemeCount = 9,
};

enum : uint16_t {
  kCartAddressMask = 0x0FFF,  // offset inside the 4K cartridge window
  kCartSuperchipRamSize = 128,
  kDpcProgramSize = 8192,
  kDpcDisplaySize = 2048,
};

struct CartDpc {
  uint8_t tops[8];
  uint8_t bottoms[8];
  uint16_t counters[8];  // 11-bit data fetcher counters
  uint8_t flags[8];
  uint8_t music_mode[3];  // fetchers 5..7
  uint8_t random_number;
  int32_t system_cycles;       // system cycles when the music fetchers were last updated
  double fractional_clocks;    // leftover of the 15,750 Hz music clock (Stella uses double)
};

struct Cart {
  uint8_t scheme;     // CartScheme
  uint16_t bank;      // current 4K bank: F8, F6, F6SC, F8SC, DPC
  uint16_t slices[4]; // E0: 1K slice shown in each quarter (slices[3] is always 7)
  uint8_t ram[kCartSuperchipRamSize];  // F6SC / F8SC RAM: write port $x000-$x07F, read port $x080-$x0FF
  CartDpc dpc;
};

// The selected 4K bank of a bank-switched ROM (F8, F6, their superchip forms, DPC): bank k is bytes
// [4096 k, 4096 k + 4096) of the ROM image.
HD const uint8_t* cart_bank_rom(const Cart& cart, const uint8_t* rom) { return rom + 4096u * cart.bank; }

// Bank selected by a hot spot in [first, first + count) of the 4K window, or -1.
HD int cart_hotspot_bank(uint16_t offset, uint16_t first, uint16_t count) {
  return (offset >= first && offset < first + count) ? static_cast<int>(offset - first) : -1;
}
