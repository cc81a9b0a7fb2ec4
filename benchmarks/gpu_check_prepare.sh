#!/usr/bin/env bash
# Builds, HERE (the CPU machine), everything benchmarks/gpu_check.sh carries to the GPU machine, which has no
# network and whose minutes should not go to compilers:
#   1. .whl/: the wheels that machine's image lacks (ale-py 0.12.1 with the ROMs, gymnasium, farama-notifications),
#      for its Python 3.12; downloaded once (kept when present);
#   2. build/native/_native.so: gpu_env's CPU library (built by setup.py, its flags), named so that any Python
#      loads it (gpu_env/binding.py tries the plain ".so" suffix); rebuilt when a source is newer;
#   3. build/cuda_cache/<sha256>.fatbin: the CUDA module, SASS for sm_90 + compute_90 PTX, by
#      `python -m gpu_env.backends.cuda.module prebuild` (nvcc; about 3 minutes of one core in ptxas); kept when the source
#      hash matches.
# Then: device run `bash benchmarks/gpu_check.sh` with carry [".whl", "build/native", "build/cuda_cache"].
# Usage: bash benchmarks/gpu_check_prepare.sh [--offline]   (--offline: fail instead of downloading wheels)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
offline=0
for arg in "$@"; do
  case "$arg" in
    --offline) offline=1 ;;
    *) echo "gpu_check_prepare.sh: unknown argument '$arg' (use --offline)" >&2; exit 2 ;;
  esac
done
mkdir -p .whl build/native build/cuda_cache
t0=$(date +%s)

gym_version=$($PY -c "import gymnasium; print(gymnasium.__version__)")
if ls .whl/ale_py-0.12.1-*.whl .whl/gymnasium-"$gym_version"-*.whl .whl/farama_notifications-*.whl >/dev/null 2>&1; then
  echo "wheels: present in .whl/"
elif [ "$offline" = 1 ]; then
  echo "wheels: missing from .whl/ and --offline given: run without --offline once" >&2; exit 3
else
  $PY -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d .whl ale-py==0.12.1 "gymnasium==$gym_version" farama-notifications==0.0.6
fi
ls -la .whl

lib=build/native/_native.so
if [ -f "$lib" ] && [ -z "$(find gpu_env/native gpu_env/core setup.py -newer "$lib" -type f | head -1)" ]; then
  echo "native library: $lib is up to date"
else
  echo "native library: building $lib"
  # setup.py's own build (its flags and units, e.g. -DGPU_ENV_SPLIT_CPU), into build/, then copied under the
  # plain name; the library has a C ABI only, so the Python version it was built under does not matter.
  time (
    nice -n 10 $PY setup.py -q build_ext --build-temp build/native_tmp --build-lib build/native_lib
    built=$(ls build/native_lib/gpu_env/_native*.so | head -1)
    strip --strip-debug -o "$lib.part" "$built" && mv "$lib.part" "$lib"
  )
fi

echo "CUDA module: $($PY -m gpu_env.backends.cuda.module key) (source hash)"
time nice -n 10 $PY -m gpu_env.backends.cuda.module prebuild --arch sm_90 -j 1 --out build/cuda_cache
ls -la build/cuda_cache
du -sh .whl build/native/_native.so build/cuda_cache
echo "prepared in $(( $(date +%s) - t0 )) s"
