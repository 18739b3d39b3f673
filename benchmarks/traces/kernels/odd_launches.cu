// Kernels for the trace validation's raw workload (benchmarks/traces/record.py): launched with
// the odd configurations a profiler trace should expose (block 100, grid 133, 48 KiB of dynamic
// shared memory, opt-in shared memory, a small grid, a partial last wave, 120 short launches).
// C++ linkage on purpose: the traces name them demangled, the cubin mangled.

// The source document's grid-stride gamma correction.
__global__ void gamma_gridstride(unsigned char* image, unsigned long n, float gamma) {
    for (unsigned long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long)blockDim.x * gridDim.x) {
        float v = image[i] / 255.0f;
        image[i] = (unsigned char)(255.0f * __powf(v, gamma) + 0.5f);
    }
}

// One element per thread with a bounds check.
__global__ void vec_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// Block-wide reduction through dynamic shared memory (one float per thread, the rest padding).
__global__ void smem_reduce(const float* in, float* out, int n) {
    extern __shared__ float buf[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = buf[0];
}

// One compare-exchange step of a bitonic sort (32,768 integers: 120 launches).
__global__ void bitonic_step(int* a, int j, int k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int partner = i ^ j;
    if (partner > i) {
        bool ascending = (i & k) == 0;
        int x = a[i], y = a[partner];
        if ((x > y) == ascending) {
            a[i] = y;
            a[partner] = x;
        }
    }
}

// Register-heavy: many live accumulators per thread.
__global__ void __launch_bounds__(256) reg_heavy(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc[48];
#pragma unroll
    for (int k = 0; k < 48; ++k) acc[k] = in[(i + k * 977) % n];
#pragma unroll 4
    for (int r = 0; r < 64; ++r) {
#pragma unroll
        for (int k = 0; k < 48; ++k) acc[k] = acc[k] * acc[(k + 7) % 48] + 0.5f;
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 48; ++k) s += acc[k];
    if (i < n) out[i] = s;
}
