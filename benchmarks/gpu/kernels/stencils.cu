// Stencils in the spirit of the KernelGen test set used by the cuda_launch_config study
// (divergence, gameoflife, gaussblur, gradient, jacobi, lapgsrb, laplacian, sincos,
// tricubic, vecadd, wave13pt). Each thread computes one element of a flattened grid, so the
// block size is one-dimensional and the grid is ceil(N / block).
#define IDX(x, y, z) ((size_t)(z) * ny * nx + (size_t)(y) * nx + (x))
#define DECOMPOSE3                                                  \
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;       \
    if (i >= (size_t)nx * ny * nz) return;                          \
    int x = i % nx, y = (i / nx) % ny, z = i / ((size_t)nx * ny);

extern "C" __global__ void divergence(const float* u, const float* v, const float* w,
                                      float* out, int nx, int ny, int nz) {
    DECOMPOSE3
    if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) {
        out[i] = 0.0f;
        return;
    }
    out[i] = 0.5f * (u[IDX(x + 1, y, z)] - u[IDX(x - 1, y, z)] + v[IDX(x, y + 1, z)] -
                     v[IDX(x, y - 1, z)] + w[IDX(x, y, z + 1)] - w[IDX(x, y, z - 1)]);
}

extern "C" __global__ void gameoflife(const unsigned char* in, unsigned char* out, int nx,
                                      int ny) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= (size_t)nx * ny) return;
    int x = i % nx, y = i / nx, alive = 0;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
            if (!dx && !dy) continue;
            int xx = (x + dx + nx) % nx, yy = (y + dy + ny) % ny;
            alive += in[(size_t)yy * nx + xx] & 1;
        }
    unsigned char self = in[i] & 1;
    out[i] = (alive == 3) || (self && alive == 2);
}

extern "C" __global__ void gaussblur(const float* in, float* out, int nx, int ny) {
    const float k[5] = {1.0f / 16, 4.0f / 16, 6.0f / 16, 4.0f / 16, 1.0f / 16};
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= (size_t)nx * ny) return;
    int x = i % nx, y = i / nx;
    float sum = 0.0f;
#pragma unroll
    for (int dy = -2; dy <= 2; ++dy)
#pragma unroll
        for (int dx = -2; dx <= 2; ++dx) {
            int xx = min(max(x + dx, 0), nx - 1), yy = min(max(y + dy, 0), ny - 1);
            sum += k[dx + 2] * k[dy + 2] * in[(size_t)yy * nx + xx];
        }
    out[i] = sum;
}

extern "C" __global__ void gradient(const float* in, float* gx, float* gy, float* gz, int nx,
                                    int ny, int nz) {
    DECOMPOSE3
    int xm = max(x - 1, 0), xp = min(x + 1, nx - 1), ym = max(y - 1, 0),
        yp = min(y + 1, ny - 1), zm = max(z - 1, 0), zp = min(z + 1, nz - 1);
    gx[i] = 0.5f * (in[IDX(xp, y, z)] - in[IDX(xm, y, z)]);
    gy[i] = 0.5f * (in[IDX(x, yp, z)] - in[IDX(x, ym, z)]);
    gz[i] = 0.5f * (in[IDX(x, y, zp)] - in[IDX(x, y, zm)]);
}

extern "C" __global__ void jacobi(const float* in, float* out, int nx, int ny, int nz) {
    DECOMPOSE3
    if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) {
        out[i] = in[i];
        return;
    }
    out[i] = (in[IDX(x - 1, y, z)] + in[IDX(x + 1, y, z)] + in[IDX(x, y - 1, z)] +
              in[IDX(x, y + 1, z)] + in[IDX(x, y, z - 1)] + in[IDX(x, y, z + 1)]) / 6.0f;
}

