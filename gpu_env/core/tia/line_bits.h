// One scanline's objects as 160-bit occupancy bitmaps (three 64-bit words, bit x = pixel x), and the
// collision latches as pairwise ANDs of them: a latch is set when some pixel shows both objects, which is
// what the set of object codes the scanline renderer collects tells (render.h). Used where the latches are
// needed without the pixels (a frame nobody observes, tia_span_collisions) and by the host's AVX-512
// overlay (native/tia_overlay.h), which also builds the pixels from these bitmaps.
#pragma once

#include "../hd.h"
#include "collisions.h"
#include "missile.h"
#include "player.h"
#include "playfield.h"
#include "state.h"

// The occupancy bitmap of one line: pixel x is bit x of w0 (x < 64), of w1 (x - 64) or of w2 (x - 128).
// Three named words, not an array: the compiler keeps them in registers (an array on the stack, written
// and read in different widths, cost store-forwarding stalls).
struct TiaLineBits {
  uint64_t w0, w1, w2;
};

// `pattern` moved to start at bit `at` of a 64-bit word (at may be negative or past the word).
HD_FORCEINLINE uint64_t tia_place(uint64_t pattern, int32_t at) {
  if (at >= 64 || at <= -64) return 0;
  return at >= 0 ? pattern << at : pattern >> -at;
}

// OR the pixels of `pattern` (bit k = pixel x0 + k, at most 32 pixels) into `b`, wrapping at 160.
HD_FORCEINLINE void tia_line_bits_add(TiaLineBits& b, int32_t x0, uint64_t pattern) {
  b.w0 |= tia_place(pattern, x0) | tia_place(pattern, x0 - 160);
  b.w1 |= tia_place(pattern, x0 - 64);
  b.w2 |= tia_place(pattern, x0 - 128);
}

// GRP bits as pixels: pixel k of a copy shows GRP bit 7 - (k >> scale).
HD_FORCEINLINE uint64_t tia_player_pattern(uint8_t grp, uint32_t scale) {
  uint64_t x = tia_reverse8(grp);  // bit k = pixel k for single width
  if (scale == 0) return x;
  if (scale == 1) {
    x = (x | (x << 4)) & 0x0F0Fu;
    x = (x | (x << 2)) & 0x3333u;
    x = (x | (x << 1)) & 0x5555u;
    return x | (x << 1);
  }
  x = (x | (x << 12)) & 0x000F000Fu;
  x = (x | (x << 6)) & 0x03030303u;
  x = (x | (x << 3)) & 0x11111111u;
  return x * 0xFu;
}

// Bits [lo, hi) of the word whose bit 0 is pixel `base`.
HD_FORCEINLINE uint64_t tia_span_word(int32_t lo, int32_t hi, int32_t base) {
  const int32_t a = lo - base, z = hi - base;
  const uint64_t below_z = z >= 64 ? ~0ull : (z <= 0 ? 0ull : (1ull << z) - 1);
  const uint64_t below_a = a >= 64 ? ~0ull : (a <= 0 ? 0ull : (1ull << a) - 1);
  return below_z & ~below_a;
}

HD_FORCEINLINE TiaLineBits tia_span_bits(int32_t lo, int32_t hi) {
  return TiaLineBits{tia_span_word(lo, hi, 0), tia_span_word(lo, hi, 64), tia_span_word(lo, hi, 128)};
}

// The playfield's pixels of one word from its 16 cells there (cell c covers 4 pixels).
HD_FORCEINLINE uint64_t tia_playfield_word(uint64_t cells16) {
  uint64_t x = cells16 & 0xFFFFu;
  x = (x | (x << 24)) & 0x000000FF000000FFull;
  x = (x | (x << 12)) & 0x000F000F000F000Full;
  x = (x | (x << 6)) & 0x0303030303030303ull;
  x = (x | (x << 3)) & 0x1111111111111111ull;
  return x * 0xFu;
}

HD_FORCEINLINE TiaLineBits tia_playfield_bits(uint64_t cells) {
  return TiaLineBits{tia_playfield_word(cells), tia_playfield_word(cells >> 16), tia_playfield_word(cells >> 32)};
}

HD_FORCEINLINE void tia_line_bits_mask(TiaLineBits& b, const TiaLineBits& span) {
  b.w0 &= span.w0;
  b.w1 &= span.w1;
  b.w2 &= span.w2;
}

HD_FORCEINLINE bool tia_line_bits_meet(const TiaLineBits& a, const TiaLineBits& b) {
  return ((a.w0 & b.w0) | (a.w1 & b.w1) | (a.w2 & b.w2)) != 0;
}

// any |= b, with the pixels b shares with `any` (before) added to `two`.
HD_FORCEINLINE void tia_line_bits_accumulate(TiaLineBits& any, TiaLineBits& two, const TiaLineBits& b) {
  two.w0 |= any.w0 & b.w0;
  two.w1 |= any.w1 & b.w1;
  two.w2 |= any.w2 & b.w2;
  any.w0 |= b.w0;
  any.w1 |= b.w1;
  any.w2 |= b.w2;
}

// The latch of the object pair `pair` (two kTia* bits) when bitmaps a and b share a pixel, else 0.
HD_FORCEINLINE uint16_t tia_pair_latch(const TiaLineBits& a, const TiaLineBits& b, uint8_t pair) {
  return tia_line_bits_meet(a, b) ? tia_collisions_of(pair) : static_cast<uint16_t>(0);
}

// The latches set by a line whose six objects occupy the given bitmaps (every pair has one latch).
HD_FORCEINLINE uint16_t tia_line_latches(const TiaLineBits& bp0, const TiaLineBits& bm0, const TiaLineBits& bp1,
                                         const TiaLineBits& bm1, const TiaLineBits& bbl, const TiaLineBits& bpf) {
  return static_cast<uint16_t>(
      tia_pair_latch(bp0, bm0, kTiaP0 | kTiaM0) | tia_pair_latch(bp0, bp1, kTiaP0 | kTiaP1) |
      tia_pair_latch(bp0, bm1, kTiaP0 | kTiaM1) | tia_pair_latch(bp0, bbl, kTiaP0 | kTiaBL) |
      tia_pair_latch(bp0, bpf, kTiaP0 | kTiaPF) | tia_pair_latch(bm0, bp1, kTiaM0 | kTiaP1) |
      tia_pair_latch(bm0, bm1, kTiaM0 | kTiaM1) | tia_pair_latch(bm0, bbl, kTiaM0 | kTiaBL) |
      tia_pair_latch(bm0, bpf, kTiaM0 | kTiaPF) | tia_pair_latch(bp1, bm1, kTiaP1 | kTiaM1) |
      tia_pair_latch(bp1, bbl, kTiaP1 | kTiaBL) | tia_pair_latch(bp1, bpf, kTiaP1 | kTiaPF) |
      tia_pair_latch(bm1, bbl, kTiaM1 | kTiaBL) | tia_pair_latch(bm1, bpf, kTiaM1 | kTiaPF) |
      tia_pair_latch(bbl, bpf, kTiaBL | kTiaPF));
}
