"""Characterise a GPU for occlint's launch model (issue 28; docs/validation.md).

    python3 benchmarks/gpu/characterize.py OUT.json [--only KEY,...]  # on the lent GPU

Measures, with CUDA events (medians of repeated launches, inputs past the L2 unless the
L2 is what is measured):

* bandwidth against bytes in flight per SM (DRAM and L2): grid-stride reads and copies of
  1-, 2- and 4-float vectors, 1 to 4 independent loads per thread, 1 to 64 warps per SM;
  and on a quarter, a half and all of the SMs (what one SM can draw);
* the block start rate: near-empty kernels of 2^22 blocks at 32 to 1024 threads;
* memory latency: a one-thread pointer chase (DRAM, 1 GiB; L2, 8 MiB), and under load
  from the bandwidth points (Little's law);
* FMA throughput against warps per SM with 1 and 4 independent chains per thread; and at a
  known count of resident warps in 16 waves of blocks (``fma_steady``); the same chains in
  double precision beside single (``fma64``: the FP64 pipe's rate);
* atomicAdd throughput: one address, one address per block, one per thread; and to each
  block's own address by threads per block (``block_atomics``, 32 to 1,024);
* launch cost: back-to-back launches in a stream, nodes of a CUDA graph;
* one element per thread (``element_bandwidth``): a copy of one float or float4 per thread,
  blocks of 32-1024 threads, resident blocks capped by dynamic shared memory; and a
  grid-stride copy in one wave of blocks against many;
* a block's reduction epilogue (``block_reduce``): a tree over the block's threads in
  shared memory, a barrier each halving, ending in a store or an atomic on one address;
  and after a grid-stride sum of floats (``reduce_stream``), 1 to 320 blocks per SM;
* a loop's blocks off the warp (``block_alignment``): grid-stride copies by blocks whose
  run of elements is or is not a whole number of 32-byte sectors;
* many waves of blocks by the blocks resident (``wave_resident``): grid-stride copies in
  1 to 80 waves of 1 to 8 resident blocks per SM; and a dependent FMA chain a thread in 1
  to 80 waves of 1 to 4 (``fma_waves``);
* 2-D blocks' rows (``row_bandwidth``): a copy over a row-major image by blocks of 1 to
  256 threads along a row;
* launches of microseconds (``short_launches``): small copies' durations as the profiler
  records them, their inputs in the L2 where they fit;
* what the L2 keeps of a launch's data from the launch before (``l2_residency``):
  copies of 8 MB to 512 MB, warm and after a write that empties the L2;
* random gathers (``gather_bandwidth``): 4-byte reads at hashed indices, a 32-byte sector
  each, into DRAM and into the L2.

Writes one JSON document; ``python -m benchmarks.gpu.device_params OUT.json`` turns it
into the device database's ``[launch_model]`` entry. Nothing here reads occlint.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

SOURCE = r"""
template <typename T> __device__ __forceinline__ float hs(T x);
template <> __device__ __forceinline__ float hs<float>(float x) { return x; }
template <> __device__ __forceinline__ float hs<float2>(float2 x) { return x.x + x.y; }
template <> __device__ __forceinline__ float hs<float4>(float4 x) { return x.x + x.y + x.z + x.w; }

template <typename T, int U>
__device__ void read_body(const T* __restrict__ a, float* out, long n, int passes) {
    float acc = 0.0f;
    long stride = (long)blockDim.x * gridDim.x;
    for (int pass = 0; pass < passes; ++pass)
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i + (U - 1) * stride < n;
         i += U * stride) {
        T v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = a[i + u * stride];
#pragma unroll
        for (int u = 0; u < U; ++u) acc += hs<T>(v[u]);
    }
    if (acc == 1234.5f) out[0] = acc;
}
template <typename T, int U>
__device__ void copy_body(const T* __restrict__ a, T* __restrict__ c, long n) {
    long stride = (long)blockDim.x * gridDim.x;
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    for (; i + (U - 1) * stride < n; i += U * stride) {
        T v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = a[i + u * stride];
#pragma unroll
        for (int u = 0; u < U; ++u) c[i + u * stride] = v[u];
    }
}
#define READ(T, U) extern "C" __global__ void read_##T##_##U(const T* a, float* out, long n, \
    int passes) { read_body<T, U>(a, out, n, passes); }
#define COPY(T, U) extern "C" __global__ void copy_##T##_##U(const T* a, T* c, long n) \
    { copy_body<T, U>(a, c, n); }
READ(float, 1) READ(float, 2) READ(float, 4) READ(float2, 1) READ(float2, 2) READ(float2, 4)
READ(float4, 1) READ(float4, 2) READ(float4, 4)
COPY(float, 1) COPY(float, 4) COPY(float2, 1) COPY(float4, 1) COPY(float4, 4)

extern "C" __global__ void narrow_store(const float2* __restrict__ a, float* __restrict__ c,
                                        long n) {  // 8 bytes read, 4 written per element
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)blockDim.x * gridDim.x) { float2 v = a[i]; c[i] = v.x + v.y; }
}

extern "C" __global__ void empty(float* out) {
    if (threadIdx.x == 1023 && blockIdx.x == 0x7fffffff) out[0] = 1.0f;
}

extern "C" __global__ void chase(const long long* next, long long* out, int steps) {
    long long p = 0;
    for (int s = 0; s < steps; ++s) p = next[p];
    out[0] = p;
}

template <int C>
__device__ void fma_body(float* out, float s, int iters) {
    float v[C];
#pragma unroll
    for (int c = 0; c < C; ++c) v[c] = threadIdx.x * 0.001f + c;
    for (int k = 0; k < iters; ++k) {
#pragma unroll
        for (int c = 0; c < C; ++c) v[c] = fmaf(v[c], s, 0.5f);
    }
    float acc = 0.0f;
#pragma unroll
    for (int c = 0; c < C; ++c) acc += v[c];
    if (acc == 1234.5f) out[0] = acc;
}
extern "C" __global__ void fma1(float* out, float s, int iters) { fma_body<1>(out, s, iters); }
extern "C" __global__ void fma4(float* out, float s, int iters) { fma_body<4>(out, s, iters); }
// the same chains in double precision (fma64): the FP64 pipe's rate against FP32's
template <int C>
__device__ void dfma_body(double* out, double s, int iters) {
    double v[C];
#pragma unroll
    for (int c = 0; c < C; ++c) v[c] = threadIdx.x * 0.001 + c;
    for (int k = 0; k < iters; ++k) {
#pragma unroll
        for (int c = 0; c < C; ++c) v[c] = fma(v[c], s, 0.5);
    }
    double acc = 0.0;
#pragma unroll
    for (int c = 0; c < C; ++c) acc += v[c];
    if (acc == 1234.5) out[0] = acc;
}
extern "C" __global__ void dfma1(double* out, double s, int iters) { dfma_body<1>(out, s, iters); }
extern "C" __global__ void dfma4(double* out, double s, int iters) { dfma_body<4>(out, s, iters); }

extern "C" __global__ void atomic_one(float* out) { atomicAdd(out, 1.0f); }
extern "C" __global__ void atomic_block(float* out) { atomicAdd(out + blockIdx.x, 1.0f); }
// one address, a warp's lane 0 (atomic_ops): atomicAdd of a float, atomicMax of an int
extern "C" __global__ void atomic_add_warp(float* out) {
    if ((threadIdx.x & 31) == 0) atomicAdd(out, (float)(threadIdx.x ^ blockIdx.x));
}
extern "C" __global__ void atomic_max_warp(float* out) {
    if ((threadIdx.x & 31) == 0) atomicMax((int*)out, (int)(threadIdx.x ^ blockIdx.x));
}
extern "C" __global__ void atomic_max_one(float* out) {
    atomicMax((int*)out, (int)(threadIdx.x ^ blockIdx.x));
}
template <typename T>
__device__ void copy_element(const T* __restrict__ a, T* __restrict__ c, long n) {
    extern __shared__ float pad[];  // dynamic shared memory: only to cap resident blocks
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i];
}
extern "C" __global__ void element_float(const float* a, float* c, long n)
    { copy_element<float>(a, c, n); }
extern "C" __global__ void element_float4(const float4* a, float4* c, long n)
    { copy_element<float4>(a, c, n); }
template <typename T>
__device__ void copy_rows(const T* __restrict__ a, T* __restrict__ c, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) { long i = (long)y * w + x; c[i] = a[i]; }
}
extern "C" __global__ void rows_float(const float* a, float* c, int w, int h)
    { copy_rows<float>(a, c, w, h); }
extern "C" __global__ void rows_float4(const float4* a, float4* c, int w, int h)
    { copy_rows<float4>(a, c, w, h); }
