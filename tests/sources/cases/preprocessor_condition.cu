// A #ifdef that splits an `if` condition, a launch in a #ifdef block after a branch that
// returns, and a default the command line may override (`-DWITH_GRAPH=0`): every launch
// of every branch the file does not rule out is found.
// Seen in the wild: ggml-org/ggml d99724f, src/ggml-cuda/mean.cu:56 (CUB's single-row
// path); NVIDIA/cuda-samples c94ff36, Samples/4_CUDA_Libraries/conjugateGradientCudaGraphs/
// conjugateGradientCudaGraphs.cu:50 (`#ifndef WITH_GRAPH` / `#define WITH_GRAPH 1`).
#ifndef WITH_GRAPH
#define WITH_GRAPH 1
#endif

__global__ void divide(float *result, int count) { }
__global__ void rows(const float *x, float *dst, int ncols) { }

void mean(const float *x, float *dst, int ncols, int nrows, cudaStream_t stream) {
#ifdef USE_CUB
    if ((nrows == 1) &&
#ifdef USE_GRAPHS
        (ncols > 65536 && !capturing(stream))) {
#else
        (ncols > 65536)) {
#endif
        sum(x, dst, ncols, stream);
        divide<<<1, 1, 0, stream>>>(dst, ncols);
        return;
    }
#endif
    rows<<<nrows, 512, 0, stream>>>(x, dst, ncols);
#if WITH_GRAPH
    cudaGraphLaunch(graph, stream);
#else
    divide<<<1, 32, 0, stream>>>(dst, ncols);
#endif
}
