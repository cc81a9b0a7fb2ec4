// The TIA's registers as the CPU sees them (tia.h says which TIA this is): a write (tia_poke) with its delays and
// quirks, and when its picture update may wait; a read (tia_peek) with data-bus noise.
#pragma once

#include "../hd.h"
#include "ball.h"
#include "collisions.h"
#include "frame.h"
#include "inputs.h"
#include "missile.h"
#include "motion.h"
#include "playfield.h"
#include "player.h"
#include "state.h"
#include "write_delay.h"

HD uint8_t tia_color_value(const Tia& t, uint8_t value) {
  uint8_t c = value & 0xFE;
  if (t.color_loss && (t.scanline_count_last_frame & 1)) c |= 0x01;
  return c;
}

HD void tia_refresh_players(Tia& t) {
  const uint8_t g0 = t.vdelp0 ? t.dgrp0 : t.grp0;
  const uint8_t g1 = t.vdelp1 ? t.dgrp1 : t.grp1;
  t.current_grp0 = t.refp0 ? tia_reverse8(g0) : g0;
  t.current_grp1 = t.refp1 ? tia_reverse8(g1) : g1;
  t.enabled = static_cast<uint8_t>((t.enabled & ~(kTiaP0 | kTiaP1)) | (t.current_grp0 ? kTiaP0 : 0) |
                                   (t.current_grp1 ? kTiaP1 : 0));
}

HD void tia_set_enabled(Tia& t, uint8_t bit, bool on) {
  t.enabled = static_cast<uint8_t>(on ? (t.enabled | bit) : (t.enabled & ~bit));
}

HD int16_t tia_wrap160(int32_t pos) {
  if (pos >= 160) pos -= 160;
  else if (pos < 0) pos += 160;
  return static_cast<int16_t>(pos);
}

// Registers whose writes change nothing the picture is drawn from: WSYNC, RSYNC, the audio registers
// (0x15-0x1A), HMP0, HMP1, HMM1, HMBL (motion waits for HMOVE), HMCLR and the unused 0x2D-0x3F.
// HMM0 is not among them (it can arm the Cosmic Ark starfield, which acts at the end of a line).
#define GPU_ENV_TIA_BIT(r) (1ull << (r))
enum : uint64_t {
  kTiaNoPictureRegisters = GPU_ENV_TIA_BIT(0x02) | GPU_ENV_TIA_BIT(0x03) | (0x3Full << 0x15) | GPU_ENV_TIA_BIT(0x20) |
                           GPU_ENV_TIA_BIT(0x21) | GPU_ENV_TIA_BIT(0x23) | GPU_ENV_TIA_BIT(0x24) |
                           GPU_ENV_TIA_BIT(0x2B) | (0x7FFFFull << 0x2D),
};
#undef GPU_ENV_TIA_BIT

// True when the enabled bit `bit` reads `on`.
HD bool tia_enabled_is(const Tia& t, uint8_t bit, bool on) { return ((t.enabled & bit) != 0) == on; }

// True when the players' shown graphics and enabled bits are those tia_refresh_players computes for
// GRP0/GRP1 = g0/g1, VDELP0/VDELP1 = vdel0/vdel1 (the delayed registers as they are now).
HD bool tia_players_would_stay(const Tia& t, uint8_t g0, uint8_t g1, uint8_t vdel0, uint8_t vdel1) {
  const uint8_t shown0 = vdel0 ? t.dgrp0 : g0, shown1 = vdel1 ? t.dgrp1 : g1;
  return t.current_grp0 == (t.refp0 ? tia_reverse8(shown0) : shown0) &&
         t.current_grp1 == (t.refp1 ? tia_reverse8(shown1) : shown1) && tia_enabled_is(t, kTiaP0, shown0 != 0) &&
         tia_enabled_is(t, kTiaP1, shown1 != 0);
}

