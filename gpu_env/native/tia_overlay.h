// The host's AVX-512 path for the object part of the TIA scanline renderer (tia_draw_span in
// core/tia/render.h), chosen at run time like the other kernels of simd.h.
//
// The portable code paints one object code per pixel, looks each pixel's colour up through two tables
// and collects the set of codes seen for the collision latches. Here each object is a 160-bit
// occupancy bitmap of the line (core/tia/line_bits.h: three 64-bit words, bit x = pixel x), built from its
// copies:
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
// The objects' flags, copies and widths are those tia_draw_span computed for this span; the bitmaps and
// latches are core/tia/line_bits.h's.
GPU_ENV_AVX512 inline uint16_t tia_overlay_avx512(const Tia& t, uint8_t* p, int32_t olo, int32_t ohi,
                                                  uint64_t cells, bool bl_on, int32_t bl_width, bool p0_on,
                                                  const TiaCopies& p0, bool p1_on, const TiaCopies& p1,
                                                  bool m0_on, const TiaCopies& m0, bool m1_on,
                                                  const TiaCopies& m1) {
  const TiaLineBits span = tia_span_bits(olo, ohi);
  const TiaLineBits none{0, 0, 0};
  TiaLineBits bp0 = p0_on ? tia_copies_bits(p0, t.posp0, tia_player_pattern(t.current_grp0, p0.scale)) : none;
  TiaLineBits bm0 = m0_on ? tia_copies_bits(m0, t.posm0, (1ull << m0.width) - 1) : none;
  TiaLineBits bp1 = p1_on ? tia_copies_bits(p1, t.posp1, tia_player_pattern(t.current_grp1, p1.scale)) : none;
  TiaLineBits bm1 = m1_on ? tia_copies_bits(m1, t.posm1, (1ull << m1.width) - 1) : none;
  TiaLineBits bbl = none;
  if (bl_on) tia_line_bits_add(bbl, t.posbl, (1ull << bl_width) - 1);
  TiaLineBits bpf = tia_playfield_bits(cells);
  tia_line_bits_mask(bp0, span);
  tia_line_bits_mask(bm0, span);
  tia_line_bits_mask(bp1, span);
  tia_line_bits_mask(bm1, span);
  tia_line_bits_mask(bbl, span);
  tia_line_bits_mask(bpf, span);
  const uint16_t cx = tia_line_latches(bp0, bm0, bp1, bm1, bbl, bpf);

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
