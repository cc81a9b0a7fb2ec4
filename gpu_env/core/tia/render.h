// The TIA's scanline renderer (ALE updateFrameScanline): objects painted into a per-pixel code
// buffer, one table lookup per pixel for the colour, collisions from the set of codes seen.
#pragma once

#include "../hd.h"
#include "ball.h"
#include "collisions.h"
#include "line_bits.h"
#include "missile.h"
#include "playfield.h"
#include "player.h"
#include "priority.h"
#include "state.h"


HD uint32_t tia_lowest_bit(uint64_t v) {
#if GPU_ENV_DEVICE
  return static_cast<uint32_t>(__ffsll(static_cast<long long>(v)) - 1);
#else
  return static_cast<uint32_t>(__builtin_ctzll(v));
#endif
}

// Rebuild the code -> colour-register table when the priority/score bits changed.
HD void tia_refresh_priority_lut(Tia& t, uint8_t ps) {
  if (t.lut_ps == ps && t.lut_valid) return;
  for (uint32_t half = 0; half < 2; ++half) {
    for (uint32_t code = 0; code < 64; ++code) {
      t.lut[half][code] = static_cast<uint8_t>(tia_priority_color(static_cast<uint8_t>(code), ps, half));
    }
  }
  t.lut_ps = ps;
  t.lut_valid = 1;
}

// Four equal bytes at p (p is 4-byte aligned in the frame buffer on the device).
HD void tia_store4(uint8_t* p, uint8_t c) {
  const uint32_t word = 0x01010101u * c;
#if GPU_ENV_DEVICE
  *reinterpret_cast<uint32_t*>(p) = word;
#else
  __builtin_memcpy(p, &word, 4);
#endif
}

// p[lo..hi) = c: memset on the host, four bytes at a time where the pixel index is a multiple of 4 on the device.
HD void tia_fill(uint8_t* p, int32_t lo, int32_t hi, uint8_t c) {
#if !GPU_ENV_DEVICE
  if (hi > lo) __builtin_memset(p + lo, c, static_cast<uint32_t>(hi - lo));
  return;
#endif
  int32_t x = lo;
  for (; x < hi && (x & 3); ++x) p[x] = c;
  for (; x + 4 <= hi; x += 4) tia_store4(p + x, c);
  for (; x < hi; ++x) p[x] = c;
}

// OR `bit` into code[] for the pixels of a copy inside [lo, hi). Pixel k of the copy (k < width)
// sits at (x0 + k) mod 160 and is on when `solid` or GRP bit (0x80 >> (k >> scale)) is set.
HD void tia_paint_copy(uint8_t* code, int32_t lo, int32_t hi, int32_t x0, int32_t width, uint8_t grp,
                       uint32_t scale, uint8_t bit, bool solid) {
  for (int32_t wrap = 0; wrap < 2; ++wrap) {
    const int32_t base = x0 - wrap * 160;  // ring pixel x shows k = x - base
    int32_t a = base > lo ? base : lo;
    int32_t b = base + width < hi ? base + width : hi;
    if (solid) {
      for (int32_t x = a; x < b; ++x) code[x] |= bit;
      continue;
    }
    // Branch-free: pixel k shows GRP bit 7 - (k >> scale).
    for (int32_t x = a; x < b; ++x) {
      const uint32_t on = (static_cast<uint32_t>(grp) << (static_cast<uint32_t>(x - base) >> scale)) >> 7;
      code[x] |= static_cast<uint8_t>(bit & (0u - (on & 1u)));
    }
  }
}

// Copies of a player or missile: start offsets (8-pixel groups) and the drawn width of each.
struct TiaCopies {
  uint32_t groups;   // bit g: a copy starts at distance 8 * g (+1 for double/quad players)
  int32_t first;     // 0, or 1 for double/quad-width players (drawn one pixel late)
  int32_t width;
  uint32_t scale;    // GRP bit index = k >> scale
};

