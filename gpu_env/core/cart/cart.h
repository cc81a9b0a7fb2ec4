// Cartridge dispatch: one entry point per operation, switching on the scheme (runtime, so one
// compiled kernel serves every ROM). See cart_state.h for the conventions.
#pragma once

#include "cart_2k.h"
#include "cart_4k.h"
#include "cart_dpc.h"
#include "cart_e0.h"
#include "cart_f6.h"
#include "cart_f6sc.h"
#include "cart_f8.h"
#include "cart_f8sc.h"
#include "cart_fe.h"
#include "cart_state.h"

// How many System RNG draws ALE's cartridge reset consumes (the SC RAM refill).
HD int cart_reset_random_draws(uint8_t scheme) {
  return (scheme == kCartF6SC || scheme == kCartF8SC) ? kCartSuperchipRamSize : 0;
}

// Zero the state and set the scheme (ALE's constructor); call cart_reset before use.
HD void cart_init(Cart& cart, uint8_t scheme) {
  cart.scheme = scheme;
  cart.bank = 0;
  for (int i = 0; i < 4; ++i) cart.slices[i] = 0;
  for (int i = 0; i < kCartSuperchipRamSize; ++i) cart.ram[i] = 0;
  cart_dpc_init(cart);
}

// ALE's Cartridge::reset(): the reset bank (F8/F8SC/DPC: 1, F6/F6SC: 0, E0: slices 4,5,6,7) and, for
// SC carts, RAM refilled from random_values (cart_reset_random_draws(scheme) System RNG outputs, in
// draw order; may be null for other schemes). system_cycles: the console's counter (DPC keeps it).
HD void cart_reset(Cart& cart, const uint32_t* random_values, uint32_t system_cycles) {
  switch (cart.scheme) {
    case kCartF8: cart.bank = kF8ResetBank; break;
    case kCartF6: cart.bank = kF6ResetBank; break;
    case kCartF8SC:
      superchip_reset(cart, random_values);
      cart.bank = kF8ResetBank;
      break;
    case kCartF6SC:
      superchip_reset(cart, random_values);
      cart.bank = kF6ResetBank;
      break;
    case kCartE0: cart_e0_reset(cart); break;
    case kCartDPC: cart_dpc_reset(cart, system_cycles); break;
    default: break;
  }
}

// A CPU read with A12 set. rom_size is accepted for symmetry and bounds documentation: every
// scheme indexes inside the size its detection guarantees (2K: 2048, 4K: 4096, F8/F8SC/E0/FE: 8192,
// F6/F6SC: 16384, DPC: 10240 or more).
HD uint8_t cart_peek(Cart& cart, const uint8_t* rom, uint32_t rom_size, uint16_t address, uint32_t system_cycles) {
  (void)rom_size;
  switch (cart.scheme) {
    case kCart2K: return cart_2k_peek(rom, address);
    case kCart4K: return cart_4k_peek(rom, address);
    case kCartF8: return cart_f8_peek(cart, rom, address);
    case kCartF6: return cart_f6_peek(cart, rom, address);
    case kCartF6SC: return cart_f6sc_peek(cart, rom, address);
    case kCartF8SC: return cart_f8sc_peek(cart, rom, address);
    case kCartE0: return cart_e0_peek(cart, rom, address);
    case kCartFE: return cart_fe_peek(rom, address);
    default: return cart_dpc_peek(cart, rom, address, system_cycles);
  }
}

// A CPU write with A12 set (hot spots react to writes too).
HD void cart_poke(Cart& cart, const uint8_t* rom, uint32_t rom_size, uint16_t address, uint8_t value,
                  uint32_t system_cycles) {
  (void)rom;
  (void)rom_size;
  (void)system_cycles;
  switch (cart.scheme) {
    case kCartF8: cart_f8_access(cart, address); break;
    case kCartF6: cart_f6_access(cart, address); break;
    case kCartF6SC: cart_f6sc_poke(cart, address, value); break;
    case kCartF8SC: cart_f8sc_poke(cart, address, value); break;
    case kCartE0: cart_e0_access(cart, address); break;
    case kCartDPC: cart_dpc_poke(cart, address, value); break;
    default: break;  // 2K, 4K, FE: ROM only
  }
}

// The console is about to set its system cycle counter back to 0 (start of a frame).
HD void cart_system_cycles_reset(Cart& cart, uint32_t cycles_before_reset) {
  if (cart.scheme == kCartDPC) cart_dpc_system_cycles_reset(cart, cycles_before_reset);
}
