// Screens in the ALE's three formats from a frame of TIA palette indices: the indices themselves
// (getScreen), grayscale (getScreenGrayscale) and RGB (getScreenRGB). The palette tables are data
// owned by gpu_env/palettes.py and passed in by the caller; nothing here knows their values.
#pragma once

#include <cstdint>
#include <cstring>

#include "simd.h"

namespace gpu_env_native {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "screen_rgb writes packed RGB words little-endian");

constexpr int32_t kScreenWidth = 160;
constexpr int32_t kPaletteSize = 256;

// The format codes of gpu_env_ale_screens_format (gpu_env/ale_native.py uses the same numbers).
enum class ScreenFormat : int32_t { kIndices = 0, kGrayscale = 1, kRgb = 2 };

// An RGB table (256 entries of 3 bytes) packed as r | g << 8 | b << 16, so that eight pixels are
// written as three 64-bit words, and as three planes of 256 bytes for the AVX-512 lookup.
struct PackedRgb {
  uint32_t entry[kPaletteSize];
  uint8_t plane[3][kPaletteSize];
};

inline void pack_rgb(const uint8_t* rgb, PackedRgb& packed) {
  for (int32_t k = 0; k < kPaletteSize; ++k) {
    packed.entry[k] = static_cast<uint32_t>(rgb[3 * k]) | static_cast<uint32_t>(rgb[3 * k + 1]) << 8 |
                      static_cast<uint32_t>(rgb[3 * k + 2]) << 16;
    for (int c = 0; c < 3; ++c) packed.plane[c][k] = rgb[3 * k + c];
  }
}

