// U{0, span - 1} from a generator of 32-bit draws by Lemire's multiply-and-reject: the draw both libstdc++'s
// std::uniform_int_distribution (GCC >= 11, on a 32-bit engine: mt_uniform_int in mt19937.h) and numpy's
// Generator.integers (native/np_random.h) make. A draw times `span`; a product whose low 32 bits fall below
// (2^32 - span) mod span is rejected and drawn again; the high 32 bits are the value. Facts from both libraries'
// sources; the code is our own.
#pragma once

#include "../hd.h"

// `next()` returns the generator's next 32 bits; span >= 1.
template <class Next>
HD uint32_t lemire_bounded(Next&& next, uint32_t span) {
  uint64_t product = static_cast<uint64_t>(next()) * span;
  uint32_t low_bits = static_cast<uint32_t>(product);
  if (low_bits < span) {
    const uint32_t threshold = (0u - span) % span;
    while (low_bits < threshold) {
      product = static_cast<uint64_t>(next()) * span;
      low_bits = static_cast<uint32_t>(product);
    }
  }
  return static_cast<uint32_t>(product >> 32);
}
