// DPC (Pitfall II): F8-style program banks plus David Crane's display processor, as ale-py's Stella
// core emulates it (facts from ALE's src/ale/emucore/CartDPC.cxx; our own code):
// * ROM layout: 8K program (two 4K banks, hot spots $xFF8/$xFF9, reset bank 1) then 2K of display
//   data read by eight data fetchers (tops, bottoms, 11-bit counters counting down, flags).
// * Reads $x000-$x03F: fetcher registers (random number, music amplitude, display data, masked
//   display data, flags); writes $x040-$x07F: set tops / bottoms / counters / music mode, reset RNG.
// * The 8-bit random-number generator is clocked on every access Stella routes to the device:
//   every write to the cartridge, and reads of $x000-$x07F and $xFC0-$xFFF (the rest of the ROM is
//   read through Stella's direct page table, which does not clock it).
// * Music fetchers 5-7 advance at 15,750 Hz relative to the 1.19 MHz CPU clock, computed in double
//   precision from the system cycle count when the music amplitude register is read.
#pragma once

#include "cart_state.h"

enum : uint16_t {
  kDpcFetcherReadEnd = 0x0040,
  kDpcFetcherWriteEnd = 0x0080,
  kDpcDirectPageStart = 0x0080,  // reads from here ...
  kDpcDirectPageEnd = 0x0FC0,    // ... to here do not reach the device (no RNG clock)
  kDpcFirstHotspot = 0x0FF8,
  kDpcResetBank = 1,
  kDpcCounterMask = 0x07FF,
};

// Constructor state (before the first reset): everything 0, random number 1.
HD void cart_dpc_init(Cart& cart) {
  for (int i = 0; i < 8; ++i) {
    cart.dpc.tops[i] = cart.dpc.bottoms[i] = cart.dpc.flags[i] = 0;
    cart.dpc.counters[i] = 0;
  }
  cart.dpc.music_mode[0] = cart.dpc.music_mode[1] = cart.dpc.music_mode[2] = 0;
  cart.dpc.random_number = 1;
  cart.dpc.system_cycles = 0;
  cart.dpc.fractional_clocks = 0.0;
}

// ALE's reset: remember the cycle count, drop the fractional music clock, bank 1. The fetchers and
// the random number keep their values.
HD void cart_dpc_reset(Cart& cart, uint32_t system_cycles) {
  cart.dpc.system_cycles = static_cast<int32_t>(system_cycles);
  cart.dpc.fractional_clocks = 0.0;
  cart.bank = kDpcResetBank;
}

HD void cart_dpc_system_cycles_reset(Cart& cart, uint32_t cycles_before_reset) {
  cart.dpc.system_cycles =
      static_cast<int32_t>(static_cast<uint32_t>(cart.dpc.system_cycles) - cycles_before_reset);
}

// One LFSR step: the new low bit is the XNOR of bits 7, 5, 4 and 3.
HD void cart_dpc_clock_random(Cart& cart) {
  const uint8_t r = cart.dpc.random_number;
  const uint8_t parity = ((r >> 7) ^ (r >> 5) ^ (r >> 4) ^ (r >> 3)) & 1;
  cart.dpc.random_number = static_cast<uint8_t>((r << 1) | (parity ^ 1));
}

HD void cart_dpc_update_music(Cart& cart, uint32_t system_cycles) {
  CartDpc& d = cart.dpc;
  const int32_t cycles = static_cast<int32_t>(system_cycles - static_cast<uint32_t>(d.system_cycles));
  d.system_cycles = static_cast<int32_t>(system_cycles);
  const double clocks = ((15750.0 * cycles) / 1193191.66666667) + d.fractional_clocks;
  const int whole_clocks = static_cast<int>(clocks);
  d.fractional_clocks = clocks - static_cast<double>(whole_clocks);
  if (whole_clocks <= 0) return;
  for (int x = 5; x <= 7; ++x) {
    if (!d.music_mode[x - 5]) continue;
    const int top = d.tops[x] + 1;
    int low = d.counters[x] & 0x00FF;
    if (d.tops[x] != 0) {
      low -= whole_clocks % top;
      if (low < 0) low += top;
    } else {
      low = 0;
    }
    if (low <= d.bottoms[x]) {
      d.flags[x] = 0x00;
    } else if (low <= d.tops[x]) {
      d.flags[x] = 0xFF;
    }
    d.counters[x] = static_cast<uint16_t>((d.counters[x] & 0x0700) | low);
  }
}

