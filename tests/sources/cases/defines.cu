// #defines in expressions, a #define naming another, `//` comments in #define bodies.
// Seen in the wild: NVIDIA/cuda-samples c94ff36,
// Samples/3_CUDA_Features/cudaTensorCoreGemm/cudaTensorCoreGemm.cu:557
// (`#define THREADS_PER_BLOCK (WARP_SIZE * WARPS_PER_BLOCK)`); karpathy/llm.c f1e2ace.
#define WARP_SIZE 32 // threads in a warp
#define WARPS_PER_BLOCK 8
#define THREADS_PER_BLOCK (WARP_SIZE * WARPS_PER_BLOCK)
#define BLOCK THREADS_PER_BLOCK
#define NUM_THREADS 64 /* per block */
#define LONG_BLOCK \
    (2 * NUM_THREADS)
#define TWICE 128
#define TWICE 128

__global__ void gemm(float *c) { }

void run(float *c) {
    gemm<<<1, THREADS_PER_BLOCK>>>(c);
    gemm<<<1, BLOCK>>>(c);
    gemm<<<1, NUM_THREADS>>>(c);
    gemm<<<1, LONG_BLOCK>>>(c);
    gemm<<<1, TWICE>>>(c);
}
