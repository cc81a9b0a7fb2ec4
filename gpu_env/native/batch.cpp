// Batched CPU entry points of the console (one ALE frame per environment per call), run on
// std::threads across environments (dynamic scheduling, see parallel_for). Plain C ABI for ctypes (gpu_env/console_native.py, under gpu_env/console_batch.py).
//
// Memory is owned by the caller: `envs` is an array of Console structs (gpu_env_console_size() bytes
// each), `screens` holds two 160 x height frame buffers per environment (stride `screen_stride`).
#include <cstddef>
#include <cstring>

#include "console.h"
#include "parallel.h"

#define GPU_ENV_EXPORT extern "C" __attribute__((visibility("default")))

using gpu_env_native::parallel_for;

namespace {

// Rebuild the TIA fields ALE keeps outside its serialized state (mask pointers, frame pointer).
void tia_import_fixup(Tia& t, bool partial) {
  t.p0_skip_first = 0;
  t.p1_skip_first = 0;
  t.pf_mask_reflect = t.ctrlpf & 1;
  t.m0_mask_kind = kMissileMaskNormal;
  if (t.m0_cosmic_enabled) {
    t.m0_mask_kind = t.m0_cosmic_counter == 1 ? kMissileMaskStretched
                     : (t.m0_cosmic_counter == 2 ? kMissileMaskHidden : kMissileMaskNormal);
  }
  t.partial_frame = partial ? 1 : 0;
  t.frame_greyed = partial ? 1 : 0;
  const int32_t elapsed = t.clock_at_last_update - t.clock_start_display;
  if (elapsed <= 0) {
    t.frame_pointer = 0;
  } else {
    const int32_t into_line = elapsed % kTiaLineClocks;
    int32_t fp = (elapsed / kTiaLineClocks) * 160 + (into_line > kTiaHBlank ? into_line - kTiaHBlank : 0);
    if (fp > 160 * t.height) fp = 160 * t.height;
    t.frame_pointer = fp;
  }
}

}  // namespace

GPU_ENV_EXPORT uint32_t gpu_env_console_size() { return static_cast<uint32_t>(sizeof(Console)); }

GPU_ENV_EXPORT uint32_t gpu_env_console_ram_offset() {
  return static_cast<uint32_t>(offsetof(Console, riot) + offsetof(Riot, ram));
}

// Zero a console and set its ROM properties. paddle_min/max: ALE's paddle bounds.
GPU_ENV_EXPORT void gpu_env_console_configure(Console* c, int32_t scheme, int32_t ystart, int32_t height, int32_t pal,
                                              int32_t hmove_blanks, int32_t left_paddles, int32_t right_paddles,
                                              int32_t swap_ports, int32_t swap_paddles, int32_t paddle_min,
                                              int32_t paddle_max) {
  std::memset(c, 0, sizeof(Console));
  cart_init(c->cart, static_cast<uint8_t>(scheme));
  tia_configure(c->tia, ystart, height, pal != 0, hmove_blanks != 0);
  c->left_paddles = static_cast<uint8_t>(left_paddles != 0);
  c->right_paddles = static_cast<uint8_t>(right_paddles != 0);
  c->use_paddles = static_cast<uint8_t>(left_paddles != 0 || right_paddles != 0);
  c->swap_ports = static_cast<uint8_t>(swap_ports != 0);
  c->swap_paddles = static_cast<uint8_t>(swap_paddles != 0);
  c->paddle_min = paddle_min;
  c->paddle_max = paddle_max;
  c->paddle[0] = c->paddle[1] = (paddle_min + paddle_max) / 2;
  console_refresh_io(*c);
}

