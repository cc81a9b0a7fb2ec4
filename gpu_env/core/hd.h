// Host/device portability for gpu_env's core: the one place that knows which compiler it is in.
//
// The core is header-only, freestanding C++17: no STL containers, exceptions, RTTI, virtuals,
// heap or mutable globals, so the same headers compile with g++ (CPU library, built at install)
// and with NVRTC through CuPy (GPU, compiled at run time).
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
// Plain `inline`, not `__forceinline__`: forcing the 256-way opcode switch, the TIA and every game
// into one kernel body made cicc need > 18 GiB for the whole console. Hot small helpers may opt in
// with HD_FORCEINLINE.
#define HD __host__ __device__ inline
#define HD_FORCEINLINE __host__ __device__ __forceinline__
#define HD_HOST_NOINLINE HD
#define GPU_ENV_DEVICE 1
#else
#define HD inline
#define HD_FORCEINLINE inline __attribute__((always_inline))
// A call on the host, kept out of its callers so that its frame and saved registers stay off their hot paths
// (the TIA's and RIOT's accesses, the picture update); plain HD on the device.
#define HD_HOST_NOINLINE inline __attribute__((noinline))
#define GPU_ENV_DEVICE 0
#endif

#if defined(__CUDACC_RTC__)
// NVRTC has no libc headers: the fixed-width types are declared here.
typedef unsigned char uint8_t;
typedef signed char int8_t;
typedef unsigned short uint16_t;
typedef short int16_t;
typedef unsigned int uint32_t;
typedef int int32_t;
typedef unsigned long long uint64_t;
typedef long long int64_t;
#else
#include <stdint.h>
#endif
