# A CuPy script launching a RawModule kernel from Python (written for this test after
# CuPy's documented RawModule use): the launches' grids and blocks as Python writes them.
import cupy as cp

code = r"""
extern "C" __global__ void scale(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
"""
module = cp.RawModule(code=code)
scale = module.get_function("scale")
THREADS = 100


def run(x, y, a):
    n = x.size
    blocks = (n + THREADS - 1) // THREADS
    scale((blocks,), (THREADS,), (x, y, cp.float32(a), cp.int32(n)))


def run_fixed(x, y):
    scale((264,), (256,), (x, y, cp.float32(1), cp.int32(x.size)))


def run_negated(x, y, n):
    scale((-(-n // 48),), (48,), (x, y, cp.float32(1), cp.int32(n)), shared_mem=0)


def run_given(x, y, n, block):
    scale(((n + block - 1) // block,), (block,), (x, y, cp.float32(1), cp.int32(n)))