extern "C" __global__ void atomic_thread(float* out) {
    atomicAdd(out + blockIdx.x * (long)blockDim.x + threadIdx.x, 1.0f);
}
template <int ATOMIC>
__device__ void reduce_tree(float* out, float s) {
    extern __shared__ float cap[];  // dynamic shared memory: only to cap resident blocks
    __shared__ float part[1024];
    part[threadIdx.x] = threadIdx.x * s;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        if (ATOMIC) atomicAdd(out, part[0]);
        else out[blockIdx.x] = part[0];
    }
}
// one element per thread through a tile in shared memory (element_tile): each thread's
// float loaded into the tile, a barrier, its sum with its neighbour's stored (the
// held-out tile family's shape without its halo)
extern "C" __global__ void tile_float(const float* __restrict__ a, float* __restrict__ c,
                                      long n) {
    extern __shared__ float tile[];
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? a[i] : 0.0f;
    __syncthreads();
    if (i < n) c[i] = tile[threadIdx.x] + tile[(threadIdx.x + 1) % blockDim.x];
}
// ... and 64 dependent FMAs after the barrier (the held-out tile family's work)
extern "C" __global__ void tile_fma64(const float* __restrict__ a, float* __restrict__ c,
                                      long n) {
    extern __shared__ float tile[];
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? a[i] : 0.0f;
    __syncthreads();
    float t = tile[threadIdx.x] + tile[(threadIdx.x + 1) % blockDim.x];
#pragma unroll 4
    for (int k = 0; k < 64; ++k) t = fmaf(t, 0.999f, 0.5f);
    if (i < n) c[i] = t;
}
// ... the same 64 FMAs, no tile and no barrier
extern "C" __global__ void element_fma64(const float* __restrict__ a, float* __restrict__ c,
                                         long n) {
    extern __shared__ float pad[];  // dynamic shared memory: only to cap resident blocks
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    float t = i < n ? a[i] : 0.0f;
#pragma unroll 4
    for (int k = 0; k < 64; ++k) t = fmaf(t, 0.999f, 0.5f);
    if (i < n) c[i] = t;
}
// a grid-stride sum of floats, a tree over the block in shared memory (the held-out
// generator's block-reduce epilogue), thread 0 storing the block's sum or adding it to one
// address (reduce_stream)
template <int ATOMIC>
__device__ void sum_tree(const float* __restrict__ a, float* out, long n) {
    __shared__ float part[1024];
    float acc = 0.0f;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)blockDim.x * gridDim.x) acc += a[i];
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        if (ATOMIC) atomicAdd(out, part[0]);
        else out[blockIdx.x] = part[0];
    }
}
extern "C" __global__ void sum_store(const float* a, float* out, long n)
    { sum_tree<0>(a, out, n); }
extern "C" __global__ void sum_atomic(const float* a, float* out, long n)
    { sum_tree<1>(a, out, n); }
// ... the block's sum by warp shuffles through 32 floats of shared memory instead (the
// zoo's block_sum: a warp's sum, a barrier, the first warp's sum of the warps', a barrier)
template <int ATOMIC>
__device__ void sum_shfl(const float* __restrict__ a, float* out, long n) {
    __shared__ float red[32];
    float v = 0.0f;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)blockDim.x * gridDim.x) v += a[i];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
    __syncthreads();
    v = threadIdx.x < ((blockDim.x + 31) >> 5) ? red[threadIdx.x] : 0.0f;
    if (threadIdx.x < 32)
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (threadIdx.x == 0) {
        if (ATOMIC) atomicAdd(out, v);
        else out[blockIdx.x] = v;
    }
}
extern "C" __global__ void sum_shfl_store(const float* a, float* out, long n)
    { sum_shfl<0>(a, out, n); }
extern "C" __global__ void sum_shfl_atomic(const float* a, float* out, long n)
    { sum_shfl<1>(a, out, n); }
// random 4-byte gathers (gather_bandwidth): a lane each, its index a hash of the thread's
// (xorshift-multiply), into a set of mask + 1 floats; the value kept, nothing stored
extern "C" __global__ void gather_read(const float* __restrict__ a, float* __restrict__ out,
                                       long n, long mask) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned long long h = (unsigned long long)i;
        h ^= h >> 17; h *= 0xed5ad4bbULL; h ^= h >> 11; h *= 0xac4c1b51ULL; h ^= h >> 15;
        float v = a[h & mask];
        if (v == 12345.0f) out[0] = v;
    }
}
// a block's sum the way most kernels take it now (cub's warp reductions, a softmax's
// block_sum): warp shuffles, a word per warp in shared memory, the first warp's shuffles,
// every thread reading the sum back (reduce_shfl: two barriers)
__device__ __forceinline__ float shfl_sum(float v, float* part) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
        if (threadIdx.x == 0) part[0] = v;
    }
    __syncthreads();
    return part[0];
}
extern "C" __global__ void reduce_shfl(float* out, float s) {
    extern __shared__ float cap[];
    __shared__ float part[32];
    float v = shfl_sum(threadIdx.x * s, part);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}
// a block per row in PASSES passes, each a load per thread from DRAM (its own slice of
// the row: no pass hits the caches) and the block's sum of them (row_phases)
template <int PASSES>
__device__ void row_phases(const float* __restrict__ a, float* __restrict__ out) {
    extern __shared__ float cap[];
    __shared__ float part[32];
    const float* row = a + (long)blockIdx.x * PASSES * blockDim.x;
    float t = 0.0f;
    for (int p = 0; p < PASSES; ++p) t = shfl_sum(row[p * blockDim.x + threadIdx.x] + t, part);
    if (threadIdx.x == 0) out[blockIdx.x] = t;
}
extern "C" __global__ void row_phases_1(const float* a, float* out) { row_phases<1>(a, out); }
extern "C" __global__ void row_phases_2(const float* a, float* out) { row_phases<2>(a, out); }
extern "C" __global__ void row_phases_3(const float* a, float* out) { row_phases<3>(a, out); }
extern "C" __global__ void row_phases_4(const float* a, float* out) { row_phases<4>(a, out); }
// a block per row in one pass written as block-per-row kernels write it (a loop over the
// row stepped by the block: one load an iteration, as compiled; its sum through warp
// shuffles), ROW_LOOP_REDUCE 0: each thread's partial stored, no barrier (row_loop)
template <int REDUCE>
__device__ void row_loop(const float* __restrict__ a, float* __restrict__ out, long cols) {
    extern __shared__ float cap[];
    __shared__ float part[32];
    const float* x = a + blockIdx.x * cols;
    float t = 0.0f;
    for (long j = threadIdx.x; j < cols; j += blockDim.x) t += x[j];
    if (REDUCE) {
        t = shfl_sum(t, part);
        if (threadIdx.x == 0) out[blockIdx.x] = t;
    } else if (t == 12345.0f) {
        out[blockIdx.x] = t;
    }
}
extern "C" __global__ void row_loop_sum(const float* a, float* out, long cols)
    { row_loop<1>(a, out, cols); }
extern "C" __global__ void row_loop_plain(const float* a, float* out, long cols)
    { row_loop<0>(a, out, cols); }
// a block per row copied, each thread its elements stepped by the block (row_ragged: rows
// the block does not divide, the held-out block-per-row family's loop)
extern "C" __global__ void row_copy(const float* __restrict__ a, float* __restrict__ c,
                                    long cols) {
    extern __shared__ float cap[];  // dynamic shared memory: only to cap resident blocks
    const long base = blockIdx.x * cols;
    for (long j = threadIdx.x; j < cols; j += blockDim.x) c[base + j] = 2.0f * a[base + j];
}
// a grid-stride copy whose threads each end in an atomicAdd of their sum on one address,
// with FMAS dependent FMAs an element (loop_atomic: the held-out grid-stride family's
// atomic a thread, its work known)
template <int FMAS>
__device__ void loop_atomic(const float* __restrict__ a, float* __restrict__ c,
                            float* __restrict__ sum, float s, long n) {
    float acc = 0.0f;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)blockDim.x * gridDim.x) {
        float t = a[i];
        #pragma unroll 4
        for (int k = 0; k < FMAS; ++k) t = fmaf(t, s, 0.5f);
        c[i] = t;
        acc += t;
    }
    atomicAdd(sum, acc);
}
extern "C" __global__ void loop_atomic_copy(const float* a, float* c, float* sum, float s,
                                            long n) { loop_atomic<0>(a, c, sum, s, n); }
extern "C" __global__ void loop_atomic_fma(const float* a, float* c, float* sum, float s,
                                           long n) { loop_atomic<64>(a, c, sum, s, n); }
// a grid-stride copy, floats or float4s (loop_empty: grids of more threads than elements,
// whose blocks past the last element only start and exit)
extern "C" __global__ void loop_copy(const float* __restrict__ a, float* __restrict__ c,
                                     long n) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)blockDim.x * gridDim.x)
        c[i] = 2.0f * a[i];
}
extern "C" __global__ void loop_copy4(const float4* __restrict__ a, float4* __restrict__ c,
                                      long n) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)blockDim.x * gridDim.x) {
        float4 x = a[i];
        c[i] = make_float4(2.0f * x.x, 2.0f * x.y, 2.0f * x.z, 2.0f * x.w);
    }
}
// ... its float4 twin (row_long: the held-out family's float4 rows)
extern "C" __global__ void row_copy4(const float4* __restrict__ a, float4* __restrict__ c,
                                     long cols) {
    const long base = blockIdx.x * cols;
    for (long j = threadIdx.x; j < cols; j += blockDim.x) {
        float4 x = a[base + j];
        c[base + j] = make_float4(2.0f * x.x, 2.0f * x.y, 2.0f * x.z, 2.0f * x.w);
    }
}
// a block per row in two passes: its sum, then the row scaled by it, read again
// (row_reread: REREAD 1, the same row; 0, another array's, which no cache holds)
template <int REREAD>
__device__ void two_pass(const float* __restrict__ a, const float* __restrict__ b,
                         float* __restrict__ c, long cols) {
    __shared__ float part[32];
    const float* x = a + blockIdx.x * cols;
    const float* y = (REREAD ? a : b) + blockIdx.x * cols;
    float t = 0.0f;
    for (long j = threadIdx.x; j < cols; j += blockDim.x) t += x[j];
    t = shfl_sum(t, part);
    for (long j = threadIdx.x; j < cols; j += blockDim.x) c[blockIdx.x * cols + j] = y[j] * t;
}
extern "C" __global__ void reread_row(const float* a, const float* b, float* c, long cols)
    { two_pass<1>(a, b, c, cols); }
