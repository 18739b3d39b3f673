// Launch sites the launch-time model prices from source alone (written for the tests):
// one element per thread in blocks of 100 (LCH001) and float4 copies in blocks of 32 (block
// starts bind: LCH107), each grid following the problem's size.
__global__ void scale(float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

__global__ void copy4(const float4 *x, float4 *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}

void run(float *x, const float4 *in, float4 *out, int n) {
    scale<<<(n + 99) / 100, 100>>>(x, 2.0f, n);
    copy4<<<(n + 31) / 32, 32>>>(in, out, n);
}
