"""Make a real Triton cache (cubins + metadata JSON) for occlint's sidecar reader tests.

    TRITON_CACHE_DIR is set to OUT_DIR/cache; the result is archived as OUT_DIR/triton-cache.tgz
    python benchmarks/gpu/triton_cache.py OUT_DIR
"""

from __future__ import annotations

import os
import sys
import tarfile
from pathlib import Path


def main() -> None:
    target = Path(sys.argv[1])
    cache = target / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    os.environ["TRITON_CACHE_DIR"] = str(cache)
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x + y, mask=mask)

    @triton.jit
    def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(in_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)

    n = 1 << 20
    x, y = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024, num_warps=4)
    m = torch.rand(1024, 4096, device="cuda")
    res = torch.empty_like(m)
    softmax_kernel[(1024,)](res, m, m.stride(0), 4096, BLOCK=4096, num_warps=16)
    torch.cuda.synchronize()
    assert torch.allclose(out, x + y)
    with tarfile.open(target / "triton-cache.tgz", "w:gz") as tar:
        tar.add(cache, arcname="triton-cache")
    print("triton", triton.__version__, "cache files:",
          sorted(p.name for p in cache.rglob("*") if p.is_file()))


if __name__ == "__main__":
    main()
