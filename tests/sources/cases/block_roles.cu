// Kernels whose block index only picks a block's role (compared with a constant): more blocks
// repeat a role, they do not split the work. flashinfer-ai/flashinfer
// fb28d7242b3506a2348265962041acc1fb56cca4 (Apache-2.0):
// flashinfer/moe_ep/kernel_src/sm90/push_style_megamoe/src/a2a/sm90_push_a2a_ops.cu lines
// 105-110 and 1259 (bump_tag_kernel<<<1, 32>>>), .../src/fp8_gemm/fp8_moe_binding.cu lines
// 52-70 and 270 (offsets_preflight_kernel<<<1, 32>>>, its printf and trap left out),
// csrc/trtllm_alltoall_prepare.cu lines 278-297 and 556-563 (computeCumsumDevice<<<2, 128>>>:
// block 0 scans the send counts, block 1 the receive counts; CUMSUM_THREADS_PER_BLOCK from
// include/flashinfer/comm/trtllm_alltoall_prepare.cuh line 36). The last kernel is the
// control, written for this file: it compares its block index with 0 and also splits its
// elements by it, so the grid rules judge it.
#include <cub/cub.cuh>
#include <cstdint>
#define CUMSUM_THREADS_PER_BLOCK 128

__global__ void bump_tag_kernel(int32_t* round_ctr) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    auto* u = reinterpret_cast<uint32_t*>(round_ctr);
    *u = *u + 1u;
  }
}

__global__ void offsets_preflight_kernel(int64_t const* offsets, int num_problems,
                                         int64_t row_capacity, int64_t input_capacity) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  int64_t prev = offsets[0];
  bool bad = prev != 0;
  for (int group = 1; group <= num_problems && !bad; ++group) {
    int64_t const current = offsets[group];
    bad = current < prev;
    prev = current;
  }
}

__global__ void computeCumsumDevice(int* sendCountsCumsum, int* recvCountsCumsum, int rankId,
                                    int rankCount) {
  int* inputOutputPtr = blockIdx.x == 0 ? sendCountsCumsum : recvCountsCumsum;

  // Use 2 block to comuteCumsum
  typedef cub::BlockScan<int, CUMSUM_THREADS_PER_BLOCK> BlockScan;
  __shared__ typename BlockScan::TempStorage temp_storage;

  int tid = threadIdx.x;
  int threadData = tid < rankCount ? inputOutputPtr[tid] : 0;
  __syncthreads();

  BlockScan(temp_storage).InclusiveSum(threadData, threadData);
  if (tid < rankCount) {
    inputOutputPtr[tid] = threadData;
  }
}

__global__ void first_block_also_counts(float* out, const float* in, int n, int* done) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i];
  if (blockIdx.x == 0 && threadIdx.x == 0) *done = 1;
}

void launch(int32_t* round_ctr, int64_t const* offsets, int num_problems, int64_t rows,
            int64_t inputs, int* send, int* recv, int rankId, int rankCount, float* out,
            const float* in, int* done, cudaStream_t stream) {
  bump_tag_kernel<<<1, 32, 0, stream>>>(round_ctr);
  offsets_preflight_kernel<<<1, 32, 0, stream>>>(offsets, num_problems, rows, inputs);
  int block_size = CUMSUM_THREADS_PER_BLOCK;
  dim3 block(block_size);
  dim3 grid(2);
  computeCumsumDevice<<<grid, block, 0, stream>>>(send, recv, rankId, rankCount);
  first_block_also_counts<<<64, 256, 0, stream>>>(out, in, 16384, done);
}
