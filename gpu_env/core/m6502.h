// The 6502/6507 CPU exactly as ale-py 0.12 runs it by default (Stella's "low compatibility" core).
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

// ------------------------------------------------------------------------------------------------
// Decoding: each opcode is an (addressing mode, operation) pair, derived from the opcode's bit fields
// aaa bbb cc; the derivation runs at compile time into a 256-entry table (op_info below).

namespace m6502_detail {

enum Mode : uint8_t {
  kImplied,    // also accumulator; stack and flag instructions
  kImmediate,  // also the branch offset
  kZero,
  kZeroX,
  kZeroY,
  kAbsolute,
  kAbsoluteX,
  kAbsoluteY,
  kIndirectX,
  kIndirectY,
  kIndirect,  // JMP ($nnnn)
  kSpecial,   // BRK and JSR do their own fetches
};

enum Op : uint8_t {
  // documented
  kADC, kAND, kASL, kASLA, kBCC, kBCS, kBEQ, kBIT, kBMI, kBNE, kBPL, kBRK, kBVC, kBVS, kCLC, kCLD,
  kCLI, kCLV, kCMP, kCPX, kCPY, kDEC, kDEX, kDEY, kEOR, kINC, kINX, kINY, kJMP, kJSR, kLDA, kLDX,
  kLDY, kLSR, kLSRA, kNOP, kORA, kPHA, kPHP, kPLA, kPLP, kROL, kROLA, kROR, kRORA, kRTI, kRTS,
  kSBC, kSEC, kSED, kSEI, kSTA, kSTX, kSTY, kTAX, kTAY, kTSX, kTXA, kTXS, kTYA,
  // undocumented
  kANC, kANE, kARR, kASR, kDCP, kISB, kLAS, kLAX, kLXA, kRLA, kRRA, kSAX, kSBX, kSHA, kSHS, kSHX,
  kSHY, kSLO, kSRE,
  kJAM,
};

// How an operation uses its effective address.
enum Access : uint8_t { kRead, kWrite, kModify, kNone };

struct Decoded {
  uint8_t mode;
  uint8_t op;
};

HD constexpr Decoded make(uint8_t mode, uint8_t op) {
  Decoded d{mode, op};
  return d;
}

// Operand addressing for the cc=01 / cc=11 column families, by bbb.
HD constexpr uint8_t group_mode(uint8_t bbb) {
  switch (bbb) {
    case 0: return kIndirectX;
    case 1: return kZero;
    case 2: return kImmediate;
    case 3: return kAbsolute;
    case 4: return kIndirectY;
    case 5: return kZeroX;
    case 6: return kAbsoluteY;
    default: return kAbsoluteX;
  }
}

HD constexpr Decoded decode_cc0(uint8_t aaa, uint8_t bbb) {
  switch (bbb) {
    case 0: {
      switch (aaa) {
        case 0: return make(kSpecial, kBRK);
        case 1: return make(kSpecial, kJSR);
        case 2: return make(kImplied, kRTI);
        case 3: return make(kImplied, kRTS);
        case 4: return make(kImmediate, kNOP);
        case 5: return make(kImmediate, kLDY);
        case 6: return make(kImmediate, kCPY);
        default: return make(kImmediate, kCPX);
      }
    }
    case 1: {
      switch (aaa) {
        case 1: return make(kZero, kBIT);
        case 4: return make(kZero, kSTY);
        case 5: return make(kZero, kLDY);
        case 6: return make(kZero, kCPY);
        case 7: return make(kZero, kCPX);
        default: return make(kZero, kNOP);
      }
    }
    case 2: {
      const uint8_t ops[8] = {kPHP, kPLP, kPHA, kPLA, kDEY, kTAY, kINY, kINX};
      return make(kImplied, ops[aaa]);
    }
    case 3: {
      switch (aaa) {
        case 0: return make(kAbsolute, kNOP);
        case 1: return make(kAbsolute, kBIT);
        case 2: return make(kAbsolute, kJMP);
        case 3: return make(kIndirect, kJMP);
        case 4: return make(kAbsolute, kSTY);
        case 5: return make(kAbsolute, kLDY);
        case 6: return make(kAbsolute, kCPY);
        default: return make(kAbsolute, kCPX);
      }
    }
    case 4: {
      const uint8_t ops[8] = {kBPL, kBMI, kBVC, kBVS, kBCC, kBCS, kBNE, kBEQ};
      return make(kImmediate, ops[aaa]);
    }
    case 5: {
      if (aaa == 4) return make(kZeroX, kSTY);
      if (aaa == 5) return make(kZeroX, kLDY);
      return make(kZeroX, kNOP);
    }
    case 6: {
      const uint8_t ops[8] = {kCLC, kSEC, kCLI, kSEI, kTYA, kCLV, kCLD, kSED};
      return make(kImplied, ops[aaa]);
    }
    default: {
      if (aaa == 4) return make(kAbsoluteX, kSHY);
      if (aaa == 5) return make(kAbsoluteX, kLDY);
      return make(kAbsoluteX, kNOP);
    }
  }
}

HD constexpr Decoded decode_cc1(uint8_t aaa, uint8_t bbb) {
  const uint8_t ops[8] = {kORA, kAND, kEOR, kADC, kSTA, kLDA, kCMP, kSBC};
  if (aaa == 4 && bbb == 2) return make(kImmediate, kNOP);  // $89
  return make(group_mode(bbb), ops[aaa]);
}

HD constexpr Decoded decode_cc2(uint8_t aaa, uint8_t bbb) {
  // Shift/increment column: ASL ROL LSR ROR STX LDX DEC INC.
  const uint8_t mem_ops[8] = {kASL, kROL, kLSR, kROR, kSTX, kLDX, kDEC, kINC};
  switch (bbb) {
    case 0:
      if (aaa == 5) return make(kImmediate, kLDX);
      if (aaa >= 4) return make(kImmediate, kNOP);  // $82 $C2 $E2
      return make(kImplied, kJAM);                   // $02 $22 $42 $62
    case 1: return make(kZero, mem_ops[aaa]);
    case 2: {
      const uint8_t ops[8] = {kASLA, kROLA, kLSRA, kRORA, kTXA, kTAX, kDEX, kNOP};
      return make(kImplied, ops[aaa]);
    }
    case 3: return make(kAbsolute, mem_ops[aaa]);
    case 4: return make(kImplied, kJAM);  // $12 $32 ... $F2
    case 5: return make((aaa == 4 || aaa == 5) ? kZeroY : kZeroX, mem_ops[aaa]);
    case 6: {
      if (aaa == 4) return make(kImplied, kTXS);
      if (aaa == 5) return make(kImplied, kTSX);
      return make(kImplied, kNOP);
    }
    default:
      if (aaa == 4) return make(kAbsoluteY, kSHX);
      if (aaa == 5) return make(kAbsoluteY, kLDX);
      return make(kAbsoluteX, mem_ops[aaa]);
  }
}

HD constexpr Decoded decode_cc3(uint8_t aaa, uint8_t bbb) {
  if (bbb == 2) {
    const uint8_t ops[8] = {kANC, kANC, kASR, kARR, kANE, kLXA, kSBX, kSBC};
    return make(kImmediate, ops[aaa]);
  }
  if (aaa == 4) {  // SAX family: $83 $87 $8F $97 (zp,Y), and the SH* stores
    switch (bbb) {
      case 4: return make(kIndirectY, kSHA);
      case 5: return make(kZeroY, kSAX);
      case 6: return make(kAbsoluteY, kSHS);
      case 7: return make(kAbsoluteY, kSHA);
      default: return make(group_mode(bbb), kSAX);
    }
  }
  if (aaa == 5) {  // LAX family, plus LAS
    switch (bbb) {
      case 5: return make(kZeroY, kLAX);
      case 6: return make(kAbsoluteY, kLAS);
      case 7: return make(kAbsoluteY, kLAX);
      default: return make(group_mode(bbb), kLAX);
    }
  }
  const uint8_t ops[8] = {kSLO, kRLA, kSRE, kRRA, kSAX, kLAX, kDCP, kISB};
  return make(group_mode(bbb), ops[aaa]);
}

HD constexpr Decoded decode(uint8_t opcode) {
  const uint8_t aaa = opcode >> 5;
  const uint8_t bbb = (opcode >> 2) & 7;
  switch (opcode & 3) {
    case 0: return decode_cc0(aaa, bbb);
    case 1: return decode_cc1(aaa, bbb);
    case 2: return decode_cc2(aaa, bbb);
    default: return decode_cc3(aaa, bbb);
  }
}

HD constexpr uint8_t access_of(uint8_t op) {
  switch (op) {
    case kSTA: case kSTX: case kSTY: case kSAX: case kSHA: case kSHS: case kSHX: case kSHY:
    case kJMP:
      return kWrite;  // address only, no operand read
    case kASL: case kLSR: case kROL: case kROR: case kINC: case kDEC: case kSLO: case kRLA:
    case kSRE: case kRRA: case kDCP: case kISB:
      return kModify;
    case kBRK: case kJSR: case kJAM:
      return kNone;
    default:
      return kRead;
  }
}

// Cycles ale-py's table charges for an instruction (before page-crossing and branch penalties).
// Standard NMOS counts, except that ale-py charges 4 for LAX zp ($A7).
HD constexpr uint32_t base_cycles(uint8_t mode, uint8_t op, uint8_t access) {
  switch (mode) {
    case kImplied:
      switch (op) {
        case kPHA: case kPHP: return 3;
        case kPLA: case kPLP: return 4;
        case kRTS: case kRTI: return 6;
        default: return 2;  // includes JAM
      }
    case kImmediate: return 2;
    case kZero:
      if (op == kLAX) return 4;
      return access == kModify ? 5 : 3;
    case kZeroX: case kZeroY: return access == kModify ? 6 : 4;
    case kAbsolute:
      if (op == kJMP) return 3;
      return access == kModify ? 6 : 4;
    case kAbsoluteX: case kAbsoluteY:
      return access == kModify ? 7 : (access == kWrite ? 5 : 4);
    case kIndirectX: return access == kModify ? 8 : 6;
    case kIndirectY: return access == kModify ? 8 : (access == kWrite ? 6 : 5);
    case kIndirect: return 5;
    default: return 7;  // BRK; JSR is 6 (handled by the caller)
  }
}

// Everything the step needs from an opcode, derived once per opcode (at compile time) from the
// bit-field decoding above: addressing mode, operation, access kind and the table cycle count.
struct OpInfo {
  uint8_t mode, op, access, cycles;
};

struct OpTable {
  OpInfo entry[256];
};

HD constexpr OpTable build_op_table() {
  OpTable table{};
  for (int opcode = 0; opcode < 256; ++opcode) {
    const Decoded dec = decode(static_cast<uint8_t>(opcode));
    const uint8_t access = access_of(dec.op);
    const uint32_t cycles = dec.op == kJSR ? 6u : base_cycles(dec.mode, dec.op, access);
    table.entry[opcode] = OpInfo{dec.mode, dec.op, access, static_cast<uint8_t>(cycles)};
  }
  return table;
}

// The host reads a constexpr table; device code reads a __constant__ copy of the same values.
struct OpTableHost {
  static constexpr OpTable kTable = build_op_table();
};
#if GPU_ENV_DEVICE
__constant__ const OpTable kOpTableDevice = build_op_table();
#endif

HD OpInfo op_info(uint8_t opcode) {
#if defined(__CUDA_ARCH__)
  return kOpTableDevice.entry[opcode];
#else
  return OpTableHost::kTable.entry[opcode];
#endif
}

// ale-py's decimal tables: packed BCD byte -> hi*10+lo (0..165), and 0..255 -> packed BCD of t % 100.
HD int bcd_to_bin(int t) { return ((t >> 4) & 0x0F) * 10 + (t & 0x0F); }
HD uint8_t bin_to_bcd_index(int t) {
  // Stella indexes its [2][256] table with the decimal difference; a negative index (possible only
  // with invalid BCD digits) lands in the preceding row, i.e. the BCD->binary table at 256 + t.
  if (t < 0) return static_cast<uint8_t>(bcd_to_bin(256 + t));
  return static_cast<uint8_t>((((t % 100) / 10) << 4) | (t % 10));
}

HD uint8_t same_page_penalty(uint16_t a, uint16_t b) { return ((a ^ b) & 0xFF00) ? 1 : 0; }

}  // namespace m6502_detail

