"""Speed and memory of occlint on large real inputs, beside the vendors' tools (issue 8).

    python benchmarks/scale.py [--cache DIR] [--quick] [--out FILE]

Inputs are downloaded into the cache directory (default /work/cache) when missing and
never committed:

* NVIDIA: the ``flashinfer-cubin==0.6.13`` wheel (15,970 cubins; measured extracted and as
  the .whl itself) and ``libcurand.so`` of the ``nvidia-curand`` wheel;
* AMD: the three ``cupy-rocm-7-0==14.2.0`` libraries that embed ``.hip_fatbin`` and
  Debian's ``librocrand1=5.3.3-4`` (``apt-get download``).

occlint runs as users run it, ``python -m occlint ... --format json -o FILE`` in a new
process (this checkout first on PYTHONPATH). Wall and CPU time come from ``os.wait4`` of
that process (CPU includes the workers it waits for), the peak RSS of its largest process
from GNU time (``/usr/bin/time -f %M``, when installed), and the memory of all its
processes together (workers included) from sampling /proc every 20 ms. Baselines on the
same files in the same run: ``cuobjdump --dump-resource-usage`` (one process per file, in
series and two at a time) and, for AMD, ``llvm-readelf-19 --notes`` on the code objects
extracted from the bundles.
Kernel counts are cross-checked between the tools. Results are medians; the machine's load
is recorded, since a busy machine slows everything.

``--quick`` measures a subset (2,000 flashinfer cubins, one run each, no .whl and no cupy)
and prints the report instead of writing docs/performance.md.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OCCLINT = [sys.executable, "-m", "occlint"]
FLASHINFER = "flashinfer-cubin==0.6.13"
CUPY = "cupy-rocm-7-0==14.2.0"
CUPY_LIBS = ("cupy/cuda/cub.", "cupy/cuda/thrust.", "cupy/random/_generator_api.")
ROCRAND_DEB = "librocrand1=5.3.3-4"
TARGET_RATE = 5000  # kernels per second, end to end into JSON
TARGET_RSS_MB = 300
TARGET_VERSION_MS = 150
TARGET_SMALL_MS = 250
SMALL_FILE = "fixtures/amd/co/gamma.gfx1100.hsaco"


# -- measuring a process ------------------------------------------------------------------------
@dataclass
class Sample:
    wall: float  # seconds
    cpu: float  # user + system seconds, the process and the children it waited for
    rss_mb: float  # peak resident set of the process itself (or of the largest process)
    tree_mb: float  # peak of the summed resident sets of the process and its descendants
    code: int
    out: str = ""
    other_cpu: float = 0.0  # CPU seconds other processes of the machine used meanwhile


def cpu_busy() -> float:
    """CPU seconds all processes of the machine have used (/proc/stat; 0 elsewhere)."""
    try:
        with open("/proc/stat") as fh:
            fields = [int(x) for x in fh.readline().split()[1:]]
    except (OSError, ValueError):
        return 0.0
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


WAIT_FOR_IDLE = True  # benchmarks/regress.py measures ratios instead


def wait_idle(max_busy: float = 0.15, window: float = 1.0, timeout: float = 300) -> float:
    """Wait (up to ``timeout`` s) for a ``window`` in which the machine's CPUs are busy less
    than ``max_busy`` of the time (other users of the machine: measurements need it quiet);
    return the busy fraction of the last window."""
    if not WAIT_FOR_IDLE:
        return 0.0
    cpus = os.cpu_count() or 1
    start = time.monotonic()
    while True:
        before = cpu_busy()
        time.sleep(window)
        busy = (cpu_busy() - before) / (window * cpus)
        if busy < max_busy or time.monotonic() - start > timeout:
            return busy


def _children(pid: int) -> list[int]:
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                out.extend(int(c) for c in fh.read().split())
    except OSError:
        pass
    return out


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _gnu_time() -> str | None:
    """GNU time: it forks the measured command from its own small process. A command
    started directly from this (larger) Python process would report this process's peak
    RSS as its own (Linux carries the high-water mark of the pre-exec image)."""
    try:
        proc = subprocess.run(["/usr/bin/time", "--version"], capture_output=True, text=True)
    except OSError:
        return None
    return "/usr/bin/time" if "GNU" in proc.stdout + proc.stderr else None


GNU_TIME = _gnu_time()


def measure(cmd: list[str], env: dict | None = None, capture: bool = False,
            cwd: Path = REPO) -> Sample:
    """Run ``cmd``; wall, CPU and memory as described in the module docstring."""
    peak_tree = [0]
    done = threading.Event()
    rss_file = None
    if GNU_TIME:
        fd, rss_file = tempfile.mkstemp(prefix="occlint-rss-")
        os.close(fd)
        cmd = [GNU_TIME, "-f", "%M", "-o", rss_file, *cmd]
    busy = cpu_busy()
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                            stderr=subprocess.PIPE)

    def sample() -> None:
        while not done.is_set():
            pids, todo = [], [proc.pid]
            while todo:
                pid = todo.pop()
                pids.append(pid)
                todo.extend(_children(pid))
            peak_tree[0] = max(peak_tree[0], sum(_rss_kb(p) for p in pids))
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    reader = concurrent.futures.ThreadPoolExecutor(2)
    out = reader.submit(proc.stdout.read) if capture else None
    err = reader.submit(proc.stderr.read)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    busy = cpu_busy() - busy
    done.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = err.result().decode(errors="replace")
    stdout = out.result().decode(errors="replace") if out else ""
    reader.shutdown()
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)[:200]} exited {proc.returncode}: {stderr[-2000:]}")
    rss = usage.ru_maxrss / 1024
    if rss_file:
        with open(rss_file) as fh:
            lines = fh.read().split()
        os.unlink(rss_file)
        rss = int(lines[-1]) / 1024 if lines and lines[-1].isdigit() else rss
    cpu = usage.ru_utime + usage.ru_stime
    return Sample(wall, cpu, rss, max(peak_tree[0] / 1024, rss), proc.returncode, stdout,
                  max(busy - cpu, 0.0))


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep)
    return env


def median_sample(samples: list[Sample]) -> Sample:
    mid = sorted(samples, key=lambda s: s.wall)[len(samples) // 2]
    return Sample(mid.wall, statistics.median(s.cpu for s in samples),
                  max(s.rss_mb for s in samples), max(s.tree_mb for s in samples), mid.code,
                  other_cpu=mid.other_cpu)


# -- inputs -------------------------------------------------------------------------------------
def _run(cmd: list[str], cwd: Path | None = None) -> None:
    print("  $", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, cwd=cwd, check=True)


def _pip_download(spec: str, cache: Path, pattern: str, *extra: str) -> Path:
    found = sorted(cache.glob(pattern))
    if not found:
        _run([sys.executable, "-m", "pip", "download", "--no-deps", spec, "-d", str(cache),
              *extra])
        found = sorted(cache.glob(pattern))
    if not found:
        raise SystemExit(f"pip download {spec} gave no {pattern} in {cache}")
    return found[-1]


def _extract(wheel: Path, dest: Path, keep=lambda name: True) -> Path:
    marker = dest / ".extracted"
    if not marker.exists():
        print(f"  extracting {wheel.name} into {dest}", file=sys.stderr)
        with zipfile.ZipFile(wheel) as archive:
            for info in archive.infolist():
                if keep(info.filename):
                    archive.extract(info, dest)
        marker.write_text(wheel.name)
    return dest


def flashinfer(cache: Path) -> tuple[Path, Path]:
    wheel = _pip_download(FLASHINFER, cache, "flashinfer_cubin-0.6.13-*.whl")
    return wheel, _extract(wheel, cache / "flashinfer")


def curand(cache: Path) -> Path:
    wheel = _pip_download("nvidia-curand", cache, "nvidia_curand-*.whl")
    root = _extract(wheel, cache / "curand", lambda n: "libcurand.so" in n)
    return next(p for p in sorted(root.rglob("libcurand.so*")) if p.is_file())


def cupy(cache: Path) -> list[Path]:
    wheel = _pip_download(CUPY, cache, "cupy_rocm_7_0-14.2.0-*.whl", "--python-version",
                          "3.11", "--implementation", "cp", "--abi", "cp311", "--platform",
                          "manylinux2014_x86_64")
    root = _extract(wheel, cache / "cupy", lambda n: n.startswith(CUPY_LIBS))
    return sorted(p for p in root.rglob("*.so") if str(p.relative_to(root)).startswith(
        CUPY_LIBS))


def rocrand(cache: Path) -> Path:
    debs = cache / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    name = ROCRAND_DEB.replace("=", "_")
    found = sorted(debs.glob(f"{name}_*.deb"))
    if not found:
        try:
            _run(["apt-get", "download", ROCRAND_DEB], cwd=debs)
        except subprocess.CalledProcessError:
            _run(["apt-get", "update"])
            _run(["apt-get", "download", ROCRAND_DEB], cwd=debs)
        found = sorted(debs.glob(f"{name}_*.deb"))
    root = cache / "rocrand"
    if not (root / ".extracted").exists():
        _run(["dpkg-deb", "-x", str(found[-1]), str(root)])
        (root / ".extracted").write_text(found[-1].name)
    return next(p for p in sorted(root.rglob("librocrand.so*"))
                if p.is_file() and not p.is_symlink())


def cuobjdump(cache: Path) -> Path | None:
    found = shutil.which("cuobjdump")
    if found:
        return Path(found)
    for base in map(Path, sys.path):
        for candidate in base.glob("nvidia/*/bin/cuobjdump"):
            return candidate
    try:
        wheel = _pip_download("nvidia-cuda-cuobjdump", cache, "nvidia_cuda_cuobjdump-*.whl")
    except (subprocess.CalledProcessError, SystemExit):
        return None
    root = _extract(wheel, cache / "cuobjdump", lambda n: n.endswith("/cuobjdump"))
    tool = next(root.rglob("cuobjdump"), None)
    if tool:
        tool.chmod(0o755)
    return tool


def llvm_readelf() -> str | None:
    return shutil.which("llvm-readelf-19") or shutil.which("llvm-readelf")


def extract_code_objects(library: Path, dest: Path) -> list[Path]:
    """The AMD code objects of every offload bundle in ``library``'s .hip_fatbin (all of the
    back-to-back bundles, device entries only), one file each, for llvm-readelf."""
    from elftools.elf.elffile import ELFFile

    marker = dest / ".extracted"
    if marker.exists():
        return sorted(dest.glob("*.co"))
    dest.mkdir(parents=True, exist_ok=True)
    magic = b"__CLANG_OFFLOAD_BUNDLE__"
    count = 0
    with library.open("rb") as fh:
        section = ELFFile(fh).get_section_by_name(".hip_fatbin")
        data = section.data() if section is not None else b""
    pos = data.find(magic)
    while pos >= 0:
        entries = int.from_bytes(data[pos + 24:pos + 32], "little")
        cursor, end = pos + 32, pos + 32
        for _ in range(min(entries, 4096)):
            offset, size, id_len = (int.from_bytes(data[cursor + i:cursor + i + 8], "little")
                                    for i in (0, 8, 16))
            entry_id = data[cursor + 24:cursor + 24 + id_len].decode(errors="replace")
            cursor += 24 + id_len
            end = max(end, pos + offset + size)
            payload = data[pos + offset:pos + offset + size]
            if size and not entry_id.startswith("host") and payload.startswith(b"\x7fELF"):
                (dest / f"{count:05d}.co").write_bytes(payload)
                count += 1
        pos = data.find(magic, max(end, pos + 1))
    marker.write_text(str(count))
    return sorted(dest.glob("*.co"))


# -- the measurements ---------------------------------------------------------------------------
@dataclass
class Row:
    input: str
    tool: str
    kernels: int | None
    sample: Sample
    runs: int
    note: str = ""

    @property
    def rate(self) -> float | None:
        return self.kernels / self.sample.wall if self.kernels else None


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    timings: dict[str, list[float]] = field(default_factory=dict)
    counts: list[str] = field(default_factory=list)
    stages: dict[str, float] = field(default_factory=dict)  # CPU s per stage, one process
    encoders: dict = field(default_factory=dict)
    profiles: int = 0  # distinct (occupancy, advice) among the flashinfer kernels placed
    profiled: int = 0  # flashinfer kernels with an occupancy on the device


def occlint_json(paths: list[Path], out: Path, runs: int, *args: str) -> tuple[Sample, dict]:
    cmd = [*OCCLINT, *map(str, paths), "--format", "json", "-o", str(out), "--exit-zero",
           *args]
    samples = []
    for _ in range(runs):
        wait_idle()
        samples.append(measure(cmd, _env()))
    return median_sample(samples), json.loads(out.read_text(encoding="utf-8"))


def _one_process_per_file(cmd: list[str], files: list[Path], parallel: int, count: str
                          ) -> tuple[Sample, int]:
    """``cmd FILE`` for every file, ``parallel`` at a time; (sample, matches of the regular
    expression ``count`` in all outputs). CPU time from RUSAGE_CHILDREN; peak RSS measured
    on the five largest files (every process is separate, so the largest one is the peak)."""
    import resource

    pattern = re.compile(count, re.M)
    wait_idle()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy = cpu_busy()

    def one(path: Path) -> int:
        proc = subprocess.run([*cmd, str(path)], capture_output=True, text=True,
                              errors="replace")
        if proc.returncode:
            raise RuntimeError(f"{cmd[0]} {path}: exit {proc.returncode}: {proc.stderr[-500:]}")
        return len(pattern.findall(proc.stdout))

    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(parallel) as pool:
        found = sum(pool.map(one, files))
    wall = time.perf_counter() - start
    busy = cpu_busy() - busy
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    largest = sorted(files, key=lambda p: p.stat().st_size)[-5:]
    peak = max(measure([*cmd, str(p)]).rss_mb for p in largest)
    # (the harness itself, starting the processes, counts as "other" here)
    return Sample(wall, cpu, peak, peak * parallel, 0, other_cpu=max(busy - cpu, 0.0)), found


def cuobjdump_files(tool: Path, files: list[Path], parallel: int) -> tuple[Sample, int]:
    """cuobjdump --dump-resource-usage, one process per file; (sample, Function entries)."""
    return _one_process_per_file([str(tool), "--dump-resource-usage"], files, parallel,
                                 r"^ Function \S")


def readelf_notes(tool: str, files: list[Path], parallel: int) -> tuple[Sample, int]:
    """llvm-readelf --notes, one process per code object; (sample, kernel descriptors)."""
    return _one_process_per_file([tool, "--notes"], files, parallel,
                                 r"^\s+\.symbol:\s+\S+\.kd\s*$")


STAGES = r"""
import json, sys, time
from pathlib import Path
from occlint.analysis.kernels import analyse
from occlint.config import load_config
from occlint.pipeline.inputs import expand_paths
from occlint.pipeline.document import kernel_record
from occlint.model.records import encode
from occlint.readers.loader import looks_like_gpu_binary, read_path
from occlint.rules.engine import judge, judge_scope
from occlint.pipeline.setup import Options, Setup
clock = time.process_time
setup = Setup.build(Options(devices=[sys.argv[2]], isolated=True), load_config(None, True))
t = dict.fromkeys(["walk", "sniff", "read", "analyse", "rules", "record", "encode"], 0.0)
start = clock(); candidates, _ = expand_paths([sys.argv[1]]); t["walk"] = clock() - start
for c in candidates:
    a = clock()
    if not c.listed and not looks_like_gpu_binary(Path(c.path)):
        continue
    b = clock(); result = read_path(Path(c.path), c.display, setup.read_options)
    c_ = clock(); reports = analyse(result.kernels, setup.devices, setup.resolve, setup.db)
    d = clock(); judge(reports, setup.settings); judge_scope("input", [result], setup.settings)
    e = clock(); records = [kernel_record(r, shared=True) for r in reports]
    f = clock(); [encode(r) for r in records]
    g = clock()
    for key, value in zip(t, (0, b - a, c_ - b, d - c_, e - d, f - e, g - f)):
        t[key] += value
