"""Regression guard: a quick set of real inputs, each timed against a reference (issue 21).

    python benchmarks/regress.py [--cache DIR] [--repeat 3] [--tolerance 0.15] [--record]
                                 [--only NAME,...] [--trees DIR]

Runs occlint as users run it (``python -m occlint INPUT --format json -o FILE --exit-zero``
in a new process, this checkout first on PYTHONPATH) on each input of ``ITEMS`` and divides
its CPU seconds (``os.wait4``: the process and its workers) by those of a reference run just
before it, on the same machine: ``cuobjdump --dump-resource-usage`` one process per file
for the cubins (the comparison of issue 8), else a fixed pure-Python workload
(``REFERENCE_WORK``: struct unpacking, dicts, JSON, regular expressions, the mix occlint
spends its time on). A slower or busier machine slows both, so the ratio stays; the median
ratio of ``--repeat`` rounds is the figure. Each figure is compared with the one recorded
in docs/performance.md ("Regression guard"); the command exits 1 when a figure is more than
``--tolerance`` (15 %) above its record, or when a count (kernels, launches, sites) differs
from the recorded one (the figures would then measure different work). ``--record`` writes
the measured figures into docs/performance.md instead.

Inputs are pinned by version and SHA-256 and downloaded into the cache (default
~/.cache/occlint-bench) with pip / from deb.debian.org, never committed:
flashinfer-cubin 0.6.13 (every 40th cubin, extracted), Debian librocsparse0 5.3.0
(librocsparse.so.0.1, 1.3 GB with -g debug information), the cupy-rocm-7-0 14.2.0 wheel, a
Kineto trace and a rocprofv3 kernel trace of 200,000 launches each (built from committed
fixtures, as benchmarks/traces_scale.py does), and CuPy 13.6.0's sdist (its CUDA sources).
``startup`` counts instructions instead (valgrind's callgrind, the same at any load): a
small code object's run over the interpreter importing json, re and struct; skipped where
valgrind is missing. With ``--trees DIR`` it times issue 30's four kernel-heavy source trees
too, each read alone (``TREE_ITEMS``: GitHub checkouts that ``benchmarks/source_trees.py``
writes).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import scale, traces_scale

REPO = scale.REPO
DOC = REPO / "docs" / "performance.md"
BEGIN, END = "<!-- regress:begin -->", "<!-- regress:end -->"
CUBIN_STRIDE = 40
LAUNCHES = 200_000
DEBIAN = "http://deb.debian.org/debian/pool/main"


@dataclass(frozen=True)
class Pinned:
    file: str  # name in the cache
    sha256: str
    fetch: list[str] | str  # pip arguments, or the URL


PINNED = {
    "flashinfer": Pinned("flashinfer_cubin-0.6.13-py3-none-any.whl",
                         "41e4848c2d09d220e8394489b2fb6cfec6b6ad09f897b5ab8b39fc23055f6c24",
                         ["flashinfer-cubin==0.6.13"]),
    "cuobjdump": Pinned(
        "nvidia_cuda_cuobjdump-13.5.37-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        "38780fee50863252a0b8926357faa91615ca1c8346490563f33a06100cd73f58",
        ["nvidia-cuda-cuobjdump==13.5.37", "--platform", "manylinux2014_x86_64"]),
    "rocsparse": Pinned("librocsparse0_5.3.0+dfsg-2_amd64.deb",
                        "688878bb8cb9ec7970e7b632828d91336a6819860fb0c306372eb6a7199b3b8e",
                        f"{DEBIAN}/r/rocsparse/librocsparse0_5.3.0+dfsg-2_amd64.deb"),
    "cupy-rocm": Pinned("cupy_rocm_7_0-14.2.0-cp311-cp311-manylinux2014_x86_64.whl",
                        "8e824c1c2fc386e72fe8ae69ab7c273326b17650160400f8f4ea2c932189ed1a",
                        ["cupy-rocm-7-0==14.2.0", "--python-version", "3.11", "--implementation",
                         "cp", "--abi", "cp311", "--platform", "manylinux2014_x86_64"]),
    "rocrand-5.7": Pinned("librocrand1_5.7.1-6_amd64.deb",
                          "238510600e4bed0224bb8c699fbcd9a414a800df7d1d05c11aac9097cda2ec8f",
                          f"{DEBIAN}/r/rocrand/librocrand1_5.7.1-6_amd64.deb"),
    "cupy-sdist": Pinned("cupy-13.6.0.tar.gz",
                         "3cba30ae3dd32b5d5c6536e710cb98015227cd4ba83c46b3f1825a7ae55b6667",
                         ["cupy==13.6.0", "--no-binary", ":all:"]),
}

REFERENCE_WORK = """
import json, re, struct
data = bytes(range(256)) * 1024
total = 0
for round in range(24):
    for a, b in struct.iter_unpack('<II', data):
        total += a ^ b
    table = {i: str(i) for i in range(30000)}
    total += len(json.dumps(table, indent=2))
    total += len(re.findall(rb'\\x10[\\x00-\\x7f]', data * 4))