// Red-black Gauss-Seidel smoother of a variable-coefficient Laplacian (many arrays).
extern "C" __global__ void lapgsrb(const float* in, float* out, const float* a, const float* b,
                                   const float* c, const float* rhs, const float* diag, int nx,
                                   int ny, int nz, int color) {
    DECOMPOSE3
    if (((x + y + z) & 1) != color || x == 0 || y == 0 || z == 0 || x == nx - 1 ||
        y == ny - 1 || z == nz - 1) {
        out[i] = in[i];
        return;
    }
    float lap = a[IDX(x + 1, y, z)] * (in[IDX(x + 1, y, z)] - in[i]) -
                a[i] * (in[i] - in[IDX(x - 1, y, z)]) +
                b[IDX(x, y + 1, z)] * (in[IDX(x, y + 1, z)] - in[i]) -
                b[i] * (in[i] - in[IDX(x, y - 1, z)]) +
                c[IDX(x, y, z + 1)] * (in[IDX(x, y, z + 1)] - in[i]) -
                c[i] * (in[i] - in[IDX(x, y, z - 1)]);
    out[i] = in[i] + (rhs[i] - lap) / diag[i];
}

extern "C" __global__ void laplacian(const float* in, float* out, int nx, int ny, int nz) {
    DECOMPOSE3
    if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) {
        out[i] = 0.0f;
        return;
    }
    out[i] = in[IDX(x - 1, y, z)] + in[IDX(x + 1, y, z)] + in[IDX(x, y - 1, z)] +
             in[IDX(x, y + 1, z)] + in[IDX(x, y, z - 1)] + in[IDX(x, y, z + 1)] - 6.0f * in[i];
}

extern "C" __global__ void sincos_kernel(const float* x, const float* y, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s1, c1, s2, c2;
    sincosf(x[i], &s1, &c1);
    sincosf(y[i], &s2, &c2);
    out[i] = s1 * c2 + c1 * s2 + sinf(x[i] * y[i]) * cosf(x[i] - y[i]);
}

// Tricubic interpolation at a shifted point: a 4x4x4 neighbourhood per element.
__device__ __forceinline__ void cubic_weights(float t, float w[4]) {
    float t2 = t * t, t3 = t2 * t;
    w[0] = -0.5f * t3 + t2 - 0.5f * t;
    w[1] = 1.5f * t3 - 2.5f * t2 + 1.0f;
    w[2] = -1.5f * t3 + 2.0f * t2 + 0.5f * t;
    w[3] = 0.5f * t3 - 0.5f * t2;
}

extern "C" __global__ void tricubic(const float* in, float* out, int nx, int ny, int nz,
                                    float sx, float sy, float sz) {
    DECOMPOSE3
    float wx[4], wy[4], wz[4];
    cubic_weights(sx, wx);
    cubic_weights(sy, wy);
    cubic_weights(sz, wz);
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; ++k)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int l = 0; l < 4; ++l) {
                int xx = min(max(x + l - 1, 0), nx - 1), yy = min(max(y + j - 1, 0), ny - 1),
                    zz = min(max(z + k - 1, 0), nz - 1);
                sum += wx[l] * wy[j] * wz[k] * in[IDX(xx, yy, zz)];
            }
    out[i] = sum;
}

extern "C" __global__ void vecadd(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// 13-point wave-equation stencil (fourth-order in space).
extern "C" __global__ void wave13pt(const float* w0, const float* w1, float* w2, int nx, int ny,
                                    int nz, float c0, float c1, float c2) {
    DECOMPOSE3
    if (x < 2 || y < 2 || z < 2 || x >= nx - 2 || y >= ny - 2 || z >= nz - 2) {
        w2[i] = w1[i];
        return;
    }
    float lap = c0 * w1[i] +
                c1 * (w1[IDX(x - 1, y, z)] + w1[IDX(x + 1, y, z)] + w1[IDX(x, y - 1, z)] +
                      w1[IDX(x, y + 1, z)] + w1[IDX(x, y, z - 1)] + w1[IDX(x, y, z + 1)]) +
                c2 * (w1[IDX(x - 2, y, z)] + w1[IDX(x + 2, y, z)] + w1[IDX(x, y - 2, z)] +
                      w1[IDX(x, y + 2, z)] + w1[IDX(x, y, z - 2)] + w1[IDX(x, y, z + 2)]);
    w2[i] = 2.0f * w1[i] - w0[i] + lap;
}
