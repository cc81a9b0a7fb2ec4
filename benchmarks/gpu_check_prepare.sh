#!/usr/bin/env bash
# Run HERE (the CPU machine) before benchmarks/gpu_check.sh goes to a GPU machine, which has no network:
#   1. fetches the wheels that machine lacks (ale-py for the ROMs and AtariVectorEnv, gymnasium) into .whl/
#      (ignored by git; name it in the device tool's `carry`);
#   2. prebuilds the CUDA module's cubins for sm_90 with nvcc into build/cuda_cache/ (ignored; carry it too),
#      so the GPU machine's minutes are not spent in ptxas (about 6 minutes of one core here).
# Then: device run `bash benchmarks/gpu_check.sh` with carry [".whl", "build/cuda_cache"].
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
mkdir -p .whl build/cuda_cache
gym_version=$($PY -c "import gymnasium; print(gymnasium.__version__)")
$PY -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 -d .whl ale-py==0.12.1 "gymnasium==$gym_version" farama-notifications==0.0.6
ls -la .whl
time nice $PY -m gpu_env.cuda.module prebuild --arch sm_90 --local -j 2 --out build/cuda_cache
ls -la build/cuda_cache
