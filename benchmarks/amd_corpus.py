"""Issue 21's eight-package AMD corpus: kernels per second into JSON, counted independently.

    python benchmarks/amd_corpus.py [--cache DIR] [--runs 3] [--jobs auto,1] [--only NAME,...]
                                    [--checkout DIR] [--keep DIR] [--json FILE]

The issue measured "eight real AMD packages (137,281 kernels)" without naming them; that
list is lost. ``PACKAGES`` is our own choice (docs/performance.md, "Issue 21's AMD corpus"):
eight real packages that hold AMD GPU code, pinned by version and SHA-256 (Debian's
Packages index, PyPI), downloaded into the cache (default ~/.cache/occlint-bench) and
never committed: host libraries with fat binaries (with and without ``-g``, its debug
sections plain and compressed), rocBLAS's loose code objects and a wheel.

Each run is one CLI command over all of them, as users run it: ``python -m occlint INPUT...
--device mi300x --format json -o FILE --exit-zero --isolated -j J`` in a new process, the
measured checkout first on PYTHONPATH and as the working directory (``--checkout`` measures
another one, e.g. a ``git archive`` of main, for before/after comparisons). Printed per
``-j``: kernels, wall s, CPU s (``os.wait4``: the process and its workers), kernels per
wall second and per CPU second, peak RSS (largest process, and all together), medians of
``--runs``; the one-minute load average before and after. ``--keep DIR`` keeps each
``-j``'s JSON report (to compare checkouts byte for byte).

Kernels are counted independently of occlint: ``llvm-readelf --notes`` prints every
``NT_AMDGPU_METADATA`` note, and each ``.symbol: NAME.kd`` line in them is a kernel; its
``amdhsa.target`` gives the code object's processor. Loose code objects are given to it as
they are; the code objects of a host library's ``.hip_fatbin`` (all back-to-back offload
bundles) are cut out first with pyelftools and the bundle walk of ``benchmarks/scale.py``;
a wheel's libraries are unzipped first. With ``--device mi300x`` occlint reads, of a fat
binary that holds gfx942 code objects, only those (the cupy-rocm wheel: 2,256 of its 20,304
kernels); the expected count follows that rule. The counts are cached in the cache folder
by package hash (``--recount`` counts again). The run fails when occlint's kernel count of
a package differs from the expected one.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import statistics
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import regress, scale, traces_scale
from benchmarks.regress import Pinned

DEBIAN = regress.DEBIAN
LIB = "usr/lib/x86_64-linux-gnu"
DEVICE = "mi300x"
DEVICE_ARCH = "gfx942"  # its processor (device_db)
ELF_MAGIC = b"\x7fELF"
EM_AMDGPU = 224


@dataclass(frozen=True)
class Package:
    name: str
    what: str
    pin: Pinned
    members: tuple[str, ...] = ()  # paths in the unpacked .deb that occlint reads; () = the file


def _deb(suite_path: str, sha256: str) -> Pinned:
    return Pinned(suite_path.rsplit("/", 1)[1], sha256, f"{DEBIAN}/{suite_path}")


PACKAGES = [
    Package("rocsparse-5.3", "Debian 12 librocsparse0 5.3.0+dfsg-2 (host library, -g)",
            regress.PINNED["rocsparse"], (f"{LIB}/librocsparse.so.0.1",)),
    Package("rocrand-5.3", "Debian 12 librocrand1 5.3.3-4 (host library)",
            _deb("r/rocrand/librocrand1_5.3.3-4_amd64.deb",
                 "b145d4e47a26ce14da5f8550a092db8d3c7e2d84174c68885336de40f51b7b81"),
            (f"{LIB}/librocrand.so.1.1",)),
    Package("cupy-rocm", "cupy-rocm-7-0 14.2.0, cp311 manylinux2014 wheel",
            regress.PINNED["cupy-rocm"]),
    Package("rocrand-5.7", "Debian 13 librocrand1 5.7.1-6 (host library, -g, compressed "
            "debug sections)",
            regress.PINNED["rocrand-5.7"], (f"{LIB}/librocrand.so.1.1",)),
    Package("rccl", "Debian 13 librccl1 5.4.3-3+b1 (host library, 279 MiB of code objects)",
            _deb("r/rccl/librccl1_5.4.3-3+b1_amd64.deb",
                 "735e8e0a69f88489bdbd0a8b69bc75a376da92f1129b9ed80a38c99726bfe3a7"),
            (f"{LIB}/librccl.so.1.0",)),
    Package("rocblas", "Debian 13 librocblas0 5.5.1+dfsg-7 (host library, -g, and 20 loose "
            "code objects: Tensile .co, .hsaco)",
            _deb("r/rocblas/librocblas0_5.5.1+dfsg-7_amd64.deb",
                 "951dfa1a46ee275dace455f396640cfc63a47927455a0903b73c4e50030574c1"),
            (f"{LIB}/librocblas.so.0.1", f"{LIB}/rocblas")),
    Package("spfft", "Debian 13 libspfft1 1.1.1-3 (host library)",
            _deb("s/spfft/libspfft1_1.1.1-3_amd64.deb",
                 "f02a52b27bfd662c082109b1c8e4edc6358d9200926946ae3aff93dc7898440f"),
            (f"{LIB}/libspfft.so.1.1.1",)),
    Package("rocsparse-5.7", "Debian 13 librocsparse0 5.7.1-6 (host library, -g, compressed "
            "debug sections)",
            _deb("r/rocsparse/librocsparse0_5.7.1-6_amd64.deb",
                 "867705d9ddfcf38a435c75649a2d7f95dc9defced88f508dabb4770304ebdc61"),
            (f"{LIB}/librocsparse.so.0.1",)),
]
PINS = {p.name: p.pin for p in PACKAGES}


def inputs(cache: Path, package: Package) -> list[Path]:
    """What occlint reads of ``package``: the wheel, or the named files of the .deb."""
    if not package.members:
        return [regress.fetch(cache, package.name, PINS)]
    root = regress.unpacked(cache, package.name, f"corpus/{package.name}", regress.unpack_deb,
                            PINS)
    return [root / member for member in package.members]


# -- the independent count ----------------------------------------------------------------------
def _files(paths: list[Path]) -> list[Path]:
    out = []
    for path in paths:
        found = sorted(path.rglob("*")) if path.is_dir() else [path]
        out.extend(p for p in found if p.is_file() and not p.is_symlink())
    return out


def code_objects(paths: list[Path], scratch: Path) -> list[tuple[str, Path]]:
    """(container, code object) for every AMD code object of ``paths``, each as a file of
    its own: loose ones as they are (their own container), those of host libraries (of
    wheels too) cut out of their ``.hip_fatbin``."""
    out: list[tuple[str, Path]] = []
    for n, path in enumerate(_files(paths)):
        if path.suffix == ".whl":
            unzipped = scratch / f"{n}-whl"
            with zipfile.ZipFile(path) as archive:
                for member in archive.namelist():
                    if member.endswith(".so") or ".so." in member:
                        archive.extract(member, unzipped)
            out.extend(code_objects([unzipped], scratch / f"{n}-co"))
            continue
        with path.open("rb") as fh:
            head = fh.read(20)
        if not head.startswith(ELF_MAGIC):
            continue
        if int.from_bytes(head[18:20], "little") == EM_AMDGPU:
            out.append((str(path), path))
        else:
            out.extend((str(path), co) for co in
                       scale.extract_code_objects(path, scratch / f"{n}-co"))
    return out


KD_LINE = re.compile(r"^\s+\.symbol:\s+\S+\.kd\s*$", re.M)
TARGET_LINE = re.compile(r"^amdhsa\.target:\s+\S*--(gfx\w+)", re.M)


def readelf_kernels(tool: str, code_object: Path) -> tuple[str, int]:
    """(processor of ``amdhsa.target``, kernel descriptors) by ``llvm-readelf --notes``."""
    text = subprocess.run([tool, "--notes", str(code_object)], capture_output=True, text=True,
                          errors="replace", check=True).stdout
    target = TARGET_LINE.search(text)
    return (target[1] if target else ""), len(KD_LINE.findall(text))


def readelf_counts(package: Package, paths: list[Path], cache: Path, recount: bool
                   ) -> list[list]:
    """[container, processor, kernels] of each code object of the package, by llvm-readelf;
    cached by the package's SHA-256."""
    store = cache / "corpus" / "readelf-kernels.json"
    counts = json.loads(store.read_text()) if store.exists() else {}
    if package.pin.sha256 not in counts or recount:
        tool = scale.llvm_readelf()
        if tool is None:
            raise SystemExit("llvm-readelf not found: the kernel counts cannot be checked")
        found = code_objects(paths, cache / "corpus" / f"{package.name}-readelf")
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            read = list(pool.map(lambda item: readelf_kernels(tool, item[1]), found))
        counts[package.pin.sha256] = [[container, *got]
                                      for (container, _), got in zip(found, read, strict=True)]
        store.write_text(json.dumps(counts, indent=1))
    return counts[package.pin.sha256]


