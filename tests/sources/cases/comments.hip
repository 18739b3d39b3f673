// Comments before the kernel argument of hipLaunchKernelGGL and inside chevrons: no
// argument is shifted or lost.
// Seen in the wild: ROCm/HIP-Examples cdf9d10, gpu-burn/BurnKernel.cpp:146 (`/* Launch
// params */` on its own line before the kernel); ROCm/rocm-examples 7dfb7d4,
// HIP-Basic/hello_world/main.hip:70 (`dim3(2), // threads per block`).
#include <hip/hip_runtime.h>

__global__ void sgemm(float *c, const float *a, const float *b) { }
__global__ void hello() { }

void run(float *c, const float *a, const float *b, hipStream_t stream) {
    hipLaunchKernelGGL(
        /* Launch params */
        sgemm,
        dim3(64, 64), // blocks
        dim3(16, 16), /* threads */
        0, stream,
        /* Kernel params */
        c, a, b);
    hello<<<dim3(1), // number of blocks
            dim3(2), // threads per block
            0, // shared memory
            hipStreamDefault>>>();
}
