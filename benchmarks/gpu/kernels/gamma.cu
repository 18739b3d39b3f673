// Gamma correction of a uint8 image (the ROCm "fixed-size kernels" document, in CUDA).
#include <cstdint>
#include <cstddef>

// Grid-stride loop: any grid size covers the image.
extern "C" __global__ void gamma_gridstride(uint8_t* d, size_t n, float gamma) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float v = d[i] / 255.0f;
        v = powf(v, gamma);
        d[i] = (uint8_t)(v * 255.0f);
    }
}

// One thread per element: grid = ceil(n / block).
extern "C" __global__ void gamma_per_element(uint8_t* d, size_t n, float gamma) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) {
        float v = d[i] / 255.0f;
        v = powf(v, gamma);
        d[i] = (uint8_t)(v * 255.0f);
    }
}
