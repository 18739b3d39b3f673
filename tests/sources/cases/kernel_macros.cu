// Kernels whose __global__ a macro spells (each written for this test after the public
// tree named beside it).
#include "macros.hpp"  // not in the run: RAFT_KERNEL, CUDF_KERNEL

// a macro of the file (GPU_KERNEL as in many ports: __global__ under nvcc, empty otherwise)
#ifdef __CUDACC__
#define GPU_KERNEL __global__
#else
#define GPU_KERNEL
#endif
#define DEF_KERNEL __global__ void
#define KERNEL_SIZE 3

GPU_KERNEL void scale_local(float* v, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] *= 2.0f;
}

DEF_KERNEL fill_local(float* v, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = 1.0f;
}

// rapidsai/raft cpp/include/raft/core/detail/macros.hpp: `static __global__ void`
template <typename T>
RAFT_KERNEL clamp_down(T* value, T threshold)
{
  *value = (fabs(*value) < threshold) ? 0 : *value;
}

// raft's linewise_op.cuh: launch bounds after the macro, a pack of pointers
template <typename T, int Threads, typename... Vecs>
RAFT_KERNEL __launch_bounds__(Threads, 2) tail_kernel(T* out, int n, const Vecs*... vecs)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 0;
}

// rapidsai/cudf: `CUDF_KERNEL void` (the macro is __global__ static)
static CUDF_KERNEL void offset_kernel(int* v, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] += KERNEL_SIZE;
}

// the file's macro on a line of its own (NVIDIA/cccl writes its attributes so)
GPU_KERNEL
void __launch_bounds__(128) copy_kernel(const float* in, float* out, int n)
{
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    out[i] = in[i];
}

// NVIDIA/cccl's CUB_DETAIL_KERNEL_ATTRIBUTES (a header's): not read, its kernels launch
// through CUB's own triple_chevron
CUB_DETAIL_KERNEL_ATTRIBUTES void cub_internal(int* v) { v[threadIdx.x] = 0; }

void host_side(int n)
{
  int x = KERNEL_SIZE;  // a constant named KERNEL: no kernel
  (void)x;
}

void launch(float* v, int* w, float* z, int n, cudaStream_t s)
{
  scale_local<<<(n + 255) / 256, 256, 0, s>>>(v, n);
  fill_local<<<(n + 255) / 256, 256, 0, s>>>(v, n);
  clamp_down<<<1, 1, 0, s>>>(v, 1e-9f);
  offset_kernel<<<(n + 47) / 48, 48, 0, s>>>(w, n);
  copy_kernel<<<264, 128, 0, s>>>(v, z, n);
}
