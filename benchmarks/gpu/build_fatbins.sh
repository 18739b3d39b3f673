#!/usr/bin/env bash
# On the lent GPU machine, from the repository root (issue 28: kernel facts from the PTX a
# binary embeds): fatbins holding both SASS and PTX, as nvcc's default -arch=sm_90 builds
# embed them, of kernels whose launches fixtures already trace. Results in $OUT.
#   odd_launches.fatbin   benchmarks/traces/kernels/odd_launches.cu (fixtures/traces/kineto/raw_odd)
#   heldout-32.fatbin     fixtures/traces/heldout-32/kernels.cu (its h100 sweep)
set -euo pipefail
OUT=${OUT:-/tmp/occlint-out}
mkdir -p "$OUT"
nvcc --version | tail -2 | tee "$OUT/nvcc.txt"
gen=(-gencode "arch=compute_90,code=[sm_90,compute_90]")
nvcc -fatbin -O3 "${gen[@]}" -o "$OUT/odd_launches.fatbin" benchmarks/traces/kernels/odd_launches.cu
nvcc -fatbin -O3 "${gen[@]}" -o "$OUT/heldout-32.fatbin" fixtures/traces/heldout-32/kernels.cu
ls -la "$OUT"