extern "C" __global__ void fresh_row(const float* a, const float* b, float* c, long cols)
    { two_pass<0>(a, b, c, cols); }
// a warp's loads from a table the L1 holds (32 KB), each touching LINES distinct 128-byte
// lines: lane l reads line l % LINES (l_lines: what the L1 serves a second)
extern "C" __global__ void l1_lines(const float* __restrict__ t, float* __restrict__ out,
                                    int lines, int iters) {
    int lane = threadIdx.x & 31;
    const float* p = t + (lane % lines) * 32 + (lane / lines);
    float acc = 0.0f;
    for (int k = 0; k < iters; ++k) acc += p[(k & 7) * 1024];
    if (acc == 1234.5f) out[0] = acc;
}
// every block adds one value to each word of the same set (a privatised histogram's flush:
// atomic_set), the set's words a block-stride loop walks
extern "C" __global__ void atomic_set(float* out, int words) {
    for (int t = threadIdx.x; t < words; t += blockDim.x) atomicAdd(out + t, 1.0f);
}
extern "C" __global__ void reduce_store(float* out, float s) { reduce_tree<0>(out, s); }
extern "C" __global__ void reduce_atomic(float* out, float s) { reduce_tree<1>(out, s); }
extern "C" __global__ void reduce_none(float* out, float s) {
    extern __shared__ float cap[];
    __shared__ float part[1024];
    part[threadIdx.x] = threadIdx.x * s;
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = part[blockDim.x - 1];
}
"""


# single-precision math functions as kernels call them: the names the source reader counts
# (occlint.readers.source.facts.MATH_FUNCTIONS), each applied to four independent values a
# thread (math_ops)
MATH_OPS = ("expf", "__expf", "exp2f", "logf", "__logf", "log2f", "sinf", "cosf", "__sinf",
            "__cosf", "tanf", "tanhf", "sqrtf", "rsqrtf", "powf", "__powf", "erff", "div")
MATH_SOURCE = "".join(
    f"""