print(json.dumps(t))
"""

ENCODERS = r"""
import json, sys, time
from occlint.model import jsonenc
doc = json.loads(open(sys.argv[1], encoding="utf-8").read())
clock = time.process_time
a = clock(); std = json.dumps(doc, indent=2, ensure_ascii=False)
b = clock(); fast = jsonenc.dumps(doc)
c = clock()
print(json.dumps({"json.dumps": b - a, "occlint.jsonenc": c - b, "equal": std == fast}))
"""


def python_snippet(code: str, *args: str, env: dict | None = None) -> dict:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env or _env(), cwd=REPO)
    if proc.returncode:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout)


def older_revision(rev: str, dest: Path) -> dict:
    """An environment running occlint as of git revision ``rev`` (exported into ``dest``)."""
    archive = subprocess.run(["git", "archive", rev], cwd=REPO, capture_output=True, check=True)
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = str(dest)
    return env


def repeated(cmd: list[str], runs: int) -> list[float]:
    wait_idle()
    return [measure(cmd, _env()).wall * 1000 for _ in range(runs)]


def wait_for_quiet(limit: float, max_wait: float) -> float:
    """Wait (up to ``max_wait`` seconds) for the 1-minute load average to drop below
    ``limit``; return the load average measured."""
    start = time.monotonic()
    while True:
        load = os.getloadavg()[0]
        if load < limit or time.monotonic() - start > max_wait:
            return load
        time.sleep(10)


def run_benchmarks(args: argparse.Namespace) -> tuple[Report, dict]:
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    report = Report()
    runs = 1 if args.quick else args.runs
    work = Path(tempfile.mkdtemp(prefix="occlint-scale-"))
    try:
        print("inputs", file=sys.stderr)
        wheel, fi_root = flashinfer(cache)
        cubins = sorted(fi_root.rglob("*.cubin"))
        if args.quick:
            subset = work / "flashinfer-subset"
            for i, path in enumerate(cubins[:2000]):
                link = subset / f"{i // 500:02d}" / path.name
                link.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(path, link)
            cubins, fi_root = sorted(subset.rglob("*.cubin")), subset
        libcurand = curand(cache)
        amd_libs = [] if args.quick else cupy(cache)
        librocrand = rocrand(cache)
        cuobj = cuobjdump(cache)
        readelf = llvm_readelf()
        machine = machine_info()
        machine["load_before"] = wait_for_quiet(args.max_load, args.wait)
        print(f"load average before measuring: {machine['load_before']:.2f}", file=sys.stderr)

        # NVIDIA: flashinfer, extracted
        print("flashinfer (directory)", file=sys.stderr)
        sample, doc = occlint_json([fi_root], work / "fi.json", runs, "--device", "b200")
        fi_kernels = doc["summary"]["kernels"]
        report.rows.append(Row(f"flashinfer-cubin 0.6.13, {len(cubins):,} .cubin files",
                               "occlint (default --jobs auto)", fi_kernels, sample, runs))
        one_sample, _ = occlint_json([fi_root], work / "fi1.json", 1, "--device", "b200",
                                     "--jobs", "1")
        report.rows.append(Row("", "occlint --jobs 1", fi_kernels, one_sample, 1))
        placed = [k for k in doc["kernels"] if k["occupancy"]]
        report.profiled = len(placed)
        report.profiles = len({json.dumps([k["occupancy"], k["advice"]], sort_keys=True)
                               for k in placed})
        if args.compare:
            print(f"flashinfer with occlint {args.compare}", file=sys.stderr)
            old_env = older_revision(args.compare, work / "old")
            cmd = [*OCCLINT, str(fi_root), "--device", "b200", "--format", "json", "-o",
                   str(work / "old.json"), "--exit-zero"]
            # run from the exported tree: `python -m` puts the working directory first
            old_runs = []
            for _ in range(runs):
                wait_idle()
                old_runs.append(measure(cmd, old_env, cwd=work / "old"))
            old = median_sample(old_runs)
            same = (work / "old.json").read_bytes() == (work / "fi.json").read_bytes()
            report.rows.append(Row("", f"occlint {args.compare} (before this work)",
                                   fi_kernels, old, runs))
            report.counts.append(f"the JSON of occlint {args.compare} and of this checkout on "
                                 f"flashinfer: {'byte-identical' if same else 'DIFFERENT'}")
        print("flashinfer: stages and encoders (one process)", file=sys.stderr)
        report.stages = python_snippet(STAGES, str(fi_root), "b200")
        report.encoders = python_snippet(ENCODERS, str(work / "fi.json"))
        if not args.quick:
            print("flashinfer (.whl)", file=sys.stderr)
            wsample, wdoc = occlint_json([wheel], work / "fiw.json", runs, "--device", "b200")
            report.rows.append(Row(f"the same, as the .whl ({wheel.stat().st_size >> 20} MiB)",
                                   "occlint", wdoc["summary"]["kernels"], wsample, runs))
        if cuobj:
            print("flashinfer: cuobjdump", file=sys.stderr)
            c1 = [cuobjdump_files(cuobj, cubins, 1) for _ in range(runs)]
            c2 = [cuobjdump_files(cuobj, cubins, 2) for _ in range(runs)]
            functions = c1[0][1]
            report.rows.append(Row("", "cuobjdump, one process per file", functions,
                                   median_sample([s for s, _ in c1]), runs))
            report.rows.append(Row("", "cuobjdump, two processes at a time", c2[0][1],
                                   median_sample([s for s, _ in c2]), runs))
            report.counts.append(
                f"flashinfer: occlint {fi_kernels:,} kernels, cuobjdump {functions:,} "
                f"`Function` entries ({'equal' if fi_kernels == functions else 'DIFFERENT'}); "
                "each cubin holds a kernel and its `…GetSmemSize` helper, both entry "
                "functions, and both tools count both")

        # NVIDIA: libcurand
        print("libcurand", file=sys.stderr)
        sample, doc = occlint_json([libcurand], work / "curand.json", runs)
        in_nv_fatbin = sum(1 for k in doc["kernels"] if (k["entry"] or "").startswith(
            ".nv_fatbin"))
        report.rows.append(Row(f"{libcurand.name} ({libcurand.stat().st_size >> 20} MiB)",
                               "occlint (every SASS entry)", doc["summary"]["kernels"],
                               sample, runs))
        if cuobj:
            csample, functions = cuobjdump_files(cuobj, [libcurand], 1)
            report.rows.append(Row("", "cuobjdump", functions, csample, 1))
            report.counts.append(
                f"libcurand: occlint {doc['summary']['kernels']:,} kernels, "
                f"{in_nv_fatbin:,} of them in `.nv_fatbin`; cuobjdump {functions:,} `Function` "
                "entries (it reads `.nv_fatbin` only, not the fatbins kept in `.data`)")

        # AMD
        for label, libs in ((f"cupy-rocm-7-0 14.2.0, {len(amd_libs)} libraries", amd_libs),
                            (f"Debian librocrand1 5.3.3 ({librocrand.name})", [librocrand])):
            if not libs:
                continue
            print(label, file=sys.stderr)
            sample, doc = occlint_json(libs, work / "amd.json", runs)
            kernels = doc["summary"]["kernels"]
            report.rows.append(Row(label + f", {sum(p.stat().st_size for p in libs) >> 20} MiB",
                                   "occlint (every code object)", kernels, sample, runs))
            dirs = [cache / "code-objects" / lib.name for lib in libs]
            objects = [co for lib, d in zip(libs, dirs, strict=True)
                       for co in extract_code_objects(lib, d)]
            osample, odoc = occlint_json(dirs, work / "co.json", runs)
            report.rows.append(Row(f"  the same, {len(objects):,} extracted code objects",
                                   "occlint", odoc["summary"]["kernels"], osample, runs))
            if readelf:
                rsample, notes = readelf_notes(readelf, objects, 1)
                r2sample, _ = readelf_notes(readelf, objects, 2)
                report.rows.append(Row("", "llvm-readelf --notes, one process per file",
                                       notes, rsample, 1))
                report.rows.append(Row("", "llvm-readelf --notes, two at a time", notes,
                                       r2sample, 1))
                report.counts.append(
                    f"{label}: occlint {kernels:,} kernels in the libraries, "
                    f"{odoc['summary']['kernels']:,} in the extracted code objects; "
                    f"llvm-readelf {notes:,} kernel descriptors (`.symbol: *.kd`) in the notes")

        # start-up
        print("start-up", file=sys.stderr)
        small_runs = 5 if args.quick else 15
        report.timings["occlint --version"] = repeated([*OCCLINT, "--version"], small_runs)
        report.timings[f"occlint {SMALL_FILE} --device w7800"] = repeated(
            [*OCCLINT, SMALL_FILE, "--device", "w7800"], small_runs)
        machine["load_after"] = os.getloadavg()[0]
        return report, machine
    finally:
        shutil.rmtree(work, ignore_errors=True)


def machine_info() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh
                       if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    memory = ""
    try:
        with open("/proc/meminfo") as fh:
            memory = f"{int(fh.readline().split()[1]) / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                            capture_output=True, text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                           capture_output=True, text=True).stdout.strip()
    return {"cpu": cpu, "cores": os.cpu_count(), "memory": memory,
            "python": platform.python_version(), "system": platform.platform(terse=True),
            "commit": commit + (" with uncommitted changes" if dirty else ""),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


# -- the report ---------------------------------------------------------------------------------
NOTES = """
## Method

