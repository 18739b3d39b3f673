"""Build AOTInductor packages of a small model, both layouts (issue 14), on the GPU machine.

    python3 benchmarks/traces/aoti_package.py OUTDIR

Writes OUTDIR/aoti_files.pt2 (kernels as .cubin files beside the wrapper) and
OUTDIR/aoti_embedded.pt2 (``aot_inductor.embed_kernel_binary=True``: the cubins embedded in the
wrapper .so). The model: Linear -> ReLU -> LayerNorm -> Linear -> softmax, batch 16.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch


class Small(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 128)
        self.norm = torch.nn.LayerNorm(128)
        self.fc2 = torch.nn.Linear(128, 32)

    def forward(self, x):
        return torch.softmax(self.fc2(self.norm(torch.relu(self.fc1(x)))), dim=-1)


def main(out: Path) -> None:
    torch.manual_seed(0)
    model = Small().cuda().eval()
    example = (torch.randn(16, 64, device="cuda"),)
    ep = torch.export.export(model, example)
    out.mkdir(parents=True, exist_ok=True)
    torch._inductor.aoti_compile_and_package(ep, package_path=str(out / "aoti_files.pt2"))
    torch._inductor.aoti_compile_and_package(
        ep, package_path=str(out / "aoti_embedded.pt2"),
        inductor_configs={"aot_inductor.embed_kernel_binary": True})
    for name in ("aoti_files.pt2", "aoti_embedded.pt2"):
        loaded = torch._inductor.aoti_load_package(str(out / name))
        got = loaded(*example)
        torch.testing.assert_close(got, model(*example), rtol=1e-3, atol=1e-4)
        print(name, (out / name).stat().st_size, "bytes, output checked", file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
