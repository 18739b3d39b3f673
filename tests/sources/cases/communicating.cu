// Kernels that talk to other GPUs from their own code (each written for this test after
// the public tree named beside it): their grid is the communicator's, their time the links'.

// NVIDIA/nccl docs/examples/06_device_api/01_allreduce_lsa: one CTA per LSA barrier
__global__ void lsa_allreduce(ncclWindow_t send, ncclWindow_t recv, size_t count,
                              struct ncclDevComm comm)
{
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), comm, ncclTeamLsa(comm),
                                         comm.lsaBarrier, blockIdx.x};
  bar.sync(ncclCoopCta(), cuda::memory_order_acquire);
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += blockDim.x * gridDim.x) {
    // each rank's slice summed from its peers' windows
  }
}

// deepseek-ai/DeepEP-style all-to-all through NVSHMEM puts
__global__ void put_tokens(const float* x, float* y, int n, int peer)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) nvshmem_float_p(y + i, x[i], peer);
}

// the same shape, local
__global__ void copy_tokens(const float* x, float* y, int n)
{
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] = x[i];
}

#define CTA_COUNT 16

void run(ncclWindow_t s, ncclWindow_t r, size_t count, ncclDevComm comm, const float* x,
         float* y, int n, cudaStream_t st)
{
  lsa_allreduce<<<CTA_COUNT, 512, 0, st>>>(s, r, count, comm);
  put_tokens<<<(n + 99) / 100, 100, 0, st>>>(x, y, n, 1);
  copy_tokens<<<CTA_COUNT, 512, 0, st>>>(x, y, n);
}
