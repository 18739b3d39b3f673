// A macro handed the kernel, fixing the block itself: each launch in it is read where it is
// written. Seen in the wild: NVIDIA/apex apex/contrib/csrc/group_norm/macros.h
// (CALL_TWO_PASS_KERNEL: Kernel<Precision, 140><<<grid, 140, 0, stream>>>, 11 of them).
// A wrapper whose block is a parameter too stays a wrapper: no site in its definition.
template <typename P, int T>
__global__ void kern(P *p) { p[blockIdx.x * T + threadIdx.x] = 0; }

#define CALL(Kernel, Precision) \
    Kernel<Precision, 140><<<grid, 140, 0, stream>>>(p);
#define LAUNCH(F, G, B, ...) F<<<G, B>>>(__VA_ARGS__)

void run(float *p, dim3 grid, cudaStream_t stream) {
    CALL(kern, float)
    LAUNCH(kern<float, 96>, grid, 96, p);
}