HD TiaCopies tia_player_copies(uint8_t nusiz, uint8_t skip) {
  TiaCopies c;
  const uint32_t mode = nusiz & 7;
  c.first = (mode == 5 || mode == 7) ? 1 : 0;
  c.width = mode == 5 ? 16 : (mode == 7 ? 32 : 8);
  c.scale = mode == 5 ? 1u : (mode == 7 ? 2u : 0u);
  c.groups = tia_copy_groups(mode) & ~(skip ? 1u : 0u);
  return c;
}

HD TiaCopies tia_missile_copies(uint8_t nusiz, uint8_t kind) {
  TiaCopies c;
  uint32_t size = (nusiz >> 4) & 3;
  if (kind == kMissileMaskStretched) size |= 1;
  c.first = 0;
  c.width = static_cast<int32_t>(1u << size);
  c.scale = 0;
  c.groups = kind == kMissileMaskHidden ? 0u : tia_copy_groups(nusiz & 7);
  return c;
}

// The first ring pixel (0..159) of the copy in group g (a bit of c.groups) of an object at `pos`.
HD int32_t tia_copy_start(const TiaCopies& c, int32_t pos, uint32_t g) {
  const int32_t x0 = pos + static_cast<int32_t>(g * 8) + c.first;
  return x0 >= 160 ? x0 - 160 : x0;
}

// Grow [*olo, *ohi) by the pixels of [lo, hi) that a copy covering ring pixels [x0, x0 + width)
// (mod 160) reaches; true when it reaches any.
HD bool tia_copy_extent(int32_t x0, int32_t width, int32_t lo, int32_t hi, int32_t* olo, int32_t* ohi) {
  bool any = false;
  for (int32_t wrap = 0; wrap < 2; ++wrap) {
    const int32_t base = x0 - wrap * 160;
    const int32_t a = base > lo ? base : lo;
    const int32_t b = base + width < hi ? base + width : hi;
    if (a < b) {
      if (a < *olo) *olo = a;
      if (b > *ohi) *ohi = b;
      any = true;
    }
  }
  return any;
}

HD bool tia_copies_extent(const TiaCopies& c, int32_t pos, int32_t lo, int32_t hi, int32_t* olo, int32_t* ohi) {
  bool any = false;
  uint32_t groups = c.groups;
  while (groups) {
    const uint32_t g = tia_lowest_bit(groups);
    groups &= groups - 1;
    any |= tia_copy_extent(tia_copy_start(c, pos, g), c.width, lo, hi, olo, ohi);
  }
  return any;
}

HD void tia_paint_copies(uint8_t* code, const TiaCopies& c, int32_t pos, int32_t lo, int32_t hi, uint8_t grp,
                         uint8_t bit, bool solid) {
  uint32_t groups = c.groups;
  while (groups) {
    const uint32_t g = tia_lowest_bit(groups);
    groups &= groups - 1;
    tia_paint_copy(code, lo, hi, tia_copy_start(c, pos, g), c.width, grp, c.scale, bit, solid);
  }
}

// The occupancy bitmap of every copy of an object at `pos` whose copy pixels are `pattern` (line_bits.h).
HD_FORCEINLINE TiaLineBits tia_copies_bits(const TiaCopies& c, int32_t pos, uint64_t pattern) {
  TiaLineBits b{0, 0, 0};
  uint32_t groups = c.groups;
  while (groups) {
    const uint32_t g = tia_lowest_bit(groups);
    groups &= groups - 1;
    tia_line_bits_add(b, tia_copy_start(c, pos, g), pattern);
  }
  return b;
}

// The CPU library's build (setup.py defines GPU_ENV_SPLIT_CPU) has an AVX-512 path for the object overlay
// below, used when the CPU has AVX-512 (gpu_env/native/tia_overlay.h); other builds and the device use
// the portable code only. The header is found on the library's include path (-Igpu_env/native); the angle
// brackets keep it out of the device unit (gpu_env/cuda_source.py inlines only quoted includes).
#if !GPU_ENV_DEVICE && defined(GPU_ENV_SPLIT_CPU)
#include <tia_overlay.h>
#define GPU_ENV_TIA_OVERLAY_AVX512 GPU_ENV_HAVE_AVX512
#else
#define GPU_ENV_TIA_OVERLAY_AVX512 0
#endif

