// A #ifdef that splits an `if` condition, and a launch in a #ifdef block after a branch
// that returns: both launches are found.
// Seen in the wild: ggml-org/ggml d99724f, src/ggml-cuda/mean.cu:56 (CUB's single-row path).
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
}
