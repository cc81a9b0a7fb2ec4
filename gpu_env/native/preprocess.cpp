// AtariPreprocessing's observation on the CPU, batched over environments: max-pool of the two last
// frames (in place, as gymnasium does) and the resize of cv2.INTER_AREA, byte for byte.
//
// The resize follows OpenCV's arithmetic (documented in gpu_env/preprocess.py, whose tap tables it takes;
// the CUDA kernel gpu_env_area_resize in core/cuda/kernels.h is the device's implementation):
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
#include "simd.h"

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

#if GPU_ENV_HAVE_AVX512
// GCC 12's AVX-512 headers trip -Wmaybe-uninitialized on their own placeholder vectors.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// resize_general<1> with 16 outputs per vector operation: the same float32 products and sums per output
// pixel, in the same order, so the same bytes. Along x, the taps of 16 neighbouring outputs read a
// window of at most 32 source pixels (scale factors up to ~1.9, e.g. 160 -> 84), so each tap is one
// two-register permute of the source row; a block of outputs whose taps spread wider gathers instead.
// Padding taps (weight 0) read the window's first pixel: like the scalar code's read of pixel 0, their
// product is +0 and leaves the sum unchanged.
constexpr int32_t kMaxTaps = 16;   // the caller uses the scalar path beyond
constexpr int32_t kMaxBlocks = 11;  // 16-wide blocks of dst_w: up to 176 outputs (the caller checks)

GPU_ENV_AVX512 void resize_general_gray_avx512(const uint8_t* __restrict src, int32_t src_h, int32_t src_w,
                                               const Taps& x, const Taps& y, int32_t dst_h, int32_t dst_w,
                                               float* __restrict rows, uint8_t* __restrict out) {
  const int32_t blocks = (dst_w + 15) / 16;
  alignas(64) int32_t control[kMaxTaps][kMaxBlocks][16];
  alignas(64) float weight[kMaxTaps][kMaxBlocks][16];
  int32_t base[kMaxBlocks];
  bool windowed[kMaxBlocks];
  for (int32_t blk = 0; blk < blocks; ++blk) {
    int32_t lo = src_w, hi = 0;
    for (int32_t j = 0; j < x.k; ++j) {
      for (int32_t l = 0; l < 16 && blk * 16 + l < dst_w; ++l) {
        const int32_t d = blk * 16 + l;
        if (x.weight[j * dst_w + d] == 0.0f) continue;
        const int32_t i = x.index[j * dst_w + d];
        lo = i < lo ? i : lo;
        hi = i > hi ? i : hi;
      }
    }
    if (lo > hi) lo = hi = 0;
    base[blk] = lo;
    windowed[blk] = hi - lo < 32;
    for (int32_t j = 0; j < x.k; ++j) {
      for (int32_t l = 0; l < 16; ++l) {
        const int32_t d = blk * 16 + l;
        const bool real = d < dst_w && x.weight[j * dst_w + d] != 0.0f;
        const int32_t i = real ? x.index[j * dst_w + d] : lo;
        control[j][blk][l] = windowed[blk] ? i - lo : i;
        weight[j][blk][l] = real ? x.weight[j * dst_w + d] : 0.0f;
      }
    }
  }
  alignas(64) float row[160 + 48];  // one source row as floats, with room for the last window's loads
  for (int32_t p = src_w; p < 160 + 48; ++p) row[p] = 0.0f;
  const __mmask16 tail = static_cast<__mmask16>((1u << (dst_w - 16 * (blocks - 1))) - 1u);
  for (int32_t sy = 0; sy < src_h; ++sy) {
    const uint8_t* s = src + static_cast<size_t>(sy) * src_w;
    int32_t p = 0;
    for (; p + 16 <= src_w; p += 16) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + p));
      _mm512_store_ps(row + p, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(bytes)));
    }
    for (; p < src_w; ++p) row[p] = static_cast<float>(s[p]);
    float* __restrict r = rows + static_cast<size_t>(sy) * dst_w;
    for (int32_t blk = 0; blk < blocks; ++blk) {
      __m512 sum;
      if (windowed[blk]) {
        const __m512 first = _mm512_loadu_ps(row + base[blk]), second = _mm512_loadu_ps(row + base[blk] + 16);
        sum = _mm512_mul_ps(_mm512_permutex2var_ps(first, _mm512_load_si512(control[0][blk]), second),
                            _mm512_load_ps(weight[0][blk]));
        for (int32_t j = 1; j < x.k; ++j) {
          const __m512 term = _mm512_mul_ps(
              _mm512_permutex2var_ps(first, _mm512_load_si512(control[j][blk]), second), _mm512_load_ps(weight[j][blk]));
          sum = _mm512_add_ps(sum, term);
        }
      } else {
        sum = _mm512_mul_ps(_mm512_i32gather_ps(_mm512_load_si512(control[0][blk]), row, 4),
                            _mm512_load_ps(weight[0][blk]));
        for (int32_t j = 1; j < x.k; ++j) {
          const __m512 term = _mm512_mul_ps(_mm512_i32gather_ps(_mm512_load_si512(control[j][blk]), row, 4),
                                            _mm512_load_ps(weight[j][blk]));
          sum = _mm512_add_ps(sum, term);
        }
      }
      _mm512_mask_storeu_ps(r + 16 * blk, blk == blocks - 1 ? tail : static_cast<__mmask16>(0xFFFF), sum);
    }
  }
  const __m512 shift = _mm512_set1_ps(8388608.0f), zero = _mm512_setzero_ps(), top = _mm512_set1_ps(255.0f);
  for (int32_t dy = 0; dy < dst_h; ++dy) {
    const float* r0 = rows + static_cast<size_t>(y.index[dy]) * dst_w;
    uint8_t* o = out + static_cast<size_t>(dy) * dst_w;
    for (int32_t blk = 0; blk < blocks; ++blk) {
      const __mmask16 m = blk == blocks - 1 ? tail : static_cast<__mmask16>(0xFFFF);
      __m512 line = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, r0 + 16 * blk), _mm512_set1_ps(y.weight[dy]));
      for (int32_t j = 1; j < y.k; ++j) {
        const float* rj = rows + static_cast<size_t>(y.index[j * dst_h + dy]) * dst_w;
        const __m512 term = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, rj + 16 * blk), _mm512_set1_ps(y.weight[j * dst_h + dy]));
        line = _mm512_add_ps(line, term);
      }
      // round_to_u8: half to even through 2^23 (the sums are in [0, 255 + rounding]), clamped.
      const __m512 rounded = _mm512_sub_ps(_mm512_add_ps(line, shift), shift);
      const __m512 clamped = _mm512_min_ps(_mm512_max_ps(rounded, zero), top);
      _mm_mask_storeu_epi8(o + 16 * blk, m, _mm512_cvtusepi32_epi8(_mm512_cvttps_epi32(clamped)));
    }
  }
}
#pragma GCC diagnostic pop
#endif

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
#if GPU_ENV_HAVE_AVX512
  if (spec.channels == 1 && gpu_env_native::use_avx512() && spec.x.k <= kMaxTaps && spec.dst_w <= 16 * kMaxBlocks &&
      spec.src_w <= 160) {
    resize_general_gray_avx512(frame, spec.src_h, spec.src_w, spec.x, spec.y, spec.dst_h, spec.dst_w, rows.data(), out);
    return;
  }
#endif
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
