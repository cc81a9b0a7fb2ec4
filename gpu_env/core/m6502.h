// The 6502/6507 CPU exactly as ale-py 0.12 runs it by default (Stella's "low compatibility" core).
// Its parts: m6502_state.h (registers, flags, reset), m6502_decode.h (the opcode table, built at compile time),
// m6502_operate.h (one instruction's work after its opcode fetch); this file runs them: one step, and the loop
// ALE's execute(n) is.
//
// What "as ale-py" means here (facts read from ALE's low-compatibility 6502 core in src/ale/emucore; the
// code below is our own):
// * All of an instruction's table cycles are charged right after the opcode fetch, before any operand
//   access; +1 cycle for a page crossing of an indexed READ (abs,X / abs,Y / (zp),Y), +1 for a taken
//   branch and +2 when it lands in another page. The CPU never counts cycles itself: it calls
//   `bus.add_cycles(n)`.
// * Memory accesses: no dummy reads on indexed modes or one-byte instructions, one write per
//   read-modify-write, BRK's padding read, the dummy stack read of JSR/RTS/RTI/PLA/PLP and RTS's final
//   read of the return address are kept.
// * (zp,X) and (zp),Y fetch the pointer's high byte from pointer + 1 without wrapping to page zero
//   ($FF -> $0100); JMP (ind) keeps the NMOS page-wrap bug.
// * Decimal mode is table driven: operands become hi*10+lo, the binary result is converted back; N/Z
//   from the converted result; V and C as Stella computes them (not the NMOS adder).
// * JAM opcodes set the fatal status bit; a fatal CPU executes nothing until it is reset.
// * The status byte always reads with bits 4 and 5 set (B is stuck at 1: PLP/RTI cannot clear it).
// * The data-bus latch (last value peeked or poked) is the Bus's business, not the CPU's.
//
// Bus requirements (any struct with these members):
//   HD uint8_t peek(uint16_t address);
//   HD uint8_t poke(uint16_t address, uint8_t value, uint8_t last_access_was_read);
//   HD void    add_cycles(uint32_t cycles);
//   HD uint32_t poll_loop(M6502& cpu, uint32_t max_iterations);
//   HD void    flush();   (m6502_execute only: called once as it returns, to store what the bus kept in registers)
// poll_loop is called right after a BNE has branched back 5 bytes, the shape of a two-instruction poll
// loop (`LDA abs` / `BNE` back to it). The bus may run up to max_iterations further iterations of the
// loop at once, leaving every register, flag and cycle as running them one by one would, and returns how
// many it ran (two instructions each). Returning 0 is always correct.
// poke is told whether the CPU's access before this write was a read (the TIA's WSYNC depends on it) and
// returns the status bits the write sets in the CPU (kM6502StatusStop when the TIA halts it), so the bus
// never reaches into the CPU's registers and the CPU may keep them in locals (m6502_execute).
#pragma once

#include "hd.h"
#include "m6502_decode.h"
#include "m6502_operate.h"
#include "m6502_state.h"

#if !GPU_ENV_DEVICE
namespace m6502_detail {
template <int Opcode>
struct OpConst {
  static constexpr OpInfo kInfo = OpTableHost::kTable.entry[Opcode];
};
}  // namespace m6502_detail
#define M6502_CASE(n)                                                    \
  case n:                                                                \
    m6502_operate(cpu, bus, m6502_detail::OpConst<n>::kInfo);            \
    break;
#define M6502_CASE4(n) M6502_CASE(n) M6502_CASE(n + 1) M6502_CASE(n + 2) M6502_CASE(n + 3)
#define M6502_CASE16(n) M6502_CASE4(n) M6502_CASE4(n + 4) M6502_CASE4(n + 8) M6502_CASE4(n + 12)
#define M6502_CASE64(n) M6502_CASE16(n) M6502_CASE16(n + 16) M6502_CASE16(n + 32) M6502_CASE16(n + 48)
#endif

