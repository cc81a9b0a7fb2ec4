// Test entry points for the RIOT and the cartridges: replay a list of bus accesses against one
// device and report what each access returned and the device state after it. Plain C ABI for
// ctypes (tests/gpu_env/test_riot.py, test_carts.py, test_roms.py); not used by the emulator itself and not
// part of the shipped library: tests/gpu_env/native_test_lib.py compiles this file with g++.
//
// An access is int32[4]: kind, address, value, system_cycles.
//   kind 0 = read (the result is stored), 1 = write, 2 = system-cycles reset (value = the cycle
//   count before the reset; the device rewinds its remembered cycle counts).
#include "cart/cart.h"
#include "hd.h"
#include "riot.h"

#define GPU_ENV_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr int kAccessRead = 0, kAccessWrite = 1, kAccessCyclesReset = 2;
constexpr int kCartStateInts = 12;  // bank, slices[0..3], random, counters[0..2]... see below
constexpr int kRiotStateInts = 7;

void cart_state_out(const Cart& cart, int32_t* out) {
  out[0] = cart.bank;
  for (int i = 0; i < 4; ++i) out[1 + i] = cart.slices[i];
  out[5] = cart.dpc.random_number;
  for (int i = 0; i < 3; ++i) out[6 + i] = cart.dpc.counters[i];
  out[9] = cart.dpc.flags[0];
  out[10] = cart.dpc.system_cycles;
  out[11] = cart.dpc.music_mode[0] | (cart.dpc.music_mode[1] << 1) | (cart.dpc.music_mode[2] << 2);
}

void riot_state_out(const Riot& riot, int32_t* out) {
  out[0] = static_cast<int32_t>(riot.timer);
  out[1] = static_cast<int32_t>(riot.interval_shift);
  out[2] = riot.cycles_when_timer_set;
  out[3] = riot.cycles_when_interrupt_reset;
  out[4] = riot.timer_read_after_interrupt;
  out[5] = riot.ddra;
  out[6] = riot.ddrb;
}

}  // namespace

GPU_ENV_EXPORT int32_t gpu_env_test_cart_state_ints() { return kCartStateInts; }
GPU_ENV_EXPORT int32_t gpu_env_test_riot_state_ints() { return kRiotStateInts; }
GPU_ENV_EXPORT int32_t gpu_env_test_cart_reset_draws(int32_t scheme) {
  return cart_reset_random_draws(static_cast<uint8_t>(scheme));
}

// Build a cartridge of `scheme` over `rom`, reset it (random_values: cart_reset_random_draws
// values; reset_cycles: the system cycle count at reset), then replay `n` accesses.
// results: uint8[n] (read values, 0 for other kinds); states: int32[n * kCartStateInts] after each
// access: bank, slices[4], DPC random number, DPC counters[0..2], DPC flags[0], DPC system cycles,
// DPC music-mode bits. sc_ram: uint8[128] out, the Superchip RAM at the end.
GPU_ENV_EXPORT void gpu_env_test_cart_replay(int32_t scheme, const uint8_t* rom, uint32_t rom_size,
                                             const uint32_t* random_values, uint32_t reset_cycles,
                                             int32_t n, const int32_t* accesses, uint8_t* results,
                                             int32_t* states, uint8_t* sc_ram) {
  Cart cart;
  cart_init(cart, static_cast<uint8_t>(scheme));
  cart_reset(cart, random_values, reset_cycles);
  for (int32_t k = 0; k < n; ++k) {
    const int32_t* a = accesses + 4 * k;
    const uint16_t address = static_cast<uint16_t>(a[1]);
    const uint32_t cycles = static_cast<uint32_t>(a[3]);
    results[k] = 0;
    if (a[0] == kAccessRead) {
      results[k] = cart_peek(cart, rom, rom_size, address, cycles);
    } else if (a[0] == kAccessWrite) {
      cart_poke(cart, rom, rom_size, address, static_cast<uint8_t>(a[2]), cycles);
    } else if (a[0] == kAccessCyclesReset) {
      cart_system_cycles_reset(cart, static_cast<uint32_t>(a[2]));
    }
    cart_state_out(cart, states + kCartStateInts * k);
  }
  for (int i = 0; i < kCartSuperchipRamSize; ++i) sc_ram[i] = cart.ram[i];
}

