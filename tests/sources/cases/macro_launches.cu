// Launches written in #define bodies: one site where the macro is defined (the block is
// known when the macro fixes it); a wrapper that launches its own parameter is no site.
// Seen in the wild: ggml-org/ggml d99724f, src/ggml-cuda/allreduce.cu:920
// (`#define LAUNCH_AR_KERNEL(T_dst, T_wire) ... <<<dim3(BLOCKS), dim3(256), 0, stream>>>`);
// amd/HPCTrainingExamples aaaa72d, rocm-blogs-codes/hipify/gpu_macros.h:93
// (`#define hipLaunchKernelGGL(F,G,B,M,S,...) F<<<G,B,M,S>>>(__VA_ARGS__)`).
#define hipLaunchKernelGGL(F, G, B, M, S, ...) F<<<G, B, M, S>>>(__VA_ARGS__)
#define AR_BLOCKS 8

template <typename T> __global__ void reduce(T *data, int n) { }

void all_reduce(float *data, int n, cudaStream_t stream, bool wide) {
#define LAUNCH_REDUCE(T) \
    reduce<T><<<dim3(AR_BLOCKS), dim3(256), 0, stream>>>( \
        reinterpret_cast<T *>(data), /* elements */ n)
#define LAUNCH_AT(T, THREADS) reduce<T><<<AR_BLOCKS, THREADS, 0, stream>>>((T *)data, n)
    if (wide) {
        LAUNCH_REDUCE(float);
    } else {
        LAUNCH_AT(float, 96);
    }
    hipLaunchKernelGGL(reduce<float>, dim3(AR_BLOCKS), dim3(128), 0, stream, data, n);
}
