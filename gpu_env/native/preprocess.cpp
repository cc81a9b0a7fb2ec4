// AtariPreprocessing's observation on the CPU, batched over environments: max-pool of the two last
// frames (in place, as gymnasium does) and the resize of cv2.INTER_AREA, byte for byte.
//
// The resize follows the same arithmetic as gpu_env/preprocess.py AreaResize (documented there):
// * general path (a scale factor is not an integer): per-axis tap tables (source index, float32
//   weight) computed by the caller, accumulated in float32 in table order — first along x for
//   every source row, then along y — with separate multiplies and adds (this file must be compiled
//   without floating-point contraction, see setup.py), rounded half to even;
// * 2x2 blocks: (sum + 2) >> 2;
// * other integer factors: float32(sum) * float32(1 / area), rounded half to even.
#include <cstdint>
#include <vector>

#include "preprocess.h"

#include "parallel.h"

#define GPU_ENV_EXPORT extern "C" __attribute__((visibility("default")))

using gpu_env_native::ObserveSpec;
using gpu_env_native::parallel_for;

namespace {

using Taps = gpu_env_native::ResizeTaps;

// v rounded half to even and clamped to [0, 255]. For 0 <= v < 2^23, adding and subtracting 2^23
// rounds to an integer in the default rounding mode (half to even), as cvRound does; unlike
// std::nearbyint it needs no call that saves the floating-point environment.
uint8_t round_to_u8(float v) {
  if (!(v > 0.0f)) return 0;
  if (v >= 255.0f) return 255;
  const float r = (v + 8388608.0f) - 8388608.0f;
  return static_cast<uint8_t>(r);
}

// One frame, general path. src: [src_h][src_w][C], out: [dst_h][dst_w][C]; rows: scratch of
// (src_h + 1) * dst_w * C floats.
template <int C>
void resize_general(const uint8_t* __restrict src, int32_t src_h, int32_t src_w, const Taps& x, const Taps& y,
                    int32_t dst_h, int32_t dst_w, float* __restrict rows, uint8_t* __restrict out) {
  float row[160 * C];  // one source row as floats (src_w <= 160 for Atari frames; checked by the caller)
  for (int32_t sy = 0; sy < src_h; ++sy) {
    const uint8_t* s = src + static_cast<size_t>(sy) * src_w * C;
    for (int32_t p = 0; p < src_w * C; ++p) row[p] = static_cast<float>(s[p]);
    float* __restrict r = rows + static_cast<size_t>(sy) * dst_w * C;
    for (int32_t dx = 0; dx < dst_w; ++dx) {
      for (int c = 0; c < C; ++c) r[dx * C + c] = row[x.index[dx] * C + c] * x.weight[dx];
    }
    for (int32_t j = 1; j < x.k; ++j) {
      const int32_t* xi = x.index + j * dst_w;
      const float* xw = x.weight + j * dst_w;
      for (int32_t dx = 0; dx < dst_w; ++dx) {
        for (int c = 0; c < C; ++c) {
          const float term = row[xi[dx] * C + c] * xw[dx];
          r[dx * C + c] = r[dx * C + c] + term;
        }
      }
    }
  }
  float* __restrict line = rows + static_cast<size_t>(src_h) * dst_w * C;
  for (int32_t dy = 0; dy < dst_h; ++dy) {
    const float w0 = y.weight[dy];
    const float* r0 = rows + static_cast<size_t>(y.index[dy]) * dst_w * C;
    for (int32_t p = 0; p < dst_w * C; ++p) line[p] = r0[p] * w0;
    for (int32_t j = 1; j < y.k; ++j) {
      const float w = y.weight[j * dst_h + dy];
      const float* rj = rows + static_cast<size_t>(y.index[j * dst_h + dy]) * dst_w * C;
      for (int32_t p = 0; p < dst_w * C; ++p) {
        const float term = rj[p] * w;
        line[p] = line[p] + term;
      }
    }
    uint8_t* o = out + static_cast<size_t>(dy) * dst_w * C;
    for (int32_t p = 0; p < dst_w * C; ++p) o[p] = round_to_u8(line[p]);
  }
}

// One frame, integer factors fx = src_w / dst_w, fy = src_h / dst_h.
void resize_integer(const uint8_t* __restrict src, int32_t src_w, int32_t channels, int32_t fx, int32_t fy,
                    int32_t dst_h, int32_t dst_w, uint8_t* __restrict out) {
  const float inv_area = static_cast<float>(1.0 / static_cast<double>(fx * fy));
  for (int32_t dy = 0; dy < dst_h; ++dy) {
    for (int32_t dx = 0; dx < dst_w; ++dx) {
      for (int32_t c = 0; c < channels; ++c) {
        int32_t sum = 0;
        for (int32_t v = 0; v < fy; ++v) {
          const uint8_t* s = src + (static_cast<size_t>(dy * fy + v) * src_w + static_cast<size_t>(dx * fx)) * channels;
          for (int32_t u = 0; u < fx; ++u) sum += s[u * channels + c];
        }
        uint8_t value;
        if (fx == 2 && fy == 2) {
          value = static_cast<uint8_t>((sum + 2) >> 2);
        } else {
          value = round_to_u8(static_cast<float>(sum) * inv_area);
        }
        out[(static_cast<size_t>(dy) * dst_w + dx) * channels + c] = value;
      }
    }
  }
}

// a[p] = max(a[p], b[p]); the buffers never overlap (two separate arrays), which lets the compiler
// use vector max instructions.
void max_in_place(uint8_t* __restrict a, const uint8_t* __restrict b, size_t count) {
  for (size_t p = 0; p < count; ++p) a[p] = a[p] > b[p] ? a[p] : b[p];
}

}  // namespace

