// The TIA's picture over time (tia.h says which TIA this is): reset, bringing the picture up to a colour clock
// (ALE updateFrame) as the frame's draw mode says, the end of a scanline, and the frame's start, end and grey-out.
//
// Frame buffers: the caller owns two palette-index buffers of 160 x height bytes each; `current_buffer`
// says which one the frame in progress is drawn into (ALE swaps them at every frame start, so rows a
// short frame does not reach keep the picture of two frames ago).
#pragma once

#include "../hd.h"
#include "missile.h"
#include "render.h"
#include "state.h"

// TIA::reset + frameReset at system cycle `cycles` (registers zeroed, the draw mode kept; the caller clears
// both buffers).
HD void tia_reset(Tia& t, uint32_t cycles) {
  const int32_t ystart = t.ystart, height = t.height, max_lines = t.max_scanlines;
  const uint8_t loss = t.color_loss, blanks = t.allow_hmove_blanks, partial = t.partial_frame;
  const uint8_t greyed = t.frame_greyed, buffer = t.current_buffer, mode = t.draw_mode;
  const int32_t draw_lo = t.draw_lo, draw_hi = t.draw_hi;
  uint8_t* raw = reinterpret_cast<uint8_t*>(&t);
  for (uint32_t i = 0; i < sizeof(Tia); ++i) raw[i] = 0;
  t.ystart = ystart; t.height = height; t.max_scanlines = max_lines;
  t.color_loss = loss; t.allow_hmove_blanks = blanks;
  t.partial_frame = partial; t.frame_greyed = greyed; t.current_buffer = buffer;
  t.draw_mode = mode; t.draw_lo = draw_lo; t.draw_hi = draw_hi;
  t.clock_when_frame_started = static_cast<int32_t>(cycles * 3);
  t.clock_start_display = t.clock_when_frame_started + kTiaLineClocks * ystart;
  t.clock_stop_display = t.clock_start_display + kTiaLineClocks * height;
  t.clock_at_last_update = t.clock_when_frame_started;
  t.clocks_to_end_of_scanline = kTiaLineClocks;
  t.vsync_finish_clock = kTiaNoVsyncEnd;
}

// What ALE does when a displayed scanline ends: rebuild the playfield and player masks and step
// the Cosmic Ark missile.
HD void tia_end_of_line(Tia& t) {
  t.pf_mask_reflect = t.ctrlpf & 1;
  t.p0_skip_first = 0;
  t.p1_skip_first = 0;
  if (t.m0_cosmic_enabled) {
    t.m0_cosmic_counter = (t.m0_cosmic_counter + 1) & 3;
    int32_t pos = t.posm0 - tia_cosmic_ark_shift(t.m0_cosmic_counter);
    if (pos >= 160) pos -= 160;
    else if (pos < 0) pos += 160;
    t.posm0 = static_cast<int16_t>(pos);
    t.m0_mask_kind = t.m0_cosmic_counter == 1 ? kMissileMaskStretched
                     : (t.m0_cosmic_counter == 2 ? kMissileMaskHidden : kMissileMaskNormal);
  }
}

// Pixels [lo, hi) of the current line, `blanks` HMOVE-blank bytes at its first one (`at`: its byte in the
// frame buffer, `reach`: the end of what the update writes), as t.draw_mode says: drawn into the buffer,
// only their collision latches computed, or drawn into a line of its own and copied where the buffer bytes
// lie in the window.
HD void tia_draw_part(Tia& t, uint8_t* fb, int32_t at, int32_t reach, int32_t lo, int32_t hi, int32_t blanks) {
  const uint8_t mode = t.draw_mode;
  const bool inside = mode == kTiaDrawAll || (mode == kTiaDrawWindow && at >= t.draw_lo && reach <= t.draw_hi);
  if (!inside && (mode == kTiaDrawNone || reach <= t.draw_lo || at >= t.draw_hi)) {
    if (hi > lo) tia_span_collisions(t, lo, hi);
    return;
  }
  uint8_t line[kTiaHBlank + 160];  // pixel x at line[68 + x], x from -68 (an update ending inside HBLANK)
  uint8_t* p = inside ? fb + at - lo : line + kTiaHBlank;  // indexed by pixel x
  if (hi > lo) tia_draw_span(t, p, lo, hi);
  if (blanks) tia_fill(p + lo, 0, blanks, 0);  // up to 76 bytes when the update ends inside HBLANK
  if (inside) return;
  const int32_t from = at > t.draw_lo ? at : t.draw_lo, to = reach < t.draw_hi ? reach : t.draw_hi;
  for (int32_t b = from; b < to; ++b) fb[b] = p[lo + (b - at)];
}

