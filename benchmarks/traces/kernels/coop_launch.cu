// A kernel launched through cudaLaunchCooperativeKernel (the runtime call a Kineto trace
// names), for benchmarks/traces/record_links.py: built on the GPU machine with
//   nvcc -shared -Xcompiler -fPIC -arch=sm_90 -O3 -cudart shared coop_launch.cu -o libcoop.so
// and called through ctypes. Every block of a cooperative launch must be resident at once.
#include <cuda_runtime.h>

__global__ void coop_scale(float* data, int n, float factor) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    data[i] *= factor;
  }
}

// Launch coop_scale cooperatively with `blocks` blocks of `threads` threads on the current
// device's default stream; returns the cudaError_t (0: launched).
extern "C" int launch_coop_scale(float* data, int n, float factor, int blocks, int threads) {
  void* args[] = {&data, &n, &factor};
  cudaError_t err = cudaLaunchCooperativeKernel((void*)coop_scale, dim3(blocks), dim3(threads),
                                                args, 0, 0);
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  return (int)err;
}

// How many blocks of `threads` threads the device can hold at once (the most a cooperative
// launch may have).
extern "C" int resident_blocks(int threads) {
  int per_sm = 0, device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, coop_scale, threads, 0);
  return per_sm * sms;
}
