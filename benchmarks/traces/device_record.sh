#!/usr/bin/env bash
# Record the trace validation data on the lent GPU machine (see docs/traces.md):
#   bash benchmarks/traces/device_record.sh [WORKLOAD...]
# Needs the cubin of kernels/odd_launches.cu in benchmarks/traces/build/ (built here by
# `nvcc -cubin -arch=sm_90 -O3`, carried). Writes $OUT/rec.tar (Kineto traces, Nsight Compute
# CSVs, AOTInductor packages, the Triton cache of the compiled workload, tool reports) and a
# log; the tar is re-written after every step, so a run cut short still returns what it did.
set -uo pipefail
OUT=${OUT:-/tmp/occlint-out}
REC=/tmp/rec
mkdir -p "$OUT" "$REC"
export PYTHONUNBUFFERED=1 ODD_CUBIN=$PWD/benchmarks/traces/build/odd_launches.sm_90.cubin
export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor TRITON_CACHE_DIR=/tmp/triton-cache
WORKLOADS=${*:-raw_odd resnet18_infer transformer_compiled resnet18_train}
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
save() { tar -cf "$OUT/rec.tar" -C "$REC" . ; }
{
  nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.max.sm,memory.total --format=csv
  python3 -c "import torch, torchvision, triton, cupy; print('torch', torch.__version__, 'torchvision', torchvision.__version__, 'triton', triton.__version__, 'cupy', cupy.__version__)"
  "$NCU" --version | tail -1
  date -u
} > "$REC/env.txt" 2>&1
cat "$REC/env.txt"
"$NCU" --help > "$REC/ncu-help.txt" 2>&1
cuobjdump --dump-resource-usage "$ODD_CUBIN" > "$REC/odd_launches.sm_90.cuobjdump.txt" 2>&1
EXTRA=()
grep -q -- "--print-details" "$REC/ncu-help.txt" && EXTRA+=(--print-details all)
grep -q -- "--print-rule-details" "$REC/ncu-help.txt" && EXTRA+=(--print-rule-details)
for w in $WORKLOADS; do
  t0=$(date +%s)
  timeout 150 python3 benchmarks/traces/record.py kineto "$w" "$REC/$w.pt.trace.json.gz" \
    2> "$REC/$w.kineto.log"; echo "$w kineto rc=$? $(( $(date +%s) - t0 ))s"
  t0=$(date +%s)
  timeout 240 "$NCU" --profile-from-start off --section LaunchStats --section Occupancy \
    --csv --page details --print-units base "${EXTRA[@]}" \
    python3 benchmarks/traces/record.py ncu "$w" > "$REC/$w.ncu.csv" 2> "$REC/$w.ncu.log"
  echo "$w ncu rc=$? $(( $(date +%s) - t0 ))s $(grep -c '^"' "$REC/$w.ncu.csv") rows"
  save
done
# the compiled workload's Triton kernels: cubins and metadata (fixtures/traces/kineto/
# triton-cache), and cuobjdump's report on each cubin
(cd "$TRITON_CACHE_DIR" 2>/dev/null && find . -type f \( -name '*.cubin' -o -name '*.json' \) \
  | tar -czf "$REC/triton-cache.tgz" -T -)
for c in $(cd "$TRITON_CACHE_DIR" 2>/dev/null && find . -name '*.cubin' | sort); do
  echo "== triton-cache/${c#./}"; cuobjdump --dump-resource-usage "$TRITON_CACHE_DIR/$c" \
    | grep -E "Function|REG"
done > "$REC/triton-cache.cuobjdump.txt" 2>&1
save
t0=$(date +%s)
timeout 200 python3 benchmarks/traces/aoti_package.py "$REC/aoti" > "$REC/aoti.log" 2>&1
echo "aoti rc=$? $(( $(date +%s) - t0 ))s"
if [ -f "$REC/aoti/aoti_files.pt2" ]; then
  mkdir -p /tmp/aoti-x && (cd /tmp/aoti-x && python3 -m zipfile -e "$REC/aoti/aoti_files.pt2" .)
  for c in $(find /tmp/aoti-x -name '*.cubin' | sort); do
    echo "== ${c#/tmp/aoti-x/}"; cuobjdump --dump-resource-usage "$c"
  done > "$REC/aoti/aoti_files.cuobjdump.txt" 2>&1
fi
SECTIONS=$(dirname "$NCU")/sections
[ -d "$SECTIONS" ] && mkdir -p "$REC/ncu-rules" && cp "$SECTIONS"/LaunchStatistics.py \
  "$SECTIONS"/Occupancy.py "$SECTIONS"/*Tail*.py "$REC/ncu-rules/" 2>/dev/null
ls "$SECTIONS" > "$REC/ncu-sections.txt" 2>&1
save
ls -la "$REC" "$REC/aoti" 2>&1 | tail -30
