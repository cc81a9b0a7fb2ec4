// One 6502 instruction's work after its opcode fetch (m6502_operate), with the bus wrappers and the arithmetic it
// uses. m6502.h says what "as ale-py" means for each access and cycle, and what a Bus must provide.
#pragma once

#include "hd.h"
#include "m6502_decode.h"
#include "m6502_state.h"

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