// True when writing `value` to register `reg` (a colour, playfield, CTRLPF, REFPx, NUSIZx, GRPx, ENAxx or
// VDELxx register) at line position `hpos` leaves every field tia_poke's write would set as it is, so the
// write changes nothing the picture is drawn from, also after the updates still pending (tia_end_of_line
// sets no field checked here to another value than the write's). False for the other registers.
HD_FORCEINLINE bool tia_write_keeps_state(const Tia& t, uint8_t reg, uint8_t value, int32_t hpos) {
  switch (reg) {
    // (the end of a line may step the Cosmic Ark missile's mask kind, which NUSIZ0 resets: not while armed)
    case 0x04:
      return t.nusiz0 == value && !t.p0_skip_first && t.m0_mask_kind == kMissileMaskNormal && !t.m0_cosmic_enabled;
    case 0x05: return t.nusiz1 == value && !t.p1_skip_first;
    case 0x06: return t.color[2] == tia_color_value(t, value);
    case 0x07: return t.color[3] == tia_color_value(t, value);
    case 0x08: return t.color[1] == tia_color_value(t, value);
    case 0x09: return t.color[0] == tia_color_value(t, value);
    case 0x0A:
      return t.ctrlpf == value && t.priority_score == static_cast<uint8_t>((value & 0x06) << 5) &&
             (hpos >= kTiaHBlank + 79 || t.pf_mask_reflect == (value & 1));
    case 0x0B: return ((value & 0x08) != 0) == (t.refp0 != 0);
    case 0x0C: return ((value & 0x08) != 0) == (t.refp1 != 0);
    case 0x0D: case 0x0E: case 0x0F:
      return tia_pf_write(t.pf, reg, value) == t.pf && tia_enabled_is(t, kTiaPF, t.pf != 0);
    case 0x1B:
      return t.grp0 == value && t.dgrp1 == t.grp1 && tia_players_would_stay(t, value, t.grp1, t.vdelp0, t.vdelp1);
    case 0x1C:
      return t.grp1 == value && t.dgrp0 == t.grp0 && t.denabl == t.enabl &&
             tia_players_would_stay(t, t.grp0, value, t.vdelp0, t.vdelp1) &&
             tia_enabled_is(t, kTiaBL, t.vdelbl ? t.denabl : t.enabl);
    case 0x1D: {
      const uint8_t on = (value & 0x02) ? 1 : 0;
      return t.enam0 == on && tia_enabled_is(t, kTiaM0, on && !t.resmp0);
    }
    case 0x1E: {
      const uint8_t on = (value & 0x02) ? 1 : 0;
      return t.enam1 == on && tia_enabled_is(t, kTiaM1, on && !t.resmp1);
    }
    case 0x1F: {
      const uint8_t on = (value & 0x02) ? 1 : 0;
      return t.enabl == on && tia_enabled_is(t, kTiaBL, t.vdelbl ? t.denabl : on);
    }
    case 0x25:
      return t.vdelp0 == (value & 1) && tia_players_would_stay(t, t.grp0, t.grp1, value & 1, t.vdelp1);
    case 0x26:
      return t.vdelp1 == (value & 1) && tia_players_would_stay(t, t.grp0, t.grp1, t.vdelp0, value & 1);
    case 0x27: return t.vdelbl == (value & 1) && tia_enabled_is(t, kTiaBL, (value & 1) ? t.denabl : t.enabl);
    default: return false;
  }
}

// True when the write to `reg` changes nothing a frame drawn without pixels (kTiaDrawNone) computes from
// here to the next update: such a frame computes only the collision latches (and the line bookkeeping), so
// a colour register never enters it, and a playfield register only enters the latches the playfield is part
// of, which no enabled object can set now (none is on, or they are set already; a latch is only cleared by
// CXCLR, whose write updates first). The update that follows computes the pending span with the new value
// and sets the same latches.
HD_FORCEINLINE bool tia_write_unseen(const Tia& t, uint8_t reg) {
  if (t.draw_mode != kTiaDrawNone) return false;
  if (reg >= 0x06 && reg <= 0x09) return true;
  return reg >= 0x0D && reg <= 0x0F &&
         (tia_collisions_of(static_cast<uint8_t>(t.enabled | kTiaPF)) & tia_latches_of(kTiaPF) & ~t.collision) == 0;
}