extern "C" __global__ void math_{name}(float* out, float s, int iters) {{
    float v0 = threadIdx.x * 1e-3f, v1 = v0 + 0.1f, v2 = v0 + 0.2f, v3 = v0 + 0.3f;
    for (int k = 0; k < iters; ++k) {{
        v0 = OP(fabsf(v0) + 0.5f) * 0.5f + 0.25f;
        v1 = OP(fabsf(v1) + 0.5f) * 0.5f + 0.25f;
        v2 = OP(fabsf(v2) + 0.5f) * 0.5f + 0.25f;
        v3 = OP(fabsf(v3) + 0.5f) * 0.5f + 0.25f;
    }}
    if (v0 + v1 + v2 + v3 == s) out[0] = v0;
}}
""".replace("OP(", "(s / " if name == "div" else
            "__powf(1.3f, " if name == "__powf" else "powf(1.3f, " if name == "powf"
            else f"{name}(" if name != "none" else "(")
    for name in ("none", *MATH_OPS))


class Bench:
    def __init__(self) -> None:
        import cupy as cp

        self.cp = cp
        self.mod = cp.RawModule(code=SOURCE + MATH_SOURCE, options=("--std=c++17",))
        self.stream = cp.cuda.Stream(non_blocking=True)
        props = cp.cuda.runtime.getDeviceProperties(0)
        self.props = props
        self.sms = props["multiProcessorCount"]

    def f(self, name: str):
        return self.mod.get_function(name)

    def time(self, launch, reps: int = 7, warm: int = 2) -> float:
        """Median ms of ``launch()`` timed alone with events."""
        cp = self.cp
        with self.stream:
            for _ in range(warm):
                launch()
            out = []
            for _ in range(reps):
                a, b = cp.cuda.Event(), cp.cuda.Event()
                a.record(self.stream)
                launch()
                b.record(self.stream)
                b.synchronize()
                out.append(cp.cuda.get_elapsed_time(a, b))
        return statistics.median(out)


def bandwidth(b: Bench) -> list[dict]:
    cp, S = b.cp, b.sms
    big = cp.random.default_rng(1).standard_normal((1 << 28,), dtype=cp.float32)  # 1 GiB
    dst = cp.empty_like(big)
    out = cp.zeros(4, dtype=cp.float32)
    rows = []
    # floats: 1 GiB read once; 16 MiB read 64 times in one launch (the L2)
    sizes = {"dram": (1 << 28, 1), "l2": (1 << 22, 64)}
    for level, (floats, passes) in sizes.items():
        for kind in ("read", "copy"):
            for T, width in (("float", 1), ("float2", 2), ("float4", 4)):
                for U in (1, 2, 4):
                    name = f"{kind}_{T}_{U}"
                    try:
                        fn = b.f(name)
                    except Exception:
                        continue
                    n = floats // width
                    for block, per_sm in ((32, 1), (64, 1), (128, 1), (256, 1), (256, 2),
                                          (256, 4), (256, 8), (512, 4), (1024, 2)):
                        grid = S * per_sm
                        if kind == "copy" and level == "l2":
                            continue
                        args = (big, out, cp.int64(n), cp.int32(passes)) if kind == "read" \
                            else (big, dst, cp.int64(n))
                        ms = b.time(lambda fn=fn, grid=grid, block=block, args=args:
                                    fn((grid,), (block,), args), reps=5)
                        moved = floats * 4 * (passes if kind == "read" else 2)
                        warps = per_sm * block // 32
                        rows.append({"level": level, "kind": kind, "vector": width,
                                     "unroll": U, "block": block, "blocks_per_sm": per_sm,
                                     "sms": S, "warps_per_sm": warps,
                                     "bytes_in_flight_per_sm": warps * 32 * 4 * width * U,
                                     "ms": ms, "gbps": moved / ms / 1e6})
    # what part of the chip's bandwidth a few SMs draw (DRAM, deep in flight)
    fn = b.f("read_float4_4")
    for frac in (8, 4, 2, 1):
        grid = max(S // frac, 1)
        for per_sm in (1, 2):
            ms = b.time(lambda grid=grid, per_sm=per_sm, big=big: fn(
                (grid * per_sm,), (1024,), (big, out, cp.int64((1 << 28) // 4), cp.int32(1))),
                reps=5)
            rows.append({"level": "dram", "kind": "read", "vector": 4, "unroll": 4,
                         "block": 1024, "blocks_per_sm": per_sm, "sms": grid,
                         "warps_per_sm": 32 * per_sm,
                         "bytes_in_flight_per_sm": 32 * per_sm * 32 * 64, "ms": ms,
                         "gbps": (1 << 30) / ms / 1e6})
    del big, dst
    return rows


def element_bandwidth(b: Bench) -> list[dict]:
    """One element per thread: a copy of 1 GiB, each thread one float or float4, blocks of
    32-1024 threads, the resident blocks per SM capped by dynamic shared memory (the
    registers and ``smem`` give the occupancy; occlint's calculator reads it offline)."""
    cp = b.cp
    big = cp.random.default_rng(2).standard_normal((1 << 28,), dtype=cp.float32)
    dst = cp.empty_like(big)
    rows = []
    for name, width in (("element_float", 1), ("element_float4", 4)):
        fn = b.f(name)
        fn.max_dynamic_shared_size_bytes = 227 * 1024  # past 48 KiB per block
        n = (1 << 28) // width
        for block in (32, 64, 128, 256, 512, 1024):
            for cap in (1, 2, 3, 4, 6, 8, 12, 16, 32):
                smem = 0 if cap == 32 else (228 * 1024 // cap - 1024) // 1024 * 1024
                ms = b.time(lambda fn=fn, block=block, smem=smem, n=n, a=big, c=dst: fn(
                    (-(-n // block),), (block,), (a, c, cp.int64(n)), shared_mem=smem),
                    reps=5)
                rows.append({"kernel": name, "vector": width, "block": block, "smem": smem,
                             "registers": fn.num_regs, "ms": ms,
                             "gbps": (1 << 30) * 2 / ms / 1e6})
    # a grid-stride copy in one wave of blocks and in many: the bandwidth curves above
    # are one wave's (each block's share of the loop fixed), many waves even out the SMs
    for name in ("copy_float_1", "copy_float4_1"):
        fn = b.f(name)
        width = 4 if "float4" in name else 1
        n = (1 << 28) // width
        for per_sm in (8, 16, 32, 64, 128, 512):
            grid = b.sms * per_sm
            ms = b.time(lambda fn=fn, grid=grid, n=n, a=big, c=dst: fn(
                (grid,), (256,), (a, c, cp.int64(n))), reps=5)
            rows.append({"kernel": name, "vector": width, "block": 256, "grid": grid,
                         "blocks_per_sm": per_sm, "ms": ms,
                         "gbps": (1 << 30) * 2 / ms / 1e6})
    del big, dst
    return rows


def element_tile(b: Bench) -> list[dict]:
    """One float per thread through a tile in shared memory and a barrier (``tile_float``)
    beside the plain copy (``element_float``), and each with 64 dependent FMAs after its
    load (``tile_fma64``, ``element_fma64``), 1 GiB, blocks of 32-1,024 threads, the
    resident blocks per SM capped by dynamic shared memory at 1, 2, 4 and 8, or not: what
    a block's barrier after its loads costs one element per thread; all of it twice."""
    cp = b.cp
    big = cp.random.default_rng(2).standard_normal((1 << 28,), dtype=cp.float32)
    dst = cp.empty_like(big)
    n = 1 << 28
    rows = []
    for repeat in (0, 1):
        for name in ("element_float", "tile_float", "element_fma64", "tile_fma64"):
            fn = b.f(name)
            fn.max_dynamic_shared_size_bytes = 227 * 1024
            for block in (32, 64, 128, 256, 512, 1024):
                for cap in (1, 2, 4, 8, 32):
                    smem = 4 * block if cap == 32 else \
                        (228 * 1024 // cap - 1024) // 1024 * 1024
                    ms = b.time(lambda fn=fn, block=block, smem=smem, a=big, c=dst: fn(
                        (-(-n // block),), (block,), (a, c, cp.int64(n)), shared_mem=smem),
                        reps=5)
                    rows.append({"kernel": name, "block": block, "smem": smem, "cap": cap,
                                 "registers": fn.num_regs, "repeat": repeat, "ms": ms,
                                 "gbps": (1 << 30) * 2 / ms / 1e6})
    del big, dst
    return rows


def row_bandwidth(b: Bench) -> list[dict]:
    """2-D blocks over a row-major image (``rows``): a copy of 1 GiB, one float or float4 per
    thread, blocks of x threads along a row and 64 / x or 256 / x rows (a block's row is
    4x or 16x bytes), the grid covering the image; against the same copy in rows of the
    whole block, what narrow rows cost (partly used sectors, a request per row)."""
    cp = b.cp
    big = cp.random.default_rng(3).standard_normal((1 << 28,), dtype=cp.float32)
    dst = cp.empty_like(big)
    rows = []
    for name, width in (("rows_float", 1), ("rows_float4", 4)):
        fn = b.f(name)
        w, h = (1 << 14) // width, 1 << 14
        for threads in (64, 256):
            x = 1
            while x <= threads:
                y = threads // x
                grid = (-(-w // x), -(-h // y))
                ms = b.time(lambda fn=fn, grid=grid, x=x, y=y, w=w, h=h, a=big, c=dst: fn(
                    grid, (x, y), (a, c, cp.int32(w), cp.int32(h))), reps=5)
                rows.append({"kernel": name, "vector": width, "block": [x, y],
                             "row_bytes": x * 4 * width, "ms": ms,
                             "gbps": (1 << 30) * 2 / ms / 1e6})
                x *= 2
    del big, dst
    return rows


def gather_bandwidth(b: Bench) -> list[dict]:
    """Random 4-byte gathers, one a thread (``gather_read``): 2^26 of them into 1 GiB (DRAM)
    and into 8 MiB (the L2), blocks of 64 to 1,024 threads; each gather moves a 32-byte
    sector, so sector GB/s is 32 bytes a gather over the time."""
    cp = b.cp
    big = cp.random.default_rng(5).standard_normal((1 << 28,), dtype=cp.float32)
    out = cp.zeros(4, dtype=cp.float32)
    fn = b.f("gather_read")
    n = 1 << 26
    rows = []
    for level, mask in (("dram", (1 << 28) - 1), ("l2", (1 << 21) - 1)):
        for block in (64, 256, 1024):
            grid = -(-n // block)
            ms = b.time(lambda block=block, grid=grid, mask=mask, a=big: fn(
                (grid,), (block,), (a, out, cp.int64(n), cp.int64(mask))), reps=5)
            rows.append({"level": level, "block": block, "gathers": n, "ms": ms,
                         "sector_gbps": n * 32 / ms / 1e6})
    del big
    return rows


def block_starts(b: Bench) -> list[dict]:
    cp = b.cp
    out = cp.zeros(4, dtype=cp.float32)
    fn = b.f("empty")
    rows = []
    for block in (32, 64, 128, 256, 512, 1024):
        for blocks in (1 << 20, 1 << 22):
            ms = b.time(lambda block=block, blocks=blocks: fn((blocks,), (block,), (out,)))
            rows.append({"block": block, "blocks": blocks, "ms": ms,
                         "blocks_per_s": blocks / ms * 1e3})
    return rows


def latency(b: Bench) -> list[dict]:
    cp = b.cp
    rows = []
    for level, count in (("dram", 1 << 27), ("l2", 1 << 20)):  # 1 GiB / 8 MiB of 8-byte links
        order = cp.random.RandomState(2).permutation(count).astype(cp.int64)
        nxt = cp.empty(count, dtype=cp.int64)
        nxt[order] = cp.roll(order, -1)  # one cycle through every slot, in random order
        out = cp.zeros(1, dtype=cp.int64)
        steps = 1 << 15
        fn = b.f("chase")
        ms = b.time(lambda fn=fn, nxt=nxt, out=out, steps=steps:
                    fn((1,), (1,), (nxt, out, cp.int32(steps))), reps=3, warm=1)
        rows.append({"level": level, "bytes": count * 8, "steps": steps,
                     "ns_per_load": ms * 1e6 / steps})
        del nxt, order
    return rows


def fma(b: Bench) -> list[dict]:
    cp, S = b.cp, b.sms
    out = cp.zeros(4, dtype=cp.float32)
    rows = []
    iters = 4096
    for chains, name in ((1, "fma1"), (4, "fma4")):
        fn = b.f(name)
        for warps in (1, 2, 4, 8, 16, 32, 64):
            block = min(warps, 32) * 32
            per_sm = max(warps // 32, 1)
            grid = S * per_sm * 8  # 8 waves: start and tail costs amortised
            ms = b.time(lambda fn=fn, grid=grid, block=block:
                        fn((grid,), (block,), (out, cp.float32(0.9999), cp.int32(iters))))
            fmas = grid * block * iters * chains
            resident = min(8 * min(warps, 32), 64) if per_sm == 1 else min(8 * per_sm, 2) * 32
            rows.append({"chains": chains, "warps_per_sm": warps, "ms": ms,
                         "resident_warps_per_sm": min(resident, 64),
                         "fma_per_s": fmas / ms * 1e3,
                         "fma_per_sm_cycle": None})
    return rows


def math_ops(b: Bench) -> list[dict]:
    """Each of MATH_OPS applied to four independent values a thread in a loop (``math_NAME``:
    the value's absolute value plus a half through the function, then a multiply-add), and
    the same loop without the function (``math_none``: an add and a multiply-add), 8 blocks
    of 256 threads an SM, 4,096 iterations: what a call costs in FP32 FMAs' issue,
    ``2 (t_f - t_none) / t_none`` (device_params.math_fma)."""
    cp, S = b.cp, b.sms
    out = cp.zeros(4, dtype=cp.float32)
    rows = []
    for name in ("none", *MATH_OPS):
        fn = b.f(f"math_{name}")
        ms = b.time(lambda fn=fn: fn((S * 8,), (256,), (out, cp.float32(123.0),
                                                       cp.int32(4096))), reps=5)
        rows.append({"op": name, "grid": S * 8, "block": 256, "iters": 4096, "chains": 4,
                     "registers": fn.num_regs, "ms": ms})
    return rows


def atomics(b: Bench) -> list[dict]:
    cp, S = b.cp, b.sms
    rows = []
    out = cp.zeros(1 << 24, dtype=cp.float32)
    for name in ("atomic_one", "atomic_block", "atomic_thread"):
        fn = b.f(name)
        for grid, block in ((S * 8, 256), (S * 32, 256), (S * 64, 1024)):
            ms = b.time(lambda fn=fn, grid=grid, block=block: fn((grid,), (block,), (out,)),
                        reps=5)
            rows.append({"kernel": name, "grid": grid, "block": block,
                         "atomics": grid * block, "ms": ms,
                         "ns_per_atomic": ms * 1e6 / (grid * block)})
    return rows


def atomic_ops(b: Bench) -> list[dict]:
    """Atomics on one address by operation and by who issues them (``atomic_add_warp``,
    ``atomic_max_warp``: a warp's lane 0; ``atomic_max_one``: every thread; beside
    ``atomics``' ``atomic_one``, every thread's atomicAdd): ns per atomic."""
    cp, S = b.cp, b.sms
    rows = []
    out = cp.zeros(1 << 10, dtype=cp.float32)
    for name, grid, block in (("atomic_add_warp", S * 256, 256), ("atomic_max_warp", S * 256, 256),
                              ("atomic_max_one", S * 32, 256), ("atomic_one", S * 32, 256)):
        fn = b.f(name)
        issued = grid * block // (32 if name.endswith("_warp") else 1)
        ms = b.time(lambda fn=fn, grid=grid, block=block, o=out: fn((grid,), (block,), (o,)),
                    reps=5)
        rows.append({"kernel": name, "grid": grid, "block": block, "atomics": issued,
                     "ms": ms, "ns_per_atomic": ms * 1e6 / issued})
    del out
    return rows


def fma64(b: Bench) -> list[dict]:
    """Double-precision FMA throughput beside single's, in 16 waves of blocks of 8 to 32
    warps (dfma1 / dfma4 against fma1 / fma4: the same chains, one and four a thread):
    the FP64 pipe's share of the FP32 rate."""
    cp, S = b.cp, b.sms
    rows = []
    iters = 2048
    for precision, dtype, names in (("fp32", cp.float32, ("fma1", "fma4")),
                                    ("fp64", cp.float64, ("dfma1", "dfma4"))):
        out = cp.zeros(4, dtype=dtype)
        for chains, name in zip((1, 4), names, strict=True):
            fn = b.f(name)
            for warps in (8, 16, 32, 64):
                block = min(warps, 32) * 32
                grid = S * max(warps // 32, 1) * 16
                ms = b.time(lambda fn=fn, grid=grid, block=block, dtype=dtype, out=out:
                            fn((grid,), (block,), (out, dtype(0.9999), cp.int32(iters))))
                rows.append({"precision": precision, "chains": chains,
                             "warps_per_sm": warps, "block": block, "grid": grid, "ms": ms,
                             "fma_per_s": grid * block * iters * chains / ms * 1e3})
    return rows


def fma_steady(b: Bench) -> list[dict]:
    """FMA throughput at a known count of resident warps per SM, in 16 waves of blocks (the
    ``fma`` rows run one to eight waves: their start and tail weigh on the few-warp rows):
    blocks of up to 32 warps, dynamic shared memory leaving room for one block per SM (two
    of 32 warps for 64)."""
    cp, S = b.cp, b.sms
    out = cp.zeros(4, dtype=cp.float32)
    rows = []
    iters = 2048
    for chains, name in ((1, "fma1"), (4, "fma4")):
        fn = b.f(name)
        fn.max_dynamic_shared_size_bytes = 227 * 1024
        for warps in (1, 2, 4, 8, 16, 24, 32, 48, 64):
            per_block = min(warps, 32)
            blocks = warps // per_block
            smem = (227 * 1024) // blocks - 2048  # room for ``blocks`` a SM, no more
            grid = S * blocks * 16
            block = per_block * 32
            ms = b.time(lambda fn=fn, grid=grid, block=block, smem=smem:
                        fn((grid,), (block,), (out, cp.float32(0.9999), cp.int32(iters)),
                           shared_mem=smem))
            rows.append({"chains": chains, "resident_warps_per_sm": warps, "block": block,
                         "smem": smem, "grid": grid, "waves": 16, "ms": ms,
                         "fma_per_s": grid * block * iters * chains / ms * 1e3})
    return rows


def block_atomics(b: Bench) -> list[dict]:
    """atomicAdd to each block's own address (adjacent words), by threads per block: 2^23
    atomics in many waves of blocks, so that the cost per atomic is the steady one."""
    cp = b.cp
    out = cp.zeros(1 << 24, dtype=cp.float32)
    fn = b.f("atomic_block")
    rows = []
    for block in (32, 64, 128, 256, 512, 1024):
        grid = (1 << 23) // block
        ms = b.time(lambda grid=grid, block=block: fn((grid,), (block,), (out,)), reps=5)
        rows.append({"kernel": "atomic_block", "grid": grid, "block": block,
                     "atomics": grid * block, "ms": ms,
                     "ns_per_atomic": ms * 1e6 / (grid * block)})
    return rows


def block_reduce(b: Bench) -> list[dict]:
    """A block's reduction epilogue, alone: each thread's value into shared memory and a
    tree over the block (a barrier each halving), then thread 0 stores the block's sum
    (``reduce_store``) or adds it to one address (``reduce_atomic``); ``reduce_none``: the
    same shared store and one barrier, no tree. 2^16 and 2^18 blocks of 32-1,024 threads
    as many per SM as fit (4 KiB of shared memory each), and 2^16 capped at two per SM by
    104 KiB of dynamic shared memory (device_params.reduce_curve reads those)."""
    cp = b.cp
    out = cp.zeros(1 << 18, dtype=cp.float32)
    rows = []
    for name in ("reduce_none", "reduce_store", "reduce_atomic", "reduce_shfl"):
        fn = b.f(name)
        fn.max_dynamic_shared_size_bytes = 200 * 1024  # past 48 KiB (its 4 KiB static beside)
        for block in (32, 64, 128, 256, 512, 1024):
            # as many blocks per SM as fit; and two, capped by dynamic shared memory, so
            # that the epilogue's latency and not the block start rate binds
            for blocks, smem in ((1 << 16, 0), (1 << 18, 0), (1 << 16, 104 * 1024)):
                ms = b.time(lambda fn=fn, block=block, blocks=blocks, smem=smem: fn(
                    (blocks,), (block,), (out, cp.float32(1.0)), shared_mem=smem), reps=5)
                rows.append({"kernel": name, "block": block, "blocks": blocks, "smem": smem,
                             "registers": fn.num_regs, "ms": ms})
    return rows


def reduce_stream(b: Bench) -> list[dict]:
    """A grid-stride sum of 2^22 and 2^26 floats whose blocks end in a tree over their
    threads and thread 0's store of the block's sum (``sum_store``) or atomicAdd to one
    address (``sum_atomic``), or the same after a sum by warp shuffles (``sum_shfl_*``):
    128-, 256- and 1,024-thread blocks, 1 to 320 blocks per SM.
    Where a block's one atomic on one address waits, beside the block's loads and its
    tree (the held-out block-reduce family's shape); all of it twice."""
    cp, S = b.cp, b.sms
    src = cp.ones(1 << 26, dtype=cp.float32)
    out = cp.zeros(S * 320, dtype=cp.float32)
    rows = []
    for repeat in (0, 1):
        for name in ("sum_store", "sum_atomic", "sum_shfl_store", "sum_shfl_atomic"):
            fn = b.f(name)
            for n in (1 << 22, 1 << 26):
                for block in (128, 256, 1024):
                    for per_sm in (1, 2, 4, 8, 16, 32, 80, 160, 320):
                        grid = S * per_sm
                        ms = b.time(lambda fn=fn, grid=grid, block=block, n=n, a=src,
                                    o=out: fn((grid,), (block,), (a, o, cp.int64(n))), reps=7)
                        rows.append({"kernel": name, "n": n, "block": block, "grid": grid,
                                     "registers": fn.num_regs, "repeat": repeat, "ms": ms})
    del src, out
    return rows


def row_phases(b: Bench) -> list[dict]:
    """A block per row of 1, 2 and 4 passes (``row_phases_P``), each a load per thread from
    DRAM and the block's sum by warp shuffles (two barriers), 2^17 blocks of 32-1,024
    threads capped at two per SM by 104 KiB of dynamic shared memory, and as many per SM
    as fit: what a pass of a block per row costs its block besides its bytes (a load's
    wait and the reduction; device_params.phase_curve reads the capped ones)."""
    cp = b.cp
    blocks = 1 << 17
    src = cp.ones(blocks * 4 * 1024, dtype=cp.float32)
    out = cp.zeros(blocks, dtype=cp.float32)
    rows = []
    for passes in (1, 2, 3, 4):
        fn = b.f(f"row_phases_{passes}")
        fn.max_dynamic_shared_size_bytes = 200 * 1024
        for block in (32, 64, 128, 256, 512, 1024):
            for smem in (0, 104 * 1024):
                ms = b.time(lambda fn=fn, block=block, smem=smem, a=src, o=out: fn(
                    (blocks,), (block,), (a, o), shared_mem=smem), reps=9)
                rows.append({"kernel": "row_phases", "passes": passes, "block": block,
                             "blocks": blocks, "smem": smem, "registers": fn.num_regs,
                             "ms": ms})
    del src, out
    return rows


def row_loop(b: Bench) -> list[dict]:
    """A block per row in one pass of 1 to 16 loads a thread (``row_loop_sum``: the loop a
    block per row writes, stepped by the block, which the compiler does not unroll, then
    the block's sum by warp shuffles; ``row_loop_plain``: no sum, no barrier), 2^26 floats
    in rows of the block times the loads, blocks of 32-1,024 threads as many per SM as fit
    and capped at two per SM: a block per row's lifetime by its loads a pass
    (device_params.row_loop_curve)."""
    cp = b.cp
    n = 1 << 26
    src = cp.ones(n, dtype=cp.float32)
    out = cp.zeros(n // 32, dtype=cp.float32)
    rows = []
    for name in ("row_loop_sum", "row_loop_plain"):
        fn = b.f(name)
        fn.max_dynamic_shared_size_bytes = 200 * 1024
        for block in (32, 64, 128, 256, 512, 1024):
            for loads in (1, 2, 4, 8, 16):
                cols = block * loads
                grid = n // cols
                for smem in (0, 104 * 1024):
                    ms = b.time(lambda fn=fn, block=block, grid=grid, cols=cols, smem=smem,
                                    a=src, o=out: fn((grid,), (block,), (a, o, cp.int64(cols)),
                                                     shared_mem=smem), reps=5)
                    rows.append({"kernel": name, "block": block, "loads": loads, "cols": cols,
                                 "blocks": grid, "smem": smem, "registers": fn.num_regs,
                                 "ms": ms})
    del src, out
    return rows


def row_ragged(b: Bench) -> list[dict]:
    """A block per row copied (``row_copy``), 65,536 rows of 1,000 and 131,072 of 500
    floats, in blocks of 96 to 1,024 threads that do and do not divide the row, as many per
    SM as fit and capped at two by dynamic shared memory: what a row's ragged last pass
    (1,000 in 928 threads: a pass of 928, one of 72) costs; all of it twice."""
    cp = b.cp
    n = 65536 * 1000
    src = cp.ones(n, dtype=cp.float32)
    dst = cp.empty_like(src)
    fn = b.f("row_copy")
    fn.max_dynamic_shared_size_bytes = 200 * 1024
    rows = []
    for repeat in (0, 1):
        for cols in (1000, 500):
            grid = n // cols
            for block in (96, 128, 160, 192, 224, 256, 288, 320, 384, 448, 480, 500, 512,
                          640, 768, 896, 928, 960, 992, 1000, 1024):
                for smem in (0, 104 * 1024):
                    ms = b.time(lambda block=block, grid=grid, cols=cols, smem=smem, a=src,
                                c=dst: fn((grid,), (block,), (a, c, cp.int64(cols)),
                                          shared_mem=smem), reps=5)
                    rows.append({"cols": cols, "rows": grid, "block": block, "smem": smem,
                                 "registers": fn.num_regs, "repeat": repeat, "ms": ms})
    del src, dst
    return rows


def row_long(b: Bench) -> list[dict]:
    """A block per row copied, floats (``row_copy``, 2^26 in rows of 1,000 to 16,000) and
    float4s (``row_copy4``, 2^24 in rows of 250 to 4,000), in blocks of 256 to 1,024 threads
    that do and do not divide the row, as many per SM as fit: how a block's straggling
    warps cost a row of one pass to sixty-three (the tail a block per row pays); twice."""
    cp = b.cp
    rows = []
    for kernel, n, lengths in (("row_copy", 1 << 26, (1000, 2000, 4000, 8000, 16000)),
                               ("row_copy4", 1 << 24, (250, 500, 1000, 2000, 4000))):
        width = 4 if kernel == "row_copy4" else 1
        src = cp.ones(n * width, dtype=cp.float32)
        dst = cp.empty_like(src)
        fn = b.f(kernel)
        for repeat in (0, 1):
            for cols in lengths:
                grid = n // cols
                for block in (256, 384, 512, 640, 768, 896, 928, 992, 1000, 1024):
                    ms = b.time(lambda fn=fn, block=block, grid=grid, cols=cols, a=src,
                                c=dst: fn((grid,), (block,), (a, c, cp.int64(cols))),
                                reps=5)
                    rows.append({"kernel": kernel, "vector": width, "cols": cols,
                                 "rows": grid, "block": block, "registers": fn.num_regs,
                                 "repeat": repeat, "ms": ms})
        del src, dst
    return rows


def loop_atomic(b: Bench) -> list[dict]:
    """A grid-stride copy of 2^24 and 2^26 floats whose threads each end in an atomicAdd on
    one address (``loop_atomic_copy``; ``loop_atomic_fma``: 64 dependent FMAs an element
    too), 128-, 256- and 1,024-thread blocks, 1 to 64 blocks per SM: the atomics from a
    sliver of the time to nearly all of it, to see how they join the loop's work (the
    held-out grid-stride family's atomic a thread, with its work known); twice."""
    cp, S = b.cp, b.sms
    n_max = 1 << 26
    src = cp.ones(n_max, dtype=cp.float32)
    dst = cp.empty_like(src)
    out = cp.zeros(1, dtype=cp.float32)
    rows = []
    for repeat in (0, 1):
        for name in ("loop_atomic_copy", "loop_atomic_fma"):
            fn = b.f(name)
            for n in (1 << 24, n_max):
                for block in (128, 256, 1024):
                    for per_sm in (1, 2, 4, 8, 16, 32, 64):
                        grid = S * per_sm
                        ms = b.time(lambda fn=fn, grid=grid, block=block, n=n, a=src, c=dst,
                                    o=out: fn((grid,), (block,),
                                              (a, c, o, cp.float32(0.999), cp.int64(n))),
                                    reps=5)
                        rows.append({"kernel": name, "n": n, "block": block, "grid": grid,
                                     "registers": fn.num_regs, "repeat": repeat, "ms": ms})
    del src, dst, out
    return rows


def loop_empty(b: Bench) -> list[dict]:
    """A grid-stride copy (``loop_copy``: 2^24 floats; ``loop_copy4``: 2^22 float4s) in
    256- and 1,024-thread blocks, 4 to 320 blocks per SM: from fewer threads than elements
    to ten times more, whose blocks past the last element only start and exit (the
    held-out grid-stride family's oversubscribed grids); twice."""
    cp, S = b.cp, b.sms
    src = cp.ones(1 << 24, dtype=cp.float32)
    dst = cp.empty_like(src)
    rows = []
    for repeat in (0, 1):
        for name, n in (("loop_copy", 1 << 24), ("loop_copy4", 1 << 22)):
            fn = b.f(name)
            for block in (256, 1024):
                for per_sm in (4, 8, 16, 32, 64, 128, 320):
                    grid = S * per_sm
                    ms = b.time(lambda fn=fn, grid=grid, block=block, n=n, a=src, c=dst:
                                fn((grid,), (block,), (a, c, cp.int64(n))), reps=7)
                    rows.append({"kernel": name, "n": n, "block": block, "grid": grid,
                                 "registers": fn.num_regs, "repeat": repeat, "ms": ms})
    empty = b.f("empty")
    out = cp.zeros(4, dtype=cp.float32)
    for repeat in (0, 1):
        for block in (256, 1024):
            for per_sm in (4, 8, 16, 32, 64, 128, 320):
                grid = S * per_sm
                ms = b.time(lambda grid=grid, block=block: empty((grid,), (block,), (out,)),
                            reps=7)
                rows.append({"kernel": "empty", "n": 0, "block": block, "grid": grid,
                             "registers": empty.num_regs, "repeat": repeat, "ms": ms})
    del src, dst
    return rows


def row_reread(b: Bench) -> list[dict]:
    """A block per row in two passes whose second reads the row again (``reread_row``) or
    another array's (``fresh_row``), 2^26 floats in rows of 512 to 32,768, blocks of 256
    and 1,024 threads (8 and 2 resident per SM): where the second pass stops finding its
    row in the SM's cache, by the rows' bytes per SM (device_params.reread_bytes)."""
    cp = b.cp
    n = 1 << 26
    a, other, c = (cp.ones(n, dtype=cp.float32) for _ in range(3))
    rows = []
    for block, resident in ((256, 8), (1024, 2)):
        for cols in (512, 1024, 2048, 3072, 4096, 5120, 6144, 7168, 8192, 12288, 16384,
                     24576, 32768):
            for name in ("reread_row", "fresh_row"):
                fn = b.f(name)
                grid = n // cols
                ms = b.time(lambda fn=fn, block=block, grid=grid, cols=cols, x=a, y=other,
                                z=c: fn((grid,), (block,), (x, y, z, cp.int64(cols))), reps=7)
                rows.append({"kernel": name, "block": block, "resident": resident,
                             "cols": cols, "row_bytes": cols * 4,
                             "bytes_per_sm": cols * 4 * resident, "registers": fn.num_regs,
                             "ms": ms})
    del a, other, c
    return rows


def l1_lines(b: Bench) -> list[dict]:
    """Loads a warp makes from a 32 KB table the L1 holds, each request touching 1 to 32
    distinct 128-byte lines (``l1_lines``), 8 blocks of 256 threads per SM, 4,096 loads a
    thread: ns per warp request per SM against the lines it touches (device_params
    .l1_line_ns: what a line of a request costs the SM's L1)."""
    cp = b.cp
    table = cp.ones(8 * 1024, dtype=cp.float32)
    out = cp.zeros(1, dtype=cp.float32)
    fn = b.f("l1_lines")
    grid, block, iters = b.sms * 8, 256, 4096
    rows = []
    for lines in (1, 2, 4, 8, 16, 32):
        ms = b.time(lambda lines=lines, t=table, o=out: fn(
            (grid,), (block,), (t, o, cp.int32(lines), cp.int32(iters))), reps=7)
        requests = grid * block // 32 * iters
        rows.append({"kernel": "l1_lines", "lines": lines, "grid": grid, "block": block,
                     "iters": iters, "registers": fn.num_regs, "ms": ms,
                     "ns_per_request_per_sm": ms * 1e6 * b.sms / requests})
    del table, out
    return rows


def atomic_set(b: Bench) -> list[dict]:
    """2^16 blocks of 64 to 1,024 threads each adding one value to every word of the same
    set of 256, 1,024 or 4,096 words (``atomic_set``: a privatised histogram's flush):
    ns per atomic (device_params.atomic_set_ns)."""
    cp = b.cp
    out = cp.zeros(4096, dtype=cp.float32)
    fn = b.f("atomic_set")
    blocks = 1 << 16
    rows = []
    for words in (256, 1024, 4096):
        for block in (64, 256, 1024):
            ms = b.time(lambda block=block, words=words, o=out: fn(
                (blocks,), (block,), (o, cp.int32(words))), reps=5)
            rows.append({"kernel": "atomic_set", "words": words, "block": block,
                         "blocks": blocks, "ms": ms,
                         "ns_per_atomic": ms * 1e6 / (blocks * words)})
    del out
    return rows


def wave_resident(b: Bench) -> list[dict]:
    """Grid-stride copies of 1 GiB (``copy_float_1``, ``copy_float4_1``) in 256-, 512- and
    1024-thread blocks, 1 to 8 resident per SM (capped by dynamic shared memory), in 1 to
    80 waves of blocks: what many waves gain over one when few blocks share an SM (the
    element_bandwidth copies measured 8 resident 256-thread blocks only); all of it twice."""
    cp, S = b.cp, b.sms
    src = cp.ones(1 << 28, dtype=cp.float32)
    dst = cp.empty_like(src)
    rows = []
    for repeat, name, width in ((r, *k) for r in (0, 1)
                                for k in (("copy_float_1", 1), ("copy_float4_1", 4))):
        fn = b.f(name)
        fn.max_dynamic_shared_size_bytes = 227 * 1024
        n = (1 << 28) // width
        for block in (256, 512, 1024):
            for resident in (1, 2, 4, 8):
                if block * resident > 2048:
                    continue
                smem = (228 * 1024 // resident - 1024) // 1024 * 1024
                for waves in (1, 2, 4, 8, 16, 32, 64, 80):
                    grid = S * resident * waves
                    ms = b.time(lambda fn=fn, grid=grid, block=block, smem=smem, n=n, a=src,
                                c=dst: fn((grid,), (block,), (a, c, cp.int64(n)),
                                          shared_mem=smem), reps=5)
                    rows.append({"kernel": name, "vector": width, "block": block,
                                 "resident": resident, "smem": smem, "waves": waves,
                                 "grid": grid, "repeat": repeat, "ms": ms,
                                 "gbps": (1 << 30) * 2 / ms / 1e6})
    del src, dst
    return rows


def fma_waves(b: Bench) -> list[dict]:
    """One dependent FMA chain a thread (``fma1``), 2^34 FMAs a launch, in 256-, 512- and
    1,024-thread blocks, 1, 2 or 4 resident per SM (capped by dynamic shared memory), in 1
    to 80 waves of blocks (each thread's chain shorter as the waves grow): what many waves
    cost arithmetic when few blocks share an SM (``wave_resident``'s copies for the
    arithmetic); all of it twice."""
    cp, S = b.cp, b.sms
    out = cp.zeros(4, dtype=cp.float32)
    fn = b.f("fma1")
    fn.max_dynamic_shared_size_bytes = 227 * 1024
    rows = []
    for repeat in (0, 1):
        for block in (256, 512, 1024):
            for resident in (1, 2, 4):
                if block * resident > 2048:
                    continue
                smem = (228 * 1024 // resident - 1024) // 1024 * 1024
                for waves in (1, 2, 4, 8, 16, 32, 64, 80):
                    grid = S * resident * waves
                    iters = max(1, (1 << 34) // (grid * block))
                    ms = b.time(lambda grid=grid, block=block, smem=smem, iters=iters: fn(
                        (grid,), (block,), (out, cp.float32(0.9999), cp.int32(iters)),
                        shared_mem=smem), reps=5)
                    rows.append({"block": block, "resident": resident, "smem": smem,
                                 "waves": waves, "grid": grid, "iters": iters,
                                 "repeat": repeat, "ms": ms,
                                 "fma_per_s": grid * block * iters / ms * 1e3})
    return rows


def block_alignment(b: Bench) -> list[dict]:
    """Grid-stride copies (``copy_float_1``: 4 bytes read and written per element;
    ``copy_float2_1``: 8; ``narrow_store``: 8 read, 4 written) of 2^26 elements by blocks
    whose element run is and is not a whole number of 32-byte sectors (100 and 200 threads
    of 4 bytes: 400 and 800 bytes) at 40 and 80 blocks per SM, against the warp-multiple
    blocks beside them: what a block off the warp costs a loop's memory."""
    cp, S = b.cp, b.sms
    n = 1 << 26
    src = cp.ones(2 * n, dtype=cp.float32)
    dst = cp.empty(2 * n, dtype=cp.float32)
    rows = []
    for name in ("copy_float_1", "copy_float2_1", "narrow_store"):
        fn = b.f(name)
        for block in (96, 100, 128, 192, 200, 256):
            for per_sm in (40, 80):
                ms = b.time(lambda fn=fn, block=block, per_sm=per_sm, src=src, dst=dst: fn(
                    (S * per_sm,), (block,), (src, dst, cp.int64(n))), reps=7)
                rows.append({"kernel": name, "block": block, "blocks_per_sm": per_sm,
                             "elements": n, "ms": ms})
    del src, dst
    return rows


def launches(b: Bench) -> dict:
    cp = b.cp
    out = cp.zeros(4, dtype=cp.float32)
    fn = b.f("empty")
    count = 1000

    def many():
        for _ in range(count):
            fn((1,), (32,), (out,))

    with b.stream:
        many()
    stream_ms = b.time(many, reps=5, warm=1)
    with b.stream:
        b.stream.begin_capture()
        many()
        graph = b.stream.end_capture()
    graph_ms = b.time(lambda: graph.launch(stream=b.stream), reps=5, warm=2)
    one_ms = b.time(lambda: fn((1,), (32,), (out,)), reps=21)
    return {"stream_us_per_launch": stream_ms * 1e3 / count,
            "graph_us_per_node": graph_ms * 1e3 / count,
            "single_launch_event_us": one_ms * 1e3}


def _profiled(run) -> list[dict]:
    """The kernels ``run()`` launches, as the PyTorch profiler (CUPTI) records them, in the
    order they ran."""
    import tempfile

    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        run()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        events = json.loads(Path(f.name).read_text())["traceEvents"]
    return sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e["ts"])


def floor(b: Bench) -> dict:
    """The duration the PyTorch profiler (CUPTI) records for a near-empty kernel."""
    cp = b.cp
    out = cp.zeros(4, dtype=cp.float32)
    fn = b.f("empty")

    def run() -> None:
        for _ in range(200):
            with b.stream:
                fn((1,), (32,), (out,))
            b.stream.synchronize()

    durations = [e["dur"] for e in _profiled(run) if "empty" in e["name"]]
    return {"launches": len(durations), "median_us": statistics.median(durations),
            "min_us": min(durations)}


def short_launches(b: Bench) -> list[dict]:
    """Launches of microseconds, as the PyTorch profiler (CUPTI) records them: a copy of
    one float a thread (``element_float``) of 2^12 to 2^24 elements in blocks of 64, 256
    and 1,024 threads, and a grid-stride float4 copy (``copy_float4_1``) of 2^14 to 2^22
    float4s in 1 to 16 blocks of 256 threads per SM; each launched again and again, so that
    what fits in the L2 is there (a small tensor a previous kernel wrote), the median of
    five durations."""
    cp = b.cp
    plan = []
    for shift in range(12, 25, 2):
        for block in (64, 256, 1024):
            plan.append(("element_float", 1, 1 << shift, block, -(-(1 << shift) // block)))
    for shift in range(14, 23, 2):
        for per_sm in (1, 4, 16):
            plan.append(("copy_float4_1", 4, 1 << shift, 256, per_sm * b.sms))
    arrays = {}
    for _, width, n, _, _ in plan:
        if (width, n) not in arrays:
            arrays[width, n] = (cp.ones(n * width, dtype=cp.float32),
                                cp.empty(n * width, dtype=cp.float32))
    def run() -> None:
        for i, (name, width, n, block, grid) in enumerate(plan):
            fn = b.f(name)
            a, c = arrays[width, n]
            with b.stream:
                for _ in range(3):  # warm: the L2 holds what fits
                    fn((grid,), (block,), (a, c, cp.int64(n)))
                b.stream.synchronize()
                for _ in range(5):
                    # behind a near-empty launch, as a kernel in a stream follows another
                    b.f("empty")((1,), (32 + i % 2,), (c,))
                    fn((grid,), (block,), (a, c, cp.int64(n)))
                    b.stream.synchronize()

    timed = [e for e in _profiled(run) if "empty" not in e["name"]]
    rows = []
    for i, (name, width, n, block, grid) in enumerate(plan):
        durations = [e["dur"] for e in timed[i * 8 + 3:i * 8 + 8]]
        assert all(name in e["name"] for e in timed[i * 8:i * 8 + 8]), name
        rows.append({"kernel": name, "vector": width, "n": n, "block": block, "grid": grid,
                     "bytes": n * width * 8, "us": statistics.median(durations),
                     "min_us": min(durations)})
    return rows


def l2_residency(b: Bench) -> list[dict]:
    """What the L2 keeps of a launch's data from the launch before: copies of 1 to 64 Mi
    elements (8 MB to 512 MB read and written; a float a thread in 256-thread blocks,
    ``element_float``; a float4 grid-stride loop in 4 blocks of 256 per SM,
    ``copy_float4_1``), each launched again and again (warm) and after a 1 GiB write that
    empties the L2 (cold); durations as the profiler records them, the median of five."""
    cp = b.cp
    flush = cp.empty(1 << 28, dtype=cp.float32)
    plan = []
    for half in range(40, 53):  # 2^20 to 2^26 floats, half a power of two apart
        n = round(2 ** (half / 2)) // 1024 * 1024
        for state in ("warm", "cold"):
            plan.append(("element_float", 1, n, 256, -(-n // 256), state))
            plan.append(("copy_float4_1", 4, n // 4, 256, 4 * b.sms, state))
    big_a = cp.ones(1 << 26, dtype=cp.float32)
    big_c = cp.empty(1 << 26, dtype=cp.float32)
    def run() -> None:
        for name, _, n, block, grid, state in plan:
            fn = b.f(name)
            with b.stream:
                for rep in range(8):
                    if state == "cold" and rep >= 3:
                        flush.fill(0.0)
                    fn((grid,), (block,), (big_a, big_c, cp.int64(n)))
                    b.stream.synchronize()

    timed = [e for e in _profiled(run)
             if "element_float" in e["name"] or "copy_float4_1" in e["name"]]
    rows = []
    for i, (name, width, n, block, grid, state) in enumerate(plan):
        runs = timed[i * 8:i * 8 + 8]
        assert all(name in e["name"] for e in runs), name
        rows.append({"kernel": name, "state": state, "n": n, "block": block, "grid": grid,
                     "bytes": n * width * 8, "us": statistics.median(e["dur"] for e in runs[3:])})
    return rows


def main(argv: list[str]) -> int:
    only = None
    if "--only" in argv:  # --only KEY[,KEY]: just those measurements (a partial document)
        i = argv.index("--only")
        only, argv = argv[i + 1].split(","), argv[:i] + argv[i + 2:]
    out_path = argv[0] if argv else "characterization.json"
    b = Bench()
    p = b.props
    name = p["name"].decode() if isinstance(p["name"], bytes) else p["name"]
    t0 = time.time()
    doc = {"env": {"gpu": name, "sms": b.sms, "clock_khz": p["clockRate"],
                   "memory_clock_khz": p["memoryClockRate"], "bus_bits": p["memoryBusWidth"],
                   "l2_bytes": p["l2CacheSize"],
                   "runtime": b.cp.cuda.runtime.runtimeGetVersion(),
                   "driver": b.cp.cuda.runtime.driverGetVersion(),
                   "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())}}
    import torch

    torch.cuda.init()
    torch.zeros(1, device="cuda")  # one primary context for torch, CuPy and the profiler
    for key, fn in (("floor", floor), ("launch", launches), ("block_starts", block_starts),
                    ("latency", latency), ("fma", fma), ("atomics", atomics),
                    ("block_atomics", block_atomics), ("fma_steady", fma_steady),
                    ("fma64", fma64),
                    ("bandwidth", bandwidth), ("element_bandwidth", element_bandwidth),
                    ("element_tile", element_tile),
                    ("block_reduce", block_reduce), ("reduce_stream", reduce_stream),
                    ("block_alignment", block_alignment),
                    ("wave_resident", wave_resident), ("fma_waves", fma_waves),
                    ("row_bandwidth", row_bandwidth),
                    ("gather_bandwidth", gather_bandwidth), ("row_phases", row_phases),
                    ("row_reread", row_reread), ("row_ragged", row_ragged),
                    ("row_long", row_long), ("loop_atomic", loop_atomic),
                    ("loop_empty", loop_empty),
                    ("row_loop", row_loop), ("math_ops", math_ops),
                    ("l1_lines", l1_lines),
                    ("atomic_set", atomic_set), ("atomic_ops", atomic_ops),
                    ("short_launches", short_launches), ("l2_residency", l2_residency)):
        if only and key not in only:
            continue
        t = time.time()
        doc[key] = fn(b)
        print(f"{key}: {time.time() - t:.1f} s", flush=True)
    doc["env"]["seconds"] = round(time.time() - t0, 1)
    with open(out_path, "w") as f:
        json.dump(doc, f, indent=1)
    for r in doc.get("fma_steady", ()):
        print("fma steady", r["chains"], r["resident_warps_per_sm"], f"{r['fma_per_s']:.4e}")
    for r in doc.get("block_reduce", ()):
        print("reduce", r["kernel"], r["block"], r["blocks"], r["smem"],
              f"{r['ms'] * 1e3:.1f} us")
    for r in doc.get("atomic_ops", ()):
        print("atomic op", r["kernel"], r["atomics"], f"{r['ms'] * 1e3:.1f} us",
              f"{r['ns_per_atomic']:.3f} ns an atomic")
    for r in doc.get("atomic_set", ()):
        print("atomic set", r["words"], r["block"], f"{r['ms'] * 1e3:.1f} us",
              f"{r['ns_per_atomic']:.4f} ns an atomic")
    for r in doc.get("short_launches", ()):
        print("short", r["kernel"], r["n"], r["block"], r["grid"], f"{r['us']:.2f} us")
    for r in doc.get("l2_residency", ()):
        print("l2", r["kernel"], r["state"], r["bytes"], f"{r['us']:.2f} us")
    for r in doc.get("l1_lines", ()):
        print("l1", r["lines"], f"{r['ms'] * 1e3:.1f} us",
              f"{r['ns_per_request_per_sm']:.3f} ns a request an SM")
    for r in doc.get("row_reread", ()):
        print("reread", r["kernel"], r["block"], r["cols"], r["bytes_per_sm"],
              f"{r['ms'] * 1e3:.1f} us")
    for r in doc.get("math_ops", ()):
        print("math", r["op"], r["registers"], f"{r['ms'] * 1e3:.1f} us")
    for r in doc.get("fma_waves", ()):
        print("fma waves", r["block"], r["resident"], r["waves"], r["repeat"],
              f"{r['fma_per_s']:.3e}")
    for r in doc.get("element_tile", ()):
        print("tile", r["kernel"], r["block"], r["cap"], r["repeat"], f"{r['gbps']:.0f} GB/s")
    for r in doc.get("reduce_stream", ()):
        print("reduce stream", r["kernel"], r["n"], r["block"], r["grid"], r["repeat"],
              f"{r['ms'] * 1e3:.1f} us")
    for r in doc.get("row_loop", ()):
        print("row loop", r["kernel"], r["block"], r["loads"], r["smem"], f"{r['ms'] * 1e3:.1f} us")
    for r in doc.get("row_phases", ()):
        print("phases", r["passes"], r["block"], r["smem"], f"{r['ms'] * 1e3:.1f} us")
    for r in doc.get("wave_resident", ()):
        print("waves", r["kernel"], r["block"], r["resident"], r["waves"], f"{r['gbps']:.0f}")
    for r in doc.get("gather_bandwidth", ()):
        print("gather", r["level"], r["block"], f"{r['ms'] * 1e3:.1f} us",
              f"{r['sector_gbps']:.0f} GB/s of sectors")
    for r in doc.get("row_bandwidth", ()):
        print("rows", r["kernel"], r["block"], r["row_bytes"], f"{r['gbps']:.0f}")
    for r in doc.get("block_alignment", ()):
        print("alignment", r["kernel"], r["block"], r["blocks_per_sm"], f"{r['ms'] * 1e3:.1f} us")
    for r in doc.get("block_atomics", ()):
        print("block atomics", r["block"], r["grid"], f"{r['ns_per_atomic']:.4f} ns")
    for r in doc.get("element_bandwidth", ()):
        print("element", r["kernel"], r["block"], r.get("smem"), r.get("grid"),
              f"{r['gbps']:.0f}")
    if only:
        return 0
    print(json.dumps(doc["launch"]), json.dumps(doc["latency"]))
    for r in doc["block_starts"]:
        print("starts", r["block"], r["blocks"], f"{r['blocks_per_s']:.3e}")
    for r in doc["atomics"]:
        print("atomic", r["kernel"], r["grid"], r["block"], f"{r['ns_per_atomic']:.3f} ns")
    for r in doc["fma"]:
        print("fma", r["chains"], r["warps_per_sm"], f"{r['fma_per_s']:.3e}")
    for r in doc["bandwidth"]:
        if r["level"] == "dram" and r["kind"] == "read" and r["sms"] == b.sms:
            print("bw", r["vector"], r["unroll"], r["block"], r["blocks_per_sm"],
                  r["bytes_in_flight_per_sm"], f"{r['gbps']:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