// Load an ale-py cloneState, flattened by gpu_env/ale_state.py (see gpu_env/console_native.py for the order):
// head[6] = cycles, left paddle, right paddle, paddle min, paddle max, difficulty; cpu[14]; ram[128];
// riot[7]; tia[54] in TIA::save order; cart[cart_len] as ALE saves that scheme. Returns 0 on success.
GPU_ENV_EXPORT int32_t gpu_env_console_import_ale(Console* c, const int32_t* head, const int32_t* cpu,
                                                  const int32_t* ram, const int32_t* riot, const int32_t* tia,
                                                  const int32_t* cart, int32_t cart_len) {
  c->cycles = static_cast<uint32_t>(head[0]);
  c->paddle[0] = head[1];
  c->paddle[1] = head[2];
  c->paddle_min = head[3];
  c->paddle_max = head[4];
  c->events.difficulty = static_cast<uint8_t>(head[5]);
  c->events.paddle_resistance[0] = c->use_paddles ? head[1] : 0;
  c->events.paddle_resistance[1] = c->use_paddles ? head[2] : 0;

  M6502& p = c->cpu;
  p.a = static_cast<uint8_t>(cpu[0]); p.x = static_cast<uint8_t>(cpu[1]); p.y = static_cast<uint8_t>(cpu[2]);
  p.sp = static_cast<uint8_t>(cpu[3]); p.ir = static_cast<uint8_t>(cpu[4]); p.pc = static_cast<uint16_t>(cpu[5]);
  p.n = static_cast<uint8_t>(cpu[6]); p.v = static_cast<uint8_t>(cpu[7]); p.b = static_cast<uint8_t>(cpu[8]);
  p.d = static_cast<uint8_t>(cpu[9]); p.i = static_cast<uint8_t>(cpu[10]); p.notz = static_cast<uint8_t>(cpu[11]);
  p.c = static_cast<uint8_t>(cpu[12]); p.status = static_cast<uint8_t>(cpu[13]);
  p.last_access_was_read = 1;

  for (int i = 0; i < 128; ++i) c->riot.ram[i] = static_cast<uint8_t>(ram[i]);
  c->riot.timer = static_cast<uint32_t>(riot[0]);
  c->riot.interval_shift = static_cast<uint32_t>(riot[1]);
  c->riot.cycles_when_timer_set = riot[2];
  c->riot.cycles_when_interrupt_reset = riot[3];
  c->riot.timer_read_after_interrupt = static_cast<uint8_t>(riot[4]);
  c->riot.ddra = static_cast<uint8_t>(riot[5]);
  c->riot.ddrb = static_cast<uint8_t>(riot[6]);

  Tia& t = c->tia;
  const int32_t* f = tia;
  t.clock_when_frame_started = *f++; t.clock_start_display = *f++; t.clock_stop_display = *f++;
  t.clock_at_last_update = *f++; t.clocks_to_end_of_scanline = *f++; t.scanline_count_last_frame = *f++;
  t.current_scanline = *f++; t.vsync_finish_clock = *f++;
  t.enabled = static_cast<uint8_t>(*f++); t.vsync = static_cast<uint8_t>(*f++); t.vblank = static_cast<uint8_t>(*f++);
  t.nusiz0 = static_cast<uint8_t>(*f++); t.nusiz1 = static_cast<uint8_t>(*f++);
  t.color[2] = static_cast<uint8_t>(*f++); t.color[3] = static_cast<uint8_t>(*f++);
  t.color[1] = static_cast<uint8_t>(*f++); t.color[0] = static_cast<uint8_t>(*f++);
  t.ctrlpf = static_cast<uint8_t>(*f++); t.priority_score = static_cast<uint8_t>(*f++);
  t.refp0 = static_cast<uint8_t>(*f++); t.refp1 = static_cast<uint8_t>(*f++);
  t.pf = static_cast<uint32_t>(*f++); t.grp0 = static_cast<uint8_t>(*f++); t.grp1 = static_cast<uint8_t>(*f++);
  t.dgrp0 = static_cast<uint8_t>(*f++); t.dgrp1 = static_cast<uint8_t>(*f++);
  t.enam0 = static_cast<uint8_t>(*f++); t.enam1 = static_cast<uint8_t>(*f++);
  t.enabl = static_cast<uint8_t>(*f++); t.denabl = static_cast<uint8_t>(*f++);
  t.hmp0 = static_cast<int8_t>(*f++); t.hmp1 = static_cast<int8_t>(*f++); t.hmm0 = static_cast<int8_t>(*f++);
  t.hmm1 = static_cast<int8_t>(*f++); t.hmbl = static_cast<int8_t>(*f++);
  t.vdelp0 = static_cast<uint8_t>(*f++); t.vdelp1 = static_cast<uint8_t>(*f++); t.vdelbl = static_cast<uint8_t>(*f++);
  t.resmp0 = static_cast<uint8_t>(*f++); t.resmp1 = static_cast<uint8_t>(*f++);
  t.collision = static_cast<uint16_t>(*f++);
  t.posp0 = static_cast<int16_t>(*f++); t.posp1 = static_cast<int16_t>(*f++); t.posm0 = static_cast<int16_t>(*f++);
  t.posm1 = static_cast<int16_t>(*f++); t.posbl = static_cast<int16_t>(*f++);
  t.current_grp0 = static_cast<uint8_t>(*f++); t.current_grp1 = static_cast<uint8_t>(*f++);
  t.last_hmove_clock = *f++;
  t.hmove_blank_enabled = static_cast<uint8_t>(*f++); t.m0_cosmic_enabled = static_cast<uint8_t>(*f++);
  t.m0_cosmic_counter = static_cast<uint32_t>(*f++);
  t.dump_enabled = static_cast<uint8_t>(*f++); t.dump_disabled_cycle = *f++;
  tia_import_fixup(t, (p.status & kM6502StatusStop) == 0);

  Cart& k = c->cart;
  switch (k.scheme) {
    case kCart2K: case kCart4K: case kCartFE:
      if (cart_len != 0) return 1;
      break;
    case kCartF8: case kCartF6:
      if (cart_len != 1) return 1;
      k.bank = static_cast<uint16_t>(cart[0]);
      break;
    case kCartF8SC: case kCartF6SC:
      if (cart_len != 129) return 1;
      k.bank = static_cast<uint16_t>(cart[0]);
      for (int i = 0; i < 128; ++i) k.ram[i] = static_cast<uint8_t>(cart[1 + i]);
      break;
    case kCartE0:
      if (cart_len != 4) return 1;
      for (int i = 0; i < 4; ++i) k.slices[i] = static_cast<uint16_t>(cart[i]);
      break;
    case kCartDPC:
      if (cart_len != 1 + 32 + 3 + 3) return 1;
      k.bank = static_cast<uint16_t>(cart[0]);
      for (int i = 0; i < 8; ++i) {
        k.dpc.tops[i] = static_cast<uint8_t>(cart[1 + i]);
        k.dpc.bottoms[i] = static_cast<uint8_t>(cart[9 + i]);
        k.dpc.counters[i] = static_cast<uint16_t>(cart[17 + i]);
        k.dpc.flags[i] = static_cast<uint8_t>(cart[25 + i]);
      }
      for (int i = 0; i < 3; ++i) k.dpc.music_mode[i] = static_cast<uint8_t>(cart[33 + i]);
      k.dpc.random_number = static_cast<uint8_t>(cart[36]);
      k.dpc.system_cycles = cart[37];
      k.dpc.fractional_clocks = static_cast<double>(static_cast<uint32_t>(cart[38])) / 100000000.0;
      break;
    default:
      return 2;
  }
  c->data_bus = c->riot.ram[127];
  console_refresh_io(*c);
  return 0;
}

