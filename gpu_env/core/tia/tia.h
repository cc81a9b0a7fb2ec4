// The TIA as ale-py 0.12 emulates it (Stella 2.x-era core, ALE src/ale/emucore/TIA.cxx): frame
// timing, register writes with their delays and quirks, reads with data-bus noise. Facts come from
// ALE's sources; the code is our own. The objects live in their own headers (playfield.h, player.h,
// missile.h, ball.h, collisions.h, priority.h, motion.h, write_delay.h, inputs.h), the state struct
// in state.h, the scanline renderer in render.h, the picture over time (reset, updates, frame start and end)
// in frame.h and the CPU's register writes and reads in registers.h.
//
// An ALE import rebuilds the few fields ALE keeps outside its serialized state (mask pointers,
// frame pointer): see tia_import_fixup in native/batch.cpp.
#pragma once

#include "frame.h"
#include "registers.h"