HD uint8_t cart_dpc_read_fetcher(Cart& cart, const uint8_t* rom, uint16_t offset, uint32_t system_cycles) {
  CartDpc& d = cart.dpc;
  const uint8_t* display = rom + kDpcProgramSize;
  const int index = offset & 0x07;
  const int function = (offset >> 3) & 0x07;
  const uint8_t low = static_cast<uint8_t>(d.counters[index] & 0x00FF);
  if (low == d.tops[index]) {
    d.flags[index] = 0xFF;
  } else if (low == d.bottoms[index]) {
    d.flags[index] = 0x00;
  }
  uint8_t result = 0;
  switch (function) {
    case 0:
      if (index < 4) {
        result = d.random_number;
      } else {
        cart_dpc_update_music(cart, system_cycles);
        // Amplitude: fetchers 5, 6, 7 contribute 4, 5, 6 when in music mode with their flag set.
        int amplitude = 0;
        for (int k = 0; k < 3; ++k) {
          if (d.music_mode[k] && d.flags[5 + k]) amplitude += 4 + k;
        }
        result = static_cast<uint8_t>(amplitude);
      }
      break;
    case 1: result = display[(kDpcDisplaySize - 1) - d.counters[index]]; break;
    case 2: result = static_cast<uint8_t>(display[(kDpcDisplaySize - 1) - d.counters[index]] & d.flags[index]); break;
    case 7: result = d.flags[index]; break;
    default: result = 0; break;
  }
  if (index < 5 || !d.music_mode[index - 5]) {
    d.counters[index] = static_cast<uint16_t>((d.counters[index] - 1) & kDpcCounterMask);
  }
  return result;
}

HD uint8_t cart_dpc_peek(Cart& cart, const uint8_t* rom, uint16_t address, uint32_t system_cycles) {
  const uint16_t offset = address & kCartAddressMask;
  if (offset >= kDpcDirectPageStart && offset < kDpcDirectPageEnd) {
    return cart_bank_rom(cart, rom)[offset];
  }
  cart_dpc_clock_random(cart);
  if (offset < kDpcFetcherReadEnd) return cart_dpc_read_fetcher(cart, rom, offset, system_cycles);
  const int bank = cart_hotspot_bank(offset, kDpcFirstHotspot, 2);
  if (bank >= 0) cart.bank = static_cast<uint16_t>(bank);
  return cart_bank_rom(cart, rom)[offset];
}

HD void cart_dpc_poke(Cart& cart, uint16_t address, uint8_t value) {
  CartDpc& d = cart.dpc;
  const uint16_t offset = address & kCartAddressMask;
  cart_dpc_clock_random(cart);
  if (offset >= kDpcFetcherReadEnd && offset < kDpcFetcherWriteEnd) {
    const int index = offset & 0x07;
    switch ((offset >> 3) & 0x07) {
      case 0:
        d.tops[index] = value;
        d.flags[index] = 0x00;
        break;
      case 1: d.bottoms[index] = value; break;
      case 2:
        if (index >= 5 && d.music_mode[index - 5]) {
          d.counters[index] = static_cast<uint16_t>((d.counters[index] & 0x0700) | d.tops[index]);
        } else {
          d.counters[index] = static_cast<uint16_t>((d.counters[index] & 0x0700) | value);
        }
        break;
      case 3:
        d.counters[index] = static_cast<uint16_t>(((value & 0x07) << 8) | (d.counters[index] & 0x00FF));
        if (index >= 5) d.music_mode[index - 5] = (value & 0x10) ? 1 : 0;
        break;
      case 6: d.random_number = 1; break;
      default: break;
    }
    return;
  }
  const int bank = cart_hotspot_bank(offset, kDpcFirstHotspot, 2);
  if (bank >= 0) cart.bank = static_cast<uint16_t>(bank);
}
