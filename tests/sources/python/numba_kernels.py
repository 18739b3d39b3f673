# Numba CUDA kernels launched with kernel[grid, block](args) (written for this test after
# Numba's documented examples): a kernel of one element per thread, a grid-stride loop,
# one reading only its thread index; their launches as Python writes them.
import numpy as np
from numba import cuda


@cuda.jit
def scale(x, out, a):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i]


@cuda.jit("void(float32[:], float32[:])")
def copy_all(x, out):
    start = cuda.grid(1)
    for i in range(start, x.shape[0], cuda.gridsize(1)):
        out[i] = x[i]


@cuda.jit
def lanes(out):
    out[cuda.threadIdx.x] = cuda.threadIdx.x


THREADS = 100
n = 1 << 20
x = cuda.to_device(np.ones(n, dtype=np.float32))
out = cuda.device_array_like(x)
blocks = (n + THREADS - 1) // THREADS
scale[blocks, THREADS](x, out, 2.0)
copy_all[40, 256](x, out)
lanes[1, 16](out)


def case_a(out):  # numba's own tests define a `kernel` in each test
    @cuda.jit
    def kernel(o):
        o[cuda.grid(1)] = 1

    kernel[4, 64](out)


def case_b(out):
    @cuda.jit
    def kernel(o):
        for i in range(cuda.grid(1), o.size, cuda.gridsize(1)):
            o[i] = 2

    kernel[4, 64](out)