// Run `frames` ALE frames (inputs, TIA::update, RAM copy) on each of the n environments with player-A
// action actions[i] (0..17, or 40 for RESET) and player B NOOP.
GPU_ENV_EXPORT void gpu_env_batch_emulate(Console* envs, int32_t n, const uint8_t* rom, uint32_t rom_size,
                                          uint8_t* screens, uint64_t screen_stride, const int32_t* actions,
                                          int32_t frames, int32_t num_threads) {
  parallel_for(n, num_threads, [&](int32_t i) {
    for (int32_t f = 0; f < frames; ++f) {
      console_emulate(envs[i], rom, rom_size, screens + screen_stride * static_cast<uint64_t>(i), actions[i], kActionNoop);
    }
  });
}

// Copy each environment's current picture (160 x height palette indices) into out[i].
GPU_ENV_EXPORT void gpu_env_batch_screens(const Console* envs, int32_t n, const uint8_t* screens, uint64_t screen_stride,
                                          uint8_t* out) {
  for (int32_t i = 0; i < n; ++i) {
    const Tia& t = envs[i].tia;
    const size_t bytes = 160u * static_cast<size_t>(t.height);
    std::memcpy(out + bytes * static_cast<size_t>(i),
                screens + screen_stride * static_cast<uint64_t>(i) + bytes * t.current_buffer, bytes);
  }
}