// Execute ONE instruction exactly as ale-py's default ("low") CPU does. A CPU whose status has the fatal bit
// set does nothing. The stop bit is not consulted here (see m6502_execute).
template <class Bus>
M6502_BUS_INLINE void m6502_step(M6502& cpu, Bus& bus) {
  if (cpu.status & kM6502StatusFatal) return;
  const uint8_t opcode = m6502_read(cpu, bus, cpu.pc);
  cpu.pc = static_cast<uint16_t>(cpu.pc + 1);
  cpu.ir = opcode;
#if GPU_ENV_DEVICE
  m6502_operate(cpu, bus, m6502_detail::op_info(opcode));
#else
  switch (opcode) {
    M6502_CASE64(0)
    M6502_CASE64(64)
    M6502_CASE64(128)
    M6502_CASE64(192)
  }
#endif
}

// ALE's M6502::execute(n): clears every status bit but the fatal one, then runs instructions until
// n have run, the stop bit is set (by the bus, e.g. the TIA ending a frame) or a JAM is hit.
// Returns the number of instructions executed; false-y status checks are the caller's.
//
// On the host the loop is threaded code (GNU labels as values): each of the 256 opcodes' bodies ends
// with its own copy of the loop test, the next opcode fetch and an indirect jump to that opcode's
// body, so the branch predictor learns each jump from the instruction before it instead of sharing
// one indirect branch among all of them (perf: a third of the interpreter's samples sat on the shared
// dispatch). Only BNE's body looks for a timer poll loop. The instructions, bus accesses and their
// order are those of the loop over m6502_step below, which the device runs.
// The host also runs on local copies of the registers and of the bus handle (a Bus passed to m6502_execute
// must be a handle: its copies act on the same state). Every byte the bus stores may alias anything
// reachable through a reference, so with `cpu` and `bus` behind references the compiler reloaded the PC,
// the registers and the bus's pointers from memory after each store; locals whose address is never taken
// stay in registers. The registers are written back when the loop returns; the poll-loop call works on
// a copy of its own, so the locals' addresses never escape.
template <class Bus>
HD uint32_t m6502_execute(M6502& cpu_state, Bus& bus_handle, uint32_t max_instructions) {
  cpu_state.status &= kM6502StatusFatal;
#if GPU_ENV_DEVICE
  uint32_t executed = 0;
  M6502& cpu = cpu_state;
  Bus& bus = bus_handle;
  while (!cpu.status && executed < max_instructions) {
    const uint16_t pc = cpu.pc;
    m6502_step(cpu, bus);
    ++executed;
    if (cpu.ir == 0xD0 && cpu.pc == static_cast<uint16_t>(pc - 3) && !cpu.status) {
      executed += 2u * bus.poll_loop(cpu, (max_instructions - executed) / 2u);
    }
  }
  bus.flush();
  return executed;
#else
  M6502 cpu = cpu_state;
  Bus bus = bus_handle;
#define M6502_LABEL(h, l) &&op_##h##l,
#define M6502_LABEL_ROW(h)                                                                                       \
  M6502_LABEL(h, 0) M6502_LABEL(h, 1) M6502_LABEL(h, 2) M6502_LABEL(h, 3) M6502_LABEL(h, 4) M6502_LABEL(h, 5)  \
  M6502_LABEL(h, 6) M6502_LABEL(h, 7) M6502_LABEL(h, 8) M6502_LABEL(h, 9) M6502_LABEL(h, A) M6502_LABEL(h, B)  \
  M6502_LABEL(h, C) M6502_LABEL(h, D) M6502_LABEL(h, E) M6502_LABEL(h, F)
  static const void* const kBody[256] = {
      M6502_LABEL_ROW(0) M6502_LABEL_ROW(1) M6502_LABEL_ROW(2) M6502_LABEL_ROW(3)
      M6502_LABEL_ROW(4) M6502_LABEL_ROW(5) M6502_LABEL_ROW(6) M6502_LABEL_ROW(7)
      M6502_LABEL_ROW(8) M6502_LABEL_ROW(9) M6502_LABEL_ROW(A) M6502_LABEL_ROW(B)
      M6502_LABEL_ROW(C) M6502_LABEL_ROW(D) M6502_LABEL_ROW(E) M6502_LABEL_ROW(F)};
  uint16_t pc;
  // The loop counts down the instructions it may still run (one counter, tested against 0). The status is
  // tested where it can have changed: on entry (a fatal CPU runs nothing) and after the bodies of the
  // instructions that may set it (m6502_detail::may_set_status); every other body starts and ends with it 0.
  uint32_t remaining = max_instructions;
  // m6502_step's fetch (a fatal status never gets here: it stops the loop), then the opcode's body. The last
  // opcode (cpu.ir) is stored as the loop returns, from the body it returns from (`last_opcode`; -1 before any
  // body ran): nothing in a body reads it, and a store per instruction was 4 % of the loop's instructions.
#define M6502_DISPATCH(check_status, last_opcode)                             \
  if ((check_status && cpu.status) || remaining == 0) {                     \
    if (last_opcode >= 0) cpu.ir = static_cast<uint8_t>(last_opcode);         \
    cpu_state = cpu;                                                          \
    bus.flush();                                                              \
    return max_instructions - remaining;                                      \
  }                                                                           \
  pc = cpu.pc;                                                                \
  {                                                                           \
    const uint8_t opcode = m6502_read(cpu, bus, pc);                          \
    cpu.pc = static_cast<uint16_t>(pc + 1);                                   \
    goto* kBody[opcode];                                                      \
  }
// (BNE sets no status, so the status is 0 in its body: no test before the poll loop.)
#define M6502_BODY(h, l)                                                                               \
  op_##h##l:                                                                                           \
  m6502_operate(cpu, bus, m6502_detail::OpConst<0x##h##l>::kInfo);                                     \
  --remaining;                                                                                         \
  if (0x##h##l == 0xD0 && cpu.pc == static_cast<uint16_t>(pc - 3)) {                                   \
    M6502 view = cpu;                                                                                  \
    remaining -= 2u * bus.poll_loop(view, remaining / 2u);                                             \
    cpu = view;                                                                                        \
  }                                                                                                    \
  M6502_DISPATCH(m6502_detail::may_set_status(m6502_detail::OpConst<0x##h##l>::kInfo), 0x##h##l)
#define M6502_BODY_ROW(h)                                                                                \
  M6502_BODY(h, 0) M6502_BODY(h, 1) M6502_BODY(h, 2) M6502_BODY(h, 3) M6502_BODY(h, 4) M6502_BODY(h, 5)  \
  M6502_BODY(h, 6) M6502_BODY(h, 7) M6502_BODY(h, 8) M6502_BODY(h, 9) M6502_BODY(h, A) M6502_BODY(h, B)  \
  M6502_BODY(h, C) M6502_BODY(h, D) M6502_BODY(h, E) M6502_BODY(h, F)
  M6502_DISPATCH(true, -1)
  M6502_BODY_ROW(0) M6502_BODY_ROW(1) M6502_BODY_ROW(2) M6502_BODY_ROW(3)
  M6502_BODY_ROW(4) M6502_BODY_ROW(5) M6502_BODY_ROW(6) M6502_BODY_ROW(7)
  M6502_BODY_ROW(8) M6502_BODY_ROW(9) M6502_BODY_ROW(A) M6502_BODY_ROW(B)
  M6502_BODY_ROW(C) M6502_BODY_ROW(D) M6502_BODY_ROW(E) M6502_BODY_ROW(F)
#undef M6502_BODY_ROW
#undef M6502_BODY
#undef M6502_DISPATCH
#undef M6502_LABEL_ROW
#undef M6502_LABEL
#endif
}
