"""Check occlint's static numbers against the CUDA driver for every kernel of many cubins.

    python benchmarks/gpu/static_check.py --out static.json CUBIN_OR_DIR...

For each kernel of each cubin this GPU can load, runs ``occlint validate --static-only``
in-process: blocks per SM at every block size (cuOccupancyMaxActiveBlocksPerMultiprocessor),
registers / static shared / local memory / largest block (cuFuncGetAttribute), and the
device limits (cuDeviceGetAttribute). Nothing is launched. Cubins for other architectures
are skipped. The output is one JSON document; tests/test_gpu_recorded.py re-checks it.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("paths", nargs="+", type=Path)
    args = parser.parse_args()

    from occlint import __version__
    from occlint.readers.loader import ReadOptions, read_path
    from occlint.validate.cuda import CudaBackend
    from occlint.validate.harness import ValidateOptions, run

    backend = CudaBackend()
    arch = backend.device().arch
    files = sorted({f for p in args.paths for f in ([p] if p.is_file() else p.rglob("*.cubin"))})
    doc = {"occlint": __version__, "date": datetime.date.today().isoformat(), "arch": arch,
           "binaries": {}, "results": []}
    for path in files:
        kernels = [k for k in read_path(path, str(path), ReadOptions()).kernels
                   if k.arch in (arch, arch + "a")]
        if not kernels:
            continue
        rel = str(path.resolve().relative_to(ROOT)) if path.resolve().is_relative_to(ROOT) \
            else str(path)
        doc["binaries"][rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        for kernel in kernels:
            hint = kernel.launch_hint or {}
            opts = ValidateOptions(binary=path, kernel=kernel.name, args=[], static_only=True,
                                   dynamic_shared=hint.get("dynamic_lds", 0))
            try:
                result = run(opts, backend=backend)
                result["binary"] = rel
                doc["results"].append(result)
                ok = result["occupancy_agrees"] and result["attributes_agree"]
                print(f"{'ok ' if ok else 'BAD'} {rel} {kernel.demangled}", flush=True)
            except Exception as exc:  # record and go on
                doc["results"].append({"binary": rel, "kernel": kernel.name,
                                       "error": f"{type(exc).__name__}: {exc}",
                                       "traceback": traceback.format_exc()})
                print(f"ERR {rel} {kernel.demangled}: {exc}", flush=True)
    args.out.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    bad = [r for r in doc["results"] if "error" in r or not (r["occupancy_agrees"]
                                                              and r["attributes_agree"])]
    print(f"{len(doc['results'])} kernels, {len(bad)} disagree or failed")


if __name__ == "__main__":
    main()