// Set an environment's frame buffers (160 x height each): `current` is the picture shown now (e.g. an
// imported getScreen()), `previous` the other buffer (the frame before), which the next frame reuses.
GPU_ENV_EXPORT void gpu_env_console_set_screens(const Console* c, uint8_t* buffers, const uint8_t* current,
                                                const uint8_t* previous) {
  const size_t bytes = 160u * static_cast<size_t>(c->tia.height);
  std::memcpy(buffers + bytes * c->tia.current_buffer, current, bytes);
  std::memcpy(buffers + bytes * (c->tia.current_buffer ^ 1u), previous, bytes);
}

// The inverse of gpu_env_console_import_ale for the CPU, RIOT and TIA blocks (same layouts), for
// comparing a console with an ale-py state field by field. cycles_out: the system cycle counter.
GPU_ENV_EXPORT void gpu_env_console_export_ale(const Console* c, int32_t* cycles_out, int32_t* cpu, int32_t* ram,
                                               int32_t* riot, int32_t* tia) {
  *cycles_out = static_cast<int32_t>(c->cycles);
  const M6502& p = c->cpu;
  const int32_t cpu_values[14] = {p.a, p.x, p.y, p.sp, p.ir, p.pc, p.n, p.v, p.b, p.d, p.i, p.notz, p.c, p.status};
  for (int i = 0; i < 14; ++i) cpu[i] = cpu_values[i];
  for (int i = 0; i < 128; ++i) ram[i] = c->riot.ram[i];
  riot[0] = static_cast<int32_t>(c->riot.timer);
  riot[1] = static_cast<int32_t>(c->riot.interval_shift);
  riot[2] = c->riot.cycles_when_timer_set;
  riot[3] = c->riot.cycles_when_interrupt_reset;
  riot[4] = c->riot.timer_read_after_interrupt;
  riot[5] = c->riot.ddra;
  riot[6] = c->riot.ddrb;
  const Tia& t = c->tia;
  const int32_t tia_values[54] = {
      t.clock_when_frame_started, t.clock_start_display, t.clock_stop_display, t.clock_at_last_update,
      t.clocks_to_end_of_scanline, t.scanline_count_last_frame, t.current_scanline, t.vsync_finish_clock,
      t.enabled, t.vsync, t.vblank, t.nusiz0, t.nusiz1, t.color[2], t.color[3], t.color[1], t.color[0],
      t.ctrlpf, t.priority_score, t.refp0, t.refp1, static_cast<int32_t>(t.pf), t.grp0, t.grp1, t.dgrp0, t.dgrp1,
      t.enam0, t.enam1, t.enabl, t.denabl, t.hmp0, t.hmp1, t.hmm0, t.hmm1, t.hmbl,
      t.vdelp0, t.vdelp1, t.vdelbl, t.resmp0, t.resmp1, t.collision, t.posp0, t.posp1, t.posm0, t.posm1, t.posbl,
      t.current_grp0, t.current_grp1, t.last_hmove_clock, t.hmove_blank_enabled, t.m0_cosmic_enabled,
      static_cast<int32_t>(t.m0_cosmic_counter), t.dump_enabled, t.dump_disabled_cycle};
  for (int i = 0; i < 54; ++i) tia[i] = tia_values[i];
}