// Bring the picture up to colour clock `clock` (ALE updateFrame), drawing as t.draw_mode says.
// On the host it stays out of line: inlined into the register write (console_poke_io), its line buffer and
// registers gave every write, deferred ones included, a 344-byte frame and six saved registers.
HD_HOST_NOINLINE void tia_update_frame(Tia& t, uint8_t* fb, int32_t clock) {
  if (clock < t.clock_start_display || t.clock_at_last_update >= t.clock_stop_display ||
      t.clock_at_last_update >= clock) {
    return;
  }
  if (clock > t.clock_stop_display) clock = t.clock_stop_display;
  do {
    int32_t count;
    int32_t from_line_start = kTiaLineClocks - t.clocks_to_end_of_scanline;
    if (clock > t.clock_at_last_update + t.clocks_to_end_of_scanline) {
      count = t.clocks_to_end_of_scanline;
      t.clocks_to_end_of_scanline = kTiaLineClocks;
      t.clock_at_last_update += count;
    } else {
      count = clock - t.clock_at_last_update;
      t.clocks_to_end_of_scanline -= count;
      t.clock_at_last_update = clock;
    }
    if (from_line_start < kTiaHBlank) {
      const int32_t skip = (kTiaHBlank - from_line_start) < count ? kTiaHBlank - from_line_start : count;
      from_line_start += skip;
      count -= skip;
    }
    const int32_t at = t.frame_pointer;
    t.frame_pointer += count;
    const bool blanking = t.hmove_blank_enabled && from_line_start < kTiaHBlank + 8;
    const int32_t blanks = blanking ? kTiaHBlank + 8 - from_line_start : 0;
    const int32_t reach = at + (count > blanks ? count : blanks);
    if (reach > at) {
      if (reach > t.draw_extent) t.draw_extent = reach;
      const int32_t lo = from_line_start - kTiaHBlank;
      tia_draw_part(t, fb, at, reach, lo, lo + count, blanks);
    }
    if (blanking && count + from_line_start >= kTiaHBlank + 8) t.hmove_blank_enabled = 0;
    if (t.clocks_to_end_of_scanline == kTiaLineClocks) tia_end_of_line(t);
  } while (t.clock_at_last_update < clock);
}

// ------------------------------------------------------------------------------------------------
// Frame boundaries.

// The TIA part of System::resetCycles (all clocks move back by `cycles` CPU cycles).
HD void tia_system_cycles_reset(Tia& t, uint32_t cycles) {
  const uint32_t clocks = cycles * 3;
  t.dump_disabled_cycle = static_cast<int32_t>(static_cast<uint32_t>(t.dump_disabled_cycle) - cycles);
  t.clock_when_frame_started = static_cast<int32_t>(static_cast<uint32_t>(t.clock_when_frame_started) - clocks);
  t.clock_start_display = static_cast<int32_t>(static_cast<uint32_t>(t.clock_start_display) - clocks);
  t.clock_stop_display = static_cast<int32_t>(static_cast<uint32_t>(t.clock_stop_display) - clocks);
  t.clock_at_last_update = static_cast<int32_t>(static_cast<uint32_t>(t.clock_at_last_update) - clocks);
  t.vsync_finish_clock = static_cast<int32_t>(static_cast<uint32_t>(t.vsync_finish_clock) - clocks);
  t.last_hmove_clock = static_cast<int32_t>(static_cast<uint32_t>(t.last_hmove_clock) - clocks);
}

// Colour clocks already elapsed on the current line at system cycle `cycles` (used by startFrame).
HD uint32_t tia_line_phase(const Tia& t, uint32_t cycles) {
  return (cycles * 3 - static_cast<uint32_t>(t.clock_when_frame_started)) % 228u;
}

// ALE startFrame after the system cycle counter was reset: `phase` = tia_line_phase before the reset.
HD void tia_begin_frame(Tia& t, uint32_t phase) {
  t.current_buffer ^= 1;
  t.clock_when_frame_started = -static_cast<int32_t>(phase);
  t.clock_start_display = t.clock_when_frame_started + kTiaLineClocks * t.ystart;
  t.clock_stop_display = t.clock_start_display + kTiaLineClocks * t.height;
  t.clock_at_last_update = t.clock_start_display;
  t.clocks_to_end_of_scanline = kTiaLineClocks;
  t.frame_pointer = 0;
  t.draw_extent = 0;
  if (t.color_loss) {
    const uint8_t odd = static_cast<uint8_t>(t.scanline_count_last_frame & 1);
    for (int i = 0; i < 4; ++i) t.color[i] = static_cast<uint8_t>((t.color[i] & 0xFE) | odd);
  }
  t.frame_greyed = 0;
}

HD uint32_t tia_scanlines(const Tia& t, uint32_t cycles) {
  return (cycles * 3 - static_cast<uint32_t>(t.clock_when_frame_started)) / 228u;
}

// ALE greyOutFrame: rows not drawn yet in an interrupted frame become (pixel & 0x0F) >> 1 (the bytes
// t.draw_mode lets the frame write).
HD void tia_grey_out(const Tia& t, uint8_t* fb, uint32_t cycles) {
  if (t.draw_mode == kTiaDrawNone) return;
  uint32_t c = tia_scanlines(t, cycles);
  const uint32_t ystart = static_cast<uint32_t>(t.ystart), end = ystart + static_cast<uint32_t>(t.height);
  if (c < ystart) c = ystart;
  const bool window = t.draw_mode == kTiaDrawWindow;
  for (uint32_t s = c; s < end; ++s) {
    const int32_t row_at = static_cast<int32_t>((s - ystart) * 160u);
    uint8_t* row = fb + row_at;
    for (int32_t i = 0; i < 160; ++i) {
      if (window && (row_at + i < t.draw_lo || row_at + i >= t.draw_hi)) continue;
      row[i] = static_cast<uint8_t>((row[i] & 0x0F) >> 1);
    }
  }
}
