// A std::mt19937-compatible generator with its state in a plain struct (host and device).
//
// ALE draws its sticky-action coins from a std::mt19937 seeded with `random_seed`
// (src/ale/environment/stella_environment.cpp, constructor) and Stella's System draws the RIOT
// timer and SC cart RAM from another one seeded with 4753849 (src/ale/emucore/System.cxx). Both
// are the standard 32-bit Mersenne Twister (MT19937, Matsumoto & Nishimura 1998): the parameters
// below are the ones the C++ standard fixes for std::mt19937, and `mt_seed` is its seed(value).
// ALE's nextDouble() is next() / 2^32 (src/ale/emucore/Random.cxx).
#pragma once

#include "../hd.h"
#include "lemire.h"

namespace gpu_env {
namespace ale {

constexpr int kMtStateWords = 624;      // n
constexpr int kMtShiftWords = 397;      // m
constexpr uint32_t kMtMatrixA = 0x9908B0DFu;
constexpr uint32_t kMtUpperMask = 0x80000000u;
constexpr uint32_t kMtLowerMask = 0x7FFFFFFFu;
constexpr uint32_t kMtInitMultiplier = 1812433253u;
constexpr uint32_t kMtTemperB = 0x9D2C5680u;
constexpr uint32_t kMtTemperC = 0xEFC60000u;

struct Mt19937 {
  uint32_t mt[kMtStateWords];
  uint32_t index;  // next word to temper; kMtStateWords means "twist before the next draw"
};

// std::mt19937::seed(value).
HD void mt_seed(Mt19937& g, uint32_t seed) {
  g.mt[0] = seed;
  for (uint32_t i = 1; i < static_cast<uint32_t>(kMtStateWords); ++i) {
    const uint32_t prev = g.mt[i - 1];
    g.mt[i] = kMtInitMultiplier * (prev ^ (prev >> 30)) + i;
  }
  g.index = kMtStateWords;
}

// Regenerates all 624 words (the standard "twist").
HD void mt_twist(Mt19937& g) {
  for (int i = 0; i < kMtStateWords; ++i) {
    const uint32_t y = (g.mt[i] & kMtUpperMask) | (g.mt[(i + 1) % kMtStateWords] & kMtLowerMask);
    uint32_t v = g.mt[(i + kMtShiftWords) % kMtStateWords] ^ (y >> 1);
    if (y & 1u) v ^= kMtMatrixA;
    g.mt[i] = v;
  }
  g.index = 0;
}

// std::mt19937::operator()(): the next 32-bit output.
HD uint32_t mt_next(Mt19937& g) {
  if (g.index >= static_cast<uint32_t>(kMtStateWords)) mt_twist(g);
  uint32_t y = g.mt[g.index++];
  y ^= y >> 11;
  y ^= (y << 7) & kMtTemperB;
  y ^= (y << 15) & kMtTemperC;
  y ^= y >> 18;
  return y;
}

// ALE Random::nextDouble(): next() / 2^32, in [0, 1).
HD double mt_next_double(Mt19937& g) { return static_cast<double>(mt_next(g)) / 4294967296.0; }

// Advances the generator by `count` outputs (used to replay the System RNG's draw count).
HD void mt_discard(Mt19937& g, uint32_t count) {
  for (uint32_t k = 0; k < count; ++k) (void)mt_next(g);
}

// std::uniform_int_distribution<int>(low, high)(g) as libstdc++ (GCC >= 11) draws it from a 32-bit
// generator (lemire.h).
HD int32_t mt_uniform_int(Mt19937& g, int32_t low, int32_t high) {
  const uint32_t span = static_cast<uint32_t>(high - low) + 1u;
  return low + static_cast<int32_t>(lemire_bounded([&g] { return mt_next(g); }, span));
}

}  // namespace ale
}  // namespace gpu_env
