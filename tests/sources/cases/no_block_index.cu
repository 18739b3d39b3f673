// Kernels that read no block index (block_index_helper.cu: one that reads it through a
// helper of its file).
// Seen in the wild: NVIDIA/cccl thrust/examples/cuda/async_reduce.cu ("launch a CUDA kernel
// with only 1 thread"), cub/test/thread_reduce/catch2_test_thread_reduce.cu (<<<1, 1>>>
// kernels writing *d_out), ROCm/rocm-examples HIP-Basic/cooperative_groups (a block's
// thread_rank() only).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

template <typename T>
__global__ void reduce_once(const T *in, int n, T *out) {
    T sum = 0;
    for (int i = 0; i < n; ++i) sum += in[i];
    *out = sum;
}

__global__ void block_rank_sum(const int *in, int *out) {
    cg::thread_block block = cg::this_thread_block();
    if (block.thread_rank() == 0) atomicAdd(out, in[0]);
}

void run(const float *in, float *out, const int *a, int *b) {
    reduce_once<<<1, 1>>>(in, 1000, out);
    block_rank_sum<<<1, 64>>>(a, b);
}
