#!/usr/bin/env bash
# On the lent GPU machine, from the repository root (issue 28, docs/validation.md):
#   bash benchmarks/gpu/heldout/device_run.sh
# Characterises the GPU, sweeps the held-out kernels, records their defects with the
# PyTorch profiler and asks Nsight Compute for its estimated speedups. Results in $OUT.
#   SUITE=fixtures/traces/heldout-30   another seed's suite (generate.py --seed S --out DIR)
#   ONLY=atomics,block_atomics          only these characterisation keys
set -uo pipefail
OUT=${OUT:-/tmp/occlint-out}
RUN=$OUT${SUITE:+/h100}
mkdir -p "$RUN"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
suite=(${SUITE:+--suite "$SUITE"})
only=(${ONLY:+--only "$ONLY"})
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$RUN/env.txt" 2>&1
cat "$RUN/env.txt"
timeout 170 python3 benchmarks/gpu/characterize.py "$OUT/characterization.json" "${only[@]}" 2>&1 | tee "$OUT/characterize.log" | tail -80
timeout 330 python3 benchmarks/gpu/heldout/sweep.py "$RUN" "${suite[@]}" > "$RUN/sweep.log" 2>&1; echo "sweep rc $?"
tail -5 "$RUN/sweep.log"
gzip -9 -f "$RUN/heldout.pt.trace.json" "$RUN/heldout.json" 2>/dev/null
timeout ${NCU_SECONDS:-120} ncu --clock-control none --section LaunchStats --section Occupancy \
  --section SpeedOfLight --print-rule-details python3 benchmarks/gpu/heldout/sweep.py --ncu \
  "${suite[@]}" > "$RUN/ncu.txt" 2>&1; echo "ncu rc $?"
gzip -9 -f "$RUN/ncu.txt"
ls -la "$OUT" "$RUN"