inline uint64_t load8(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline void store8(uint8_t* p, uint64_t v) { std::memcpy(p, &v, sizeof(v)); }

// out[p] = table[screen[p]] for from <= p < pixels; both multiples of 8 (whole 160-pixel rows). Eight
// indices are read and eight values written per 64-bit access (perf: byte stores were the cost).
inline void screen_grayscale_scalar(const uint8_t* __restrict screen, int32_t from, int32_t pixels,
                                    const uint8_t* __restrict table, uint8_t* __restrict out) {
  for (int32_t p = from; p < pixels; p += 8) {
    const uint64_t s = load8(screen + p);
    uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v |= static_cast<uint64_t>(table[(s >> (8 * k)) & 0xFF]) << (8 * k);
    store8(out + p, v);
  }
}

// out[3p .. 3p+2] = RGB of screen[p] for from <= p < pixels; both multiples of 8 (whole rows): the
// 24 bytes of eight pixels are assembled in registers and written as three 64-bit words (perf:
// assembling them on the stack stalled every iteration on store forwarding).
inline void screen_rgb_scalar(const uint8_t* __restrict screen, int32_t from, int32_t pixels,
                              const PackedRgb& table, uint8_t* __restrict out) {
  for (int32_t p = from; p < pixels; p += 8) {
    const uint64_t s = load8(screen + p);
    uint64_t c[8];
    for (int k = 0; k < 8; ++k) c[k] = table.entry[(s >> (8 * k)) & 0xFF];
    uint8_t* o = out + 3 * static_cast<size_t>(p);
    store8(o, c[0] | c[1] << 24 | c[2] << 48);
    store8(o + 8, c[2] >> 16 | c[3] << 8 | c[4] << 32 | c[5] << 56);
    store8(o + 16, c[5] >> 8 | c[6] << 16 | c[7] << 40);
  }
}

#if GPU_ENV_HAVE_AVX512
// GCC 12's AVX-512 headers trip -Wmaybe-uninitialized on their own placeholder vectors.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// 64 lookups in a 256-byte table held as four 64-byte registers: vpermi2b looks up the low seven
// bits of each index in two registers, bit 7 (`high`) picks the half.
GPU_ENV_AVX512 inline __m512i lookup64(const __m512i* table, __m512i index, __mmask64 high) {
  const __m512i low_half = _mm512_permutex2var_epi8(table[0], index, table[1]);
  const __m512i high_half = _mm512_permutex2var_epi8(table[2], index, table[3]);
  return _mm512_mask_blend_epi8(high, low_half, high_half);
}

GPU_ENV_AVX512 inline void load_table(const uint8_t* table, __m512i* out) {
  for (int q = 0; q < 4; ++q) out[q] = _mm512_loadu_si512(table + 64 * q);
}

// screen_grayscale_scalar over [0, pixels), 64 pixels per step (the rest by the scalar loop).
GPU_ENV_AVX512 inline void screen_grayscale_avx512(const uint8_t* __restrict screen, int32_t pixels,
                                                   const uint8_t* __restrict table, uint8_t* __restrict out) {
  __m512i lut[4];
  load_table(table, lut);
  int32_t p = 0;
  for (; p + 64 <= pixels; p += 64) {
    const __m512i index = _mm512_loadu_si512(screen + p);
    _mm512_storeu_si512(out + p, lookup64(lut, index, _mm512_movepi8_mask(index)));
  }
  screen_grayscale_scalar(screen, p, pixels, table, out);
}

// The byte shuffles that interleave 64 pixels' R, G and B planes into 192 bytes of RGB: output byte
// j of word w is channel (64w + j) % 3 of pixel (64w + j) / 3. `red_green[w]` takes R (index p) or G
// (index 64 + p) from the pair of planes; the bytes in `blue_mask[w]` then take B[p] from `blue[w]`.
struct RgbInterleave {
  alignas(64) uint8_t red_green[3][64];
  alignas(64) uint8_t blue[3][64];
  uint64_t blue_mask[3];
};

inline const RgbInterleave& rgb_interleave() {
  static const RgbInterleave table = [] {
    RgbInterleave t{};
    for (int w = 0; w < 3; ++w) {
      for (int j = 0; j < 64; ++j) {
        const int byte = 64 * w + j, pixel = byte / 3, channel = byte % 3;
        t.red_green[w][j] = static_cast<uint8_t>(channel == 1 ? 64 + pixel : pixel);
        t.blue[w][j] = static_cast<uint8_t>(pixel);
        if (channel == 2) t.blue_mask[w] |= 1ull << j;
      }
    }
    return t;
  }();
  return table;
}

// screen_rgb_scalar over [0, pixels), 64 pixels per step: three plane lookups, then two shuffles per
// 64 output bytes into packed RGB (the rest by the scalar loop).
GPU_ENV_AVX512 inline void screen_rgb_avx512(const uint8_t* __restrict screen, int32_t pixels,
                                             const PackedRgb& table, uint8_t* __restrict out) {
  __m512i red[4], green[4], blue[4];
  load_table(table.plane[0], red);
  load_table(table.plane[1], green);
  load_table(table.plane[2], blue);
  const RgbInterleave& il = rgb_interleave();
  __m512i red_green[3], blue_index[3];
  for (int w = 0; w < 3; ++w) {
    red_green[w] = _mm512_load_si512(il.red_green[w]);
    blue_index[w] = _mm512_load_si512(il.blue[w]);
  }
  int32_t p = 0;
  for (; p + 64 <= pixels; p += 64) {
    const __m512i index = _mm512_loadu_si512(screen + p);
    const __mmask64 high = _mm512_movepi8_mask(index);
    const __m512i r = lookup64(red, index, high), g = lookup64(green, index, high), b = lookup64(blue, index, high);
    uint8_t* o = out + 3 * static_cast<size_t>(p);
    for (int w = 0; w < 3; ++w) {
      const __m512i rg = _mm512_permutex2var_epi8(r, red_green[w], g);
      _mm512_storeu_si512(o + 64 * w, _mm512_mask_permutexvar_epi8(rg, il.blue_mask[w], blue_index[w], b));
    }
  }
  screen_rgb_scalar(screen, p, pixels, table, out);
}
#pragma GCC diagnostic pop
#endif

// out[p] = table[screen[p]] for p < pixels; pixels is a multiple of 8 (whole 160-pixel rows).
inline void screen_grayscale(const uint8_t* __restrict screen, int32_t pixels, const uint8_t* __restrict table,
                             uint8_t* __restrict out) {
#if GPU_ENV_HAVE_AVX512
  if (use_avx512()) return screen_grayscale_avx512(screen, pixels, table, out);
#endif
  screen_grayscale_scalar(screen, 0, pixels, table, out);
}

// out[3p .. 3p+2] = RGB of screen[p] for p < pixels; pixels is a multiple of 8 (whole rows).
inline void screen_rgb(const uint8_t* __restrict screen, int32_t pixels, const PackedRgb& table,
                       uint8_t* __restrict out) {
#if GPU_ENV_HAVE_AVX512
  if (use_avx512()) return screen_rgb_avx512(screen, pixels, table, out);
#endif
  screen_rgb_scalar(screen, 0, pixels, table, out);
}

// One frame of `rows` rows of palette indices into `out` in `format` (channels: 1, or 3 for RGB).
inline void screen_convert(const uint8_t* __restrict screen, int32_t rows, ScreenFormat format,
                           const uint8_t* gray, const PackedRgb* rgb, uint8_t* __restrict out) {
  const int32_t pixels = kScreenWidth * rows;
  switch (format) {
    case ScreenFormat::kIndices:
      std::memcpy(out, screen, static_cast<size_t>(pixels));
      return;
    case ScreenFormat::kGrayscale:
      screen_grayscale(screen, pixels, gray, out);
      return;
    case ScreenFormat::kRgb:
      screen_rgb(screen, pixels, *rgb, out);
      return;
  }
}

inline int32_t screen_channels(ScreenFormat format) { return format == ScreenFormat::kRgb ? 3 : 1; }

}  // namespace gpu_env_native
