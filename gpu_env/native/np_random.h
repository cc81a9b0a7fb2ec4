// numpy's Generator(PCG64) as far as the preset wrappers draw from it (CPU only: unsigned __int128).
// Facts (numpy 1.17+ / 2.x, numpy/random/src/pcg64 and distributions.c; the code is our own): PCG64
// steps state = state * M + inc (128 bits), then outputs XSL-RR of the new state; next_uint32 returns the
// low half of a fresh 64-bit draw and keeps the high half for the next call (has_uint32/uinteger);
// integers(low, high) with high - low - 1 == rng: rng == 0 returns low without a draw, otherwise low +
// Lemire's multiply-and-reject on 32-bit draws over rng + 1 values (core/ale/lemire.h; numpy's threshold
// (2^32 - 1 - rng) % (rng + 1) is that header's (2^32 - span) mod span).
#pragma once

#include <cstdint>

#include "ale/lemire.h"

namespace gpu_env_native {

struct NpPcg64 {
  uint64_t state_hi, state_lo, inc_hi, inc_lo;
  uint32_t has_uint32, uinteger;
};

inline uint64_t pcg64_next64(NpPcg64& g) {
  using u128 = unsigned __int128;
  constexpr u128 kMultiplier = (static_cast<u128>(2549297995355413924ULL) << 64) | 4865540595714422341ULL;
  u128 state = (static_cast<u128>(g.state_hi) << 64) | g.state_lo;
  const u128 inc = (static_cast<u128>(g.inc_hi) << 64) | g.inc_lo;
  state = state * kMultiplier + inc;
  g.state_hi = static_cast<uint64_t>(state >> 64);
  g.state_lo = static_cast<uint64_t>(state);
  const uint64_t x = g.state_hi ^ g.state_lo;
  const unsigned rot = static_cast<unsigned>(g.state_hi >> 58);
  return (x >> rot) | (x << ((64u - rot) & 63u));
}

inline uint32_t pcg64_next32(NpPcg64& g) {
  if (g.has_uint32) {
    g.has_uint32 = 0;
    return g.uinteger;
  }
  const uint64_t next = pcg64_next64(g);
  g.has_uint32 = 1;
  g.uinteger = static_cast<uint32_t>(next >> 32);
  return static_cast<uint32_t>(next);
}

// One env's generator: `now` draws; reseed() restores `seeded` (the state of the reset's seed).
struct NpRandom {
  NpPcg64 now;
  NpPcg64 seeded;

  void reseed() { now = seeded; }

  // Generator.integers(low, high) (high exclusive, int64 result).
  int32_t integers(int32_t low, int32_t high) {
    const uint32_t rng = static_cast<uint32_t>(high - low - 1);
    if (rng == 0) return low;
    return low + static_cast<int32_t>(lemire_bounded([this] { return pcg64_next32(now); }, rng + 1u));
  }
};

}  // namespace gpu_env_native
