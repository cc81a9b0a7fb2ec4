#!/usr/bin/env bash
# The one prepared GPU check of gpu_env's CUDA backend (issue 8). Run on a machine with an NVIDIA GPU,
# from the repository root (the device tool runs it there):
#     bash benchmarks/gpu_check.sh
# Before, on the CPU machine: bash benchmarks/gpu_check_prepare.sh (wheels into .whl/, cubins into
# build/cuda_cache/), and carry [".whl", "build/cuda_cache"]. Without prebuilt cubins this script builds them
# itself with nvcc (several minutes of ptxas).
#
# Stages, each with its own time limit so the whole run ends inside 8 minutes:
#   0. machine facts (nvidia-smi, python, torch, cupy);
#   1. packages: wheels from .whl/ into /tmp/site (no network there); CuPy must already be present (the
#      'cuda' image has cupy-cuda13x) or be installable (cupy-cuda<driver major>x);
#   2. build: the CPU library (g++, parallel) and the CUDA cubins (python -m gpu_env.cuda.module prebuild);
#   3. the `gpu` tests (tests/gpu_env/test_cuda_gpu.py): CPU vs CUDA bit equality, GPU_ENV_EQUALITY_FRAMES
#      frames (default 10,000) on 12 games, preprocessing, DLPack, masks, clone/restore;
#   4. benchmarks/atari_gpu.py (frames/s vs envs 256..32K, raw and preprocessed, kernel variants, CPU refs).
# Results under $OUT (default build/gpu_check_out): gpu_check.log, build_native.log, build_cuda.log,
# pytest_gpu.log, junit_gpu.xml, atari_gpu.log, atari_gpu.json.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/build/gpu_check_out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/gpu_check.log") 2>&1
START=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - START )) s] $*"; }
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
export GPU_ENV_CUDA_CACHE=${GPU_ENV_CUDA_CACHE:-$PWD/build/cuda_cache}
export GPU_ENV_EQUALITY_FRAMES=${GPU_ENV_EQUALITY_FRAMES:-10000}
TEST_LIMIT=${TEST_LIMIT:-220}
BENCH_LIMIT=${BENCH_LIMIT:-150}
BUILD_LIMIT=${BUILD_LIMIT:-330}

stamp "0. machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv || echo "nvidia-smi failed"
$PY -V
nproc

stamp "1. packages"
export PYTHONPATH=$PWD
if ls .whl/*.whl >/dev/null 2>&1; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site:$PWD
fi
if ! $PY -c "import cupy" 2>/dev/null; then
  major=$(nvidia-smi | grep -o 'CUDA Version: [0-9]*' | grep -o '[0-9]*$' || echo 12)
  echo "CuPy missing: trying pip install cupy-cuda${major}x"
  $PY -m pip install -q "cupy-cuda${major}x" || { echo "FAILED: CuPy is not installed and cannot be installed here"; exit 3; }
fi
$PY -c "import ale_py" 2>/dev/null || { echo "FAILED: ale_py missing: run benchmarks/gpu_check_prepare.sh and carry .whl"; exit 3; }
$PY - <<'PYEOF'
import cupy, numpy, torch
print("cupy", cupy.__version__, "numpy", numpy.__version__, "torch", torch.__version__, "cuda", torch.version.cuda)
print("device", cupy.cuda.runtime.getDeviceProperties(0)["name"], "nvrtc", cupy.cuda.nvrtc.getVersion())
PYEOF

stamp "2. build (CPU library and CUDA cubins, in parallel)"
suffix=$($PY -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
(
  set -e
  mkdir -p build/native_obj
  ls gpu_env/native/*.cpp | xargs -P "$(nproc)" -I{} sh -c \
    'g++ -std=c++17 -O3 -fPIC -fno-exceptions -fno-rtti -pthread -fvisibility=hidden -ffp-contract=off -Igpu_env/core -Igpu_env/native -c "$1" -o "build/native_obj/$(basename "$1" .cpp).o"' _ {}
  g++ -shared -pthread build/native_obj/*.o -o "gpu_env/_native$suffix"
) > "$OUT/build_native.log" 2>&1 &
native_pid=$!
( time timeout "$BUILD_LIMIT" $PY -m gpu_env.cuda.module prebuild --arch "sm_$($PY -c 'import cupy; print(cupy.cuda.Device(0).compute_capability)')" --local -j 8 ) \
  > "$OUT/build_cuda.log" 2>&1 &
cuda_pid=$!
wait $native_pid && echo "CPU library built: gpu_env/_native$suffix" || { echo "FAILED: CPU library"; tail -30 "$OUT/build_native.log"; exit 4; }
wait $cuda_pid && cat "$OUT/build_cuda.log" || { echo "FAILED: cubins (NVRTC will compile at first use)"; tail -30 "$OUT/build_cuda.log"; }

stamp "3. gpu tests (GPU_ENV_EQUALITY_FRAMES=$GPU_ENV_EQUALITY_FRAMES, limit ${TEST_LIMIT}s)"
timeout "$TEST_LIMIT" $PY -m pytest -q -s -rA -p no:cacheprovider tests/gpu_env/test_cuda_gpu.py \
  --junitxml="$OUT/junit_gpu.xml" 2>&1 | tee "$OUT/pytest_gpu.log" | tail -60
echo "pytest exit: ${PIPESTATUS[0]}"

stamp "4. benchmark (limit ${BENCH_LIMIT}s)"
timeout "$BENCH_LIMIT" $PY benchmarks/atari_gpu.py --seconds 1 --local --cpu-envs 256 --json "$OUT/atari_gpu.json" \
  2>&1 | tee "$OUT/atari_gpu.log" | tail -60
echo "benchmark exit: ${PIPESTATUS[0]}"

stamp "done"
ls -la "$OUT"
