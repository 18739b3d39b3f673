"""The PTX NVRTC makes of CUDA sources, as the held-out sweep and the characterisation
compile them (CuPy's RawModule: NVRTC, ``--std=c++17``, the device's arch), so that what
the compiler did to their loops (unrolling: the loads a pass issues together) can be
read from it (issue 28, docs/validation.md).

    python3 benchmarks/gpu/nvrtc_ptx.py OUT_DIR SOURCE.cu ... [--characterize]

On the lent GPU machine: writes OUT_DIR/<name>.ptx.gz per source (``characterize`` for
benchmarks/gpu/characterize.py's kernels with --characterize). :func:`ptx_by_library`
makes the same without CuPy or a GPU, from the pip wheel's libnvrtc
(fixtures/make_unroll_loops.py).
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

# the options CuPy's RawModule gives NVRTC here (and the arch, the device's)
OPTIONS = ("--std=c++17",)


def ptx(source: str, name: str) -> str:
    import cupy as cp
    from cupy.cuda.compiler import _NVRTCProgram

    major, minor = cp.cuda.Device().compute_capability
    prog = _NVRTCProgram(source, name)
    text, _ = prog.compile(options=(*OPTIONS, f"-arch=compute_{major}{minor}"))
    return text if isinstance(text, str) else text.decode()


def library() -> str:
    """libnvrtc of the pip wheel ``nvidia-cuda-nvrtc``: NVRTC without CuPy or a GPU."""
    import importlib.util

    spec = importlib.util.find_spec("nvidia")
    for root in spec.submodule_search_locations if spec else ():
        for lib in sorted(Path(root).glob("cu*/lib/libnvrtc.so.*")):
            return str(lib)
    raise SystemExit("libnvrtc not found: pip install nvidia-cuda-nvrtc, or pass its path")


def ptx_by_library(source: str, name: str, path: str, arch: str = "compute_90") -> str:
    """What :func:`ptx` makes, from libnvrtc at ``path`` itself (ctypes), for ``arch``."""
    return _compiled(source, name, path, arch, "PTX").decode()


def cubin_by_library(source: str, name: str, path: str, arch: str = "sm_90") -> bytes:
    """The cubin libnvrtc at ``path`` makes of ``source`` for ``arch`` (a real SASS target)."""
    return _compiled(source, name, path, arch, "CUBIN")


def _compiled(source: str, name: str, path: str, arch: str, what: str) -> bytes:
    """NVRTC's ``what`` (PTX or CUBIN) of ``source``, through libnvrtc itself (ctypes)."""
    import ctypes

    lib = ctypes.CDLL(path)
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0, None,
                              None):
        raise SystemExit("nvrtcCreateProgram failed")
    opts = [o.encode() for o in (*OPTIONS, f"-arch={arch}")]
    if lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts)):
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        raise SystemExit(log.value.decode())
    size = ctypes.c_size_t()
    getattr(lib, f"nvrtcGet{what}Size")(prog, ctypes.byref(size))
    buf = ctypes.create_string_buffer(size.value)
    getattr(lib, f"nvrtcGet{what}")(prog, buf)
    return buf.value if what == "PTX" else buf.raw


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
