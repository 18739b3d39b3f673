// karpathy/llm.c f1e2ace651495b74ae22d45d1723443fd00ecd3a (MIT): llmc/cuda_utils.cuh lines
// 189-206 (a kernel that reads no block index and calls blockReduce), 235 (a comment naming
// blockIdx) and 268-278 (a helper that reads one); blockReduce and Get2dNoiseUint declared
// as the file's lines 240-262 and llmc/cuda_common.h define them
#include <cuda_bf16.h>
template<float (*warp_reduction)(float)> __device__ float blockReduce(float val, bool final_sync);
__device__ float warpReduceSum(float val);
__device__ unsigned int Get2dNoiseUint(int indexX, int indexY, unsigned int seed);

__global__ void global_sum_single_block_kernel(float* result, const Float* values, size_t count) {
    assert(gridDim.x == 1);     // only a single block!
    float thread_sum = 0;
    for(size_t index = threadIdx.x; index < count; index += blockDim.x) {
        thread_sum += (float)values[index];
    }

    float reduction = blockReduce<warpReduceSum>(thread_sum, true);
    if(threadIdx.x == 0) {
        *result = reduction;
    }
}

template<class Float>
void global_sum_deterministic(float* result, const Float* values, int count, cudaStream_t stream) {
    global_sum_single_block_kernel<<<1, 1024, 0, stream>>>(result, values, count);
    cudaCheck(cudaGetLastError());
}

// This gives us a random number from threadIdx/blockIdx + a single seed for the entire GPU

// stochastic rounding built on top of Squirel Noise above (with seed updated per step via xorshift)
__device__ __forceinline__ void stochastic_rounding(float in, __nv_bfloat16 *out, unsigned int seed) {
    // todo - is this stochastic rounding *too good*? can we cut any corners?
    // makes sure each thread gets a different random number
    unsigned int random = Get2dNoiseUint(threadIdx.x, blockIdx.x * blockDim.x + blockIdx.y, seed);
    unsigned int threshold = random & 0xFFFF;
    unsigned int float_bits = __float_as_uint(in);
    unsigned int rounded_bits = float_bits & 0x0000FFFF;
    float_bits = (rounded_bits > threshold) ? (float_bits | 0xFFFF) : (float_bits  & ~0xFFFF);
    *out = __float2bfloat16_rn(__uint_as_float(float_bits));
}
