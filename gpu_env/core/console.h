// The Atari 2600 console as ale-py 0.12 runs it: 6502 (m6502.h) + RIOT (riot.h) + TIA (tia/) +
// cartridge (cart/) + console switches + controllers (joysticks, paddles), wired as ALE's Stella
// `System` does, implementing the CPU's Bus (including the data-bus latch the TIA reads back).
//
// Facts (ALE src/ale/emucore/System.hxx, Console.cxx, Joystick.cxx, Paddles.cxx, Switches.cxx,
// src/ale/environment/ale_state.cpp, stella_environment.cpp); the code is our own:
// * Address decode on A12/A7/A9: A12 set = cartridge (full address passed on), A12 = A7 = 0 = TIA,
//   A7 = 1 = RIOT (A9 = 0 RAM, 1 I/O). Every peek and poke leaves its value on the data bus.
// * console_frame == one TIA::update(): start a new frame unless the last one was interrupted,
//   run up to 25,000 instructions, and grey out the undrawn rows of an interrupted frame.
// * Inputs: ALE "events" -> controller pins -> SWCHA bits / INPT0-5 / SWCHB, per port, with
//   SwapPorts (the left-jack controller sits in the right port) and SwapPaddles.
#pragma once

#include "cart/cart.h"
#include "hd.h"
#include "m6502.h"
#include "riot.h"
#include "tia/tia.h"

enum : uint32_t { kConsoleInstructionsPerUpdate = 25000 };

// ALE's player-A/B action numbering (0..17); RESET is 40 in ALE.
enum : int32_t { kActionNoop = 0, kActionFire = 1, kActionReset = 40 };
enum : int32_t { kPaddleDelta = 23000 };

// ALE "event" state that the controllers and switches read during a frame.
struct ConsoleEvents {
  uint8_t joy[2];          // per joystick (0 = "Zero", 1 = "One"): bit0 up, 1 down, 2 left, 3 right, 4 fire
  uint8_t paddle_fire;     // bit i: PaddleN fire pressed (N = 0..3)
  uint8_t console_reset, console_select, difficulty;  // difficulty: bit0 left A, bit1 right A
  int32_t paddle_resistance[4];
};

struct Console {
  M6502 cpu;
  Riot riot;
  Tia tia;
  Cart cart;
  uint32_t cycles;     // System cycle counter (reset to 0 at every frame start)
  uint8_t data_bus;    // last value peeked or poked
  // Per-frame I/O derived from the events.
  uint8_t swcha, swchb;
  TiaInputs inputs;
  ConsoleEvents events;
  // Controllers (ROM properties) and ALE paddle state.
  uint8_t left_paddles, right_paddles, swap_ports, swap_paddles, use_paddles;
  int32_t paddle[2];   // ALE m_left_paddle / m_right_paddle
  int32_t paddle_min, paddle_max;
};

// ------------------------------------------------------------------------------------------------
// Controllers.

struct PortPins {
  uint8_t digital;   // bits 0..3 = pins One..Four high (not pressed), bit 4 = pin Six high
  int32_t nine, five;
};

HD PortPins console_controller_pins(const ConsoleEvents& ev, bool paddles, bool right_jack, bool swap_paddles) {
  PortPins p;
  if (!paddles) {
    const uint8_t j = ev.joy[right_jack ? 1 : 0];
    p.digital = static_cast<uint8_t>(~j & 0x1F);
    p.nine = p.five = kPotMaxResistance;
    return p;
  }
  // Pin Three / Four fire buttons and pin Nine / Five pots, for paddles (2j, 2j+1) of this jack.
  const int lo = right_jack ? 2 : 0, hi = lo + 1;
  const int three = swap_paddles ? lo : hi, four = swap_paddles ? hi : lo;
  const uint8_t three_high = ((ev.paddle_fire >> three) & 1) ? 0 : 1;
  const uint8_t four_high = ((ev.paddle_fire >> four) & 1) ? 0 : 1;
  p.digital = static_cast<uint8_t>(0x13 | (three_high << 2) | (four_high << 3));
  p.five = ev.paddle_resistance[swap_paddles ? lo : hi];
  p.nine = ev.paddle_resistance[swap_paddles ? hi : lo];
  return p;
}

