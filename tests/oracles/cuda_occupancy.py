"""Build and drive tests/oracles/cuda_occupancy_driver.cpp (NVIDIA's cuda_occupancy.h)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

DRIVER_SRC = Path(__file__).with_name("cuda_occupancy_driver.cpp")


def find_cuda_include() -> Path | None:
    """The CUDA toolkit's include folder holding cuda_occupancy.h, if any."""
    candidates = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(str(Path(nvcc).resolve().parent.parent))
    candidates += ["/usr/local/cuda", "/opt/cuda"]
    for root in candidates:
        if root and (Path(root) / "include" / "cuda_occupancy.h").is_file():
            return Path(root) / "include"
    return None


def build_driver(out_dir: Path) -> Path:
    """Compile the driver with g++ (or c++); raises RuntimeError with the reason."""
    include = find_cuda_include()
    if include is None:
        raise RuntimeError("cuda_occupancy.h not found (no CUDA toolkit: set CUDA_HOME)")
    cxx = shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
    if cxx is None:
        raise RuntimeError("no C++ compiler (g++) to build the cuda_occupancy.h driver")
    exe = out_dir / "cuda_occupancy_driver"
    subprocess.run([cxx, "-O2", "-std=c++17", f"-I{include}", str(DRIVER_SRC), "-o", str(exe)],
                   check=True, capture_output=True)
    return exe


def run_driver(exe: Path, cases: list[list[int]]) -> list[list[int]]:
    text = "\n".join(" ".join(str(v) for v in case) for case in cases) + "\n"
    out = subprocess.run([str(exe)], input=text, capture_output=True, text=True, check=True)
    return [[int(x) for x in line.split()] for line in out.stdout.splitlines()]
