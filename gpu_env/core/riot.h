// The 6532 RIOT (RAM, I/O, timer) as ale-py 0.12's Stella core emulates it.
//
// Facts from ALE's src/ale/emucore/M6532.cxx (the code here is our own):
// * It answers when (address & 0x1080) == 0x0080. With A9 clear the access goes to the 128 bytes of
//   RAM (address & 0x7F); with A9 set to the I/O and timer registers, decoded by address & 7 (reads)
//   or the rules in riot_poke (writes).
// * Reads of SWCHA return the controllers' lines (no DDRA masking) and of SWCHB the console
//   switches; writes to SWCHB and DDRB are ignored (DDRB stays 0), a write to DDRA is kept.
// * The timer is not clocked: a read computes it from the system cycle count. Everything uses the
//   cycle count *minus one* at the read; the "interrupt" (underflow) state is latched the first time
//   the timer is read two or more cycles past underflow, after which it counts down once per cycle
//   from where it was. The interrupt flag register reads 0x80 between underflow and that first read.
// * Integer widths follow Stella's (uint32 timer/shift and cycle counter, int32 remembered cycles) so
//   that the wrap-arounds agree when the console rewinds its cycle counter every frame.
// The fields map 1:1 onto the "M6532" block of ale-py's cloneState().
#pragma once

#include "hd.h"

enum : uint16_t {
  kRiotSelectMask = 0x1080,  // (address & mask) == kRiotSelectValue selects the RIOT
  kRiotSelectValue = 0x0080,
  kRiotIoBit = 0x0200,       // set: I/O and timer; clear: RAM
};

struct Riot {
  uint8_t ram[128];
  uint32_t timer;                       // value last written to a timer register (myTimer)
  uint8_t interval_shift;               // 0, 3, 6 or 10 (divide by 1, 8, 64, 1024)
  int32_t cycles_when_timer_set;        // system cycles at that write
  int32_t cycles_when_interrupt_reset;  // system cycles at the first read past underflow
  uint8_t timer_read_after_interrupt;   // 0/1
  uint8_t ddra, ddrb;
};

HD bool riot_selected(uint16_t address) { return (address & kRiotSelectMask) == kRiotSelectValue; }

// Power-on contents of RAM come from the caller (ALE: low bytes of the first 128 system RNG draws).
HD void riot_set_ram(Riot& riot, const uint8_t* values) {
  for (int i = 0; i < 128; ++i) riot.ram[i] = values[i];
}

// ALE's M6532::reset(): RAM is kept; random_value is the System RNG draw (mt19937 output).
HD void riot_reset(Riot& riot, uint32_t random_value) {
  riot.timer = 25 + (random_value % 75);
  riot.interval_shift = 6;
  riot.cycles_when_timer_set = 0;
  riot.cycles_when_interrupt_reset = 0;
  riot.timer_read_after_interrupt = 0;
  riot.ddra = 0;
  riot.ddrb = 0;
}

// The console is about to set its system cycle counter back to 0 (start of a frame); it had
// counted cycles_before_reset.
HD void riot_system_cycles_reset(Riot& riot, uint32_t cycles_before_reset) {
  riot.cycles_when_timer_set =
      static_cast<int32_t>(static_cast<uint32_t>(riot.cycles_when_timer_set) - cycles_before_reset);
  riot.cycles_when_interrupt_reset =
      static_cast<int32_t>(static_cast<uint32_t>(riot.cycles_when_interrupt_reset) - cycles_before_reset);
}

// Timer before underflow: myTimer - (delta >> shift) - 1, in Stella's int arithmetic.
HD int32_t riot_timer_count(const Riot& riot, uint32_t system_cycles, uint32_t* delta_out) {
  const uint32_t cycles = system_cycles - 1;
  const uint32_t delta = cycles - static_cast<uint32_t>(riot.cycles_when_timer_set);
  *delta_out = delta;
  return static_cast<int32_t>(riot.timer - (delta >> riot.interval_shift) - 1u);
}

// True for the addresses that read INTIM (the RIOT's I/O registers 4 and 6, every mirror).
HD bool riot_reads_intim(uint16_t address) {
  return riot_selected(address) && (address & kRiotIoBit) && (address & 0x05) == 0x04;
}