// Recompute SWCHA, SWCHB and the INPT sources from the events (ALE reads them live; they only
// change between frames, so once per frame is exact).
HD void console_refresh_io(Console& c) {
  // Port 0 (left, SWCHA bits 7-4, INPT0/1/4) holds the right-jack controller when ports are swapped.
  const bool swap = c.swap_ports != 0;
  const PortPins left = console_controller_pins(c.events, swap ? c.right_paddles : c.left_paddles, swap,
                                                c.swap_paddles != 0);
  const PortPins right = console_controller_pins(c.events, swap ? c.left_paddles : c.right_paddles, !swap,
                                                 c.swap_paddles != 0);
  c.swcha = static_cast<uint8_t>(((left.digital & 0x0F) << 4) | (right.digital & 0x0F));
  c.inputs.fire = static_cast<uint8_t>(((left.digital >> 4) & 1) | (((right.digital >> 4) & 1) << 1));
  c.inputs.pot[0] = left.nine;
  c.inputs.pot[1] = left.five;
  c.inputs.pot[2] = right.nine;
  c.inputs.pot[3] = right.five;
  for (int i = 0; i < 4; ++i) c.inputs.pot_charge[i] = tia_pot_charge_cycles(c.inputs.pot[i]);
  uint8_t sw = 0x3F;  // colour TV, unused bits high
  if (c.events.difficulty & 1) sw |= 0x40;
  if (c.events.difficulty & 2) sw |= 0x80;
  if (c.events.console_select) sw &= static_cast<uint8_t>(~0x02);
  if (c.events.console_reset) sw &= static_cast<uint8_t>(~0x01);
  c.swchb = sw;
}

// Joystick direction/fire bits of ALE action a (0..17).
HD uint8_t console_action_joystick_bits(int32_t a) {
  if (a < 0 || a > 17) return 0;
  // up, down, left, right, fire as bit sets over the 18 actions
  const uint32_t up = (1u << 2) | (1u << 6) | (1u << 7) | (1u << 10) | (1u << 14) | (1u << 15);
  const uint32_t down = (1u << 5) | (1u << 8) | (1u << 9) | (1u << 13) | (1u << 16) | (1u << 17);
  const uint32_t left = (1u << 4) | (1u << 7) | (1u << 9) | (1u << 12) | (1u << 15) | (1u << 17);
  const uint32_t right = (1u << 3) | (1u << 6) | (1u << 8) | (1u << 11) | (1u << 14) | (1u << 16);
  const uint32_t fire = (1u << 1) | 0x3FC00u;  // FIRE and 10..17
  const uint32_t m = 1u << a;
  return static_cast<uint8_t>(((up & m) ? 1 : 0) | ((down & m) ? 2 : 0) | ((left & m) ? 4 : 0) |
                              ((right & m) ? 8 : 0) | ((fire & m) ? 16 : 0));
}

