// TIA state: one plain struct per environment (see tia.h for what the fields mean to ALE).
//
// Fields up to `dump_disabled_cycle` mirror ALE's serialized TIA block (TIA::save order), so an
// ale-py cloneState() maps onto it 1:1; the fields after it are what ALE keeps in mask pointers and
// unsaved members, plus the per-ROM configuration.
#pragma once

#include "../hd.h"

enum : int32_t { kTiaHBlank = 68, kTiaLineClocks = 228, kTiaNoVsyncEnd = 0x7FFFFFFF, kTiaNoDeferredClock = -0x7FFFFFFF - 1 };

// Which pixels a frame writes into its buffer (Tia::draw_mode): every one (the default, and what a zeroed
// Tia does), none (only the collision latches are computed: a frame nobody observes), or only the buffer
// bytes in [draw_lo, draw_hi) (a frame drawn again to restore the part of it a later frame left).
enum : uint8_t { kTiaDrawAll = 0, kTiaDrawNone = 1, kTiaDrawWindow = 2 };

struct TiaInputs {
  int32_t pot[4];           // resistance read by INPT0..INPT3 (0 = always charged, 0x7FFFFFFF = never)
  uint32_t pot_charge[4];   // tia_pot_charge_cycles(pot[i]), computed once per frame
  uint8_t fire;             // bit 0: INPT4 D7, bit 1: INPT5 D7 (1 = button not pressed)
};

struct Tia {
  // ---- ALE-serialized fields (TIA::save order) ----
  int32_t clock_when_frame_started, clock_start_display, clock_stop_display, clock_at_last_update;
  int32_t clocks_to_end_of_scanline, scanline_count_last_frame, current_scanline, vsync_finish_clock;
  uint8_t enabled;  // kTia* object bits whose registers are on
  uint8_t vsync, vblank, nusiz0, nusiz1;
  uint8_t color[4];  // COLUBK, COLUPF, COLUP0, COLUP1 (palette index, bit 0 = PAL colour loss)
  uint8_t ctrlpf, priority_score, refp0, refp1;
  uint32_t pf;
  uint8_t grp0, grp1, dgrp0, dgrp1, enam0, enam1, enabl, denabl;
  int8_t hmp0, hmp1, hmm0, hmm1, hmbl;
  uint8_t vdelp0, vdelp1, vdelbl, resmp0, resmp1;
  uint16_t collision;
  int16_t posp0, posp1, posm0, posm1, posbl;
  uint8_t current_grp0, current_grp1;
  int32_t last_hmove_clock;
  uint8_t hmove_blank_enabled, m0_cosmic_enabled;
  uint32_t m0_cosmic_counter;
  uint8_t dump_enabled;
  int32_t dump_disabled_cycle;
  // ---- not serialized by ALE ----
  uint8_t p0_skip_first, p1_skip_first;  // first copy suppressed after RESPx (ALE: mask "enable" index 1)
  uint8_t pf_mask_reflect;               // reflection the playfield mask was last built with
  uint8_t m0_mask_kind;                  // kMissileMask* (Cosmic Ark variants)
  uint8_t partial_frame, frame_greyed, current_buffer;
  uint8_t lut_valid, lut_ps;             // cache tag of `lut`
  uint8_t lut[2][64];                    // object code -> colour register, left / right half
  int32_t frame_pointer;                 // next pixel of the current buffer to draw
  // Clock of the last write whose picture update was deferred (tia_poke), kTiaNoDeferredClock when none
  // in this console_frame call; only an interrupted frame still needs it (console_frame).
  int32_t deferred_clock;
  // What the frame writes into its buffer: kTiaDraw*, the window of kTiaDrawWindow, and the end of the
  // bytes [0, draw_extent) the frame's updates have covered (drawn or not) since it began.
  uint8_t draw_mode;
  int32_t draw_lo, draw_hi, draw_extent;
  // ---- per-ROM configuration ----
  int32_t ystart, height, max_scanlines;
  uint8_t color_loss, allow_hmove_blanks;
};

HD void tia_configure(Tia& t, int32_t ystart, int32_t height, bool pal, bool hmove_blanks) {
  t.ystart = ystart;
  t.height = height;
  t.max_scanlines = pal ? 342 : 290;
  t.color_loss = pal ? 1 : 0;
  t.allow_hmove_blanks = hmove_blanks ? 1 : 0;
}

HD uint8_t* tia_buffer(const Tia& t, uint8_t* buffers) {
  return buffers + static_cast<uint32_t>(t.current_buffer) * 160u * static_cast<uint32_t>(t.height);
}

