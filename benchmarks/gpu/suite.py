"""The GPU validation suite: kernels, their arguments and launch modes.

Each entry: (name, source file, kernel, argument spec, mode, problem size). ``mode`` is
"elementwise" (one element per thread, grid = ceil(N / block)) or "gridstride".
"""

from __future__ import annotations

N3 = 256 * 256 * 256  # 3D stencils: 256^3 floats (64 MiB per array)
N2 = 4096 * 4096  # 2D stencils
IMAGE = 16384 * 16384 * 3  # the gamma-correction image: 16,384 x 16,384 RGB, uint8
F = f"f32[{N3}]"


def _dims3() -> str:
    return "i32:256, i32:256, i32:256"


KERNELS: list[tuple[str, str, str, str, str, int]] = [
    ("gamma grid-stride", "gamma", "gamma_gridstride",
     f"u8[{IMAGE}]:random, u64:{IMAGE}, f32:2.2", "gridstride", IMAGE),
    ("gamma per element", "gamma", "gamma_per_element",
     f"u8[{IMAGE}]:random, u64:{IMAGE}, f32:2.2", "elementwise", IMAGE),
    ("mandelbrot 512x512", "mandelbrot", "mandelbrot",
     "u8[262144]:out, i32:512, i32:512, i32:256", "elementwise", 262144),
    ("divergence", "stencils", "divergence",
     f"{F}:random, {F}:random, {F}:random, {F}:out, {_dims3()}", "elementwise", N3),
    ("gameoflife", "stencils", "gameoflife",
     f"u8[{N2}]:random, u8[{N2}]:out, i32:4096, i32:4096", "elementwise", N2),
    ("gaussblur", "stencils", "gaussblur",
     f"f32[{N2}]:random, f32[{N2}]:out, i32:4096, i32:4096", "elementwise", N2),
    ("gradient", "stencils", "gradient",
     f"{F}:random, {F}:out, {F}:out, {F}:out, {_dims3()}", "elementwise", N3),
    ("jacobi", "stencils", "jacobi", f"{F}:random, {F}:out, {_dims3()}", "elementwise", N3),
    ("lapgsrb", "stencils", "lapgsrb",
     f"{F}:random, {F}:out, {F}:random, {F}:random, {F}:random, {F}:random, {F}:1.5, "
     f"{_dims3()}, i32:0", "elementwise", N3),
    ("laplacian", "stencils", "laplacian", f"{F}:random, {F}:out, {_dims3()}", "elementwise",
     N3),
    ("sincos", "stencils", "sincos_kernel", f"{F}:random, {F}:random, {F}:out, i32:{N3}",
     "elementwise", N3),
    ("tricubic", "stencils", "tricubic",
     f"{F}:random, {F}:out, {_dims3()}, f32:0.3, f32:0.5, f32:0.7", "elementwise", N3),
    ("vecadd", "stencils", "vecadd", f"{F}:random, {F}:random, {F}:out, i32:{N3}",
     "elementwise", N3),
    ("wave13pt", "stencils", "wave13pt",
     f"{F}:random, {F}:random, {F}:out, {_dims3()}, f32:-2.5, f32:1.333, f32:-0.0833",
     "elementwise", N3),
    ("bitonic step (32,768 ints)", "bitonic", "bitonic_step",
     "i32[32768]:random, i32:1024, i32:4096, i32:32768", "elementwise", 32768),
    ("register-heavy", "heavy", "register_heavy",
     "f32[4194304]:random, f32[4194304]:out, i32:4194304", "elementwise", 4194304),
    ("shared-memory-heavy", "heavy", "shared_heavy",
     f"{F}:random, {F}:out, i32:{N3}", "elementwise", N3),
]
