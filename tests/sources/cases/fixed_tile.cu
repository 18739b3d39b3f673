// A 2-D tile in shared memory whose block is its tile: another block size would compute
// something else. Seen in the wild: CoffeeBeforeArch/cuda_programming
// 02_matrix_mul/tiled/mmul.cu (told "a block of 896 threads gives 1171 blocks").
#define SHMEM_SIZE 1024

__global__ void matrixMul(const int *a, const int *b, int *c, int N) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    __shared__ int s_a[SHMEM_SIZE];
    __shared__ int s_b[SHMEM_SIZE];
    int tmp = 0;
    for (int i = 0; i < N; i += blockDim.x) {
        s_a[threadIdx.y * blockDim.x + threadIdx.x] = a[row * N + i + threadIdx.x];
        s_b[threadIdx.y * blockDim.x + threadIdx.x] = b[i * N + threadIdx.y * N + col];
        __syncthreads();
        for (int j = 0; j < blockDim.x; j++)
            tmp += s_a[threadIdx.y * blockDim.x + j] * s_b[j * blockDim.x + threadIdx.x];
        __syncthreads();
    }
    c[row * N + col] = tmp;
}

int main() {
    int *a, *b, *c;
    int N = 1 << 10;
    int THREADS = 32;
    int BLOCKS = N / THREADS;
    dim3 threads(THREADS, THREADS);
    dim3 blocks(BLOCKS, BLOCKS);
    matrixMul<<<blocks, threads>>>(a, b, c, N);
}
