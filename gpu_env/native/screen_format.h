// Screens in the ALE's three formats from a frame of TIA palette indices: the indices themselves
// (getScreen), grayscale (getScreenGrayscale) and RGB (getScreenRGB). The palette tables are data
// owned by gpu_env/palettes.py and passed in by the caller; nothing here knows their values.
#pragma once

#include <cstdint>
#include <cstring>

namespace gpu_env_native {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "screen_rgb writes packed RGB words little-endian");

constexpr int32_t kScreenWidth = 160;
constexpr int32_t kPaletteSize = 256;

// The format codes of gpu_env_ale_screens_format (gpu_env/ale_native.py uses the same numbers).
enum class ScreenFormat : int32_t { kIndices = 0, kGrayscale = 1, kRgb = 2 };

// An RGB table (256 entries of 3 bytes) packed as r | g << 8 | b << 16, so that eight pixels are
// written as three 64-bit words.
struct PackedRgb {
  uint32_t entry[kPaletteSize];
};

inline void pack_rgb(const uint8_t* rgb, PackedRgb& packed) {
  for (int32_t k = 0; k < kPaletteSize; ++k) {
    packed.entry[k] = static_cast<uint32_t>(rgb[3 * k]) | static_cast<uint32_t>(rgb[3 * k + 1]) << 8 |
                      static_cast<uint32_t>(rgb[3 * k + 2]) << 16;
  }
}

inline uint64_t load8(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline void store8(uint8_t* p, uint64_t v) { std::memcpy(p, &v, sizeof(v)); }

// out[p] = table[screen[p]] for p < pixels; pixels is a multiple of 8 (whole 160-pixel rows). Eight
// indices are read and eight values written per 64-bit access (perf: byte stores were the cost).
inline void screen_grayscale(const uint8_t* __restrict screen, int32_t pixels, const uint8_t* __restrict table,
                             uint8_t* __restrict out) {
  for (int32_t p = 0; p < pixels; p += 8) {
    const uint64_t s = load8(screen + p);
    uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v |= static_cast<uint64_t>(table[(s >> (8 * k)) & 0xFF]) << (8 * k);
    store8(out + p, v);
  }
}

// out[3p .. 3p+2] = RGB of screen[p] for p < pixels; pixels is a multiple of 8 (whole rows): the
// 24 bytes of eight pixels are assembled in registers and written as three 64-bit words (perf:
// assembling them on the stack stalled every iteration on store forwarding).
inline void screen_rgb(const uint8_t* __restrict screen, int32_t pixels, const PackedRgb& table,
                       uint8_t* __restrict out) {
  for (int32_t p = 0; p < pixels; p += 8) {
    const uint64_t s = load8(screen + p);
    uint64_t c[8];
    for (int k = 0; k < 8; ++k) c[k] = table.entry[(s >> (8 * k)) & 0xFF];
    uint8_t* o = out + 3 * static_cast<size_t>(p);
    store8(o, c[0] | c[1] << 24 | c[2] << 48);
    store8(o + 8, c[2] >> 16 | c[3] << 8 | c[4] << 32 | c[5] << 56);
    store8(o + 16, c[5] >> 8 | c[6] << 16 | c[7] << 40);
  }
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
