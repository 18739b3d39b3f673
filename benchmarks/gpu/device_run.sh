#!/usr/bin/env bash
# Run on the lent GPU machine from the repository root (see docs/validation.md):
#   bash benchmarks/gpu/device_run.sh smoke|full|static
# Installs the wheels carried in .whl/ offline, records the environment, then runs the GPU
# test and a two-kernel check with a Triton cache (smoke) or the whole suite (full).
# Results land in $OUT.
set -uo pipefail
MODE=${1:-full}
OUT=${OUT:-/tmp/occlint-out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
{
  nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.max.sm,clocks.max.mem,memory.total --format=csv
  python3 -c "import sys, cuda.bindings; print('python', sys.version.split()[0], 'cuda-bindings', cuda.bindings.__version__)"
  nvcc --version | tail -2
  date -u
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
if [ "$MODE" = static ]; then
  python3 benchmarks/gpu/static_check.py --out "$OUT/static.json" fixtures/nvidia/cubin \
    fixtures/nvidia/triton fixtures/nvidia/gpu-suite > "$OUT/static.log" 2>&1
  grep -v "^ok " "$OUT/static.log" | tail -40
elif [ "$MODE" = smoke ]; then
  python3 -m pytest -q -m gpu tests/test_validate_gpu.py -p no:cacheprovider > "$OUT/gpu-test.log" 2>&1
  tail -3 "$OUT/gpu-test.log"
  python3 benchmarks/gpu/run.py --out "$OUT/smoke.json" --only vecadd register_heavy --repeats 3
  python3 benchmarks/gpu/triton_cache.py /tmp/triton > "$OUT/triton.log" 2>&1 \
    && cp /tmp/triton/triton-cache.tgz "$OUT/"; tail -3 "$OUT/triton.log"
else
  python3 benchmarks/gpu/run.py --out "$OUT/validation-results.json"
  # a second, independent run of the whole suite: how far the results move run to run
  python3 benchmarks/gpu/run.py --out "$OUT/validation-results-repeat.json" > "$OUT/repeat.log"
  python3 -m pytest -q -m gpu tests/test_validate_gpu.py -p no:cacheprovider > "$OUT/gpu-test.log" 2>&1
  tail -3 "$OUT/gpu-test.log"
fi