- occlint runs as users run it, `python -m occlint PATH ... --format json -o FILE
  --exit-zero` in a new process, with this checkout first on `PYTHONPATH` (the `occlint`
  console script is the same entry point; a version manager's shim in front of it, such as
  pyenv's, adds its own start-up). Wall time is from start to exit; CPU time comes from
  `os.wait4` (it includes the worker processes, which occlint waits for); the peak RSS of the
  largest process from GNU time's `%M` (GNU time forks the command from its own small
  process: started directly from the Python harness, a command would report the harness's
  own high-water mark); "all together" is the largest sum of the resident sets of occlint
  and its workers, sampled every 20 ms from /proc (shared pages are counted once per
  process, so it is an upper bound).
- `cuobjdump --dump-resource-usage` and `llvm-readelf --notes` run one process per file, as
  a build script calls them, started from Python with `subprocess.run` (that overhead is in
  their wall time, and the harness starting them is in their "other CPU s"); CPU time is
  the children's. Their peak RSS is that of the largest of the five largest files.
- AMD code objects for `llvm-readelf` are cut out of every offload bundle of each
  library's `.hip_fatbin` (uncompressed bundles, as in these files) into the cache.
- The stage breakdown below is single-process CPU time (`time.process_time`) of each step
  of the per-input work on the flashinfer directory, measured by the same script.

