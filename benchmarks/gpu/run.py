"""Build the GPU suite with nvcc and validate every kernel on this machine's GPU.

    python benchmarks/gpu/run.py --out results.json [--arch sm_90] [--only NAME...]

Uses the suite's cubins in fixtures/nvidia/gpu-suite/<name>.<arch>.cubin, building any that
are missing (or all, with --rebuild) from kernels/*.cu with nvcc, with ptxas -v's report
next to each; the committed sm_90 cubins are the ones the results in docs/validation/ were
measured with, so a machine without nvcc can run the suite. Then runs ``occlint validate``
in-process for every suite entry and writes one JSON document holding all results, the
binaries' SHA-256, the GPU, the driver and the date. A failing kernel is recorded with its
error and the run goes on. Summarise with ``python benchmarks/gpu/summarize.py``.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # run from a checkout without installing

from benchmarks.gpu.suite import KERNELS  # noqa: E402

CUBINS = HERE.parent.parent / "fixtures" / "nvidia" / "gpu-suite"


def build(arch: str, sources: set[str], rebuild: bool = False) -> dict[str, Path]:
    out = {}
    CUBINS.mkdir(parents=True, exist_ok=True)
    nvcc = shutil.which("nvcc")
    for stem in sorted(sources):
        src = HERE / "kernels" / f"{stem}.cu"
        cubin = CUBINS / f"{stem}.{arch}.cubin"
        if rebuild or not cubin.exists():
            if nvcc is None:
                raise SystemExit(f"no nvcc and no prebuilt {cubin}")
            command = [nvcc, "-cubin", f"-arch={arch}", "-O3", str(src)]
            subprocess.run([*command, "-o", str(cubin)], check=True)
            # ptxas -v changes the cubin's bytes, so the report comes from a second,
            # otherwise identical compile; cuobjdump reads the committed binary itself
            with tempfile.TemporaryDirectory() as tmp:
                done = subprocess.run([*command, "-Xptxas", "-v", "-o", f"{tmp}/v.cubin"],
                                      check=True, capture_output=True, text=True)
            cubin.with_suffix(".ptxas.txt").write_text(done.stderr)
            cuobjdump = shutil.which("cuobjdump")
            if cuobjdump:
                usage = subprocess.run([cuobjdump, "--dump-resource-usage", str(cubin)],
                                       check=True, capture_output=True, text=True).stdout
                cubin.with_suffix(".cuobjdump.txt").write_text(usage)
        out[stem] = cubin
    return out


def environment() -> dict[str, str]:
    def first_line(cmd: list[str]) -> str:
        try:
            text = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
            return text.strip().splitlines()[-1] if text.strip() else ""
        except (OSError, subprocess.SubprocessError):
            return ""
    env = {"nvidia_smi": first_line(["nvidia-smi", "--query-gpu=name,driver_version,"
                                     "compute_cap,clocks.max.sm,clocks.max.mem,memory.total",
                                     "--format=csv,noheader"]),
           "nvcc": first_line(["nvcc", "--version"])}
    try:
        import cuda.bindings

        env["python_cuda"] = f"cuda-bindings {cuda.bindings.__version__}"
    except ImportError:
        pass
    return env


def gpu_arch() -> str:
    try:
        cc = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                            capture_output=True, text=True, check=True).stdout.split()[0]
        return "sm_" + cc.replace(".", "")
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "sm_90"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--arch", default=None)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--rebuild", action="store_true", help="rebuild every cubin with nvcc")
    args = parser.parse_args()

    from occlint import __version__
    from occlint.validate.harness import ValidateOptions, run
    from occlint.validate.spec import parse

    arch = args.arch or gpu_arch()
    suite = [k for k in KERNELS if args.only is None or k[0] in args.only or k[2] in args.only]
    cubins = build(arch, {k[1] for k in suite}, args.rebuild)
    doc = {"occlint": __version__, "date": datetime.date.today().isoformat(),
           "python": platform.python_version(), "arch": arch, "environment": environment(),
           "binaries": {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                        for p in cubins.values()},
           "results": []}
    started = time.monotonic()
    for name, stem, kernel, spec, mode, size in suite:
        t0 = time.monotonic()
        opts = ValidateOptions(binary=cubins[stem], kernel=kernel, args=parse(spec),
                               problem_size=size if mode == "elementwise" else None,
                               grid_stride=mode == "gridstride", repeats=args.repeats)
        try:
            result = run(opts)
            result["name"] = name
            doc["results"].append(result)
            rec, best = result["recommended"], result["best"]
            print(f"{name:<28} occupancy {'ok' if result['occupancy_agrees'] else 'MISMATCH'}"
                  f"  attrs {'ok' if result['attributes_agree'] else 'MISMATCH'}"
                  f"  best {best['block']}x{best['grid']} {best['ms']:.4f} ms"
                  f"  occlint {rec['block']}x{rec['grid']} {100 * rec['ratio']:.1f}%"
                  f"  ({time.monotonic() - t0:.1f} s)", flush=True)
            doc.setdefault("device", result["device"])
        except Exception as exc:  # record and go on with the next kernel
            doc["results"].append({"name": name, "kernel": kernel, "error": f"{exc}",
                                   "traceback": traceback.format_exc()})
            print(f"{name:<28} ERROR {exc}", flush=True)
        args.out.write_text(json.dumps(doc, indent=1) + "\n")
    doc["seconds"] = round(time.monotonic() - started, 1)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
