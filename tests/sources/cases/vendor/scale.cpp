// A .cpp that includes HIP only through a local header (common.hpp, then
// detail/runtime.hpp): HIP code, built by hipcc for AMD's 64-lane wavefronts.
// Seen in the wild: amd/HPCTrainingExamples aaaa72d, rocm-blogs-codes/jacobi/Norm.cpp
// (includes "Jacobi.hpp", which includes <hip/hip_runtime.h>).
#include "common.hpp"

__global__ void scale(float *x) { x[blockIdx.x * blockDim.x + threadIdx.x] = 0.0f; }

void run(float *x) {
    scale<<<64, 16>>>(x);
}
