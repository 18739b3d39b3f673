# A cuda-python script: the kernel compiled from its string with NVRTC, launched with the
# driver API (written for this test after cuda-python's saxpy example).
from cuda import cuda

saxpy = """
extern "C" __global__ void saxpy(float a, float* x, float* y, float* out, size_t n) {
    size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n) out[tid] = a * x[tid] + y[tid];
}
"""

NUM_THREADS = 100
NUM_BLOCKS = 32768


def run(module, stream, args):
    err, kernel = cuda.cuModuleGetFunction(module, b"saxpy")
    (err,) = cuda.cuLaunchKernel(kernel, NUM_BLOCKS, 1, 1, NUM_THREADS, 1, 1, 0, stream,
                                 args.ctypes.data, 0)
    return err