// Draw pixels [lo, hi) of the current scanline into p (p[x] = pixel x; ALE updateFrameScanline).
// The playfield/background is drawn per 4-pixel cell; where objects reach, they are painted into a
// per-pixel code buffer (kTia* bits), a table lookup per pixel gives the colour register, and the
// set of codes seen gives the collision latches.
HD void tia_draw_span(Tia& t, uint8_t* p, int32_t lo, int32_t hi) {
  if (t.vblank & 0x02) {
    tia_fill(p, lo, hi, 0);
    return;
  }
  const uint8_t objects = t.enabled;
  if (objects == 0) {
    tia_fill(p, lo, hi, t.color[0]);
    return;
  }
  // ale-py quirk: with the playfield as the only enabled object, score colours apply even when
  // priority is set (ALE's dedicated playfield-only drawing path ignores the priority bit).
  uint8_t ps = t.priority_score;
  if (objects == kTiaPF) ps = static_cast<uint8_t>(ps & ~kTiaPriority);
  tia_refresh_priority_lut(t, ps);
  const uint32_t pf = t.pf, reflect = t.pf_mask_reflect;

  const TiaCopies p0 = tia_player_copies(t.nusiz0, t.p0_skip_first);
  const TiaCopies p1 = tia_player_copies(t.nusiz1, t.p1_skip_first);
  const TiaCopies m0 = tia_missile_copies(t.nusiz0, t.m0_mask_kind);
  const TiaCopies m1 = tia_missile_copies(t.nusiz1, kMissileMaskNormal);
  int32_t olo = hi, ohi = lo;  // the pixels of the span some object reaches
  const int32_t bl_width = 1 << ((t.ctrlpf >> 4) & 3);
  const bool bl_on = (objects & kTiaBL) && tia_copy_extent(t.posbl, bl_width, lo, hi, &olo, &ohi);
  const bool p0_on = t.current_grp0 && tia_copies_extent(p0, t.posp0, lo, hi, &olo, &ohi);
  const bool p1_on = t.current_grp1 && tia_copies_extent(p1, t.posp1, lo, hi, &olo, &ohi);
  const bool m0_on = (objects & kTiaM0) && tia_copies_extent(m0, t.posm0, lo, hi, &olo, &ohi);
  const bool m1_on = (objects & kTiaM1) && tia_copies_extent(m1, t.posm1, lo, hi, &olo, &ohi);

  // The playfield or background over the whole span, one colour per 4-pixel cell ...
  const uint64_t cells = pf ? tia_pf_cells(pf, reflect) : 0;
  const uint8_t off_left = t.color[t.lut[0][0]], off_right = t.color[t.lut[1][0]];
  const uint8_t on_left = t.color[t.lut[0][kTiaPF]], on_right = t.color[t.lut[1][kTiaPF]];
  // Left half [lo, 80) and right half [80, hi) separately (80 is a cell boundary): whole cells
  // as one 4-byte store, partial cells at the span's ends pixel by pixel.
  for (int32_t half = 0; half < 2; ++half) {
    int32_t x = half ? (lo > 80 ? lo : 80) : lo;
    const int32_t end = half ? hi : (hi < 80 ? hi : 80);
    const uint8_t on_c = half ? on_right : on_left, off_c = half ? off_right : off_left;
    for (; x < end && (x & 3); ++x) p[x] = ((cells >> (x >> 2)) & 1) ? on_c : off_c;
#if !GPU_ENV_DEVICE
    // The host writes four cells per two 8-byte stores, each word the background with the playfield's
    // cells swapped in through a mask looked up by the cell pair (perf: the one-cell loop was a quarter of
    // this function's samples, the two-cell loop with computed masks still 8 % of the emulator's time); a
    // half without playfield is one memset. The device keeps 4-byte stores, which are aligned there.
    const uint64_t on_word = 0x0101010101010101ull * on_c, off_word = 0x0101010101010101ull * off_c;
    const uint64_t swap = on_word ^ off_word;
    if (x + 4 <= end) {
      const int32_t whole = x + ((end - x) & ~3);  // x is a multiple of 4 here
      if (swap == 0 || ((cells >> (x >> 2)) & ((1ull << ((whole - x) >> 2)) - 1u)) == 0) {
        __builtin_memset(p + x, off_c, static_cast<uint32_t>(whole - x));
        x = whole;
      }
    }
    static constexpr uint64_t kPairMask[4] = {0, 0xFFFFFFFFull, 0xFFFFFFFF00000000ull, ~0ull};
    for (; x + 16 <= end; x += 16) {
      const uint32_t quad = static_cast<uint32_t>(cells >> (x >> 2)) & 15u;
      const uint64_t lo_word = off_word ^ (swap & kPairMask[quad & 3u]);
      const uint64_t hi_word = off_word ^ (swap & kPairMask[quad >> 2]);
      __builtin_memcpy(p + x, &lo_word, 8);
      __builtin_memcpy(p + x + 8, &hi_word, 8);
    }
    for (; x + 8 <= end; x += 8) {
      const uint64_t word = off_word ^ (swap & kPairMask[static_cast<uint32_t>(cells >> (x >> 2)) & 3u]);
      __builtin_memcpy(p + x, &word, 8);
    }
#endif
    for (; x + 4 <= end; x += 4) tia_store4(p + x, ((cells >> (x >> 2)) & 1) ? on_c : off_c);
    for (; x < end; ++x) p[x] = ((cells >> (x >> 2)) & 1) ? on_c : off_c;
  }
  if (olo >= ohi) return;  // no object in this span: nothing to overlay, no collisions
#if GPU_ENV_TIA_OVERLAY_AVX512
  if (gpu_env_native::use_avx512()) {
    t.collision |= gpu_env_native::tia_overlay_avx512(t, p, olo, ohi, cells, bl_on, bl_width, p0_on, p0, p1_on, p1,
                                                      m0_on, m0, m1_on, m1);
    return;
  }
#endif

  // ... then, where objects reach, one object code per pixel.
  uint8_t code[160];
  if (cells == 0) {
    for (int32_t x = olo; x < ohi; ++x) code[x] = 0;
  } else {
    for (int32_t x = olo; x < ohi; ++x) code[x] = static_cast<uint8_t>(kTiaPF & (0u - ((cells >> (x >> 2)) & 1)));
  }
  if (bl_on) tia_paint_copy(code, olo, ohi, t.posbl, bl_width, 0, 0, kTiaBL, true);
  if (p1_on) tia_paint_copies(code, p1, t.posp1, olo, ohi, t.current_grp1, kTiaP1, false);
  if (m1_on) tia_paint_copies(code, m1, t.posm1, olo, ohi, 0, kTiaM1, true);
  if (p0_on) tia_paint_copies(code, p0, t.posp0, olo, ohi, t.current_grp0, kTiaP0, false);
  if (m0_on) tia_paint_copies(code, m0, t.posm0, olo, ohi, 0, kTiaM0, true);
  uint64_t seen = 0;
  const int32_t mid = ohi < 80 ? ohi : (olo > 80 ? olo : 80);
  for (int32_t x = olo; x < mid; ++x) {
    const uint8_t c = code[x];
    seen |= 1ull << c;
    p[x] = t.color[t.lut[0][c]];
  }
  for (int32_t x = mid; x < ohi; ++x) {
    const uint8_t c = code[x];
    seen |= 1ull << c;
    p[x] = t.color[t.lut[1][c]];
  }
  // Codes with fewer than two objects set no latch.
  seen &= ~(1ull | (1ull << kTiaP0) | (1ull << kTiaM0) | (1ull << kTiaP1) | (1ull << kTiaM1) | (1ull << kTiaBL) |
            (1ull << kTiaPF));
  uint16_t cx = 0;
  while (seen) {
    cx |= tia_collisions_of(static_cast<uint8_t>(tia_lowest_bit(seen)));
    seen &= seen - 1;
  }
  t.collision |= cx;
}