## Where the time goes (one process, flashinfer, CPU seconds)

{shares}; {total:.2f} s in all.

## What was optimised, and why

Profiling (cProfile, then the stage timer above) showed where the time went before this
work: reading the cubins, the standard library's JSON encoder (with `indent` it falls back
to pure Python), and the occupancy searches behind the advice and next steps, all in one
process.

1. **Worker processes** (`--jobs N`, default `auto`, config key `jobs`): each input is read,
   analysed, checked by the rules and its kernel records encoded to JSON text in a worker;
   only compact results come back (where the records are, findings, errors). Workers start with
   `spawn`, get consecutive chunks of at most 64 inputs, a few chunks each in flight, and
   the results are consumed in input order, so the output does not depend on the
   parallelism. `auto` starts workers only for 256+ files or 64+ MiB, where it pays.
2. **One occupancy computation per resource profile**: the occupancy, the next-step
   searches, the potential block size and the advice are memoised on the kernel's resource
   profile: the {profiled:,} flashinfer kernels that run on a B200 have {profiles} distinct
   occupancy and advice records between them.
3. **A faster JSON encoder** (`occlint/model/jsonenc.py`), byte-identical to
   `json.dumps(indent=2, ensure_ascii=False)`; sections that kernels of one profile share
   (occupancy, next steps, advice) are encoded once. On the flashinfer report, as one
   document: `json.dumps` {json_dumps:.2f} s of CPU, the encoder {jsonenc:.2f} s
   ({speedup:.1f}x), the two outputs {equal}.
