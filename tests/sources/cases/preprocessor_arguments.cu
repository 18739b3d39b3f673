// A #if between a launch's arguments and in its chevrons: the launch is read in each
// configuration and a value is kept where they agree.
// Seen in the wild: NVIDIA/cuda-samples c94ff36,
// Samples/5_Domain_Specific/convolutionFFT2D/convolutionFFT2D.cu:72 (`#if (USE_TEXTURE)`
// among the kernel's arguments) and SobelFilter/SobelFilter_kernels.cu:271.
#define USE_TEXTURE 0

__global__ void pad(float *dst, const float *src, int n) { }

void launch(float *dst, const float *src, int n, cudaStream_t s) {
    dim3 threads(32, 8);
    pad<<<n, threads>>>(dst,
                        src,
#if (USE_TEXTURE)
                        texture_of(src),
#endif
                        n);
    pad<<<n, 256
#ifdef ON_STREAM
          , 0, s
#endif
          >>>(dst, src, n);
    pad<<<n,
#if LARGE_BLOCKS
          512
#else
          128
#endif
          >>>(dst, src, n);
#if USE_TEXTURE
    pad<<<n, 64>>>(dst, src, n);
#else
    pad<<<n, 96>>>(dst, src, n);
#endif
}