namespace gpu_env_native {

void observe_frame(const ObserveSpec& spec, uint8_t* frame, const uint8_t* other, uint8_t* out) {
  const size_t src_bytes = static_cast<size_t>(spec.src_h) * spec.src_w * spec.channels;
  if (other != nullptr) max_in_place(frame, other, src_bytes);
  if (spec.integer_path) {
    resize_integer(frame, spec.src_w, spec.channels, spec.src_w / spec.dst_w, spec.src_h / spec.dst_h, spec.dst_h,
                   spec.dst_w, out);
    return;
  }
  thread_local std::vector<float> rows;
  rows.resize(static_cast<size_t>(spec.src_h + 1) * spec.dst_w * spec.channels);
  if (spec.channels == 1) {
    resize_general<1>(frame, spec.src_h, spec.src_w, spec.x, spec.y, spec.dst_h, spec.dst_w, rows.data(), out);
  } else {
    resize_general<3>(frame, spec.src_h, spec.src_w, spec.x, spec.y, spec.dst_h, spec.dst_w, rows.data(), out);
  }
}

}  // namespace gpu_env_native

// For env i < n: when pool && pool_mask[i], buf0[i] = max(buf0[i], buf1[i]) (in place); then
// out[i] = INTER_AREA resize of buf0[i] from src_h x src_w to dst_h x dst_w (`channels` bytes per
// pixel). integer_path: use the integer-factor path (both factors integers); otherwise the tap
// tables x_index/x_weight ([kx][dst_w]) and y_index/y_weight ([ky][dst_h]) give the general path.
GPU_ENV_EXPORT void gpu_env_preprocess_observe(int32_t n, uint8_t* buf0, const uint8_t* buf1, int32_t src_h,
                                               int32_t src_w, int32_t channels, int32_t pool,
                                               const uint8_t* pool_mask, int32_t dst_h, int32_t dst_w,
                                               int32_t integer_path, const int32_t* x_index, const float* x_weight,
                                               int32_t kx, const int32_t* y_index, const float* y_weight, int32_t ky,
                                               uint8_t* out, int32_t num_threads) {
  const ObserveSpec spec{src_h, src_w, channels, dst_h, dst_w, integer_path != 0,
                         {x_index, x_weight, kx}, {y_index, y_weight, ky}};
  const size_t src_bytes = static_cast<size_t>(src_h) * src_w * channels;
  const size_t dst_bytes = static_cast<size_t>(dst_h) * dst_w * channels;
  parallel_for(n, num_threads, [&](int32_t i) {
    const bool pooled = pool && pool_mask[i];
    gpu_env_native::observe_frame(spec, buf0 + src_bytes * static_cast<size_t>(i),
                                  pooled ? buf1 + src_bytes * static_cast<size_t>(i) : nullptr,
                                  out + dst_bytes * static_cast<size_t>(i));
  });
}