4. **Kernel records stay text, out of the pipes** (`occlint/model/records.py`): each record is
   encoded once, where it is made; a worker appends its records to a file of its own and
   sends back only where they are, with the findings and errors; small in-process runs keep
   them in memory (moved to a file past 32 MiB). `--format json` copies the texts to the
   output, the other formats decode them. No process holds every record, and no document of
   dicts or giant string is built.
5. **Leaner reading**: ELF section and symbol tables are unpacked with
   `struct.iter_unpack` from one copy of each table, names sliced from one copy of the string
   table, tuples built without the NamedTuple constructor, symbols decoded once per ELF (AMD
   code objects decoded them twice); the directory walk uses `os.scandir` and one sort; the
   GPU-magic sniff uses `os.open`/`os.read`; the rule selection is computed once per
   settings, not once per input.
6. **zstd-compressed fatbin entries** (CUDA 13 libraries such as libcurand) were fed to the
   decompressor a few bytes per call: the step that keeps a hostile stream from expanding
   past its cap was scaled to the entry's own size. The step now allows 4 MiB of slack past
   the cap (memory stays bounded), so a small entry takes a few calls, not thousands.
7. **Large wheels are shared by the workers**: the members of a zip archive that may hold
   GPU code are read in groups of 2,048 (by name); with workers, each group of a large
   `.whl` / `.zip` is a task of its own. A group has its share of the archive's
   decompression budget and its own error limit, so reading the groups apart gives the same
   document as reading them in one pass (`tests/test_jobs.py` checks it byte for byte).
   Members of at most 64 MiB are inflated by ISA-L (`python-isal`, a dependency where it has
   wheels; zlib otherwise), which inflates these cubins twice as fast as zlib: 0.33 s
   instead of 0.61 s for 255 MB of them, and 0.76 s through `zipfile`.