// A CPU write. Returns true when the write ends the frame (the CPU must stop after this instruction).
// `cycles` is the system cycle counter (WSYNC advances it); `last_access_was_read` is the CPU's flag.
//
// ALE brings the picture up to date at every write (to the write's clock plus its delay). A write to a
// kTiaNoPictureRegisters register, one that leaves its register's fields as they are
// (tia_write_keeps_state), or one a frame drawn without pixels does not see (tia_write_unseen), leaves that
// to the next update (the next other write, a read, or console_frame
// for an interrupted frame) and records the clock in `deferred_clock`: the pixels, latches and end-of-line
// steps are the same, because nothing they depend on changes in between and drawing a line in one span or
// in two gives the same pixels. It does so only while no HMOVE blank is pending (the blank's fill depends on
// where each update ends) and when the write does not end the frame.
//
// On the host the write is compiled into its one caller, the console's out-of-line I/O write (console.h).
#if GPU_ENV_DEVICE
#define GPU_ENV_TIA_POKE HD
#else
#define GPU_ENV_TIA_POKE inline __attribute__((always_inline))
#endif
GPU_ENV_TIA_POKE bool tia_poke(Tia& t, uint8_t* fb, uint16_t address, uint8_t value, uint32_t& cycles,
                               uint8_t last_access_was_read) {
  const uint8_t reg = static_cast<uint8_t>(address & 0x3F);
  const int32_t clock = static_cast<int32_t>(cycles * 3);
  // The line and the position on it, computed once (tia_update_frame does not move the frame start).
  const int32_t since_frame_start = clock - t.clock_when_frame_started;
  const int32_t line = since_frame_start / kTiaLineClocks;
  const int32_t hpos = since_frame_start - line * kTiaLineClocks;
  bool stop = false;
  if (line > t.max_scanlines) {
    stop = true;
    t.partial_frame = 0;
  }
  const int32_t update_clock = clock + tia_write_delay(reg, hpos);
  if (!t.hmove_blank_enabled && !stop &&
      (((kTiaNoPictureRegisters >> reg) & 1u) || tia_write_unseen(t, reg) || tia_write_keeps_state(t, reg, value, hpos))) {
    if (update_clock > t.deferred_clock) t.deferred_clock = update_clock;
  } else {
    tia_update_frame(t, fb, update_clock);
  }
  switch (reg) {
    case 0x00:  // VSYNC
      t.vsync = value;
      if (value & 0x02) {
        t.vsync_finish_clock = clock + kTiaLineClocks;
      } else if (clock >= t.vsync_finish_clock) {
        t.vsync_finish_clock = kTiaNoVsyncEnd;
        stop = true;
        t.partial_frame = 0;
      }
      break;
    case 0x01:  // VBLANK (D7: dump paddle capacitors)
      if (!(t.vblank & 0x80) && (value & 0x80)) t.dump_enabled = 1;
      if ((t.vblank & 0x80) && !(value & 0x80)) {
        t.dump_enabled = 0;
        t.dump_disabled_cycle = static_cast<int32_t>(cycles);
      }
      t.vblank = value;
      break;
    case 0x02:  // WSYNC: halts only when the CPU's previous access was a read (ale-py's default CPU core)
      if (last_access_was_read) {
        const uint32_t into_line = (cycles - static_cast<uint32_t>(t.clock_when_frame_started / 3)) % 76u;
        const uint32_t to_end = 76u - into_line;
        if (to_end < 76u) cycles += to_end;
      }
      break;
    case 0x04:  // NUSIZ0
      t.nusiz0 = value;
      t.p0_skip_first = 0;
      t.m0_mask_kind = kMissileMaskNormal;
      break;
    case 0x05:  // NUSIZ1
      t.nusiz1 = value;
      t.p1_skip_first = 0;
      break;
    case 0x06: t.color[2] = tia_color_value(t, value); break;
    case 0x07: t.color[3] = tia_color_value(t, value); break;
    case 0x08: t.color[1] = tia_color_value(t, value); break;
    case 0x09: t.color[0] = tia_color_value(t, value); break;
    case 0x0A:  // CTRLPF
      t.ctrlpf = value;
      t.priority_score = static_cast<uint8_t>((value & 0x06) << 5);
      if (hpos < kTiaHBlank + 79) t.pf_mask_reflect = value & 1;
      break;
    case 0x0B:  // REFP0
      if (((value & 0x08) != 0) != (t.refp0 != 0)) {
        t.refp0 = (value & 0x08) ? 1 : 0;
        t.current_grp0 = tia_reverse8(t.current_grp0);
      }
      break;
    case 0x0C:  // REFP1
      if (((value & 0x08) != 0) != (t.refp1 != 0)) {
        t.refp1 = (value & 0x08) ? 1 : 0;
        t.current_grp1 = tia_reverse8(t.current_grp1);
      }
      break;
    case 0x0D: case 0x0E: case 0x0F:  // PF0, PF1, PF2
      t.pf = tia_pf_write(t.pf, reg, value);
      tia_set_enabled(t, kTiaPF, t.pf != 0);
      break;
    case 0x10: case 0x11: {  // RESP0, RESP1
      const int32_t newx = hpos < kTiaHBlank ? 3 : ((hpos - kTiaHBlank) + 5) % 160;
      int16_t& pos = reg == 0x10 ? t.posp0 : t.posp1;
      uint8_t& skip = reg == 0x10 ? t.p0_skip_first : t.p1_skip_first;
      const uint8_t nusiz = reg == 0x10 ? t.nusiz0 : t.nusiz1;
      const int when = tia_player_reset_when(nusiz & 7, static_cast<uint32_t>(pos), static_cast<uint32_t>(newx));
      if (when == 1) tia_update_frame(t, fb, clock + 11);
      pos = static_cast<int16_t>(newx);
      skip = when == -1 ? 0 : 1;
      break;
    }
    case 0x12: {  // RESM0
      int32_t pos = hpos < kTiaHBlank ? 2 : ((hpos - kTiaHBlank) + 4) % 160;
      if (clock - t.last_hmove_clock == 20 * 3 && hpos == 69) pos = 8;
      t.posm0 = static_cast<int16_t>(pos);
      t.m0_mask_kind = kMissileMaskNormal;
      break;
    }
    case 0x13: {  // RESM1
      int32_t pos = hpos < kTiaHBlank ? 2 : ((hpos - kTiaHBlank) + 4) % 160;
      if (clock - t.last_hmove_clock == 3 * 3 && hpos == 18) pos = 3;
      t.posm1 = static_cast<int16_t>(pos);
      break;
    }
    case 0x14:  // RESBL
      t.posbl = static_cast<int16_t>(tia_resbl_position(hpos, clock - t.last_hmove_clock));
      break;
    case 0x1B:  // GRP0 (also latches GRP1 into its delay register)
      t.grp0 = value;
      t.dgrp1 = t.grp1;
      tia_refresh_players(t);
      break;
    case 0x1C:  // GRP1 (also latches GRP0 and ENABL into their delay registers)
      t.grp1 = value;
      t.dgrp0 = t.grp0;
      t.denabl = t.enabl;
      tia_refresh_players(t);
      tia_set_enabled(t, kTiaBL, t.vdelbl ? t.denabl : t.enabl);
      break;
    case 0x1D:  // ENAM0
      t.enam0 = (value & 0x02) ? 1 : 0;
      tia_set_enabled(t, kTiaM0, t.enam0 && !t.resmp0);
      break;
    case 0x1E:  // ENAM1
      t.enam1 = (value & 0x02) ? 1 : 0;
      tia_set_enabled(t, kTiaM1, t.enam1 && !t.resmp1);
      break;
    case 0x1F:  // ENABL
      t.enabl = (value & 0x02) ? 1 : 0;
      tia_set_enabled(t, kTiaBL, t.vdelbl ? t.denabl : t.enabl);
      break;
    case 0x20: t.hmp0 = static_cast<int8_t>(value >> 4); break;
    case 0x21: t.hmp1 = static_cast<int8_t>(value >> 4); break;
    case 0x22: {  // HMM0 (arms the Cosmic Ark starfield bug when 7 -> 6 exactly 21 cycles after HMOVE)
      const int8_t hm = static_cast<int8_t>(value >> 4);
      if (clock == t.last_hmove_clock + 21 * 3 && t.hmm0 == 7 && hm == 6) {
        t.m0_cosmic_enabled = 1;
        t.m0_cosmic_counter = 0;
      }
      t.hmm0 = hm;
      break;
    }
    case 0x23: t.hmm1 = static_cast<int8_t>(value >> 4); break;
    case 0x24: t.hmbl = static_cast<int8_t>(value >> 4); break;
    case 0x25:  // VDELP0
      t.vdelp0 = value & 1;
      tia_refresh_players(t);
      break;
    case 0x26:  // VDELP1
      t.vdelp1 = value & 1;
      tia_refresh_players(t);
      break;
    case 0x27:  // VDELBL
      t.vdelbl = value & 1;
      tia_set_enabled(t, kTiaBL, t.vdelbl ? t.denabl : t.enabl);
      break;
    case 0x28:  // RESMP0
      if (t.resmp0 && !(value & 0x02)) {
        t.posm0 = static_cast<int16_t>((t.posp0 + tia_missile_player_middle(t.nusiz0)) % 160);
        t.m0_mask_kind = kMissileMaskNormal;
      }
      t.resmp0 = (value & 0x02) ? 1 : 0;
      tia_set_enabled(t, kTiaM0, t.enam0 && !t.resmp0);
      break;
    case 0x29:  // RESMP1
      if (t.resmp1 && !(value & 0x02)) {
        t.posm1 = static_cast<int16_t>((t.posp1 + tia_missile_player_middle(t.nusiz1)) % 160);
      }
      t.resmp1 = (value & 0x02) ? 1 : 0;
      tia_set_enabled(t, kTiaM1, t.enam1 && !t.resmp1);
      break;
    case 0x2A: {  // HMOVE
      const int cycle = hpos / 3;
      if (t.allow_hmove_blanks && tia_hmove_blank_cycle(cycle)) t.hmove_blank_enabled = 1;
      t.posp0 = tia_wrap160(t.posp0 + tia_motion(cycle, t.hmp0));
      t.posp1 = tia_wrap160(t.posp1 + tia_motion(cycle, t.hmp1));
      t.posm0 = tia_wrap160(t.posm0 + tia_motion(cycle, t.hmm0));
      t.posm1 = tia_wrap160(t.posm1 + tia_motion(cycle, t.hmm1));
      t.posbl = tia_wrap160(t.posbl + tia_motion(cycle, t.hmbl));
      t.p0_skip_first = 0;
      t.p1_skip_first = 0;
      t.m0_mask_kind = kMissileMaskNormal;
      t.last_hmove_clock = clock;
      t.m0_cosmic_enabled = 0;
      break;
    }
    case 0x2B:  // HMCLR
      t.hmp0 = t.hmp1 = t.hmm0 = t.hmm1 = t.hmbl = 0;
      break;
    case 0x2C:  // CXCLR
      t.collision = 0;
      break;
    default:  // RSYNC, audio registers and unused addresses: no effect on picture or CPU
      break;
  }
  return stop;
}

