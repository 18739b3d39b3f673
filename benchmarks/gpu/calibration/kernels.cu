// Kernels of the saving-calibration suite (benchmarks/gpu/calibration/calibrate.py).
// Compiled at run time by NVRTC (CuPy); occlint reads this file beside the recorded trace,
// as a user's run would give it their source: it tells one-element-per-thread kernels from
// grid-stride loops.

// memory-bound, one element per thread: 12 bytes moved per 2 flops
extern "C" __global__ void saxpy(const float* x, float* y, float a, long n) {
    extern __shared__ float pad[];  // dynamic shared memory only limits occupancy
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}

// memory-bound grid-stride loop
extern "C" __global__ void saxpy_gs(const float* x, float* y, float a, long n) {
    extern __shared__ float pad[];
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)blockDim.x * gridDim.x) {
        y[i] = a * x[i] + y[i];
    }
}

#define ITERS 512

// compute-bound, one element per thread: 2 * ITERS flops per 8 bytes
extern "C" __global__ void fma_chain(const float* x, float* y, float a, long n) {
    extern __shared__ float pad[];
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i], w = v + 1.0f;
        for (int k = 0; k < ITERS; ++k) {
            v = fmaf(v, a, 0.5f);
            w = fmaf(w, a, -0.5f);
        }
        y[i] = v + w;
    }
}

// compute-bound grid-stride loop
extern "C" __global__ void fma_chain_gs(const float* x, float* y, float a, long n) {
    extern __shared__ float pad[];
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)blockDim.x * gridDim.x) {
        float v = x[i], w = v + 1.0f;
        for (int k = 0; k < ITERS; ++k) {
            v = fmaf(v, a, 0.5f);
            w = fmaf(w, a, -0.5f);
        }
        y[i] = v + w;
    }
}

// many live values per thread: register-limited occupancy unless capped (-maxrregcount)
#define LIVE 48
extern "C" __global__ void fma_wide(const float* x, float* y, float a, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) {
        float acc[LIVE];
        float v = x[i];
#pragma unroll
        for (int j = 0; j < LIVE; ++j) acc[j] = v + j;
        for (int k = 0; k < 32; ++k) {
#pragma unroll
            for (int j = 0; j < LIVE; ++j) acc[j] = fmaf(acc[j], a, acc[(j + 7) % LIVE]);
        }
        float s = 0.0f;
#pragma unroll
        for (int j = 0; j < LIVE; ++j) s += acc[j];
        y[i] = s;
    }
}

// a rare path that needs many registers: the allocation covers it, every launch pays for it
// in occupancy although a < 100 never takes it (register-limited; -maxrregcount helps)
#define RARE 80

extern "C" __global__ void saxpy_rare(const float* x, float* y, float a, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        if (a > 100.0f) {
            float r[RARE];
#pragma unroll
            for (int j = 0; j < RARE; ++j) {
                r[j] = v * (j + 1);
                asm volatile("" : "+f"(r[j]));
            }
#pragma unroll
            for (int j = 0; j < RARE; ++j) v += r[j] * r[RARE - 1 - j];
        }
        y[i] = a * v + y[i];
    }
}

extern "C" __global__ void fma_chain_rare(const float* x, float* y, float a, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i], w = v + 1.0f;
        if (a > 100.0f) {
            float r[RARE];
#pragma unroll
            for (int j = 0; j < RARE; ++j) {
                r[j] = v * (j + 1);
                asm volatile("" : "+f"(r[j]));
            }
#pragma unroll
            for (int j = 0; j < RARE; ++j) v += r[j] * r[RARE - 1 - j];
        }
        for (int k = 0; k < ITERS; ++k) {
            v = fmaf(v, a, 0.5f);
            w = fmaf(w, a, -0.5f);
        }
        y[i] = v + w;
    }
}
