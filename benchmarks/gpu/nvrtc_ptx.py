"""The PTX NVRTC makes of CUDA sources, as the held-out sweep and the characterisation
compile them (CuPy's RawModule: NVRTC, ``--std=c++17``, the device's arch), so that what
the compiler did to their loops (unrolling: the loads a pass issues together) can be
read from it (issue 28, docs/validation.md).

    python3 benchmarks/gpu/nvrtc_ptx.py OUT_DIR SOURCE.cu ... [--characterize]

On the lent GPU machine: writes OUT_DIR/<name>.ptx.gz per source (``characterize`` for
benchmarks/gpu/characterize.py's kernels with --characterize).
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path


def ptx(source: str, name: str) -> str:
    import cupy as cp
    from cupy.cuda.compiler import _NVRTCProgram

    major, minor = cp.cuda.Device().compute_capability
    prog = _NVRTCProgram(source, name)
    text, _ = prog.compile(options=("--std=c++17", f"-arch=compute_{major}{minor}"))
    return text if isinstance(text, str) else text.decode()


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    todo = [(Path(a).parent.name or Path(a).stem, Path(a).read_text()) for a in argv[1:]
            if not a.startswith("--")]
    if "--characterize" in argv:
        sys.path.insert(0, str(Path(__file__).parent))
        import characterize

        todo.append(("characterize", characterize.SOURCE))
    for name, source in todo:
        path = out / f"{name}.ptx.gz"
        path.write_bytes(gzip.compress(ptx(source, f"{name}.cu").encode(), 9, mtime=0))
        print(path, path.stat().st_size)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