// How many of the reads at system cycles first + i * period (i = 0, 1, ..., at most max_reads) find the
// timer at 1 or more before its underflow. Such reads change nothing (riot_read_timer), so a caller may
// skip them; *last receives the value the last of them reads (unchanged when there are none).
HD uint32_t riot_reads_above_zero(const Riot& riot, uint32_t first, uint32_t period, uint32_t max_reads,
                                  uint8_t* last) {
  if (riot.timer < 2 || max_reads == 0) return 0;
  uint32_t delta = 0;
  riot_timer_count(riot, first, &delta);
  const uint32_t last_reading_one = ((riot.timer - 1u) << riot.interval_shift) - 1u;  // largest such delta
  if (delta > last_reading_one) return 0;
  uint32_t n = (last_reading_one - delta) / period + 1u;
  if (n > max_reads) n = max_reads;
  *last = static_cast<uint8_t>(riot_timer_count(riot, first + (n - 1u) * period, &delta));
  return n;
}

HD uint8_t riot_read_timer(Riot& riot, uint32_t system_cycles) {
  uint32_t delta = 0;
  const int32_t count = riot_timer_count(riot, system_cycles, &delta);
  if (count >= 0) return static_cast<uint8_t>(count);
  const int32_t past = static_cast<int32_t>((riot.timer << riot.interval_shift) - delta - 1u);
  if (past <= -2 && !riot.timer_read_after_interrupt) {
    riot.timer_read_after_interrupt = 1;
    riot.cycles_when_interrupt_reset = static_cast<int32_t>(system_cycles);
  }
  if (riot.timer_read_after_interrupt) {
    const int32_t offset = static_cast<int32_t>(
        static_cast<uint32_t>(riot.cycles_when_interrupt_reset) -
        (static_cast<uint32_t>(riot.cycles_when_timer_set) + (riot.timer << riot.interval_shift)));
    return static_cast<uint8_t>(riot.timer - (delta >> riot.interval_shift) - static_cast<uint32_t>(offset));
  }
  return static_cast<uint8_t>(past);
}

// A read anywhere the RIOT answers (see riot_selected). swcha_in: joystick/paddle-button lines
// (left controller in bits 7..4, right in 3..0, 1 = not pressed); swchb_in: console switches.
HD uint8_t riot_peek(Riot& riot, uint16_t address, uint32_t system_cycles, uint8_t swcha_in,
                     uint8_t swchb_in) {
  if (!(address & kRiotIoBit)) return riot.ram[address & 0x7F];
  switch (address & 0x07) {
    case 0x00: return swcha_in;
    case 0x01: return riot.ddra;
    case 0x02: return swchb_in;
    case 0x03: return riot.ddrb;
    case 0x04:
    case 0x06: return riot_read_timer(riot, system_cycles);
    default: {  // 0x05, 0x07: interrupt flag
      uint32_t delta = 0;
      const int32_t count = riot_timer_count(riot, system_cycles, &delta);
      return (count >= 0 || riot.timer_read_after_interrupt) ? 0x00 : 0x80;
    }
  }
}

// A write anywhere the RIOT answers. Writes to SWCHA reach the controllers, which (joysticks and
// paddles) ignore them; SWCHB and DDRB writes are ignored as in Stella.
HD void riot_poke(Riot& riot, uint16_t address, uint8_t value, uint32_t system_cycles) {
  if (!(address & kRiotIoBit)) {
    riot.ram[address & 0x7F] = value;
    return;
  }
  const uint16_t reg = address & 0x07;
  if (reg == 0x01) {
    riot.ddra = value;
  } else if (reg == 0x00 || reg == 0x02 || reg == 0x03) {
    return;
  } else if ((address & 0x17) >= 0x14) {  // TIM1T, TIM8T, TIM64T, T1024T
    const uint8_t shifts[4] = {0, 3, 6, 10};
    riot.timer = value;
    riot.interval_shift = shifts[address & 0x03];
    riot.cycles_when_timer_set = static_cast<int32_t>(system_cycles);
    riot.timer_read_after_interrupt = 0;
  }
  // Otherwise: edge-detect control ((address & 0x14) == 0x04), which Stella ignores.
}