// ALE resetKeys + applyActionJoysticks / applyActionPaddles for players A and B (B uses 0..17 too).
HD void console_apply_actions(Console& c, int32_t a, int32_t b, float strength_a, float strength_b) {
  ConsoleEvents& ev = c.events;
  ev.joy[0] = ev.joy[1] = 0;
  ev.paddle_fire = 0;
  ev.console_reset = (a == kActionReset || b == kActionReset) ? 1 : 0;
  ev.console_select = 0;
  const uint8_t ja = console_action_joystick_bits(a), jb = console_action_joystick_bits(b);
  if (c.use_paddles) {
    const float fa = strength_a < 0 ? -strength_a : strength_a, fb = strength_b < 0 ? -strength_b : strength_b;
    const int32_t da = (ja & 8) ? static_cast<int32_t>(-kPaddleDelta * fa) : ((ja & 4) ? static_cast<int32_t>(kPaddleDelta * fa) : 0);
    const int32_t db = (jb & 8) ? static_cast<int32_t>(-kPaddleDelta * fb) : ((jb & 4) ? static_cast<int32_t>(kPaddleDelta * fb) : 0);
    for (int p = 0; p < 2; ++p) {
      int32_t v = c.paddle[p] + (p == 0 ? da : db);
      if (v < c.paddle_min) v = c.paddle_min;
      if (v > c.paddle_max) v = c.paddle_max;
      c.paddle[p] = v;
    }
    ev.paddle_resistance[0] = c.paddle[0];
    ev.paddle_resistance[1] = c.paddle[1];
    ev.paddle_fire = static_cast<uint8_t>(((ja & 16) ? 1 : 0) | ((jb & 16) ? 2 : 0));
  } else {
    ev.joy[0] = ja;
    ev.joy[1] = jb;
  }
  console_refresh_io(c);
}

// ------------------------------------------------------------------------------------------------
// The bus.

#if GPU_ENV_DEVICE
#define GPU_ENV_COLD
#define GPU_ENV_UNLIKELY(x) (x)
#else
#define GPU_ENV_COLD __attribute__((noinline, cold))
#define GPU_ENV_UNLIKELY(x) __builtin_expect(!!(x), 0)
#endif

// TIA and RIOT-I/O accesses, kept out of line so that the hot paths (cartridge and RAM) inline
// into the CPU (the bus marks their branches unlikely). Out of line but optimised for speed (HD_HOST_NOINLINE,
// not GPU_ENV_COLD): `cold` would compile the TIA's write (inlined here) for size, with `idiv` for its line
// arithmetic (perf: the two divisions were a third of the write's time).
HD_HOST_NOINLINE uint8_t console_peek_io(Console& c, uint8_t* fb, uint16_t address) {
  if (!(address & 0x0080)) return tia_peek(c.tia, fb, address, c.cycles, c.data_bus, c.inputs);
  return riot_peek(c.riot, address, c.cycles, c.swcha, c.swchb);
}

// Returns the CPU status bits the write sets (kM6502StatusStop when the TIA halts the CPU).
HD_HOST_NOINLINE uint8_t console_poke_io(Console& c, uint8_t* fb, uint16_t address, uint8_t value,
                                        uint8_t last_access_was_read) {
  if (!(address & 0x0080)) {
    return tia_poke(c.tia, fb, address, value, c.cycles, last_access_was_read) ? kM6502StatusStop : 0;
  }
  riot_poke(c.riot, address, value, c.cycles);
  return 0;
}

#if GPU_ENV_DEVICE
#define GPU_ENV_HOT HD
#else
#define GPU_ENV_HOT inline __attribute__((always_inline))
#endif

// Scheme parameter meaning "dispatch on Cart::scheme at run time".
enum : uint8_t { kCartAnyScheme = 0xFF };

// Cartridge read/write for a scheme fixed at compile time (the per-scheme functions cart_peek
// dispatches to), so the bus inlines into the CPU; other schemes use the run-time dispatch.
template <uint8_t kScheme>
GPU_ENV_HOT uint8_t console_cart_peek(Cart& k, const uint8_t* rom, uint32_t rom_size, uint16_t a, uint32_t cycles) {
  if (kScheme == kCart2K) return cart_2k_peek(rom, a);
  if (kScheme == kCart4K) return cart_4k_peek(rom, a);
  if (kScheme == kCartF8) return cart_f8_peek(k, rom, a);
  if (kScheme == kCartF6) return cart_f6_peek(k, rom, a);
  if (kScheme == kCartFE) return cart_fe_peek(rom, a);
  return cart_peek(k, rom, rom_size, a, cycles);
}

