"""Mutation fuzzer for the profiler-trace readers (issue 12's bad-input guarantees).

    python benchmarks/fuzz_traces.py [--seed N] [--inputs N]

Mutates the trace fixtures — Kineto JSON in libkineto's layout and minified (the ijson
path), rocprofv3 CSV and JSON, Nsight Systems and rocpd SQLite databases — with byte flips,
JSON-ish insertions (brackets, quotes, an extra kernel-event line, ``1e309``, huge and
negative numbers), deletions and truncations, and runs each through ``occlint.pipeline.run.execute``
(reading, grouping, analysis, rules). Fails on any exception, an error message of more than
one line, or an input taking more than ``--slow`` seconds. The seeds make every input
reproducible; tests/test_traces_fuzz.py runs a short deterministic pass in CI.

Bugs it found (each with a regression test): a rocprofv3 number overflowing to infinity
(OverflowError), infinite numbers in Kineto events and nsys REAL columns, invalid UTF-8 in an
SQLite schema (UnicodeDecodeError from the sqlite3 module).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import tempfile
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
TRACES = REPO / "fixtures" / "traces"

INSERTS = (b"{", b"}", b"[", b"]", b'"', b",", b"\n  {\n    \"ph\": \"X\", \"cat\": \"kernel\"",
           b"-1", b"1e309", b"null", b"99999999999999999999", b"\x00", b"\xff", b"\xc3(")
VALUES = (b"-", b"1e9", b'"x"', b"[1,2]", b"{}", b"1e309", b"0")


def seeds() -> list[tuple[str, bytes]]:
    """(file name to write, bytes) of every seed input."""
    out = []
    kineto = sorted((TRACES / "kineto").glob("*.pt.trace.json.gz"))
    for path in kineto[:2]:  # the small ones
        text = gzip.decompress(path.read_bytes())
        out.append(("t.pt.trace.json", text[:300_000]))
    raw = json.loads(gzip.decompress((TRACES / "kineto" / "raw_odd.pt.trace.json.gz")
                                     .read_bytes()))
    out.append(("m.pt.trace.json", json.dumps(raw, separators=(",", ":")).encode()))
    for name in ("mi250_minitoy_train", "mi300x_sglang_decode"):  # ROCm: joins, replays
        out.append(("r.pt.trace.json",
                    gzip.decompress((TRACES / "kineto" / "rocm" / f"{name}.json.gz").read_bytes())))
    for path in sorted((TRACES / "rocprof").rglob("*.csv")):
        out.append(("1_kernel_trace.csv", path.read_bytes()))
    for path in sorted((TRACES / "rocprof" / "json").glob("*.json")):
        out.append(("1_results.json", path.read_bytes()))
    for path in [*sorted((TRACES / "nsys").glob("*.sqlite")),
                 *sorted((TRACES / "rocprof" / "rocpd").glob("*.db"))]:
        out.append(("x.sqlite", path.read_bytes()))
    return out


def mutate(rng: random.Random, name: str, data: bytes) -> bytes:
    b = bytearray(data)
    binary = name.endswith(".sqlite")
    for _ in range(rng.randint(1, 30 if binary else 8)):
        if not b:
            break
        i = rng.randrange(100 if binary and len(b) > 200 else 0, len(b))
        op = rng.random()
        if binary or op < 0.3:
            b[i] = rng.randrange(256)
        elif op < 0.5:
            b[i:i] = rng.choice(INSERTS)
        elif op < 0.7:
            del b[i:i + rng.randint(1, 200)]
        elif op < 0.8:
            del b[i:]
        else:
            j = b.find(b": ", i)
            if j >= 0:
                b[j + 2:j + 3] = rng.choice(VALUES)
    if binary and rng.random() < 0.2:
        del b[rng.randrange(100, len(b)):]
    return bytes(b)


def run(seed: int, inputs: int, slow: float = 10.0, verbose: bool = False) -> list[str]:
    """Fuzz ``inputs`` inputs from ``seed``; the failures, one line each."""
    from occlint.pipeline.run import Options, execute

    rng = random.Random(seed)
    corpus = seeds()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(inputs):
            name, data = rng.choice(corpus)
            path = Path(tmp) / name
            path.write_bytes(mutate(rng, name, data))
            start = time.perf_counter()
            try:
                doc = execute(Options(paths=[str(path)], isolated=True, jobs=1)).doc
                bad = [e for e in doc["errors"] if "\n" in e["message"] or "\r" in e["message"]]
                if bad:
                    failures.append(f"seed {seed} input {index} ({name}): multi-line error")
            except Exception as exc:  # the finding: no input may raise
                failures.append(f"seed {seed} input {index} ({name}): {type(exc).__name__}: "
                                f"{exc}"[:300])
                if verbose:
                    traceback.print_exc()
            if time.perf_counter() - start > slow:
                failures.append(f"seed {seed} input {index} ({name}): slow")
    return failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--inputs", type=int, default=2000)
    parser.add_argument("--slow", type=float, default=10.0)
    args = parser.parse_args()
    failures = run(args.seed, args.inputs, args.slow, verbose=True)
    for line in failures:
        print(line)
    print(f"{args.inputs} inputs, {len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