def expected_kernels(counts: list[list], arch: str) -> int:
    """The kernels occlint reads for a device of ``arch``: of a container (a library's fat
    binary) that holds code objects for ``arch``, only those (as the loader picks them:
    occlint's ReadOptions.prefer); of the others, all (reported as not runnable there)."""
    by_container: dict[str, list[tuple[str, int]]] = {}
    for container, processor, kernels in counts:
        by_container.setdefault(container, []).append((processor, kernels))
    total = 0
    for objects in by_container.values():
        matching = [k for processor, k in objects if processor == arch]
        total += sum(matching) if matching else sum(k for _, k in objects)
    return total


# -- measuring ----------------------------------------------------------------------------------
def occlint_cmd(paths: list[Path], out: Path, jobs: str) -> list[str]:
    return [*scale.OCCLINT, *map(str, paths), "--device", DEVICE, "--format", "json", "-o",
            str(out), "--exit-zero", "--isolated", "-j", jobs]


def checkout_env(checkout: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(checkout), env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep)
    return env


def per_package(doc: dict, packages: dict[str, list[Path]]) -> dict[str, int]:
    """occlint's kernels by package (by the input each kernel's file lies in)."""
    roots = [(str(path), name) for name, paths in packages.items() for path in paths]
    out = dict.fromkeys(packages, 0)
    for kernel in doc["kernels"]:
        file = kernel["file"]
        name = next(n for root, n in roots if file == root or file.startswith(
            (root + os.sep, root + "!")))  # a member of a wheel: ARCHIVE!/MEMBER
        out[name] += 1
    return out