template <uint8_t kScheme>
GPU_ENV_HOT void console_cart_poke(Cart& k, const uint8_t* rom, uint32_t rom_size, uint16_t a, uint8_t v,
                                   uint32_t cycles) {
  if (kScheme == kCart2K || kScheme == kCart4K || kScheme == kCartFE) return;
  if (kScheme == kCartF8) {
    cart_f8_access(k, a);
    return;
  }
  if (kScheme == kCartF6) {
    cart_f6_access(k, a);
    return;
  }
  cart_poke(k, rom, rom_size, a, v, cycles);
}

// A timer poll loop run at once (the Bus's poll_loop, m6502.h). Games wait for the RIOT timer with
// `LDA/LDX/LDY INTIM` + `BNE` back to it (115 such loops in ale-py's 108 ROMs; 15-17 % of all
// instructions run in Breakout, Space Invaders and Seaquest). The CPU has just run one iteration and
// is back at the load. While the timer reads at least 1 before its underflow, an iteration has no effect
// but its cycles and the loaded register and flags, so n iterations are 7n (8n when the branch crosses a
// page) cycles and the last value read. What is left (the iteration that reads 0) runs as usual.
// Only code in ROM away from every scheme's hotspots (offsets from 0xFE0) and, for the Superchip and DPC
// schemes, their RAM ports and registers (offsets below 0x100) is read ahead, so looking at the loop
// changes nothing; the data bus keeps the branch's offset byte, as it would.
template <uint8_t kScheme>
GPU_ENV_COLD HD uint32_t console_timer_poll_loop(Console& c, const uint8_t* rom, uint32_t rom_size, M6502& cpu,
                                                 uint32_t max_iterations) {
  const uint16_t p = cpu.pc;
  const uint16_t offset = p & 0x0FFF;
  const uint8_t scheme = kScheme == kCartAnyScheme ? c.cart.scheme : kScheme;
  const bool low_ports = scheme == kCartF6SC || scheme == kCartF8SC || scheme == kCartDPC;
  if (!(p & 0x1000) || (low_ports && offset < 0x100) || offset > 0xFE0 - 5) return 0;
  const uint8_t load = console_cart_peek<kScheme>(c.cart, rom, rom_size, p, c.cycles);
  if (load != 0xAD && load != 0xAE && load != 0xAC) return 0;  // LDA, LDX, LDY absolute
  const uint16_t address = static_cast<uint16_t>(
      console_cart_peek<kScheme>(c.cart, rom, rom_size, static_cast<uint16_t>(p + 1), c.cycles) |
      (console_cart_peek<kScheme>(c.cart, rom, rom_size, static_cast<uint16_t>(p + 2), c.cycles) << 8));
  if (!riot_reads_intim(address)) return 0;
  // The load reads at its 4th cycle; then the taken branch back, 3 cycles (4 across a page).
  const uint32_t period = 4u + 2u + m6502_detail::same_page_penalty(p, static_cast<uint16_t>(p + 5)) + 1u;
  uint8_t value = 0;
  const uint32_t n = riot_reads_above_zero(c.riot, c.cycles + 4u, period, max_iterations, &value);
  if (n == 0) return 0;
  c.cycles += n * period;
  if (load == 0xAD) cpu.a = value;
  else if (load == 0xAE) cpu.x = value;
  else cpu.y = value;
  m6502_set_nz(cpu, value);
  return n;
}