// A CPU read of TIA register `address & 0x0F`: D7/D6 as the hardware, D5-D0 the data-bus latch.
// Only the collision latches (registers 0-7) depend on the picture: a read of another register defers the
// update as a no-picture write does (tia_poke; paddle games read INPT0-3 on every line).
HD uint8_t tia_peek(Tia& t, uint8_t* fb, uint16_t address, uint32_t cycles, uint8_t data_bus,
                    const TiaInputs& in) {
  const uint8_t reg = address & 0x0F;
  const int32_t clock = static_cast<int32_t>(cycles * 3);
  if (reg >= 8 && !t.hmove_blank_enabled) {
    if (clock > t.deferred_clock) t.deferred_clock = clock;
  } else {
    tia_update_frame(t, fb, clock);
  }
  const uint8_t noise = data_bus & 0x3F;
  if (reg < 8) return static_cast<uint8_t>(tia_collision_read(t.collision, reg) | noise);
  if (reg < 12) {
    const int i = reg - 8;
    return static_cast<uint8_t>(
        tia_pot_read(in.pot[i], in.pot_charge[i], t.dump_enabled, t.dump_disabled_cycle, cycles) | noise);
  }
  if (reg == 12) return static_cast<uint8_t>(((in.fire & 1) ? 0x80 : 0) | noise);
  if (reg == 13) return static_cast<uint8_t>(((in.fire & 2) ? 0x80 : 0) | noise);
  return noise;
}