print(total)
"""


def fetch(cache: Path, name: str, pins: dict[str, Pinned] = PINNED) -> Path:
    """The pinned file ``name`` (of ``pins``) in ``cache``: downloaded once, checked by
    SHA-256."""
    pin = pins[name]
    path = cache / pin.file
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        if isinstance(pin.fetch, str):
            print(f"  downloading {pin.fetch}", file=sys.stderr)
            with urllib.request.urlopen(pin.fetch) as response, \
                    open(f"{path}.part", "wb") as out:
                shutil.copyfileobj(response, out)
            Path(f"{path}.part").rename(path)
        else:
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-d",
                            str(cache), *pin.fetch], check=True, stdout=subprocess.DEVNULL)
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 24):
            digest.update(chunk)
    if digest.hexdigest() != pin.sha256:
        raise SystemExit(f"{path}: SHA-256 {digest.hexdigest()}, pinned {pin.sha256}")
    return path


def unpacked(cache: Path, name: str, dest: str, unpack: Callable[[Path, Path], None],
             pins: dict[str, Pinned] = PINNED) -> Path:
    root = cache / dest
    if not (root / ".done").exists():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        unpack(fetch(cache, name, pins), root)
        (root / ".done").write_text(pins[name].file)
    return root


def unpack_deb(deb: Path, root: Path) -> None:
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)


# -- the inputs -------------------------------------------------------------------------------
def cubin_subset(cache: Path) -> list[Path]:
    def unpack(wheel: Path, root: Path) -> None:
        with zipfile.ZipFile(wheel) as archive:
            names = sorted(n for n in archive.namelist() if n.endswith(".cubin"))
            for name in names[::CUBIN_STRIDE]:
                archive.extract(name, root)

    root = unpacked(cache, "flashinfer", f"flashinfer-every-{CUBIN_STRIDE}", unpack)
    return sorted(root.rglob("*.cubin"))


def cuobjdump_tool(cache: Path) -> Path:
    def unpack(wheel: Path, root: Path) -> None:
        with zipfile.ZipFile(wheel) as archive:
            member = next(n for n in archive.namelist() if n.endswith("/bin/cuobjdump"))
            (root / "cuobjdump").write_bytes(archive.read(member))
        (root / "cuobjdump").chmod(0o755)

    return unpacked(cache, "cuobjdump", "cuobjdump", unpack) / "cuobjdump"


def rocsparse(cache: Path) -> Path:
    root = unpacked(cache, "rocsparse", "librocsparse0", unpack_deb)
    return root / "usr/lib/x86_64-linux-gnu/librocsparse.so.0.1"


def rocrand_compressed(cache: Path) -> Path:
    """Debian 13's librocrand.so.1.1: its code objects' debug sections are compressed."""
    root = unpacked(cache, "rocrand-5.7", "corpus/rocrand-5.7", unpack_deb)
    return root / "usr/lib/x86_64-linux-gnu/librocrand.so.1.1"


def cupy_sources(cache: Path) -> Path:
    def unpack(sdist: Path, root: Path) -> None:
        with tarfile.open(sdist) as archive:
            archive.extractall(root, filter="data")

    return unpacked(cache, "cupy-sdist", "cupy-13.6.0", unpack)


def rocprof_trace(cache: Path) -> Path:
    """The rocprofv3 CSV fixture with an agent_info.csv (``Arch_VGPR_Count`` spelling), its
    dispatches repeated (ids and times shifted) to ``LAUNCHES`` rows."""
    source = REPO / "fixtures/traces/rocprof/v_arch"
    root = cache / f"rocprof-{LAUNCHES}"
    trace = root / "9191_kernel_trace.csv"
    if trace.exists():
        return trace
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(source / "7171_agent_info.csv", root / "9191_agent_info.csv")
    rows = list(csv.reader(io.StringIO((source / "7171_kernel_trace.csv").read_text())))
    header, body = rows[0], rows[1:]
    col = {name: i for i, name in enumerate(header)}
    span = max(int(r[col["End_Timestamp"]]) for r in body) + 1000
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
    writer.writerow(header)
    for n in range(LAUNCHES):
        copy, row = divmod(n, len(body))
        values: list[object] = list(body[row])
        for key in ("Dispatch_Id", "Correlation_Id"):
            values[col[key]] = n + 1
        for key in ("Start_Timestamp", "End_Timestamp"):
            values[col[key]] = int(body[row][col[key]]) + copy * span
        writer.writerow([int(v) if isinstance(v, str) and v.isdigit() else v for v in values])
    tmp = trace.with_suffix(".part")
    tmp.write_text(out.getvalue())
    tmp.rename(trace)
    return trace


# -- measuring ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Item:
    name: str
    what: str
    inputs: Callable[[Path], list[Path]]
    count: Callable[[dict], int]  # from occlint's JSON document
    reference: str  # "cuobjdump" or "python"


def kernels(doc: dict) -> int:
    return len(doc["kernels"])


def located(doc: dict) -> int:
    """Kernels with a source line (read from debug information): a change that drops
    them changes this count, and the guard fails."""
    return sum(1 for kernel in doc["kernels"] if kernel.get("source"))


def launches(doc: dict) -> int:
    return doc["summary"]["launches"]["launches"]


def sites(doc: dict) -> int:
    return sum(len(source["launches"]) for source in doc["sources"])


ITEMS = [
    Item("cubins", f"flashinfer-cubin 0.6.13, every {CUBIN_STRIDE}th .cubin",
         cubin_subset, kernels, "cuobjdump"),
    Item("rocsparse", "librocsparse.so.0.1 (Debian librocsparse0 5.3.0, -g): kernels with "
         "a source line", lambda cache: [rocsparse(cache)], located, "python"),
    Item("zdebug", "librocrand.so.1.1 (Debian librocrand1 5.7.1, -g, compressed debug "
         "sections): kernels with a source line", lambda cache: [rocrand_compressed(cache)],
         located, "python"),
    Item("wheel", "cupy-rocm-7-0 14.2.0 .whl", lambda cache: [fetch(cache, "cupy-rocm")],
         kernels, "python"),
    Item("kineto", f"Kineto trace, {LAUNCHES:,} launches (gzip'd)",
         lambda cache: [traces_scale.build("resnet18", "libkineto", LAUNCHES, True)[0]],
         launches, "python"),
    Item("kineto-lines", f"Kineto trace, {LAUNCHES:,} launches, one event per line with "
         "json.dump's separators (gzip'd)",
         lambda cache: [traces_scale.build("resnet18", "per-line", LAUNCHES, True)[0]],
         launches, "python"),
    Item("kineto-sorted", f"Kineto trace, {LAUNCHES:,} launches, one event per line, keys "
         "sorted (args before cat)",
         lambda cache: [traces_scale.build("resnet18", "sorted", LAUNCHES)[0]],
         launches, "python"),
    Item("kineto-one-line", f"Kineto trace, {LAUNCHES:,} launches, all on one line as "
         "json.dump writes it", lambda cache: [traces_scale.build("resnet18", "json-dump",
                                                                  LAUNCHES)[0]],
         launches, "python"),
    Item("rocprofv3", f"rocprofv3 kernel_trace.csv, {LAUNCHES:,} launches",
         lambda cache: [rocprof_trace(cache)], launches, "python"),
    Item("sources", "CuPy 13.6.0 sdist (CUDA sources)", lambda cache: [cupy_sources(cache)],
         sites, "python"),
    Item("startup", f"{scale.SMALL_FILE}, one small code object: instructions (callgrind), "
         "the start-up every small input pays", lambda cache: [REPO / scale.SMALL_FILE],
         kernels, "callgrind"),
]


# the start-up every small input pays, counted in instructions (callgrind: the same count
# at any load, where a 0.2 s run's CPU seconds move by 10-20 %): one small code object
# against the interpreter importing what REFERENCE_WORK imports
STARTUP_REFERENCE = "import json, re, struct"


def instructions(cmd: list[str], env: dict | None = None) -> float:
    """Instructions ``cmd`` executes (valgrind's callgrind; its own process only), in
    billions."""
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                          *cmd], capture_output=True, text=True, env=env, cwd=REPO,
                         check=True).stderr
    m = re.search(r"Collected : (\d+)", out)
    if m is None:
        raise SystemExit(f"callgrind counted nothing for {cmd}: {out[-400:]}")
    return int(m[1]) / 1e9


# issue 30's kernel-heavy source trees, each read alone: opt-in (``--trees DIR``, a folder
# of benchmarks/source_trees.py checkouts at their pinned commits, named as
# benchmarks/source_recall.TREES names them), for they come from GitHub, not a registry
TREE_ITEMS = {"llm-c": "llm.c", "ggml-cuda": "ggml-cuda", "hip-examples": "HIP-Examples",
              "rocm-examples": "rocm-examples"}


def tree_items(root: Path) -> list[Item]:
    return [Item(name, f"{tree} at its pinned commit (`benchmarks/source_trees.py`), read "
                 "alone", lambda cache, path=root / tree: [path], sites, "python")
            for name, tree in TREE_ITEMS.items()]


def occlint_run(paths: list[Path], out: Path) -> tuple[scale.Sample, dict]:
    cmd = [*scale.OCCLINT, *map(str, paths), "--format", "json", "-o", str(out), "--exit-zero",
           "--isolated"]
    sample = scale.measure(cmd, scale._env())
    return sample, json.loads(out.read_text(encoding="utf-8"))


def reference_run(item: Item, paths: list[Path], cache: Path) -> tuple[scale.Sample, int]:
    """The reference's sample and what it counted (cuobjdump's Function entries)."""
    if item.reference == "cuobjdump":
        return scale.cuobjdump_files(cuobjdump_tool(cache), paths, 1)
    return scale.measure([sys.executable, "-c", REFERENCE_WORK]), 0


def run_startup(item: Item, cache: Path, repeat: int) -> dict:
    """The start-up figure: occlint's instructions over the reference's, after one run
    without valgrind writes the bytecode caches."""
    paths = item.inputs(cache)
    out = cache / "regress-out.json"
    cmd = [*scale.OCCLINT, *map(str, paths), "--format", "json", "-o", str(out),
           "--exit-zero", "--isolated"]
    env = scale._env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run(cmd, env=env, cwd=REPO, check=True, capture_output=True)
    ratios, counts, refs = [], [], []
    for _ in range(repeat):
        ref = instructions([sys.executable, "-c", STARTUP_REFERENCE], env)
        ours = instructions(cmd, env)
        ratios.append(ours / ref)
        counts.append(ours)
        refs.append(ref)
    count = item.count(json.loads(out.read_text(encoding="utf-8")))
    return _result(item, count, ratios, counts, refs, 0.0)


def _result(item: Item, count: int, ratios: list[float], cpus: list[float],
            refs: list[float], speed: float) -> dict:
    return {"name": item.name, "what": item.what, "count": count,
            "ratio": statistics.median(ratios), "ratios": ratios, "cpu": cpus,
            "reference_cpu": refs, "reference": item.reference, "speed": speed}


def run_item(item: Item, cache: Path, repeat: int) -> dict:
    if item.reference == "callgrind":
        return run_startup(item, cache, repeat)
    paths = item.inputs(cache)
    for path in paths:  # the page cache is warm for every measured run
        if path.is_file():
            traces_scale.warm(path)
    out = cache / "regress-out.json"
    ratios, cpus, refs, speeds, count = [], [], [], [], 0
    for _ in range(repeat):
        ref, counted = reference_run(item, paths, cache)
        sample, doc = occlint_run(paths, out)
        count = item.count(doc)
        if counted and counted != count:
            raise SystemExit(f"{item.name}: occlint counted {count:,}, the reference {counted:,}")
        ratios.append(sample.cpu / ref.cpu)
        speeds.append(ref.wall / sample.wall)
        cpus.append(sample.cpu)
        refs.append(ref.cpu)
    return _result(item, count, ratios, cpus, refs, statistics.median(speeds))


# -- docs/performance.md ------------------------------------------------------------------------
ROW = re.compile(r"^\| `(?P<name>[\w-]+)` \|[^|]*\|\s*(?P<count>[\d,]+)\s*\|"
                 r"\s*(?P<ratio>[\d.]+)\s*\|", re.M)


def recorded(text: str) -> dict[str, tuple[int, float]]:
    if BEGIN not in text or END not in text:
        return {}
    block = text[text.index(BEGIN):text.index(END)]
    return {m["name"]: (int(m["count"].replace(",", "")), float(m["ratio"]))
            for m in ROW.finditer(block)}


def table(results: list[dict], meta: str, kept: dict[str, str] | None = None) -> str:
    """The block's text: a row per result, and ``kept`` (figure -> its row as recorded
    before) for the figures not measured this time, in the order of ``ITEMS``."""
    lines = [BEGIN, "", meta, "",
             "| figure | input | count | CPU ratio | reference | occlint CPU s | "
             "reference CPU s | speed (wall) |", "|---|---|---:|---:|---|---:|---:|---:|"]
    rows = dict(kept or {})
    for r in results:
        reference = {"cuobjdump": "cuobjdump, one process per file",
                     "callgrind": f"`python -c '{STARTUP_REFERENCE}'`, G instructions "
                                  "(callgrind) both"}.get(r["reference"],
                                                          "`REFERENCE_WORK` (Python)")
        rows[r["name"]] = (f"| `{r['name']}` | {r['what']} | {r['count']:,} | {r['ratio']:.3f} | "
                           f"{reference} | {statistics.median(r['cpu']):.2f} | "
                           f"{statistics.median(r['reference_cpu']):.2f} | "
                           + (f"{r['speed']:.2f}x |" if r["reference"] == "cuobjdump" else "|"))
    order = [i.name for i in ITEMS] + list(TREE_ITEMS)
    lines += [rows[name] for name in sorted(rows, key=lambda n: order.index(n)
                                            if n in order else len(order))]
    return "\n".join([*lines, "", END])


def record(results: list[dict], meta: str) -> None:
    """Write ``results`` into the block; the rows of the figures not measured stay."""
    text = DOC.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{DOC}: no {BEGIN} ... {END} block to write the figures into")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    measured = {r["name"] for r in results}
    kept = {m["name"]: line for line in text[start:end].splitlines()
            if (m := ROW.match(line)) and m["name"] not in measured}
    if kept:
        meta += (f" Figures measured then: {', '.join(sorted(measured))}; the others as "
                 "recorded before.")
    DOC.write_text(text[:start] + table(results, meta, kept) + text[end:], encoding="utf-8")


def compare(result: dict, old: tuple[int, float] | None, tolerance: float
            ) -> tuple[str, str | None]:
    """(what to print, the failure or None) of a figure against its record (count, ratio)."""
    if old is None:
        return "no record", None
    change = result["ratio"] / old[1] - 1
    verdict = f"{change:+.1%} against {old[1]:.3f}"
    if result["count"] != old[0]:
        return f"{verdict}; COUNT {result['count']:,} != {old[0]:,}", \
            f"count {result['count']:,}, recorded {old[0]:,}"
    if change > tolerance:
        return f"{verdict} REGRESSION", verdict
    return verdict, None


def machine() -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, "
            f"one-minute load average {load:.2f} at the end, Python "
            f"{sys.version.split()[0]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache/occlint-bench")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tolerance", type=float, default=0.15)
    parser.add_argument("--record", action="store_true",
                        help="write the figures into docs/performance.md")
    parser.add_argument("--only", default="", help="comma-separated figure names")
    parser.add_argument("--trees", type=Path,
                        help="a folder of source_trees.py checkouts: time the kernel-heavy "
                             "trees too (" + ", ".join(TREE_ITEMS.values()) + ")")
    args = parser.parse_args()
    scale.WAIT_FOR_IDLE = False  # ratios to a reference measured alongside: no need to wait
    wanted = {n for n in args.only.split(",") if n}
    every = ITEMS + (tree_items(args.trees) if args.trees else [])
    items = [i for i in every if not wanted or i.name in wanted]
    before = recorded(DOC.read_text(encoding="utf-8"))
    results, failures = [], []
    for item in items:
        if item.reference == "callgrind" and shutil.which("valgrind") is None:
            print(f"{item.name:10} skipped: no valgrind on this machine", flush=True)
            continue
        result = run_item(item, args.cache, args.repeat)
        results.append(result)
        verdict, failure = compare(result, before.get(item.name), args.tolerance)
        if failure:
            failures.append(f"{item.name}: {failure}")
        print(f"{item.name:10} count {result['count']:>9,}  ratio {result['ratio']:.3f} "
              f"(rounds {', '.join(f'{r:.3f}' for r in result['ratios'])})  {verdict}",
              flush=True)
    meta = f"Recorded by `python benchmarks/regress.py --record` on {machine()}."
    if args.record:
        record(results, meta)
        print(f"recorded in {DOC.relative_to(REPO)}")
        return
    print(machine())
    if failures:
        print("regressions:\n  " + "\n  ".join(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
