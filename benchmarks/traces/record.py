"""Record real profiler traces and Nsight Compute reports on the lent GPU machine.

    python3 benchmarks/traces/record.py kineto WORKLOAD OUT.json.gz   # a Kineto chrome trace
    python3 benchmarks/traces/record.py ncu WORKLOAD                  # run under ncu (below)
    bash benchmarks/traces/device_record.sh                            # everything, into $OUT

Workloads: ``resnet18_infer`` (torchvision ResNet-18 inference, batch 8, cuDNN),
``resnet18_train`` (one SGD training step of it), ``transformer_compiled`` (a torch.compile'd
pre-norm transformer block: Triton kernels for the norms, softmax and GELU, cuBLAS for the
matrix products), ``raw_odd`` (the CUDA C++ kernels of kernels/odd_launches.cu, built here by
nvcc into a cubin and launched through CuPy with odd configurations: block 100, grid 133, 48
KiB dynamic shared memory, 100 KiB opt-in, a 4-block grid, a partial last wave, a
32,768-element bitonic sort of 120 launches).

Each workload is warmed up first; the trace (or, under ``ncu --profile-from-start off``, the
profiled range) covers one iteration only, so the Kineto trace and the Nsight Compute report
hold the same launches. Nothing is printed on stdout in ``ncu`` mode (ncu's CSV goes there).
"""

from __future__ import annotations

import gzip
import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CUBIN = Path(os.environ.get("ODD_CUBIN", "/tmp/odd_launches.sm_90.cubin"))

MANGLED = {
    "gamma_gridstride": "_Z16gamma_gridstridePhmf",
    "vec_add": "_Z7vec_addPKfS0_Pfi",
    "smem_reduce": "_Z11smem_reducePKfPfi",
    "bitonic_step": "_Z12bitonic_stepPiiii",
    "reg_heavy": "_Z9reg_heavyPKfPfi",
}


def _resnet(train: bool):
    import torch
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).cuda()
    x = torch.randn(8, 3, 224, 224, device="cuda")
    if not train:
        model.eval()

        def run():
            with torch.no_grad():
                model(x)
        return run
    y = torch.randint(0, 1000, (8,), device="cuda")
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    return step


class _Block:
    """A pre-norm transformer block written out (nn.TransformerEncoderLayer's inference fast
    path is one native op that torch.compile leaves alone: no Triton kernels)."""

    @staticmethod
    def make(dim: int = 512, heads: int = 8):
        import torch

        class Block(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.heads = heads
                self.norm1 = torch.nn.LayerNorm(dim)
                self.qkv = torch.nn.Linear(dim, 3 * dim)
                self.proj = torch.nn.Linear(dim, dim)
                self.norm2 = torch.nn.LayerNorm(dim)
                self.fc1 = torch.nn.Linear(dim, 4 * dim)
                self.fc2 = torch.nn.Linear(4 * dim, dim)

            def forward(self, x):
                b, t, c = x.shape
                q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads,
                                                        c // self.heads).unbind(2)
                q, k, v = (y.transpose(1, 2) for y in (q, k, v))
                att = torch.softmax(q @ k.transpose(-2, -1) / (c // self.heads) ** 0.5, -1)
                x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, c))
                return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm2(x))))

        return Block()


def _transformer():
    import torch

    torch.manual_seed(0)
    block = _Block.make().cuda().eval()
    compiled = torch.compile(block)
    x = torch.randn(8, 128, 512, device="cuda")

    def run():
        with torch.no_grad():
            compiled(x)
    return run