// The 6502's bus (m6502.h): address decode, data-bus latch, cycle counter. `cycles` and `data_bus` are where
// the bus keeps the counter and the latch: the console's own fields (ConsoleBusT), or copies that the CPU's loop
// keeps in registers (ConsoleRunBusT); either way they are stored into the console before a TIA or RIOT access,
// which reads them there, and the counter is read back after a write (WSYNC moves it).
template <uint8_t kScheme>
GPU_ENV_HOT uint8_t console_bus_peek(Console& c, const uint8_t* rom, uint32_t rom_size, uint8_t* fb, uint16_t address,
                                     uint32_t cycles, uint8_t& data_bus) {
  uint8_t v;
  if (address & 0x1000) {
    v = console_cart_peek<kScheme>(c.cart, rom, rom_size, address, cycles);
  } else if (!GPU_ENV_UNLIKELY((address & 0x0280) != 0x0080)) {  // RIOT RAM (A7 set, A9 clear)
    v = c.riot.ram[address & 0x7F];
  } else {
    c.cycles = cycles;
    c.data_bus = data_bus;
    v = console_peek_io(c, fb, address);
  }
  data_bus = v;
  return v;
}

template <uint8_t kScheme>
GPU_ENV_HOT uint8_t console_bus_poke(Console& c, const uint8_t* rom, uint32_t rom_size, uint8_t* fb, uint16_t address,
                                     uint8_t value, uint8_t last_access_was_read, uint32_t& cycles, uint8_t& data_bus) {
  uint8_t status = 0;
  if (address & 0x1000) {
    console_cart_poke<kScheme>(c.cart, rom, rom_size, address, value, cycles);
  } else if (!GPU_ENV_UNLIKELY((address & 0x0280) != 0x0080)) {
    c.riot.ram[address & 0x7F] = value;
  } else {
    c.cycles = cycles;
    status = console_poke_io(c, fb, address, value, last_access_was_read);
    cycles = c.cycles;
  }
  data_bus = value;
  return status;
}

// The bus that reads and writes the console's counter and latch at every access (the game logic's RAM reads,
// the reset vector).
template <uint8_t kScheme>
struct ConsoleBusT {
  Console& c;
  const uint8_t* rom;
  uint32_t rom_size;
  uint8_t* fb;  // the TIA's current frame buffer

  GPU_ENV_HOT uint8_t peek(uint16_t address) {
    return console_bus_peek<kScheme>(c, rom, rom_size, fb, address, c.cycles, c.data_bus);
  }
  GPU_ENV_HOT uint8_t poke(uint16_t address, uint8_t value, uint8_t last_access_was_read) {
    return console_bus_poke<kScheme>(c, rom, rom_size, fb, address, value, last_access_was_read, c.cycles,
                                     c.data_bus);
  }
};

// The bus m6502_execute runs on: the counter and the latch live in the bus (the CPU loop's local copy of it keeps
// them in registers; on the host that was one read-modify-write of memory per instruction and one store per
// access) and reach the console before each TIA or RIOT access, around a poll loop, and at flush.
// F8 and F6 cartridges: the bus also keeps the selected bank's 4K of ROM (`bank_rom`). Their banks change only at
// hotspots ($xFF8-$xFF9, $xFF6-$xFF9), so a cartridge read below the scheme's first hotspot reads that 4K
// directly; the others take the long way (console_bus_peek, which switches banks as the scheme does) and read the
// bank again afterwards, as a write does.
template <uint8_t kScheme>
struct ConsoleRunBusT {
  static constexpr bool kKeepsBank = kScheme == kCartF8 || kScheme == kCartF6;
  // The first offset that may switch banks (the scheme's first hotspot; the rest of the window up to $xFFF
  // takes the long way too).
  static constexpr uint32_t kFirstHotspot =
      kScheme == kCartF8 ? static_cast<uint32_t>(kF8FirstHotspot) : static_cast<uint32_t>(kF6FirstHotspot);

  // The selected bank's 4K for F8 and F6 (rom itself for the other schemes, where it is never read).
  static GPU_ENV_HOT const uint8_t* selected_rom(const Console& c, const uint8_t* rom) {
    return kKeepsBank ? cart_bank_rom(c.cart, rom) : rom;
  }

