// ABI version of the gpu_env CPU library; gpu_env._lib refuses a library built from other sources.
#include "hd.h"

#define GPU_ENV_ABI_VERSION 2

extern "C" __attribute__((visibility("default"))) int gpu_env_abi_version() { return GPU_ENV_ABI_VERSION; }