// Reset a RIOT (ram: uint8[128] initial contents; random_value: the reset's RNG draw) and replay
// `n` accesses with the given port inputs. results: uint8[n]; states: int32[n * kRiotStateInts]
// (timer, interval_shift, cycles_when_timer_set, cycles_when_interrupt_reset,
// timer_read_after_interrupt, ddra, ddrb); ram_out: uint8[128] at the end.
GPU_ENV_EXPORT void gpu_env_test_riot_replay(const uint8_t* ram, uint32_t random_value, uint8_t swcha,
                                             uint8_t swchb, int32_t n, const int32_t* accesses,
                                             uint8_t* results, int32_t* states, uint8_t* ram_out) {
  Riot riot;
  riot_set_ram(riot, ram);
  riot_reset(riot, random_value);
  for (int32_t k = 0; k < n; ++k) {
    const int32_t* a = accesses + 4 * k;
    const uint16_t address = static_cast<uint16_t>(a[1]);
    const uint32_t cycles = static_cast<uint32_t>(a[3]);
    results[k] = 0;
    if (a[0] == kAccessRead) {
      results[k] = riot_peek(riot, address, cycles, swcha, swchb);
    } else if (a[0] == kAccessWrite) {
      riot_poke(riot, address, static_cast<uint8_t>(a[2]), cycles);
    } else if (a[0] == kAccessCyclesReset) {
      riot_system_cycles_reset(riot, static_cast<uint32_t>(a[2]));
    }
    riot_state_out(riot, states + kRiotStateInts * k);
  }
  for (int i = 0; i < 128; ++i) ram_out[i] = riot.ram[i];
}

// ---------------------------------------------------------------------------------------------
// A minimal 2600 memory map without a TIA (TIA reads return 0, writes are dropped): CPU + RIOT +
// cartridge, for smoke tests that real ROMs boot and switch banks without hitting a JAM.

#include "m6502.h"

namespace {

struct MiniConsole {
  M6502 cpu;
  Riot riot;
  Cart cart;
  const uint8_t* rom;
  uint32_t rom_size;
  uint32_t cycles;
  uint32_t bank_changes;

  uint16_t bank_signature() const {
    return static_cast<uint16_t>(cart.bank | (cart.slices[0] << 4) | (cart.slices[1] << 8) | (cart.slices[2] << 12));
  }
  uint8_t peek(uint16_t address) {
    if (address & 0x1000) {
      const uint16_t before = bank_signature();
      const uint8_t value = cart_peek(cart, rom, rom_size, address, cycles);
      if (bank_signature() != before) ++bank_changes;
      return value;
    }
    if (riot_selected(address)) return riot_peek(riot, address, cycles, 0xFF, 0xFF);
    return 0;
  }
  uint8_t poke(uint16_t address, uint8_t value, uint8_t /*last_access_was_read*/) {
    if (address & 0x1000) {
      const uint16_t before = bank_signature();
      cart_poke(cart, rom, rom_size, address, value, cycles);
      if (bank_signature() != before) ++bank_changes;
    } else if (riot_selected(address)) {
      riot_poke(riot, address, value, cycles);
    }
    return 0;
  }
  void add_cycles(uint32_t n) { cycles += n; }
  uint32_t poll_loop(M6502&, uint32_t) { return 0; }  // no fast-forward: every instruction runs
};

}  // namespace

// Boot `rom` as `scheme` (zeroed RIOT RAM, zero random values) and run up to max_instructions.
// Outputs: instructions executed, fatal (JAM) flag, number of bank/slice changes, final PC.
GPU_ENV_EXPORT void gpu_env_test_mini_console_run(int32_t scheme, const uint8_t* rom, uint32_t rom_size,
                                                  uint64_t max_instructions, uint64_t* instructions,
                                                  uint8_t* fatal, uint32_t* bank_changes, uint32_t* pc) {
  static const uint32_t kZeroRandom[kCartSuperchipRamSize] = {};
  MiniConsole console;
  console.rom = rom;
  console.rom_size = rom_size;
  console.cycles = 0;
  console.bank_changes = 0;
  const uint8_t zero_ram[128] = {};
  riot_set_ram(console.riot, zero_ram);
  riot_reset(console.riot, 0);
  cart_init(console.cart, static_cast<uint8_t>(scheme));
  cart_reset(console.cart, kZeroRandom, 0);
  m6502_reset_from_bus(console.cpu, console);
  uint64_t count = 0;
  while (count < max_instructions && !(console.cpu.status & kM6502StatusFatal)) {
    m6502_step(console.cpu, console);
    ++count;
  }
  *instructions = count;
  *fatal = (console.cpu.status & kM6502StatusFatal) ? 1 : 0;
  *bank_changes = console.bank_changes;
  *pc = console.cpu.pc;
}
