# A PyTorch script compiling its kernel with load_inline (written for this test after
# gpu-mode/lectures lecture_001/load_inline.py): the kernel and the host code launching it
# live in a string; occlint reads them where they stand in this file.
import torch
from torch.utils.cpp_extension import load_inline

cuda_source = r'''
__global__ void scale_kernel(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i];  // "quotes" and 'apostrophes' in a comment
    }
}

torch::Tensor scale(torch::Tensor x, double a) {
    auto y = torch::empty_like(x);
    const int n = x.numel();
    const int threads = 100;
    scale_kernel<<<(n + threads - 1) / threads, threads>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), (float)a, n);
    return y;
}
'''

cpp_source = "torch::Tensor scale(torch::Tensor x, double a);"  # no kernel here

# a docstring-like note with a quote's escape: "it\'s" and \"this\" stay Python's
NOTE = "a kernel's launch is <<<grid, block>>> in CUDA"  # a marker outside CUDA code

module = load_inline(name="scale_ext", cpp_sources=cpp_source, cuda_sources=cuda_source,
                     functions=["scale"], with_cuda=True)
print(module.scale(torch.ones(1000, device="cuda"), 2.0).sum())
