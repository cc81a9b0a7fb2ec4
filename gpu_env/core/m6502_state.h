// The 6502's registers and flags, and its reset (m6502.h says which CPU this is: ale-py's default core).
#pragma once

#include "hd.h"

// Execution status bits (same bit values as ALE's M6502 executionStatus, which cloneState stores).
enum : uint8_t {
  kM6502StatusStop = 0x01,   // the TIA asked the CPU to stop at the end of the current instruction
  kM6502StatusFatal = 0x02,  // a JAM opcode was executed: nothing more runs until m6502_reset
};

struct M6502 {
  uint8_t a, x, y, sp;
  // Stella-style flags, each 0 or 1; notz is the complement of Z.
  uint8_t n, v, b, d, i, notz, c;
  uint16_t pc;
  uint8_t ir;      // last opcode fetched
  uint8_t status;  // kM6502Status* bits
  // 1 when the CPU's last memory access was a read (Stella's myLastAccessWasRead; the TIA's WSYNC
  // consults it during the write itself, i.e. before this field is updated for that write).
  uint8_t last_access_was_read;
};

// ------------------------------------------------------------------------------------------------
// Status register packing.

HD uint8_t m6502_get_p(const M6502& cpu) {
  return static_cast<uint8_t>(0x20 | (cpu.n << 7) | (cpu.v << 6) | (cpu.b << 4) | (cpu.d << 3) |
                              (cpu.i << 2) | ((cpu.notz ? 0 : 1) << 1) | cpu.c);
}

// Load flags from a status byte. As in ale-py, B cannot be cleared (the 6507's B always reads 1).
HD void m6502_set_p(M6502& cpu, uint8_t p) {
  cpu.n = (p >> 7) & 1;
  cpu.v = (p >> 6) & 1;
  cpu.b = 1;
  cpu.d = (p >> 3) & 1;
  cpu.i = (p >> 2) & 1;
  cpu.notz = ((p >> 1) & 1) ? 0 : 1;
  cpu.c = p & 1;
}

// Power-on / console reset: A=X=Y=0, SP=$FF, all flags 0 except B, status cleared, PC = reset vector.
HD void m6502_reset(M6502& cpu, uint16_t reset_vector) {
  cpu.a = cpu.x = cpu.y = 0;
  cpu.sp = 0xFF;
  m6502_set_p(cpu, 0x20);
  cpu.status = 0;
  cpu.last_access_was_read = 1;
  cpu.pc = reset_vector;
  cpu.ir = 0;
}

// Same, reading the vector through the bus ($FFFC then $FFFD), as ALE does after the devices reset.
template <class Bus>
HD void m6502_reset_from_bus(M6502& cpu, Bus& bus) {
  const uint16_t lo = bus.peek(0xFFFC);
  const uint16_t hi = bus.peek(0xFFFD);
  m6502_reset(cpu, static_cast<uint16_t>(lo | (hi << 8)));
}
