// Decoding of the 6502's opcodes into addressing mode, operation, access kind and table cycles, computed at
// compile time, and the small helpers the operations share (decimal tables, page crossings). m6502.h says which
// CPU this is (ale-py's default core).
#pragma once

#include "hd.h"

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

// True when an instruction may set a status bit: it writes (the bus may stop the CPU: m6502_write) or it is a JAM.
// No other instruction changes cpu.status.
HD constexpr bool may_set_status(const OpInfo& info) {
  return info.access == kWrite || info.access == kModify || info.op == kJSR || info.op == kBRK || info.op == kPHA ||
         info.op == kPHP || info.op == kJAM;
}

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
