# A CuPy script whose kernel is a RawKernel string, launched from Python (written for this
# test after cupyx.scipy.signal's kernels): read for its kernel's facts when named, or when
# a trace or binary of the run launches it; a directory's scripts are read for launches.
import cupy as cp

DTYPE = "float"
_code = f"""
extern "C" __global__ void saxpy_raw(const {DTYPE}* x, {DTYPE}* y, {DTYPE} a, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}}
"""

saxpy = cp.RawKernel(_code, "saxpy_raw")
