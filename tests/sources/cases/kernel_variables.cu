// Launches through a variable holding the kernel, chosen by the problem's size.
// flashinfer-ai/flashinfer fb28d7242b3506a2348265962041acc1fb56cca4 (Apache-2.0):
// csrc/fused_moe/cutlass_backend/cutlass_fused_moe_kernels.cuh lines 780-858
// (globalExpertPrefixSum: `auto func` in each branch of an if, launched by cudaLaunchKernelEx
// with gridDim 1; the PDL attribute and the sm_90 guards left out; the large kernel's body
// reduced to its index), include/flashinfer/comm/trtllm_alltoall.cuh lines 632-673
// (inplaceSendRecvRankCumSumKernel through `kernelPtr`, <<<2, blockSize>>>; three of its
// five sizes kept). The last two launches are written for this file: a variable given two
// different kernels, and one given a call's result, are not resolved.
#include <cub/cub.cuh>
#include <cstdint>

template <int kNumThreadsPerBlock>
__global__ void globalExpertPrefixSumLargeKernel(int const* blocked_expert_counts,
                                                 int* blocked_expert_counts_cumsum,
                                                 int64_t* expert_first_token_offset,
                                                 int64_t const num_experts_per_node,
                                                 int64_t const num_blocks_per_seq,
                                                 int64_t const num_elem_per_thread) {
  int offset = threadIdx.x * num_elem_per_thread;
  for (int i = 0; i < num_elem_per_thread; i++) {
    blocked_expert_counts_cumsum[offset + i] = blocked_expert_counts[offset + i];
  }
}

template <int kNumThreadsPerBlock>
__global__ void globalExpertPrefixSumKernel(int const* blocked_expert_counts,
                                            int* blocked_expert_counts_cumsum,
                                            int64_t* expert_first_token_offset,
                                            int64_t const num_experts_per_node,
                                            int64_t const num_blocks_per_seq) {
  using BlockScan = cub::BlockScan<int, kNumThreadsPerBlock>;
  __shared__ typename BlockScan::TempStorage temp_storage;

  int const cnt = threadIdx.x < num_experts_per_node * num_blocks_per_seq
                      ? blocked_expert_counts[threadIdx.x]
                      : 0;
  int cumsum;
  BlockScan(temp_storage).ExclusiveSum(cnt, cumsum);

  if (threadIdx.x < num_experts_per_node * num_blocks_per_seq) {
    blocked_expert_counts_cumsum[threadIdx.x] = cumsum;
  }
}

void globalExpertPrefixSum(int const* blocked_expert_counts, int* blocked_expert_counts_cumsum,
                           int64_t* expert_first_token_offset, int64_t const num_experts_per_node,
                           int64_t const num_tokens_per_block, int64_t const num_blocks_per_seq,
                           cudaStream_t stream) {
  int64_t const num_elements = num_experts_per_node * num_blocks_per_seq;

  cudaLaunchConfig_t config;
  config.gridDim = 1;
  config.blockDim = 1024;
  config.dynamicSmemBytes = 0;
  config.stream = stream;

  if (num_elements <= 1024) {
    auto func = globalExpertPrefixSumKernel<1024>;
    if (num_elements <= 32) {
      func = globalExpertPrefixSumKernel<32>;
      config.blockDim = 32;
    } else if (num_elements <= 64) {
      func = globalExpertPrefixSumKernel<64>;
      config.blockDim = 64;
    }
    cudaLaunchKernelEx(&config, func, blocked_expert_counts, blocked_expert_counts_cumsum,
                       expert_first_token_offset, num_experts_per_node, num_blocks_per_seq);
  } else {
    auto func = globalExpertPrefixSumLargeKernel<1024>;
    int64_t const num_elem_per_thread = (num_elements + 1023) / 1024;
    cudaLaunchKernelEx(&config, func, blocked_expert_counts, blocked_expert_counts_cumsum,
                       expert_first_token_offset, num_experts_per_node, num_blocks_per_seq,
                       num_elem_per_thread);
  }
}

struct MoeEpWorldInfo {
  int epSize;
  int epRank;
};

template <int kThreadsPerBlock>
__global__ void inplaceSendRecvRankCumSumKernel(MoeEpWorldInfo worldInfo, int* sendRankCount,
                                                int* recvRankCount) {
  int* inputOutputPtr = blockIdx.x == 0 ? sendRankCount : recvRankCount;
  typedef cub::BlockScan<int, kThreadsPerBlock> BlockScan;
  __shared__ typename BlockScan::TempStorage temp_storage;

  int tid = threadIdx.x;
  int threadData = tid < worldInfo.epSize ? inputOutputPtr[tid] : 0;

  BlockScan(temp_storage).InclusiveSum(threadData, threadData);
  if (tid < worldInfo.epSize) {
    inputOutputPtr[tid] = threadData;
  }
}

void inplaceSendRecvRankCumSum(const MoeEpWorldInfo& worldInfo, int* sendRankCount,
                               int* recvRankCount, cudaStream_t stream) {
  int epSize = worldInfo.epSize;
  auto* kernelPtr = inplaceSendRecvRankCumSumKernel<1024>;
  int blockSize = 1024;
  if (epSize <= 32) {
    kernelPtr = inplaceSendRecvRankCumSumKernel<32>;
    blockSize = 32;
  } else if (epSize <= 64) {
    kernelPtr = inplaceSendRecvRankCumSumKernel<64>;
    blockSize = 64;
  }
  kernelPtr<<<2, blockSize, 0, stream>>>(worldInfo, sendRankCount, recvRankCount);
}

__global__ void scale(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}

__global__ void shift(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

using Kernel = void (*)(float*, int);
Kernel pick(int n);

void either(float* x, int n, bool up) {
  void (*chosen)(float*, int) = &scale;
  if (up) chosen = shift;
  chosen<<<1, 256>>>(x, n);
  auto picked = pick(n);
  picked<<<1, 256>>>(x, n);
}
