// Kernels that are one block by design (issue 28's review: the grid rules must not ask
// them for more blocks). Launched through CuPy by benchmarks/traces/record.py one_block.
#include <cassert>

// llm.c's global_sum_single_block_kernel: one block strides over the data and reduces it
extern "C" __global__ void sum_one_block(const float* x, float* out, int n) {
    assert(gridDim.x == 1);
    __shared__ float partial[1024];
    float acc = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        acc += x[i];
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int t = 0; t < blockDim.x; t++) {
            s += partial[t];
        }
        *out = s;
    }
}

// SGEMM_CUDA's simplest_kernel: its 4 x 4 threads are its work, one element each
extern "C" __global__ void fill4x4(float* a) {
    a[threadIdx.y * 4 + threadIdx.x] = threadIdx.y * 4 + threadIdx.x;
}