def _raw_odd():
    import cupy as cp

    module = cp.RawModule(path=str(CUBIN))
    f = {name: module.get_function(mangled) for name, mangled in MANGLED.items()}
    f["smem_reduce"].max_dynamic_shared_size_bytes = 100 * 1024
    n_img = 64 << 20
    image = cp.random.randint(0, 256, n_img, dtype=cp.uint8)
    n = 1_000_000
    a = cp.random.rand(n, dtype=cp.float32)
    b = cp.random.rand(n, dtype=cp.float32)
    c = cp.empty_like(a)
    sorted_n = 32768
    keys = cp.random.randint(0, 1 << 30, sorted_n, dtype=cp.int32)
    partial = cp.empty(4096, dtype=cp.float32)

    def run():
        for _ in range(3):  # one launch group of three identical launches
            f["gamma_gridstride"]((133,), (100,), (image, cp.uint64(n_img), cp.float32(2.2)))
        f["gamma_gridstride"]((2800,), (256,), (image, cp.uint64(n_img), cp.float32(2.2)))
        f["vec_add"](((n + 255) // 256,), (256,), (a, b, c, cp.int32(n)))
        f["vec_add"](((n + 99) // 100,), (100,), (a, b, c, cp.int32(n)))
        f["smem_reduce"]((264,), (256,), (a, partial, cp.int32(n)), shared_mem=48 * 1024)
        f["smem_reduce"]((4,), (384,), (a, partial, cp.int32(n)), shared_mem=100 * 1024)
        f["reg_heavy"]((528,), (256,), (a, c, cp.int32(n)))
        k = 2
        while k <= sorted_n:  # 15 x 16 / 2 = 120 launches
            j = k // 2
            while j > 0:
                f["bitonic_step"]((sorted_n // 256,), (256,),
                                  (keys, cp.int32(j), cp.int32(k), cp.int32(sorted_n)))
                j //= 2
            k *= 2
    return run


def _mixed():
    """A run no fixture rule was written for: ViT-B/16 inference and an LSTM in bf16
    autocast, an SDPA training step, sort/topk/unique, and three of the user's own kernels
    (benchmarks/gpu/calibration/kernels.cu through CuPy) launched with defects."""
    import cupy as cp
    import torch
    import torchvision

    torch.manual_seed(0)
    vit = torchvision.models.vit_b_16().cuda().eval()
    lstm = torch.nn.LSTM(256, 512, num_layers=2, batch_first=True).cuda()
    images = torch.randn(8, 3, 224, 224, device="cuda")
    seq = torch.randn(16, 64, 256, device="cuda")
    q = torch.randn(4, 8, 512, 64, device="cuda", requires_grad=True)
    values = torch.randn(1 << 20, device="cuda")
    module = cp.RawModule(code=(HERE.parent / "gpu/calibration/kernels.cu").read_text())
    saxpy, saxpy_gs = module.get_function("saxpy"), module.get_function("saxpy_gs")
    fma = module.get_function("fma_chain")
    fma.max_dynamic_shared_size_bytes = 100 * 1024
    n = 1 << 24
    x, y = cp.random.rand(n, dtype=cp.float32), cp.random.rand(n, dtype=cp.float32)

    def run():
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            vit(images)
            lstm(seq)
        out = torch.nn.functional.scaled_dot_product_attention(q, q, q)
        out.sum().backward()
        torch.sort(values)
        torch.topk(values, 100)
        torch.unique(values.round())
        args = (x, y, cp.float32(0.5), cp.int64(n))
        saxpy(((n + 99) // 100,), (100,), args)  # a block off the warp multiple
        saxpy_gs((100,), (256,), args)  # a grid-stride loop on 100 of 132 SMs
        fma(((n + 255) // 256,), (256,), args, shared_mem=100 * 1024)  # 25 % occupancy
    return run


def _one_block():
    """Kernels that are one block by design (kernels/one_block.cu, built by nvcc into
    ONE_BLOCK_CUBIN): llm.c's single-block sum launched <<<1, 100>>> and <<<1, 1024>>>,
    SGEMM_CUDA's 4 x 4 fill <<<1, (4, 4)>>>."""
    import cupy as cp

    module = cp.RawModule(path=os.environ.get("ONE_BLOCK_CUBIN", "/tmp/one_block.sm_90.cubin"))
    total, fill = module.get_function("sum_one_block"), module.get_function("fill4x4")
    n = 1 << 20
    x = cp.random.rand(n, dtype=cp.float32)
    out, a = cp.empty(1, dtype=cp.float32), cp.empty(16, dtype=cp.float32)

    def run():
        total((1,), (100,), (x, out, cp.int32(n)))
        total((1,), (1024,), (x, out, cp.int32(n)))
        fill((1,), (4, 4), (a,))
    return run


WORKLOADS = {
    "mixed": _mixed,
    "one_block": _one_block,
    "resnet18_infer": lambda: _resnet(False),
    "resnet18_train": lambda: _resnet(True),
    "transformer_compiled": _transformer,
    "raw_odd": _raw_odd,
}


def _sync():
    import torch

    torch.cuda.synchronize()
    try:
        import cupy

        cupy.cuda.runtime.deviceSynchronize()
    except ImportError:
        pass


def main(argv: list[str]) -> int:
    mode, name = argv[0], argv[1]
    run = WORKLOADS[name]()
    for _ in range(3):
        run()
    _sync()
    if mode == "kineto":
        import torch
        from torch.profiler import ProfilerActivity, profile

        out = Path(argv[2])
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            run()
            _sync()
        plain = out.with_suffix("")  # .json
        prof.export_chrome_trace(str(plain))
        with open(plain, "rb") as src, gzip.open(out, "wb", compresslevel=9) as dst:
            shutil.copyfileobj(src, dst)
        plain.unlink()
        print(f"{name}: {out} ({out.stat().st_size} bytes)", file=sys.stderr)
        del torch
    elif mode == "ncu":
        import torch

        torch.cuda.profiler.start()
        run()
        _sync()
        torch.cuda.profiler.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
