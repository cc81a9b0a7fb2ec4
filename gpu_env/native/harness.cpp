// Flat-memory 6502 harness: the CPU core on a plain 64 KiB RAM, for conformance vectors and whole
// programs (Klaus Dormann's tests). Plain C ABI for ctypes (gpu_env/cpu_harness.py).
//
// Register arrays are int32[6] in the order pc, s, a, x, y, p (the vectors' field order).
// A bus log entry is int32[3]: address, value, kind (0 = read, 1 = write).
#include <string.h>

#include "hd.h"
#include "m6502.h"

#define GPU_ENV_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr int kRegPc = 0, kRegS = 1, kRegA = 2, kRegX = 3, kRegY = 4, kRegP = 5;
constexpr int kLogMax = 32;  // no instruction makes more than 8 accesses

struct FlatBus {
  uint8_t* memory;
  uint64_t cycles;
  int32_t* log;       // kLogMax * 3 ints, or null
  int32_t log_len;
  // Addresses written, so a batch can restore its zeroed memory cheaply.
  uint16_t written[kLogMax];
  int32_t written_len;

  uint8_t peek(uint16_t address) {
    const uint8_t value = memory[address];
    record(address, value, 0);
    return value;
  }
  uint8_t poke(uint16_t address, uint8_t value, uint8_t /*last_access_was_read*/) {
    memory[address] = value;
    if (written_len < kLogMax) written[written_len++] = address;
    record(address, value, 1);
    return 0;
  }
  void add_cycles(uint32_t n) { cycles += n; }
  uint32_t poll_loop(M6502&, uint32_t) { return 0; }  // no fast-forward: every instruction runs
  void record(uint16_t address, uint8_t value, int32_t kind) {
    if (log != nullptr && log_len < kLogMax) {
      log[3 * log_len + 0] = address;
      log[3 * log_len + 1] = value;
      log[3 * log_len + 2] = kind;
    }
    ++log_len;
  }
};

void load_regs(M6502& cpu, const int32_t* regs) {
  m6502_reset(cpu, static_cast<uint16_t>(regs[kRegPc]));
  cpu.sp = static_cast<uint8_t>(regs[kRegS]);
  cpu.a = static_cast<uint8_t>(regs[kRegA]);
  cpu.x = static_cast<uint8_t>(regs[kRegX]);
  cpu.y = static_cast<uint8_t>(regs[kRegY]);
  m6502_set_p(cpu, static_cast<uint8_t>(regs[kRegP]));
}

void store_regs(const M6502& cpu, int32_t* regs) {
  regs[kRegPc] = cpu.pc;
  regs[kRegS] = cpu.sp;
  regs[kRegA] = cpu.a;
  regs[kRegX] = cpu.x;
  regs[kRegY] = cpu.y;
  regs[kRegP] = m6502_get_p(cpu);
}

}  // namespace

// Size of one vector's bus-log slot (entries), so callers can size their buffers.
GPU_ENV_EXPORT int32_t gpu_env_harness_log_capacity() { return kLogMax; }

// Execute ONE instruction on `memory` (65,536 bytes, modified in place). regs: int32[6] in/out.
// Writes the cycles charged, whether the CPU is now fatal (JAM), and the bus log (log: int32[3 *
// capacity] or null; *log_len receives the number of accesses, which may exceed the capacity).
GPU_ENV_EXPORT void gpu_env_harness_step(uint8_t* memory, int32_t* regs, uint64_t* cycles,
                                         uint8_t* fatal, int32_t* log, int32_t* log_len) {
  M6502 cpu;
  load_regs(cpu, regs);
  FlatBus bus{memory, 0, log, 0, {}, 0};
  m6502_step(cpu, bus);
  store_regs(cpu, regs);
  *cycles = bus.cycles;
  *fatal = (cpu.status & kM6502StatusFatal) ? 1 : 0;
  if (log_len != nullptr) *log_len = bus.log_len;
}

// Run many single-instruction vectors, each on a zeroed flat memory.
//   regs: int32[n * 6] in/out; ram_offsets: int32[n + 1] into ram (pairs address, value: int32[2 * k]);
//   check_offsets: int32[n + 1] into check_addrs (int32[m]); check_values: uint8[m] out (memory after
//   the instruction at those addresses); cycles: uint64[n]; fatal: uint8[n];
//   logs: int32[n * capacity * 3] or null; log_lens: int32[n] or null.
GPU_ENV_EXPORT void gpu_env_harness_run_vectors(int32_t n, int32_t* regs, const int32_t* ram_offsets,
                                                const int32_t* ram, const int32_t* check_offsets,
                                                const int32_t* check_addrs, uint8_t* check_values,
                                                uint64_t* cycles, uint8_t* fatal, int32_t* logs,
                                                int32_t* log_lens) {
  static_assert(sizeof(uint8_t) == 1, "byte memory");
  uint8_t* memory = new uint8_t[65536];
  memset(memory, 0, 65536);
  for (int32_t v = 0; v < n; ++v) {
    for (int32_t k = ram_offsets[v]; k < ram_offsets[v + 1]; ++k) {
      memory[ram[2 * k] & 0xFFFF] = static_cast<uint8_t>(ram[2 * k + 1]);
    }
    M6502 cpu;
    load_regs(cpu, regs + 6 * v);
    FlatBus bus{memory, 0, logs != nullptr ? logs + static_cast<int64_t>(v) * kLogMax * 3 : nullptr, 0, {}, 0};
    m6502_step(cpu, bus);
    store_regs(cpu, regs + 6 * v);
    cycles[v] = bus.cycles;
    fatal[v] = (cpu.status & kM6502StatusFatal) ? 1 : 0;
    if (log_lens != nullptr) log_lens[v] = bus.log_len;
    for (int32_t k = check_offsets[v]; k < check_offsets[v + 1]; ++k) {
      check_values[k] = memory[check_addrs[k] & 0xFFFF];
    }
    // Back to all zeros for the next vector.
    for (int32_t k = ram_offsets[v]; k < ram_offsets[v + 1]; ++k) memory[ram[2 * k] & 0xFFFF] = 0;
    for (int32_t k = 0; k < bus.written_len; ++k) memory[bus.written[k]] = 0;
  }
  delete[] memory;
}

// Run a whole program on `memory` (65,536 bytes, in place) from regs (int32[6] in/out) until the
// PC is unchanged by an instruction (a `JMP *` trap), the CPU hits a JAM, or max_instructions ran.
// Outputs: instructions executed, cycles charged, fatal flag.
GPU_ENV_EXPORT void gpu_env_harness_run_program(uint8_t* memory, int32_t* regs, uint64_t max_instructions,
                                                uint64_t* instructions, uint64_t* cycles, uint8_t* fatal) {
  M6502 cpu;
  load_regs(cpu, regs);
  FlatBus bus{memory, 0, nullptr, 0, {}, 0};
  uint64_t count = 0;
  while (count < max_instructions) {
    const uint16_t before = cpu.pc;
    m6502_step(cpu, bus);
    bus.written_len = 0;
    bus.log_len = 0;
    ++count;
    if ((cpu.status & kM6502StatusFatal) || cpu.pc == before) break;
  }
  store_regs(cpu, regs);
  *instructions = count;
  *cycles = bus.cycles;
  *fatal = (cpu.status & kM6502StatusFatal) ? 1 : 0;
}