// ------------------------------------------------------------------------------------------------
// Bus access wrappers that keep last_access_was_read up to date.

// On the host the wrappers (and so the Bus's peek/poke) are forced inline into m6502_step, and the
// step into m6502_execute's loop: g++ otherwise keeps them as out-of-line calls (measured 15-20% of
// the console's run time). Device code keeps HD (forcing it there made cicc run out of memory).
#if GPU_ENV_DEVICE
#define M6502_BUS_INLINE HD
#else
#define M6502_BUS_INLINE inline __attribute__((always_inline))
#endif

template <class Bus>
M6502_BUS_INLINE uint8_t m6502_read(M6502& cpu, Bus& bus, uint16_t address) {
  const uint8_t value = bus.peek(address);
  cpu.last_access_was_read = 1;
  return value;
}

template <class Bus>
M6502_BUS_INLINE void m6502_write(M6502& cpu, Bus& bus, uint16_t address, uint8_t value) {
  cpu.status |= bus.poke(address, value, cpu.last_access_was_read);
  cpu.last_access_was_read = 0;
}

// Binary or table-driven decimal addition of `operand` to A with carry (ADC, and the adder of RRA).
HD void m6502_add(M6502& cpu, uint8_t operand) {
  using namespace m6502_detail;
  const uint8_t old_a = cpu.a;
  if (!cpu.d) {
    const int signed_sum = static_cast<int8_t>(cpu.a) + static_cast<int8_t>(operand) + cpu.c;
    cpu.v = (signed_sum > 127 || signed_sum < -128) ? 1 : 0;
    const int sum = cpu.a + operand + cpu.c;
    cpu.a = static_cast<uint8_t>(sum);
    cpu.c = sum > 0xFF ? 1 : 0;
  } else {
    const int sum = bcd_to_bin(cpu.a) + bcd_to_bin(operand) + cpu.c;
    cpu.c = sum > 99 ? 1 : 0;
    cpu.a = bin_to_bcd_index(sum & 0xFF);
    cpu.v = (((old_a ^ cpu.a) & 0x80) && ((cpu.a ^ operand) & 0x80)) ? 1 : 0;
  }
  cpu.notz = cpu.a ? 1 : 0;
  cpu.n = cpu.a >> 7;
}

