// The CPU loop of the 4K cartridge scheme, compiled once for the library (see console_run_cpu in
// core/console.h): one translation unit per scheme, so that the library's units build in parallel.
#include "console.h"

GPU_ENV_RUN_CPU_INSTANCE(, kCart4K)
