// A .cpp with a kernel and no HIP header: its vendor is not known.
#include "missing.hpp"

__global__ void scale(float *x) { x[blockIdx.x * blockDim.x + threadIdx.x] = 0.0f; }

void run(float *x) {
    scale<<<64, 16>>>(x);
}
