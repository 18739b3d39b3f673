// A register-heavy and a shared-memory-heavy kernel, one element per thread.

// NACC live accumulators per thread: ptxas needs well over 64 registers.
#define NACC 96
extern "C" __global__ void register_heavy(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc[NACC];
    float x = in[i];
#pragma unroll
    for (int k = 0; k < NACC; ++k) acc[k] = x * (k + 1) + in[(i + k * 977) % n];
#pragma unroll 4
    for (int it = 0; it < 16; ++it)
#pragma unroll
        for (int k = 0; k < NACC; ++k) acc[k] = acc[k] * 0.999f + acc[(k + 7) % NACC] * 0.001f;
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < NACC; ++k) s += acc[k];
    out[i] = s;
}

// A 40 KiB static tile per block: shared memory limits the blocks per SM.
#define TILE_FLOATS (10 * 1024)
extern "C" __global__ void shared_heavy(const float* in, float* out, int n) {
    __shared__ float tile[TILE_FLOATS];
    int base = blockIdx.x * blockDim.x;
    for (int k = threadIdx.x; k < TILE_FLOATS; k += blockDim.x)
        tile[k] = in[(base + k) % n];
    __syncthreads();
    int i = base + threadIdx.x;
    if (i >= n) return;
    float s = 0.0f;
    for (int k = 0; k < 32; ++k) s += tile[(threadIdx.x * 33 + k * 311) % TILE_FLOATS];
    out[i] = s;
}
