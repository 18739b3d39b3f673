#!/usr/bin/env bash
# On the lent GPU machine, from the repository root (issue 28, docs/validation.md):
#   bash benchmarks/gpu/heldout/device_run.sh
# Characterises the GPU, sweeps the held-out kernels, records their defects with the
# PyTorch profiler and asks Nsight Compute for its estimated speedups. Results in $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/occlint-out}
mkdir -p "$OUT"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
timeout 170 python3 benchmarks/gpu/characterize.py "$OUT/characterization.json" 2>&1 | tee "$OUT/characterize.log" | tail -80
timeout 330 python3 benchmarks/gpu/heldout/sweep.py "$OUT" > "$OUT/sweep.log" 2>&1; echo "sweep rc $?"
tail -5 "$OUT/sweep.log"
gzip -9 -f "$OUT/heldout.pt.trace.json" 2>/dev/null
timeout ${NCU_SECONDS:-80} ncu --clock-control none --section LaunchStats --section Occupancy \
  --section SpeedOfLight --print-rule-details python3 benchmarks/gpu/heldout/sweep.py --ncu \
  > "$OUT/ncu.txt" 2>&1; echo "ncu rc $?"
gzip -9 -f "$OUT/ncu.txt"
ls -la "$OUT"