8. **Start-up stays lazy**: `multiprocessing`, the readers and the reporters are imported
   only when used.

Determinism: inputs are sorted as a sorted top-down walk visits them (files of a directory
before its subdirectories, each by name), whatever the command-line order or the order the
file system lists a directory in; results are assembled in that order; nothing depends on
hash seeds. `tests/test_determinism.py` compares JSON, SARIF and HTML byte for byte across
`--jobs`, argument orders, shuffled directory listings, a copy on tmpfs and hash seeds.

## Limits and plans

- **One library, one worker.** A large archive is shared by the workers (its member groups,
  above), but one large library is not: all its kernels are analysed, and held in memory,
  by one worker (the cupy run has three libraries for its two workers). Plan: split the
  offload bundles / fatbins of large libraries across workers the same way.
- Worker start-up (a new interpreter importing occlint) is why `auto` keeps small runs in
  one process.
- The pure-Python ELF and `.nv.info` parsing is now most of the per-input time (see the
  stages); the next step would be to parse only the sections a cubin's kernels need.
"""

def _n(value: float | int | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def markdown(report: Report, machine: dict, args: argparse.Namespace) -> str:
    runs = 1 if args.quick else args.runs
    out = ["# Performance", "",
           f"Measured by `python benchmarks/scale.py{' --quick' if args.quick else ''}` on "
           f"{machine['date']}: {machine['cpu']}, {machine['cores']} cores, "
           f"{machine['memory']} RAM, {machine['system']}, Python {machine['python']}, "
           f"occlint {machine['commit']}. One-minute load average "
           f"{machine['load_before']:.2f} before the measurements, "
           f"{machine['load_after']:.2f} after. Wall times are medians of {runs} run"
           f"{'s' if runs > 1 else ''} (start-up: of {len(next(iter(report.timings.values())))}), "
           "each started once the machine's CPUs had been less than 15 % busy for a second; "
           "\"other CPU s\" is what other processes of the machine used during the median "
           "run (CPU time taken from the cores the run could use). The page "
           "cache was warm (every input had been read before).", "",
           "## Results", "",
           "| input | tool | kernels | wall s | kernels/s | CPU s | peak RSS MB (largest "
           "process / all together) | other CPU s |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    for row in report.rows:
        s = row.sample
        out.append(f"| {row.input} | {row.tool} | {_n(row.kernels)} | {s.wall:.2f} | "
                   f"{_n(row.rate)} | {s.cpu:.2f} | {s.rss_mb:.0f} / {s.tree_mb:.0f} | "
                   f"{s.other_cpu:.2f} |")
    out += ["", "| start-up | median ms | min ms | max ms |", "|---|---:|---:|---:|"]
    for name, values in report.timings.items():
        out.append(f"| `{name}` | {statistics.median(values):.0f} | {min(values):.0f} | "
                   f"{max(values):.0f} |")
    raw = getattr(args, "save", None) or getattr(args, "render", None)
    if raw:
        where = Path(raw).resolve()
        shown = where.relative_to(REPO) if where.is_relative_to(REPO) else where.name
        out += ["", f"Raw results: `{shown}` (`python benchmarks/scale.py --render {shown}` "
                "writes this page again from them, measuring nothing)."]
    out += ["", "Kernel counts, cross-checked:", ""]
    out += [f"- {line}" for line in report.counts]

    fi = report.rows[0]
    version = statistics.median(report.timings["occlint --version"])
    small = statistics.median(next(v for k, v in report.timings.items() if SMALL_FILE in k))
    checks = [
        (f"≥ {TARGET_RATE:,} kernels/s into JSON (flashinfer, extracted)",
         f"{fi.rate:,.0f} kernels/s", fi.rate >= TARGET_RATE),
        (f"peak RSS ≤ {TARGET_RSS_MB} MB on the extracted run (all processes together)",
         f"{fi.sample.tree_mb:.0f} MB (largest process {fi.sample.rss_mb:.0f} MB)",
         fi.sample.tree_mb <= TARGET_RSS_MB),
        (f"`occlint --version` ≤ {TARGET_VERSION_MS} ms", f"{version:.0f} ms",
         version <= TARGET_VERSION_MS),
        (f"one small code object ≤ {TARGET_SMALL_MS} ms", f"{small:.0f} ms",
         small <= TARGET_SMALL_MS),
    ]
    wheel = next((r for r in report.rows if ".whl" in r.input), None)
    if wheel is not None:
        checks.insert(1, (f"≥ {TARGET_RATE:,} kernels/s into JSON (flashinfer, the .whl)",
                          f"{wheel.rate:,.0f} kernels/s", wheel.rate >= TARGET_RATE))
        checks.insert(3, (f"peak RSS ≤ {TARGET_RSS_MB} MB on the .whl run (all processes "
                          "together)", f"{wheel.sample.tree_mb:.0f} MB (largest process "
                          f"{wheel.sample.rss_mb:.0f} MB)", wheel.sample.tree_mb <= TARGET_RSS_MB))
    out += ["", "## Targets", "", "| target | measured | met |", "|---|---|---|"]
    out += [f"| {t} | {m} | {'yes' if ok else '**no**'} |" for t, m, ok in checks]
    if args.quick:
        out += ["", "(--quick: a 2,000-cubin subset; the targets are for the whole wheel.)"]
    out += ["", notes(report).strip()]
    return "\n".join(out) + "\n"


def notes(report: Report) -> str:
    """Method, what was optimised and why, limits: prose around this run's numbers."""
    stages = report.stages
    total = sum(stages.values()) or 1.0
    shares = ", ".join(f"{name} {seconds:.2f} s ({seconds / total:.0%})"
                       for name, seconds in stages.items())
    enc = report.encoders
    speedup = enc["json.dumps"] / enc["occlint.jsonenc"] if enc.get("occlint.jsonenc") else 0
    return NOTES.format(shares=shares, total=total, profiles=report.profiles,
                        profiled=report.profiled,
                        json_dumps=enc.get("json.dumps", 0.0),
                        jsonenc=enc.get("occlint.jsonenc", 0.0), speedup=speedup,
                        equal="byte-identical" if enc.get("equal") else "NOT identical")


