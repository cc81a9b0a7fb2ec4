// The host's AVX-512 path for the object part of the TIA scanline renderer (tia_draw_span in
// core/tia/render.h), chosen at run time like the other kernels of simd.h.
//
// The portable code paints one object code per pixel, looks each pixel's colour up through two tables
// and collects the set of codes seen for the collision latches. Here each object is a 160-bit
// occupancy bitmap of the line (three 64-bit words, bit x = pixel x), built from its copies:
// * the collision latches are pairwise ANDs of the bitmaps (a latch is set when some pixel shows both
//   objects, which is what the set of codes seen tells the portable code);
// * 64 pixels at a time, the code bytes are the masked ORs of the object bits, the colour table
//   colour[lut[half][code]] is one byte permute of the colour registers, and the pixels are a permute
//   of that table by the codes, stored under the mask of the pixels the objects reach.
// Same pixels, same latches as the portable code (tests/gpu_env/test_simd.py runs both on games).
// Only the library's own build (setup.py defines GPU_ENV_SPLIT_CPU) includes this header.
#pragma once

#include "simd.h"

#if GPU_ENV_HAVE_AVX512

namespace gpu_env_native {

// The occupancy bitmap of one line: pixel x is bit x of w0 (x < 64), of w1 (x - 64) or of w2 (x - 128).
// Three named words, not an array: the compiler keeps them in registers (an array on the stack, written
// and read in different widths, cost store-forwarding stalls).
struct LineBits {
  uint64_t w0, w1, w2;
};

// `pattern` moved to start at bit `at` of a 64-bit word (at may be negative or past the word).
inline uint64_t place(uint64_t pattern, int32_t at) {
  if (at >= 64 || at <= -64) return 0;
  return at >= 0 ? pattern << at : pattern >> -at;
}

// OR the pixels of `pattern` (bit k = pixel x0 + k, at most 32 pixels) into `b`, wrapping at 160.
inline void line_bits_add(LineBits& b, int32_t x0, uint64_t pattern) {
  b.w0 |= place(pattern, x0) | place(pattern, x0 - 160);
  b.w1 |= place(pattern, x0 - 64);
  b.w2 |= place(pattern, x0 - 128);
}

// GRP bits as pixels: pixel k of a copy shows GRP bit 7 - (k >> scale).
inline uint64_t player_pattern(uint8_t grp, uint32_t scale) {
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

inline LineBits copies_bits(const TiaCopies& c, int32_t pos, uint64_t pattern) {
  LineBits b{0, 0, 0};
  uint32_t groups = c.groups;
  while (groups) {
    const uint32_t g = tia_lowest_bit(groups);
    groups &= groups - 1;
    line_bits_add(b, tia_copy_start(c, pos, g), pattern);
  }
  return b;
}

// Bits [lo, hi) of the word whose bit 0 is pixel `base`.
inline uint64_t span_word(int32_t lo, int32_t hi, int32_t base) {
  const int32_t a = lo - base, z = hi - base;
  const uint64_t below_z = z >= 64 ? ~0ull : (z <= 0 ? 0ull : (1ull << z) - 1);
  const uint64_t below_a = a >= 64 ? ~0ull : (a <= 0 ? 0ull : (1ull << a) - 1);
  return below_z & ~below_a;
}

// The playfield's pixels of one word from its 16 cells there (cell c covers 4 pixels).
inline uint64_t playfield_word(uint64_t cells16) {
  uint64_t x = cells16 & 0xFFFFu;
  x = (x | (x << 24)) & 0x000000FF000000FFull;
  x = (x | (x << 12)) & 0x000F000F000F000Full;
  x = (x | (x << 6)) & 0x0303030303030303ull;
  x = (x | (x << 3)) & 0x1111111111111111ull;
  return x * 0xFu;
}

inline void line_bits_mask(LineBits& b, const LineBits& span) {
  b.w0 &= span.w0;
  b.w1 &= span.w1;
  b.w2 &= span.w2;
}

inline bool line_bits_meet(const LineBits& a, const LineBits& b) {
  return ((a.w0 & b.w0) | (a.w1 & b.w1) | (a.w2 & b.w2)) != 0;
}

// 64 pixels from the object words of one line word: codes as masked ORs, colours by permutes.
GPU_ENV_AVX512 inline void overlay_word(uint8_t* p, uint64_t span, uint64_t right_half, uint64_t bp0, uint64_t bm0,
                                        uint64_t bp1, uint64_t bm1, uint64_t bbl, uint64_t bpf, __m512i left,
                                        __m512i right) {
  __m512i code = _mm512_maskz_set1_epi8(bp0, static_cast<char>(kTiaP0));
  code = _mm512_or_si512(code, _mm512_maskz_set1_epi8(bm0, static_cast<char>(kTiaM0)));
  code = _mm512_or_si512(code, _mm512_maskz_set1_epi8(bp1, static_cast<char>(kTiaP1)));
  code = _mm512_or_si512(code, _mm512_maskz_set1_epi8(bm1, static_cast<char>(kTiaM1)));
  code = _mm512_or_si512(code, _mm512_maskz_set1_epi8(bbl, static_cast<char>(kTiaBL)));
  code = _mm512_or_si512(code, _mm512_maskz_set1_epi8(bpf, static_cast<char>(kTiaPF)));
  const __m512i pixels = _mm512_mask_blend_epi8(right_half, _mm512_maskz_permutexvar_epi8(~0ull, code, left),
                                                _mm512_maskz_permutexvar_epi8(~0ull, code, right));
  _mm512_mask_storeu_epi8(p, span, pixels);
}

// Write pixels [olo, ohi) of the line at p (p[x] = pixel x) and return the collision latches they set.
// The objects' flags, copies and widths are those tia_draw_span computed for this span.
GPU_ENV_AVX512 inline uint16_t tia_overlay_avx512(const Tia& t, uint8_t* p, int32_t olo, int32_t ohi,
                                                  uint64_t cells, bool bl_on, int32_t bl_width, bool p0_on,
                                                  const TiaCopies& p0, bool p1_on, const TiaCopies& p1,
                                                  bool m0_on, const TiaCopies& m0, bool m1_on,
                                                  const TiaCopies& m1) {
  const LineBits span{span_word(olo, ohi, 0), span_word(olo, ohi, 64), span_word(olo, ohi, 128)};
  const LineBits none{0, 0, 0};
  LineBits bp0 = p0_on ? copies_bits(p0, t.posp0, player_pattern(t.current_grp0, p0.scale)) : none;
  LineBits bm0 = m0_on ? copies_bits(m0, t.posm0, (1ull << m0.width) - 1) : none;
  LineBits bp1 = p1_on ? copies_bits(p1, t.posp1, player_pattern(t.current_grp1, p1.scale)) : none;
  LineBits bm1 = m1_on ? copies_bits(m1, t.posm1, (1ull << m1.width) - 1) : none;
  LineBits bbl = none;
  if (bl_on) line_bits_add(bbl, t.posbl, (1ull << bl_width) - 1);
  LineBits bpf{playfield_word(cells), playfield_word(cells >> 16), playfield_word(cells >> 32)};
  line_bits_mask(bp0, span);
  line_bits_mask(bm0, span);
  line_bits_mask(bp1, span);
  line_bits_mask(bm1, span);
  line_bits_mask(bbl, span);
  line_bits_mask(bpf, span);

  // Every pair of the six objects has a latch; which one is tia_collisions_of's (collisions.h), folded to a
  // constant here.
  const auto latch = [](const LineBits& a, const LineBits& b, uint8_t pair) -> uint16_t {
    return line_bits_meet(a, b) ? tia_collisions_of(pair) : 0;
  };
  const uint16_t cx = static_cast<uint16_t>(
      latch(bp0, bm0, kTiaP0 | kTiaM0) | latch(bp0, bp1, kTiaP0 | kTiaP1) | latch(bp0, bm1, kTiaP0 | kTiaM1) |
      latch(bp0, bbl, kTiaP0 | kTiaBL) | latch(bp0, bpf, kTiaP0 | kTiaPF) | latch(bm0, bp1, kTiaM0 | kTiaP1) |
      latch(bm0, bm1, kTiaM0 | kTiaM1) | latch(bm0, bbl, kTiaM0 | kTiaBL) | latch(bm0, bpf, kTiaM0 | kTiaPF) |
      latch(bp1, bm1, kTiaP1 | kTiaM1) | latch(bp1, bbl, kTiaP1 | kTiaBL) | latch(bp1, bpf, kTiaP1 | kTiaPF) |
      latch(bm1, bbl, kTiaM1 | kTiaBL) | latch(bm1, bpf, kTiaM1 | kTiaPF) | latch(bbl, bpf, kTiaBL | kTiaPF));

  // colour[lut[half][code]] for the 64 codes: the four colour registers permuted by each half's table.
  uint32_t registers;
  __builtin_memcpy(&registers, t.color, 4);
  const __m512i colors = _mm512_set1_epi32(static_cast<int32_t>(registers));
  const __m512i left = _mm512_maskz_permutexvar_epi8(~0ull, _mm512_loadu_si512(t.lut[0]), colors);
  const __m512i right = _mm512_maskz_permutexvar_epi8(~0ull, _mm512_loadu_si512(t.lut[1]), colors);
  // Pixels 80 and right take the right half's table: none of word 0, bits 16.. of word 1, all of word 2.
  if (span.w0) overlay_word(p, span.w0, 0, bp0.w0, bm0.w0, bp1.w0, bm1.w0, bbl.w0, bpf.w0, left, right);
  if (span.w1) {
    overlay_word(p + 64, span.w1, ~0ull << 16, bp0.w1, bm0.w1, bp1.w1, bm1.w1, bbl.w1, bpf.w1, left, right);
  }
  if (span.w2) overlay_word(p + 128, span.w2, ~0ull, bp0.w2, bm0.w2, bp1.w2, bm1.w2, bbl.w2, bpf.w2, left, right);
  return cx;
}

}  // namespace gpu_env_native

#endif  // GPU_ENV_HAVE_AVX512