// Binary or table-driven decimal subtraction (SBC, and the subtractor of ISB).
HD void m6502_sub(M6502& cpu, uint8_t operand) {
  using namespace m6502_detail;
  const uint8_t old_a = cpu.a;
  if (!cpu.d) {
    m6502_add(cpu, static_cast<uint8_t>(~operand));
    return;
  }
  const int borrow = cpu.c ? 0 : 1;
  int difference = bcd_to_bin(cpu.a) - bcd_to_bin(operand) - borrow;
  if (difference < 0) difference += 100;
  cpu.a = bin_to_bcd_index(difference);
  cpu.notz = cpu.a ? 1 : 0;
  cpu.n = cpu.a >> 7;
  cpu.c = (old_a >= operand + borrow) ? 1 : 0;
  cpu.v = (((old_a ^ cpu.a) & 0x80) && ((cpu.a ^ operand) & 0x80)) ? 1 : 0;
}

HD void m6502_compare(M6502& cpu, uint8_t reg, uint8_t operand) {
  const uint16_t value = static_cast<uint16_t>(reg - operand);
  cpu.notz = (value & 0xFF) ? 1 : 0;
  cpu.n = (value >> 7) & 1;
  cpu.c = (value & 0x100) ? 0 : 1;
}

HD void m6502_set_nz(M6502& cpu, uint8_t value) {
  cpu.notz = value ? 1 : 0;
  cpu.n = value >> 7;
}