def load_results(saved: dict) -> tuple[Report, dict]:
    data = saved["report"]
    rows = [Row(**{**r, "sample": Sample(**r["sample"])}) for r in data["rows"]]
    return Report(**{**data, "rows": rows}), saved["machine"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", default="/work/cache", help="download and extraction "
                        "directory (default: /work/cache)")
    parser.add_argument("--quick", action="store_true", help="a subset, one run each")
    parser.add_argument("--runs", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument("--out", help="report file (default: docs/performance.md; with "
                        "--quick, standard output)")
    parser.add_argument("--compare", metavar="REV", help="also time occlint as of this git "
                        "revision on the flashinfer directory (e.g. the commit before an "
                        "optimisation)")
    parser.add_argument("--max-load", type=float, default=0.5,
                        help="wait for the load average to drop below this before measuring")
    parser.add_argument("--wait", type=float, default=600,
                        help="wait at most this many seconds for that")
    parser.add_argument("--save", metavar="FILE", help="also write the raw results as JSON")
    parser.add_argument("--render", metavar="FILE", help="measure nothing: write the report "
                        "from raw results saved with --save")
    args = parser.parse_args()
    if args.render:
        saved = json.loads(Path(args.render).read_text(encoding="utf-8"))
        report, machine = load_results(saved)
        args.quick, args.runs = saved["quick"], saved["runs"]
    else:
        report, machine = run_benchmarks(args)
    if args.save:
        Path(args.save).write_text(json.dumps(
            {"quick": args.quick, "runs": args.runs, "machine": machine,
             "report": dataclasses.asdict(report)}, indent=1) + "\n", encoding="utf-8")
    text = markdown(report, machine, args)
    out = args.out or (None if args.quick else str(REPO / "docs" / "performance.md"))
    if out:
        kept = Path(out).read_text(encoding="utf-8") if Path(out).is_file() else ""
        if HAND_MARKER in kept:  # sections other benchmarks document: kept as they are
            text = text.rstrip() + "\n\n" + kept[kept.index(HAND_MARKER):]
        Path(out).write_text(text, encoding="utf-8")
        print(f"wrote {out}", file=sys.stderr)
    else:
        sys.stdout.write(text)


HAND_MARKER = "<!-- Sections below are kept by hand"


if __name__ == "__main__":
    main()
