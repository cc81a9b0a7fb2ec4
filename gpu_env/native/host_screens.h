// Where the shared preprocessing steps (core/ale/preprocessing.h) put an env's screens on the host:
// env i's two slots are buf0/buf1 + frame_bytes * i, `height` rows of 160 pixels in grayscale or RGB.
// Used by native/ale_batch.cpp and native/env_pool.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ale/environment.h"
#include "screen_format.h"

namespace gpu_env_native {

// Where AtariPreprocessing's two screens go: env i's are buf0/buf1 + frame_bytes * i, `height` rows of
// 160 pixels in `format` (grayscale or RGB), through the palettes in `tables` (NTSC then PAL).
struct PreprocessBuffers {
  ScreenFormat format;
  const uint8_t* tables;
  PackedRgb rgb[2];
  int32_t height;
  size_t frame_bytes;
  uint8_t* buf0;
  uint8_t* buf1;
};

// Env i's current picture into `target`, as gpu_env_ale_screens_format writes it.
inline void write_screen(const gpu_env::ale::AleEnv& e, const uint8_t* fb, const PreprocessBuffers& b,
                         uint8_t* target) {
  const Tia& tia = e.console.tia;
  const int32_t rows = tia.height < b.height ? tia.height : b.height;
  const uint8_t* screen = fb + 160u * static_cast<size_t>(tia.height) * tia.current_buffer;
  const int32_t which = e.pal != 0 ? 1 : 0;
  screen_convert(screen, rows, b.format, b.tables + kPaletteSize * which, &b.rgb[which], target);
  if (rows < b.height) {
    const size_t row_bytes = b.frame_bytes / static_cast<size_t>(b.height);
    std::memset(target + row_bytes * static_cast<size_t>(rows), 0, row_bytes * static_cast<size_t>(b.height - rows));
  }
}

// Where the shared preprocessing step (core/ale/preprocessing.h) puts env i's screens: obs_buffer[0]
// is buf0[i], obs_buffer[1] is buf1[i].
struct HostScreens {
  const PreprocessBuffers& b;
  int32_t i;

  uint8_t* slot(int32_t which) const {
    return (which == 0 ? b.buf0 : b.buf1) + b.frame_bytes * static_cast<size_t>(i);
  }
  void capture(const gpu_env::ale::AleEnv& e, const uint8_t* fb, int32_t which) {
    write_screen(e, fb, b, slot(which));
  }
  void clear(int32_t which) { std::memset(slot(which), 0, b.frame_bytes); }
};

// The buffers of `channels` (1: grayscale, 3: RGB) screens of `height` rows through `tables`.
inline PreprocessBuffers make_buffers(int32_t channels, const uint8_t* tables, int32_t height, uint8_t* buf0,
                                      uint8_t* buf1) {
  PreprocessBuffers b;
  b.format = channels == 3 ? ScreenFormat::kRgb : ScreenFormat::kGrayscale;
  b.tables = tables;
  if (b.format == ScreenFormat::kRgb) {
    pack_rgb(tables, b.rgb[0]);
    pack_rgb(tables + 3 * kPaletteSize, b.rgb[1]);
  }
  b.height = height;
  b.frame_bytes = 160u * static_cast<size_t>(height) * static_cast<size_t>(channels);
  b.buf0 = buf0;
  b.buf1 = buf1;
  return b;
}

}  // namespace gpu_env_native
