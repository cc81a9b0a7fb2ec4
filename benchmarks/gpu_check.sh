#!/usr/bin/env bash
# The one prepared device check of gpu_env's CUDA backend (issue 12), at most 6 minutes on the GPU machine.
#
# Here (CPU machine), first:  bash benchmarks/gpu_check_prepare.sh      (wheels, CPU library, prebuilt CUDA module)
# Then on the device, from the repository root, with carry [".whl", "build/native", "build/cuda_cache"]:
#     bash benchmarks/gpu_check.sh
# Everything lands in $OUT (default build/gpu_check_out): gpu_check.log (this script's whole output),
# gpu_check.json and gpu_check.md (benchmarks/gpu_check.py: facts, CUDA-vs-CPU equality on every frame,
# make_vec throughput and device memory per env, A2C+V-trace frames/s and return).
#
# --dry-run (on the CPU machine): runs the prepare script (the real builds; kept when up to date), checks
# that the wheels install for the device's Python 3.12 and that the CPU library loads, then runs
# benchmarks/gpu_check.py --dry-run: every stage with tiny sizes, CuPy replaced by the host build of the
# kernels when CuPy is absent. Only the device itself is not exercised.
set -uo pipefail
cd "$(dirname "$0")/.."
DRY=0
for arg in "$@"; do
  case "$arg" in
    --dry-run) DRY=1 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "gpu_check.sh: unknown argument '$arg' (use --dry-run or --help)" >&2; exit 2 ;;
  esac
done
OUT=${OUT:-$PWD/build/gpu_check_out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/gpu_check.log") 2>&1
START=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - START )) s] $*"; }
if [ "$DRY" = 1 ]; then PY=${PYTHON:-.venv/bin/python}; else PY=${PYTHON:-python3}; fi
export PYTHONUNBUFFERED=1
export GPU_ENV_CUDA_CACHE=${GPU_ENV_CUDA_CACHE:-$PWD/build/cuda_cache}
CHECK_LIMIT=${CHECK_LIMIT:-335}

stamp "0. machine (dry run: $DRY)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>/dev/null \
  || echo "nvidia-smi: not available$([ "$DRY" = 1 ] && echo ' (dry run on the CPU machine)')"
$PY -V
echo "cores: $(nproc)"

if [ "$DRY" = 1 ]; then
  stamp "1. prepare (what the device run carries)"
  bash benchmarks/gpu_check_prepare.sh || { echo "FAILED: gpu_check_prepare.sh"; exit 4; }
fi

stamp "2. packages"
export PYTHONPATH=$PWD
if [ "$DRY" = 1 ]; then
  $PY -m pip install -q --dry-run --no-index --no-deps --ignore-installed --target /tmp/gpu_check_site_dry \
    --python-version 3.12 --implementation cp --only-binary=:all: --platform manylinux_2_28_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 .whl/*.whl \
    && echo "wheels install for CPython 3.12: $(ls .whl | tr '\n' ' ')" || { echo "FAILED: wheels"; exit 3; }
elif ls .whl/*.whl >/dev/null 2>&1; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site:$PWD || { echo "FAILED: installing .whl"; exit 3; }
fi
$PY -c "import ale_py, gymnasium; print('ale_py', ale_py.__version__, 'gymnasium', gymnasium.__version__)" \
  || { echo "FAILED: ale_py/gymnasium missing: run benchmarks/gpu_check_prepare.sh and carry .whl"; exit 3; }

stamp "3. CPU library"
loads() { $PY -c "from gpu_env.binding import native; native()" 2>/dev/null; }
if ! loads; then
  [ -f build/native/_native.so ] && cp build/native/_native.so gpu_env/_native.so
  if ! loads; then
    echo "build/native/_native.so not carried or not loadable here: building the CPU library on this machine"
    mkdir -p /tmp/gpu_env_native
    ls gpu_env/native/*.cpp | xargs -P "$(nproc)" -I{} sh -c 'g++ -std=c++17 -O3 -fPIC -fno-exceptions -fno-rtti \
      -pthread -fvisibility=hidden -ffp-contract=off -Igpu_env/core -Igpu_env/native -c "$1" \
      -o "/tmp/gpu_env_native/$(basename "$1" .cpp).o"' _ {} \
      && g++ -shared -pthread /tmp/gpu_env_native/*.o -o gpu_env/_native.so
  fi
fi
$PY -c "from gpu_env.binding import native; print('CPU library:', native()._name)" || { echo "FAILED: CPU library"; exit 4; }
if [ "$DRY" = 1 ]; then
  $PY -c "import ctypes; print('carried build/native/_native.so ABI', ctypes.CDLL('build/native/_native.so').gpu_env_abi_version())" \
    || { echo "FAILED: build/native/_native.so does not load"; exit 4; }
fi

stamp "4. CUDA module"
key=$($PY -m gpu_env.backends.cuda.module key)
if [ -f "$GPU_ENV_CUDA_CACHE/$key.fatbin" ]; then
  echo "prebuilt: $GPU_ENV_CUDA_CACHE/$key.fatbin"
else
  echo "no prebuilt module for source $key in $GPU_ENV_CUDA_CACHE: NVRTC compiles it at first use (minutes)"
fi
if [ "$DRY" = 0 ]; then
  $PY -c "import cupy; print('cupy', cupy.__version__)" || { echo "FAILED: CuPy missing on the device"; exit 3; }
fi

stamp "5. gpu_check.py (limit ${CHECK_LIMIT} s)"
extra=()
[ "$DRY" = 1 ] && extra=(--dry-run)
timeout "$CHECK_LIMIT" $PY benchmarks/gpu_check.py --out "$OUT" "${extra[@]}"
rc=$?
echo "gpu_check.py exit: $rc"
stamp "done"
ls -la "$OUT"
exit $rc