  Console& c;
  const uint8_t* rom;
  uint32_t rom_size;
  uint8_t* fb;  // the TIA's current frame buffer
  uint32_t cycles;
  uint8_t data_bus;
  const uint8_t* bank_rom;  // selected_rom(c, rom)

  GPU_ENV_HOT uint8_t peek(uint16_t address) {
    if (kKeepsBank && (address & 0x1000)) {
      const uint32_t offset = address & kCartAddressMask;
      if (!GPU_ENV_UNLIKELY(offset >= kFirstHotspot)) {
        data_bus = bank_rom[offset];
        return data_bus;
      }
      const uint8_t v = console_bus_peek<kScheme>(c, rom, rom_size, fb, address, cycles, data_bus);
      bank_rom = selected_rom(c, rom);
      return v;
    }
    return console_bus_peek<kScheme>(c, rom, rom_size, fb, address, cycles, data_bus);
  }
  GPU_ENV_HOT uint8_t poke(uint16_t address, uint8_t value, uint8_t last_access_was_read) {
    const uint8_t status =
        console_bus_poke<kScheme>(c, rom, rom_size, fb, address, value, last_access_was_read, cycles, data_bus);
    if (kKeepsBank && (address & 0x1000)) bank_rom = selected_rom(c, rom);
    return status;
  }
  GPU_ENV_HOT void add_cycles(uint32_t n) { cycles += n; }

  GPU_ENV_HOT uint32_t poll_loop(M6502& cpu, uint32_t max_iterations) {
    c.cycles = cycles;
    const uint32_t n = console_timer_poll_loop<kScheme>(c, rom, rom_size, cpu, max_iterations);
    cycles = c.cycles;
    return n;
  }

  GPU_ENV_HOT void flush() {
    c.cycles = cycles;
    c.data_bus = data_bus;
  }
};

// The bus with run-time cartridge dispatch (any scheme).
using ConsoleBus = ConsoleBusT<kCartAnyScheme>;

// ------------------------------------------------------------------------------------------------
// Frames.

// System::resetCycles: every device rewinds its remembered cycle counts, then the counter is 0.
HD void console_reset_cycles(Console& c) {
  riot_system_cycles_reset(c.riot, c.cycles);
  tia_system_cycles_reset(c.tia, c.cycles);
  cart_system_cycles_reset(c.cart, c.cycles);
  c.cycles = 0;
}

// On the device the frame loop is one call per scheme, not inlined into its callers: ptxas then
// spends 214 s instead of 258 s on the unit (nvcc --cubin -arch=sm_90, docs/gpu_backend.md).
#if GPU_ENV_DEVICE
#define GPU_ENV_NOINLINE __noinline__
#else
#define GPU_ENV_NOINLINE
#endif

// The CPU library's build (setup.py) defines GPU_ENV_SPLIT_CPU: there each scheme's loop is compiled once,
// in its own translation unit (native/run_cpu_<scheme>.cpp, explicit instantiations), and the other
// units only call it, so the interpreter is not compiled again in every unit that runs frames and the
// units build in parallel. Other host builds (the tests' own) and the device instantiate it implicitly.
#if !GPU_ENV_DEVICE && defined(GPU_ENV_SPLIT_CPU)
#define GPU_ENV_RUN_CPU __attribute__((noinline))
#else
#define GPU_ENV_RUN_CPU GPU_ENV_NOINLINE HD
#endif

template <uint8_t kScheme>
GPU_ENV_RUN_CPU void console_run_cpu(Console& c, const uint8_t* rom, uint32_t rom_size, uint8_t* fb) {
  using Bus = ConsoleRunBusT<kScheme>;
  Bus bus{c, rom, rom_size, fb, c.cycles, c.data_bus, Bus::selected_rom(c, rom)};
  m6502_execute(c.cpu, bus, kConsoleInstructionsPerUpdate);  // flushes the bus when it returns
}