def measure_mode(paths: list[Path], jobs: str, runs: int, checkout: Path, out: Path
                 ) -> tuple[list[scale.Sample], dict]:
    samples = []
    for _ in range(runs):
        samples.append(scale.measure(occlint_cmd(paths, out, jobs), checkout_env(checkout),
                                     cwd=checkout))
    return samples, json.loads(out.read_text(encoding="utf-8"))


def summary(samples: list[scale.Sample], kernels: int) -> dict:
    wall = statistics.median(s.wall for s in samples)
    cpu = statistics.median(s.cpu for s in samples)
    return {"kernels": kernels, "wall": wall, "cpu": cpu, "walls": [s.wall for s in samples],
            "cpus": [s.cpu for s in samples], "per_wall_s": kernels / wall,
            "per_cpu_s": kernels / cpu, "rss_mb": max(s.rss_mb for s in samples),
            "tree_mb": max(s.tree_mb for s in samples),
            "other_cpu": statistics.median(s.other_cpu for s in samples)}


def load() -> float:
    return os.getloadavg()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache/occlint-bench")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", default="auto,1", help="comma-separated -j values")
    parser.add_argument("--only", default="", help="comma-separated package names")
    parser.add_argument("--checkout", type=Path, default=scale.REPO,
                        help="the occlint checkout to measure (default: this one)")
    parser.add_argument("--keep", type=Path, help="keep each -j's JSON report in this folder")
    parser.add_argument("--json", type=Path, help="write the results to this file")
    parser.add_argument("--recount", action="store_true", help="count with llvm-readelf again")
    parser.add_argument("--count-only", action="store_true",
                        help="download, unpack and count; measure nothing")
    args = parser.parse_args()
    scale.WAIT_FOR_IDLE = False  # a shared machine is rarely idle: the load is recorded instead
    wanted = {n for n in args.only.split(",") if n}
    chosen = [p for p in PACKAGES if not wanted or p.name in wanted]
    packages = {p.name: inputs(args.cache, p) for p in chosen}
    counts = {p.name: readelf_counts(p, packages[p.name], args.cache, args.recount)
              for p in chosen}
    every = {name: sum(c[2] for c in found) for name, found in counts.items()}
    expected = {name: expected_kernels(found, DEVICE_ARCH) for name, found in counts.items()}
    paths = [path for name in packages for path in packages[name]]
    for path in _files(paths):  # the page cache is warm for every measured run
        traces_scale.warm(path)
    print(f"{len(chosen)} packages, {sum(every.values()):,} kernels (llvm-readelf), "
          f"{sum(expected.values()):,} of them read for {DEVICE} ({DEVICE_ARCH}): "
          + ", ".join(f"{n} {every[n]:,} ({expected[n]:,})" for n in expected), flush=True)
    if args.count_only:
        return
    results: dict = {"packages": {p.name: {"what": p.what, "file": p.pin.file,
                                           "sha256": p.pin.sha256,
                                           "kernels": every[p.name],
                                           "read_for_device": expected[p.name]}
                                  for p in chosen},
                     "checkout": str(args.checkout), "modes": {}, "load_before": load()}
    out_dir = args.keep or args.cache / "corpus"
    out_dir.mkdir(parents=True, exist_ok=True)
    failures = []
    for jobs in args.jobs.split(","):
        out = out_dir / f"amd-corpus-j{jobs}.json"
        samples, doc = measure_mode(paths, jobs, args.runs, args.checkout, out)
        found = per_package(doc, packages)
        failures += [f"-j {jobs}: {n}: occlint {found[n]:,} kernels, llvm-readelf "
                     f"{expected[n]:,}" for n in expected if found[n] != expected[n]]
        row = summary(samples, len(doc["kernels"]))
        row["errors"] = len(doc.get("errors") or [])
        results["modes"][jobs] = row
        print(f"-j {jobs:4} kernels {row['kernels']:,}  wall {row['wall']:.2f} s  CPU "
              f"{row['cpu']:.2f} s  {row['per_wall_s']:,.0f} kernels/s wall  "
              f"{row['per_cpu_s']:,.0f} per CPU s  RSS {row['rss_mb']:.0f} MB largest, "
              f"{row['tree_mb']:.0f} MB all  (walls {', '.join(f'{w:.2f}' for w in row['walls'])};"
              f" CPUs {', '.join(f'{c:.2f}' for c in row['cpus'])}; load {load():.2f})",
              flush=True)
    results["load_after"] = load()
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    if failures:
        raise SystemExit("kernel counts differ:\n  " + "\n  ".join(failures))



if __name__ == "__main__":
    main()
