// Frames nobody observes: emulated without drawing their pixels, drawn again from a snapshot only if a
// later read needs them. The one rule both the CPU library and the CUDA kernels run (core/ale calls it).
//
// A TIA::update() (console_frame) runs the CPU, and the TIA computes what the CPU can read (collision
// latches, the frame boundary, INPT, paddles, RAM through the CPU) from its registers, never from the frame
// buffer; the buffer is only written. So a frame can be emulated with c.tia.draw_mode = kTiaDrawNone (the
// collision latches still computed span by span, tia_span_collisions) and everything but the buffer ends
// as it would have. What the buffer would have held is a function of the console at the frame's start:
// emulating the same frame again from a copy of that console writes the same bytes.
//
// The bytes a frame leaves are read later, beyond the obvious read of its picture:
// * a frame writes bytes [0, draw_extent) of its buffer and leaves the rest: a short frame shows the
//   rows of the frame two updates earlier (ALE swaps the two buffers at every frame start);
// * an interrupted frame greys the rows it has not reached, from what the buffer holds.
// FrameRecord keeps, per buffer, whether its last frame was drawn, and if not the console at that frame's
// start and its extent. frames_update keeps this invariant after every update: every byte of both buffers
// is what ALE would hold, except the bytes [0, extent[b]) of a buffer b with pending[b], which
// frames_redraw writes on demand. To keep it:
// * a frame that reaches less far than the buffer's pending frame gets the pending frame's bytes past its
//   own extent redrawn (only those: a window in the buffer, kTiaDrawWindow);
// * a frame that is interrupted is drawn after all (from its start, once the buffer holds the old frame);
// * frames_observe draws the current buffer's pending frame before anything reads the picture.
// The drawing is exact whenever it happens, so the only cost of a wrong guess of "observed" is time.
#pragma once

#include "console.h"
#include "hd.h"

struct FrameRecord {
  Console start[2];    // buffer b's last frame, when pending: the console as its TIA::update() began
  int32_t extent[2];   // the bytes [0, extent[b]) of buffer b that frame would have written
  uint8_t pending[2];  // buffer b's last frame was not drawn
  // TIA::update() calls run drawing and run without drawing; frames drawn again from their start because
  // their picture was read (frames_observe), for the part a shorter frame left, and interrupted frames.
  uint32_t drawn, skipped, redrawn_read, redrawn_part, redrawn_interrupted;
};

// to = from, every byte (padding too: the record is part of a saved state, which must not depend on what a
// stack slot held).
HD void frames_copy(Console& to, const Console& from) {
#if GPU_ENV_DEVICE
  static_assert(sizeof(Console) % sizeof(uint64_t) == 0, "Console is copied in 8-byte words");
  uint64_t* d = reinterpret_cast<uint64_t*>(&to);
  const uint64_t* s = reinterpret_cast<const uint64_t*>(&from);
  for (uint32_t i = 0; i < sizeof(Console) / sizeof(uint64_t); ++i) d[i] = s[i];
#else
  __builtin_memcpy(&to, &from, sizeof(Console));
#endif
}

// The buffers were overwritten from outside (system reset, an imported picture): nothing is pending.
HD void frames_forget(FrameRecord& f) {
  f.pending[0] = 0;
  f.pending[1] = 0;
}

// Draw buffer b's pending frame again from its start, writing only the buffer bytes [lo, hi); it is no
// longer pending. A pending frame was never interrupted, so its one TIA::update() completes it again.
// Returns whether it drew.
HD bool frames_redraw(FrameRecord& f, uint8_t b, int32_t lo, int32_t hi, const uint8_t* rom, uint32_t rom_size,
                      uint8_t* buffers) {
  f.pending[b] = 0;
  if (lo >= hi) return false;
  Console& c = f.start[b];
  c.tia.draw_mode = kTiaDrawWindow;
  c.tia.draw_lo = lo;
  c.tia.draw_hi = hi;
  console_frame_run(c, rom, rom_size, buffers);
  return true;
}

// Make the current buffer hold its frame's picture (draw it if it was not drawn): call before reading it.
HD void frames_observe(const Console& c, FrameRecord& f, const uint8_t* rom, uint32_t rom_size, uint8_t* buffers) {
  const uint8_t b = c.tia.current_buffer;
  if (f.pending[b] && frames_redraw(f, b, 0, f.extent[b], rom, rom_size, buffers)) f.redrawn_read += 1;
}

// One TIA::update() (console_frame), its pixels drawn when `observed` (or when it continues an interrupted
// frame), otherwise only emulated; see the invariant above.
HD void frames_update(Console& c, FrameRecord& f, const uint8_t* rom, uint32_t rom_size, uint8_t* buffers,
                      bool observed) {
  const bool fresh = !c.tia.partial_frame;
  const uint8_t b = fresh ? static_cast<uint8_t>(c.tia.current_buffer ^ 1) : c.tia.current_buffer;
  const bool skip = fresh && !observed;
  // The start of a skipped frame goes straight into its slot unless that slot still holds the pending frame
  // this one may have to redraw.
  Console spare;
  Console* start = f.pending[b] ? &spare : &f.start[b];
  if (skip) frames_copy(*start, c);
  c.tia.draw_mode = skip ? kTiaDrawNone : kTiaDrawAll;
  const bool interrupted = console_frame_run(c, rom, rom_size, buffers);
  const int32_t reach = c.tia.draw_extent;
  if (f.pending[b] && frames_redraw(f, b, reach, f.extent[b], rom, rom_size, buffers)) f.redrawn_part += 1;
  if (skip && interrupted) {
    // An interrupted frame greys the rows it has not reached from what the buffer holds: draw it after all.
    frames_copy(c, *start);
    c.tia.draw_mode = kTiaDrawAll;
    console_frame_run(c, rom, rom_size, buffers);
    f.redrawn_interrupted += 1;
  } else if (skip) {
    if (start != &f.start[b]) frames_copy(f.start[b], *start);
    f.extent[b] = reach;
    f.pending[b] = 1;
  }
  if (skip) {
    f.skipped += 1;
  } else {
    f.drawn += 1;
  }
  if (interrupted) console_frame_grey(c, buffers);
}
