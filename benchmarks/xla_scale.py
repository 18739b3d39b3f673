"""XLA profile scale benchmark: the JAX fixture's events replicated, end to end.

    python benchmarks/xla_scale.py [--launches 192000] [--repeats 3]

Builds ``.cache/traces/xla_scale.trace.json.gz`` (and the fixture's ``.xplane.pb`` beside
it, for the device) by replicating every event of fixtures/traces/xla/xla_steps.trace.json.gz
(a real JAX profile: host events and kernels alike, about 6.4 events per kernel), each copy
shifted by 2 ms, written in XLA's own compact layout; and the same events pretty-printed
(``json.dumps(indent=1)``: the ijson path). The build runs in a process of its own, so that
the measured processes are not forked from one holding the trace. Then runs
``python -m occlint TRACE --format json -o OUT --exit-zero`` in a new process
``--repeats`` times per input and reports the median wall time and CPU time (user + system,
from wait4: less disturbed than wall time on a shared machine), launches per CPU second and
the peak resident memory (the process's own, from wait4); the JSON output is checked: every
launch counted.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

from benchmarks.traces_scale import CACHE, quiet, warm  # noqa: E402
from occlint.readers.dwarf import encode_uleb  # noqa: E402  (protobuf varints are ULEB128)
from occlint.readers.traces.xplane import parse_fields  # noqa: E402

FIXTURE = REPO / "fixtures" / "traces" / "xla" / "xla_steps.trace.json.gz"
XPLANE = FIXTURE.with_name("xla_steps.xplane.pb")


def build(launches: int) -> tuple[list[Path], int]:
    """The replicated trace in XLA's layout and pretty-printed; the launches each holds."""
    with gzip.open(FIXTURE) as fh:
        trace = json.load(fh)
    events = trace["traceEvents"]
    meta = [e for e in events if e.get("ph") == "M"]
    timed = [e for e in events if e.get("ph") == "X"]
    kernels = sum("kernel_details" in e.get("args", {}) for e in timed)
    copies = -(-launches // kernels)
    out = list(meta)
    for copy in range(copies):
        for e in timed:
            out.append({**e, "ts": round(e["ts"] + copy * 2000.0, 3)})
    out.append({})  # XLA's writer ends the list with an empty event
    trace["traceEvents"] = out
    CACHE.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, layout in (("xla_scale", {"separators": (",", ":")}),
                         ("xla_scale_pretty", {"indent": 1})):
        path = CACHE / f"{name}.trace.json.gz"
        with gzip.open(path, "wt", compresslevel=6) as fh:
            json.dump(trace, fh, **layout)
        shutil.copy(XPLANE, CACHE / f"{name}.xplane.pb")
        paths.append(path)
    return paths, copies * kernels


def _fields(data: bytes) -> list[tuple[int, int, bytes | int]]:
    """(number, wire type, value) of a message's fields (varints and length-delimited)."""
    return list(parse_fields(data))


def _encode(fields: list[tuple[int, int, bytes | int]]) -> bytes:
    out = bytearray()
    for number, wire, value in fields:
        out += encode_uleb(number << 3 | wire)
        out += encode_uleb(len(value)) + value if isinstance(value, bytes) else encode_uleb(value)
    return bytes(out)


def build_xplane(copies: int) -> Path:
    """The fixture's XSpace (its GPU plane) with every event of every line repeated
    ``copies`` times, each copy 2 ms later (XEvent.offset_ps, field 2)."""
    space = []
    for number, wire, plane in _fields(XPLANE.read_bytes()):
        assert number == 1 and isinstance(plane, bytes)
        new_plane = []
        for pn, pw, pv in _fields(plane):
            if pn == 3 and isinstance(pv, bytes):  # a line: its events (field 4) repeated
                line = _fields(pv)
                events = [f for f in line if f[0] == 4]
                rest = [f for f in line if f[0] != 4]
                grown = [(4, 2, _encode([(n, w, v + copy * 2_000_000_000 if n == 2 else v)
                                         for n, w, v in _fields(e[2])]))  # type: ignore
                         for copy in range(copies) for e in events]
                pv = _encode(rest[:3] + grown + rest[3:])
            new_plane.append((pn, pw, pv))
        space.append((number, wire, _encode(new_plane)))
    path = CACHE / "xla_scale_alone" / "xla_scale.xplane.pb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_encode(space))
    return path


def run_once(trace: Path, out: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak resident memory (MB)."""
    env = {**os.environ, "PYTHONPATH": f"{REPO}:{os.environ.get('PYTHONPATH', '')}"}
    quiet()
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "occlint", str(trace), "--format", "json",
                             "-o", str(out), "--exit-zero"], env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"occlint exited {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=192_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--build-only", action="store_true")
    args = parser.parse_args()
    if args.build_only:
        paths, launches = build(args.launches)
        paths.append(build_xplane(launches // 48))
        print(json.dumps({"paths": [str(p) for p in paths], "launches": launches}))
        return
    built = json.loads(subprocess.run(
        [sys.executable, __file__, "--build-only", "--launches", str(args.launches)],
        check=True, capture_output=True, text=True).stdout)
    launches, out = built["launches"], CACHE / "xla_out.json"
    print("| input | bytes | launches | wall (median of runs) | CPU (median) | "
          "launches per CPU s | peak RSS |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in built["paths"]:
        path = Path(name)
        warm(path)
        runs = [run_once(path, out) for _ in range(args.repeats)]
        doc = json.loads(out.read_text())
        assert doc["summary"]["launches"]["launches"] == launches
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        print(f"| {path.name} | {path.stat().st_size:,} | {launches:,} | {wall:.2f} s "
              f"({', '.join(f'{r[0]:.2f}' for r in runs)}) | {cpu:.2f} s | "
              f"{launches / cpu:,.0f} | {max(r[2] for r in runs):.0f} MB |")


if __name__ == "__main__":
    main()
