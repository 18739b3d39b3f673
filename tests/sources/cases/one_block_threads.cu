// ROCm/rocm-examples 7dfb7d402794c33031be2847eaa06ee6732f07cb (MIT, Copyright (c) 2022-2023
// Advanced Micro Devices, Inc.): HIP-Basic/warp_shuffle/main.hip lines 32-54 (the kernel,
// indexed by threadIdx alone) and 74-118 (one block of width x width threads, width 4); the
// device query and the host's copies left out.
#include <hip/hip_runtime.h>

/// \brief Transposes the matrix \p in and stores the result in \p out using warp shuffle operations.
__global__ void matrix_transpose_kernel(float* out, const float* in, const unsigned int width)
{
    // Compute the row and column indexes of the matrix element that each thread is going
    // to process. Since in this example there is only one block, the indexes are
    // precisely the thread's ID in each dimension.
    const unsigned int x = threadIdx.x;
    const unsigned int y = threadIdx.y;

    // If not out of bounds, transpose element.
    if(x < width && y < width)
    {
        // Read element from global memory. Each thread in the warp is reading the element that
        // the thread with global id x * width + y will transpose.
        const float val = in[y * width + x];

        // Transpose element reading it from the correspondent thread with a shuffle operation (__shfl).
        // __shfl does not require all threads to be active, so it can be inside the if block.
        // Note that, since the matrix in this example has less elements than the warp size value,
        // the ID within the warp of each thread matches its global ID.
        out[x * width + y] = __shfl(val, y * width + x);
    }
}

void transpose(float* d_transposed_matrix, const float* d_matrix)
{
    // to be transposed.
    constexpr unsigned int width      = 4;
    constexpr unsigned int size       = width * width;
    constexpr unsigned int size_bytes = size * sizeof(float);
    const dim3 block_dim(width, width);
    const dim3 grid_dim(1);

    // Lauching kernel from host
    matrix_transpose_kernel<<<grid_dim, block_dim, 0, hipStreamDefault>>>(d_transposed_matrix,
                                                                          d_matrix,
                                                                          width);
}