// m6502_operate does the work of one instruction after its opcode fetch, given the opcode's decoded
// OpInfo. On the device it is called with the table entry (one copy of the code). On the host,
// m6502_step switches over the 256 opcodes and calls it with a compile-time entry per case, so the
// compiler folds the addressing-mode and operation switches away: one indirect branch per
// instruction instead of three (same code, same semantics; measured 1.3-1.5x on the CPU).
template <class Bus>
M6502_BUS_INLINE void m6502_operate(M6502& cpu, Bus& bus, const m6502_detail::OpInfo dec) {
  using namespace m6502_detail;
  const uint8_t access = dec.access;
  bus.add_cycles(dec.cycles);

  // ---- effective address and operand
  uint16_t address = 0;
  uint8_t operand = 0;
  bool indexed_read_crosses = false;
  switch (dec.mode) {
    case kImmediate:
      address = cpu.pc;
      cpu.pc = static_cast<uint16_t>(cpu.pc + 1);
      break;
    case kZero:
      address = m6502_read(cpu, bus, cpu.pc);
      cpu.pc = static_cast<uint16_t>(cpu.pc + 1);
      break;
    case kZeroX:
    case kZeroY: {
      const uint8_t index = dec.mode == kZeroX ? cpu.x : cpu.y;
      address = static_cast<uint8_t>(m6502_read(cpu, bus, cpu.pc) + index);
      cpu.pc = static_cast<uint16_t>(cpu.pc + 1);
      break;
    }
    case kAbsolute:
    case kAbsoluteX:
    case kAbsoluteY:
    case kIndirect: {
      const uint16_t lo = m6502_read(cpu, bus, cpu.pc);
      const uint16_t hi = m6502_read(cpu, bus, static_cast<uint16_t>(cpu.pc + 1));
      cpu.pc = static_cast<uint16_t>(cpu.pc + 2);
      address = static_cast<uint16_t>(lo | (hi << 8));
      if (dec.mode == kAbsoluteX || dec.mode == kAbsoluteY) {
        const uint16_t indexed =
            static_cast<uint16_t>(address + (dec.mode == kAbsoluteX ? cpu.x : cpu.y));
        indexed_read_crosses = same_page_penalty(address, indexed) != 0;
        address = indexed;
      } else if (dec.mode == kIndirect) {
        // NMOS bug kept by ale-py: the pointer's high byte comes from the same page.
        const uint16_t high_at = same_page_penalty(address, static_cast<uint16_t>(address + 1))
                                     ? static_cast<uint16_t>(address & 0xFF00)
                                     : static_cast<uint16_t>(address + 1);
        const uint16_t target_lo = m6502_read(cpu, bus, address);
        const uint16_t target_hi = m6502_read(cpu, bus, high_at);
        address = static_cast<uint16_t>(target_lo | (target_hi << 8));
      }
      break;
    }
    case kIndirectX:
    case kIndirectY: {
      uint8_t pointer = m6502_read(cpu, bus, cpu.pc);
      cpu.pc = static_cast<uint16_t>(cpu.pc + 1);
      if (dec.mode == kIndirectX) pointer = static_cast<uint8_t>(pointer + cpu.x);
      // ale-py does not wrap pointer + 1 to page zero: $FF reads its high byte from $0100.
      const uint16_t lo = m6502_read(cpu, bus, pointer);
      const uint16_t hi = m6502_read(cpu, bus, static_cast<uint16_t>(pointer + 1));
      address = static_cast<uint16_t>(lo | (hi << 8));
      if (dec.mode == kIndirectY) {
        const uint16_t indexed = static_cast<uint16_t>(address + cpu.y);
        indexed_read_crosses = same_page_penalty(address, indexed) != 0;
        address = indexed;
      }
      break;
    }
    default:
      break;
  }
  if (access == kRead && dec.mode != kImplied && dec.mode != kSpecial) {
    if (indexed_read_crosses) bus.add_cycles(1);
    operand = m6502_read(cpu, bus, address);
  } else if (access == kModify) {
    operand = m6502_read(cpu, bus, address);
  }

  // ---- operation
  switch (dec.op) {
    // loads, stores, transfers
    case kLDA: cpu.a = operand; m6502_set_nz(cpu, cpu.a); break;
    case kLDX: cpu.x = operand; m6502_set_nz(cpu, cpu.x); break;
    case kLDY: cpu.y = operand; m6502_set_nz(cpu, cpu.y); break;
    case kLAX: cpu.a = cpu.x = operand; m6502_set_nz(cpu, cpu.a); break;
    case kSTA: m6502_write(cpu, bus, address, cpu.a); break;
    case kSTX: m6502_write(cpu, bus, address, cpu.x); break;
    case kSTY: m6502_write(cpu, bus, address, cpu.y); break;
    case kSAX: m6502_write(cpu, bus, address, static_cast<uint8_t>(cpu.a & cpu.x)); break;
    case kTAX: cpu.x = cpu.a; m6502_set_nz(cpu, cpu.x); break;
    case kTAY: cpu.y = cpu.a; m6502_set_nz(cpu, cpu.y); break;
    case kTSX: cpu.x = cpu.sp; m6502_set_nz(cpu, cpu.x); break;
    case kTXA: cpu.a = cpu.x; m6502_set_nz(cpu, cpu.a); break;
    case kTXS: cpu.sp = cpu.x; break;
    case kTYA: cpu.a = cpu.y; m6502_set_nz(cpu, cpu.a); break;

    // logic and arithmetic
    case kAND: cpu.a &= operand; m6502_set_nz(cpu, cpu.a); break;
    case kORA: cpu.a |= operand; m6502_set_nz(cpu, cpu.a); break;
    case kEOR: cpu.a ^= operand; m6502_set_nz(cpu, cpu.a); break;
    case kADC: m6502_add(cpu, operand); break;
    case kSBC: m6502_sub(cpu, operand); break;
    case kCMP: m6502_compare(cpu, cpu.a, operand); break;
    case kCPX: m6502_compare(cpu, cpu.x, operand); break;
    case kCPY: m6502_compare(cpu, cpu.y, operand); break;
    case kBIT:
      cpu.notz = (cpu.a & operand) ? 1 : 0;
      cpu.n = operand >> 7;
      cpu.v = (operand >> 6) & 1;
      break;

    // read-modify-write
    case kASL: case kSLO: {
      cpu.c = operand >> 7;
      const uint8_t value = static_cast<uint8_t>(operand << 1);
      m6502_write(cpu, bus, address, value);
      if (dec.op == kSLO) cpu.a |= value;
      m6502_set_nz(cpu, dec.op == kSLO ? cpu.a : value);
      break;
    }
    case kLSR: case kSRE: {
      cpu.c = operand & 1;
      const uint8_t value = static_cast<uint8_t>(operand >> 1);
      m6502_write(cpu, bus, address, value);
      if (dec.op == kSRE) cpu.a ^= value;
      m6502_set_nz(cpu, dec.op == kSRE ? cpu.a : value);
      break;
    }
    case kROL: case kRLA: {
      const uint8_t value = static_cast<uint8_t>((operand << 1) | cpu.c);
      cpu.c = operand >> 7;
      m6502_write(cpu, bus, address, value);
      if (dec.op == kRLA) cpu.a &= value;
      m6502_set_nz(cpu, dec.op == kRLA ? cpu.a : value);
      break;
    }
    case kROR: case kRRA: {
      const uint8_t value = static_cast<uint8_t>((operand >> 1) | (cpu.c << 7));
      cpu.c = operand & 1;
      m6502_write(cpu, bus, address, value);
      if (dec.op == kRRA) {
        m6502_add(cpu, value);
      } else {
        m6502_set_nz(cpu, value);
      }
      break;
    }
    case kINC: case kISB: {
      const uint8_t value = static_cast<uint8_t>(operand + 1);
      m6502_write(cpu, bus, address, value);
      if (dec.op == kISB) {
        m6502_sub(cpu, value);
      } else {
        m6502_set_nz(cpu, value);
      }
      break;
    }
    case kDEC: case kDCP: {
      const uint8_t value = static_cast<uint8_t>(operand - 1);
      m6502_write(cpu, bus, address, value);
      if (dec.op == kDCP) {
        m6502_compare(cpu, cpu.a, value);
      } else {
        m6502_set_nz(cpu, value);
      }
      break;
    }

    // accumulator shifts and register steps
    case kASLA: cpu.c = cpu.a >> 7; cpu.a = static_cast<uint8_t>(cpu.a << 1); m6502_set_nz(cpu, cpu.a); break;
    case kLSRA: cpu.c = cpu.a & 1; cpu.a = static_cast<uint8_t>(cpu.a >> 1); m6502_set_nz(cpu, cpu.a); break;
    case kROLA: {
      const uint8_t old_c = cpu.c;
      cpu.c = cpu.a >> 7;
      cpu.a = static_cast<uint8_t>((cpu.a << 1) | old_c);
      m6502_set_nz(cpu, cpu.a);
      break;
    }
    case kRORA: {
      const uint8_t old_c = cpu.c;
      cpu.c = cpu.a & 1;
      cpu.a = static_cast<uint8_t>((cpu.a >> 1) | (old_c << 7));
      m6502_set_nz(cpu, cpu.a);
      break;
    }
    case kINX: cpu.x = static_cast<uint8_t>(cpu.x + 1); m6502_set_nz(cpu, cpu.x); break;
    case kINY: cpu.y = static_cast<uint8_t>(cpu.y + 1); m6502_set_nz(cpu, cpu.y); break;
    case kDEX: cpu.x = static_cast<uint8_t>(cpu.x - 1); m6502_set_nz(cpu, cpu.x); break;
    case kDEY: cpu.y = static_cast<uint8_t>(cpu.y - 1); m6502_set_nz(cpu, cpu.y); break;

    // flags
    case kCLC: cpu.c = 0; break;
    case kSEC: cpu.c = 1; break;
    case kCLD: cpu.d = 0; break;
    case kSED: cpu.d = 1; break;
    case kCLI: cpu.i = 0; break;
    case kSEI: cpu.i = 1; break;
    case kCLV: cpu.v = 0; break;

    // branches: +1 cycle when taken, +2 when the target is in another page
    case kBPL: case kBMI: case kBVC: case kBVS: case kBCC: case kBCS: case kBNE: case kBEQ: {
      bool taken = false;
      switch (dec.op) {
        case kBPL: taken = !cpu.n; break;
        case kBMI: taken = cpu.n; break;
        case kBVC: taken = !cpu.v; break;
        case kBVS: taken = cpu.v; break;
        case kBCC: taken = !cpu.c; break;
        case kBCS: taken = cpu.c; break;
        case kBNE: taken = cpu.notz; break;
        default: taken = !cpu.notz; break;
      }
      if (taken) {
        const uint16_t target = static_cast<uint16_t>(cpu.pc + static_cast<int8_t>(operand));
        bus.add_cycles(same_page_penalty(cpu.pc, target) ? 2u : 1u);
        cpu.pc = target;
      }
      break;
    }

    // jumps, calls, stack
    case kJMP: cpu.pc = address; break;
    case kJSR: {
      const uint16_t lo = m6502_read(cpu, bus, cpu.pc);
      cpu.pc = static_cast<uint16_t>(cpu.pc + 1);
      m6502_read(cpu, bus, static_cast<uint16_t>(0x100 | cpu.sp));
      m6502_write(cpu, bus, static_cast<uint16_t>(0x100 | cpu.sp), static_cast<uint8_t>(cpu.pc >> 8));
      cpu.sp = static_cast<uint8_t>(cpu.sp - 1);
      m6502_write(cpu, bus, static_cast<uint16_t>(0x100 | cpu.sp), static_cast<uint8_t>(cpu.pc));
      cpu.sp = static_cast<uint8_t>(cpu.sp - 1);
      const uint16_t hi = m6502_read(cpu, bus, cpu.pc);
      cpu.pc = static_cast<uint16_t>(lo | (hi << 8));
      break;
    }
    case kRTS: {
      m6502_read(cpu, bus, static_cast<uint16_t>(0x100 | cpu.sp));
      cpu.sp = static_cast<uint8_t>(cpu.sp + 1);
      const uint16_t lo = m6502_read(cpu, bus, static_cast<uint16_t>(0x100 | cpu.sp));
      cpu.sp = static_cast<uint8_t>(cpu.sp + 1);
      const uint16_t hi = m6502_read(cpu, bus, static_cast<uint16_t>(0x100 | cpu.sp));
      cpu.pc = static_cast<uint16_t>(lo | (hi << 8));
      m6502_read(cpu, bus, cpu.pc);
      cpu.pc = static_cast<uint16_t>(cpu.pc + 1);
      break;
    }
    case kRTI: {
      m6502_read(cpu, bus, static_cast<uint16_t>(0x100 | cpu.sp));
      cpu.sp = static_cast<uint8_t>(cpu.sp + 1);
      m6502_set_p(cpu, m6502_read(cpu, bus, static_cast<uint16_t>(0x100 | cpu.sp)));
      cpu.sp = static_cast<uint8_t>(cpu.sp + 1);
      const uint16_t lo = m6502_read(cpu, bus, static_cast<uint16_t>(0x100 | cpu.sp));
      cpu.sp = static_cast<uint8_t>(cpu.sp + 1);
      const uint16_t hi = m6502_read(cpu, bus, static_cast<uint16_t>(0x100 | cpu.sp));
      cpu.pc = static_cast<uint16_t>(lo | (hi << 8));
      break;
    }
    case kBRK: {
      m6502_read(cpu, bus, cpu.pc);  // padding byte
      cpu.pc = static_cast<uint16_t>(cpu.pc + 1);
      cpu.b = 1;
      m6502_write(cpu, bus, static_cast<uint16_t>(0x100 | cpu.sp), static_cast<uint8_t>(cpu.pc >> 8));
      cpu.sp = static_cast<uint8_t>(cpu.sp - 1);
      m6502_write(cpu, bus, static_cast<uint16_t>(0x100 | cpu.sp), static_cast<uint8_t>(cpu.pc));
      cpu.sp = static_cast<uint8_t>(cpu.sp - 1);
      m6502_write(cpu, bus, static_cast<uint16_t>(0x100 | cpu.sp), m6502_get_p(cpu));
      cpu.sp = static_cast<uint8_t>(cpu.sp - 1);
      cpu.i = 1;
      const uint16_t lo = m6502_read(cpu, bus, 0xFFFE);
      const uint16_t hi = m6502_read(cpu, bus, 0xFFFF);
      cpu.pc = static_cast<uint16_t>(lo | (hi << 8));
      break;
    }
    case kPHA:
      m6502_write(cpu, bus, static_cast<uint16_t>(0x100 | cpu.sp), cpu.a);
      cpu.sp = static_cast<uint8_t>(cpu.sp - 1);
      break;
    case kPHP:
      m6502_write(cpu, bus, static_cast<uint16_t>(0x100 | cpu.sp), m6502_get_p(cpu));
      cpu.sp = static_cast<uint8_t>(cpu.sp - 1);
      break;
    case kPLA:
    case kPLP: {
      m6502_read(cpu, bus, static_cast<uint16_t>(0x100 | cpu.sp));
      cpu.sp = static_cast<uint8_t>(cpu.sp + 1);
      const uint8_t value = m6502_read(cpu, bus, static_cast<uint16_t>(0x100 | cpu.sp));
      if (dec.op == kPLA) {
        cpu.a = value;
        m6502_set_nz(cpu, cpu.a);
      } else {
        m6502_set_p(cpu, value);
      }
      break;
    }

    // undocumented, immediate
    case kANC: cpu.a &= operand; m6502_set_nz(cpu, cpu.a); cpu.c = cpu.n; break;
    case kASR:
      cpu.a &= operand;
      cpu.c = cpu.a & 1;
      cpu.a = static_cast<uint8_t>(cpu.a >> 1);
      m6502_set_nz(cpu, cpu.a);
      break;
    case kARR: {
      const uint8_t value = static_cast<uint8_t>(cpu.a & operand);
      const uint8_t rotated = static_cast<uint8_t>((value >> 1) | (cpu.c << 7));
      if (!cpu.d) {
        cpu.a = rotated;
        cpu.c = (rotated >> 6) & 1;
        cpu.v = (((rotated >> 6) ^ (rotated >> 5)) & 1);
        m6502_set_nz(cpu, cpu.a);
      } else {
        uint8_t result = rotated;
        cpu.n = cpu.c;
        cpu.notz = result ? 1 : 0;
        cpu.v = ((value ^ result) & 0x40) ? 1 : 0;
        if (((value & 0x0F) + (value & 0x01)) > 0x05) {
          result = static_cast<uint8_t>((result & 0xF0) | ((result + 0x06) & 0x0F));
        }
        if (((value & 0xF0) + (value & 0x10)) > 0x50) {
          result = static_cast<uint8_t>(result + 0x60);
          cpu.c = 1;
        } else {
          cpu.c = 0;
        }
        cpu.a = result;
      }
      break;
    }
    case kANE: cpu.a = static_cast<uint8_t>((cpu.a | 0xEE) & cpu.x & operand); m6502_set_nz(cpu, cpu.a); break;
    case kLXA: cpu.a = cpu.x = static_cast<uint8_t>((cpu.a | 0xEE) & operand); m6502_set_nz(cpu, cpu.a); break;
    case kSBX: {
      const uint16_t value = static_cast<uint16_t>((cpu.x & cpu.a) - operand);
      cpu.x = static_cast<uint8_t>(value);
      m6502_set_nz(cpu, cpu.x);
      cpu.c = (value & 0x100) ? 0 : 1;
      break;
    }
    case kLAS:
      cpu.a = cpu.x = cpu.sp = static_cast<uint8_t>(cpu.sp & operand);
      m6502_set_nz(cpu, cpu.a);
      break;

    // undocumented stores with the "high byte + 1" mask
    case kSHA: case kSHS: case kSHX: case kSHY: {
      const uint8_t mask = static_cast<uint8_t>((address >> 8) + 1);
      uint8_t value = 0;
      switch (dec.op) {
        case kSHA: value = static_cast<uint8_t>(cpu.a & cpu.x); break;
        case kSHS: cpu.sp = static_cast<uint8_t>(cpu.a & cpu.x); value = cpu.sp; break;
        case kSHX: value = cpu.x; break;
        default: value = cpu.y; break;
      }
      m6502_write(cpu, bus, address, static_cast<uint8_t>(value & mask));
      break;
    }

    case kNOP: break;
    default:  // kJAM
      cpu.status |= kM6502StatusFatal;
      break;
  }
}

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
  uint32_t executed = 0;
