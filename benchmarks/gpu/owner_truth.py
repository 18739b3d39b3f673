"""Which installed library holds each kernel of a trace: an owner truth independent of
occlint's index (issue 29's "owners right for 99 % of kernel time").

    python3 benchmarks/gpu/owner_truth.py TRACE OUT.json   # with the Python that recorded it

A kernel compiled into a library is registered with the CUDA runtime by its (mangled)
name, a string in that library's file (``__cudaRegisterFunction``; a library that loads
its own cubins keeps their ELF symbol tables, uncompressed or not). For each kernel name
of the trace this script searches every shared library of the installed PyTorch and
NVIDIA wheels for the name: extern "C" names as they are, C++ names by demangling every
``_Z`` string of the library (binutils' ``c++filt``, which spells names as the
profiler's ``abi::__cxa_demangle`` does) and comparing. OUT.json: per kernel, the
libraries (file names) that hold it and its traced time; a kernel found in none is
compiled at run time (CuPy, Triton, NVRTC) or its name is stored compressed.
"""

from __future__ import annotations

import gzip
import json
import mmap
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

MANGLED = re.compile(rb"_Z[0-9A-Za-z_$.]{6,4000}")


def libraries() -> list[Path]:
    """The shared libraries of the PyTorch installation that recorded the trace (run this
    with its interpreter) and of the NVIDIA wheels beside it."""
    try:
        import torch

        site = Path(torch.__file__).parent.parent
    except ImportError:
        site = Path(sysconfig.get_paths()["purelib"])
    found = sorted(site.glob("torch/lib/*.so*")) + sorted(site.glob("nvidia/**/lib/*.so*"))
    return [p for p in found if p.is_file() and p.stat().st_size > 1 << 20]


def demangled(names: list[bytes]) -> list[str]:
    # binutils' demangler writes names as the profiler's (abi::__cxa_demangle) do
    tool = shutil.which("c++filt") or shutil.which("cu++filt")
    if tool is None or not names:
        return [n.decode() for n in names]
    out = subprocess.run([tool], input=b"\n".join(names), capture_output=True, check=True)
    return out.stdout.decode(errors="replace").splitlines()


def main(argv: list[str]) -> int:
    trace, out = Path(argv[0]), Path(argv[1])
    opener = gzip.open if trace.suffix == ".gz" else open
    with opener(trace, "rt") as fh:
        events = json.load(fh)["traceEvents"]
    time: dict[str, float] = {}
    for e in events:
        if e.get("cat") == "kernel":
            time[e["name"]] = time.get(e["name"], 0.0) + e.get("dur", 0.0)
    plain = {n for n in time if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n)}
    holders: dict[str, list[str]] = {n: [] for n in time}
    for lib in libraries():
        with open(lib, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            for n in plain:
                if data.find(b"\0" + n.encode() + b"\0") >= 0:
                    holders[n].append(lib.name)
            mangled = sorted({m.group() for m in MANGLED.finditer(data)})
        names = set()
        for i in range(0, len(mangled), 20000):
            names.update(demangled(mangled[i:i + 20000]))
        for n in time:
            if n not in plain and n in names:
                holders[n].append(lib.name)
        print(lib.name, len(mangled), "mangled names", flush=True)
    out.write_text(json.dumps({"trace": trace.name, "kernels": {
        n: {"libraries": sorted(set(holders[n])), "time_us": round(time[n], 3)}
        for n in sorted(time)}}, indent=1))
    held = sum(t for n, t in time.items() if holders[n])
    print(f"{held / sum(time.values()):.4f} of kernel time found in a library")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