// The collision latches of pixels [lo, hi) of the current scanline, without drawing them (a frame whose
// picture nobody reads): the latches tia_draw_span sets for the same span, from the objects' occupancy
// bitmaps (line_bits.h). Only the latches not set yet are looked for: nothing to do when VBLANK hides the
// line (no latches either way) or when the enabled objects can set no new one; an object none of whose
// missing latches it is part of is left out; when no pixel shows two of the others, none is set.
HD void tia_span_collisions(Tia& t, int32_t lo, int32_t hi) {
  if (t.vblank & 0x02) return;
  const uint8_t objects = t.enabled;
  const uint16_t missing = static_cast<uint16_t>(tia_collisions_of(objects) & ~t.collision);
  if (missing == 0) return;
  const TiaLineBits span = tia_span_bits(lo, hi);
  const TiaLineBits none{0, 0, 0};
  TiaLineBits bp0 = none, bm0 = none, bp1 = none, bm1 = none, bbl = none, bpf = none;
  if ((missing & tia_latches_of(kTiaP0)) && t.current_grp0) {
    const TiaCopies c = tia_player_copies(t.nusiz0, t.p0_skip_first);
    bp0 = tia_copies_bits(c, t.posp0, tia_player_pattern(t.current_grp0, c.scale));
    tia_line_bits_mask(bp0, span);
  }
  if ((missing & tia_latches_of(kTiaP1)) && t.current_grp1) {
    const TiaCopies c = tia_player_copies(t.nusiz1, t.p1_skip_first);
    bp1 = tia_copies_bits(c, t.posp1, tia_player_pattern(t.current_grp1, c.scale));
    tia_line_bits_mask(bp1, span);
  }
  if ((missing & tia_latches_of(kTiaM0)) && (objects & kTiaM0)) {
    const TiaCopies c = tia_missile_copies(t.nusiz0, t.m0_mask_kind);
    bm0 = tia_copies_bits(c, t.posm0, (1ull << c.width) - 1);
    tia_line_bits_mask(bm0, span);
  }
  if ((missing & tia_latches_of(kTiaM1)) && (objects & kTiaM1)) {
    const TiaCopies c = tia_missile_copies(t.nusiz1, kMissileMaskNormal);
    bm1 = tia_copies_bits(c, t.posm1, (1ull << c.width) - 1);
    tia_line_bits_mask(bm1, span);
  }
  if ((missing & tia_latches_of(kTiaBL)) && (objects & kTiaBL)) {
    tia_line_bits_add(bbl, t.posbl, (1ull << (1 << ((t.ctrlpf >> 4) & 3))) - 1);
    tia_line_bits_mask(bbl, span);
  }
  // The pixels some object shows, and those two or more show.
  TiaLineBits any = bp0, two = none;
  tia_line_bits_accumulate(any, two, bm0);
  tia_line_bits_accumulate(any, two, bp1);
  tia_line_bits_accumulate(any, two, bm1);
  tia_line_bits_accumulate(any, two, bbl);
  if ((any.w0 | any.w1 | any.w2) == 0) return;  // the playfield alone sets no latch
  if ((missing & tia_latches_of(kTiaPF)) && t.pf) {
    bpf = tia_playfield_bits(tia_pf_cells(t.pf, t.pf_mask_reflect));
    tia_line_bits_mask(bpf, span);
  }
  if ((two.w0 | two.w1 | two.w2) == 0 && !tia_line_bits_meet(any, bpf)) return;
  t.collision |= tia_line_latches(bp0, bm0, bp1, bm1, bbl, bpf);
}
