// `dim3 v(A, B)` whose arguments are names: C++ reads it as a function declaration; the
// block is known when the names are.
// Seen in the wild: ROCm/rocm-examples 7dfb7d4, Applications/convolution/main.hip:256
// (`const dim3 block_dim(block_size, block_size);`) and 40 other sites of the issue.
#define ROWS_X 16
#define ROWS_Y 4

__global__ void stencil(float *x) { x[blockIdx.x * blockDim.x + threadIdx.x] = 0.0f; }

void run(float *x, int unknown) {
    constexpr int block_size = 16;
    int once = 32;
    dim3 threads(ROWS_X, ROWS_Y);
    const dim3 block_dim(block_size, block_size);
    dim3 b(once);
    dim3 tiny(block_size);
    dim3 open(unknown, ROWS_Y);
    stencil<<<65536, threads>>>(x);
    stencil<<<65536, block_dim>>>(x);
    stencil<<<65536, b>>>(x);
    stencil<<<65536, tiny>>>(x);
    stencil<<<65536, open>>>(x);
}