#if !GPU_ENV_DEVICE && defined(GPU_ENV_SPLIT_CPU)
#define GPU_ENV_RUN_CPU_INSTANCE(prefix, scheme) \
  prefix template void console_run_cpu<scheme>(Console&, const uint8_t*, uint32_t, uint8_t*);
GPU_ENV_RUN_CPU_INSTANCE(extern, kCart2K)
GPU_ENV_RUN_CPU_INSTANCE(extern, kCart4K)
GPU_ENV_RUN_CPU_INSTANCE(extern, kCartF8)
GPU_ENV_RUN_CPU_INSTANCE(extern, kCartF6)
GPU_ENV_RUN_CPU_INSTANCE(extern, kCartFE)
GPU_ENV_RUN_CPU_INSTANCE(extern, kCartAnyScheme)
#endif

// One ALE TIA::update() up to, not including, the grey-out of an interrupted frame; returns true when the
// frame was interrupted (console_frame_grey then completes the update). `buffers` = the environment's two
// 160 x height frame buffers; what is written into them is c.tia.draw_mode's choice (frames.h).
HD bool console_frame_run(Console& c, const uint8_t* rom, uint32_t rom_size, uint8_t* buffers) {
  if (!c.tia.partial_frame) {
    const uint32_t phase = tia_line_phase(c.tia, c.cycles);
    console_reset_cycles(c);
    tia_begin_frame(c.tia, phase);
  }
  c.tia.partial_frame = 1;
  c.tia.deferred_clock = kTiaNoDeferredClock;
  uint8_t* fb = tia_buffer(c.tia, buffers);
  switch (c.cart.scheme) {
    case kCart2K: console_run_cpu<kCart2K>(c, rom, rom_size, fb); break;
    case kCart4K: console_run_cpu<kCart4K>(c, rom, rom_size, fb); break;
    case kCartF8: console_run_cpu<kCartF8>(c, rom, rom_size, fb); break;
    case kCartF6: console_run_cpu<kCartF6>(c, rom, rom_size, fb); break;
    case kCartFE: console_run_cpu<kCartFE>(c, rom, rom_size, fb); break;
    default: console_run_cpu<kCartAnyScheme>(c, rom, rom_size, fb); break;
  }
  c.tia.current_scanline = static_cast<int32_t>(tia_scanlines(c.tia, c.cycles));
  if (c.tia.partial_frame) {
    // The picture as far as ALE had drawn it: up to the last write, even one whose update tia_poke deferred.
    tia_update_frame(c.tia, fb, c.tia.deferred_clock);
    return true;
  }
  c.tia.scanline_count_last_frame = c.tia.current_scanline;
  c.tia.frame_greyed = 0;
  return false;
}

// The end of an interrupted TIA::update(): the rows the frame has not reached are greyed out, once.
HD void console_frame_grey(Console& c, uint8_t* buffers) {
  if (!c.tia.frame_greyed) tia_grey_out(c.tia, tia_buffer(c.tia, buffers), c.cycles);
  c.tia.frame_greyed = 1;
}

// One ALE TIA::update(). `buffers` = the environment's two 160 x height frame buffers.
HD void console_frame(Console& c, const uint8_t* rom, uint32_t rom_size, uint8_t* buffers) {
  if (console_frame_run(c, rom, rom_size, buffers)) console_frame_grey(c, buffers);
}

// One frame of ALE's StellaEnvironment::emulate for players A and B: inputs, TIA::update(), then
// the RAM copy (ALE reads $80-$FF through System::peek, leaving RAM[$7F] on the data bus).
HD void console_emulate(Console& c, const uint8_t* rom, uint32_t rom_size, uint8_t* buffers, int32_t a, int32_t b) {
  console_apply_actions(c, a, b, 1.0f, 1.0f);
  console_frame(c, rom, rom_size, buffers);
  c.data_bus = c.riot.ram[127];
}