#if GPU_ENV_DEVICE
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
  // m6502_step's fetch (a fatal status never gets here: it stops the loop), then the opcode's body.
#define M6502_DISPATCH                                                        \
  if (cpu.status || executed >= max_instructions) {                         \
    cpu_state = cpu;                                                          \
    bus.flush();                                                              \
    return executed;                                                          \
  }                                                                           \
  pc = cpu.pc;                                                                \
  {                                                                           \
    const uint8_t opcode = m6502_read(cpu, bus, pc);                          \
    cpu.pc = static_cast<uint16_t>(pc + 1);                                   \
    cpu.ir = opcode;                                                          \
    goto* kBody[opcode];                                                      \
  }
#define M6502_BODY(h, l)                                                                               \
  op_##h##l:                                                                                           \
  m6502_operate(cpu, bus, m6502_detail::OpConst<0x##h##l>::kInfo);                                     \
  ++executed;                                                                                          \
  if (0x##h##l == 0xD0 && cpu.pc == static_cast<uint16_t>(pc - 3) && !cpu.status) {                    \
    M6502 view = cpu;                                                                                  \
    executed += 2u * bus.poll_loop(view, (max_instructions - executed) / 2u);                         \
    cpu = view;                                                                                        \
  }                                                                                                    \
  M6502_DISPATCH
#define M6502_BODY_ROW(h)                                                                                \
  M6502_BODY(h, 0) M6502_BODY(h, 1) M6502_BODY(h, 2) M6502_BODY(h, 3) M6502_BODY(h, 4) M6502_BODY(h, 5)  \
  M6502_BODY(h, 6) M6502_BODY(h, 7) M6502_BODY(h, 8) M6502_BODY(h, 9) M6502_BODY(h, A) M6502_BODY(h, B)  \
  M6502_BODY(h, C) M6502_BODY(h, D) M6502_BODY(h, E) M6502_BODY(h, F)
  M6502_DISPATCH
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
