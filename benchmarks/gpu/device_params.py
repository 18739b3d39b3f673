"""A GPU's launch-model parameters from its characterisation (issue 28).

    python -m benchmarks.gpu.device_params CHARACTERIZATION.json[+PARTIAL.json] [...]

Reads what benchmarks/gpu/characterize.py measured and prints the device database's
``[[device]]`` entry of device_db/launch_model.toml: each parameter a reduction of the
measured points, named in the comments. Nothing here reads occlint's output.
"""

from __future__ import annotations

import gzip
import json
import math
import statistics
import sys
from pathlib import Path

PTX = Path(__file__).with_name("characterize.sm_90.ptx.gz")


def loads_per_pass(ptx: Path = PTX) -> dict[str, int]:
    """Loads each characterisation kernel's loop issues in one pass, as the compiler built
    it (the PTX NVRTC makes of characterize.SOURCE, benchmarks/gpu/nvrtc_ptx.py): a kernel
    written with one load a pass (``U`` = 1) is unrolled four times by the compiler, so
    its loads in flight are four times what its source says."""
    from occlint.readers.nvidia import ptx as reader

    out = {}
    for entry in reader._split(gzip.decompress(ptx.read_bytes()).decode()):
        lengths = [(lp.tail - lp.head, lp) for lp in reader._loops(
            entry, reader._origins(entry), reader._Defs(entry)) if lp.stride]
        if lengths:
            body = max(lengths, key=lambda t: t[0])[1]
            out[entry.name] = sum(op.opcode.startswith("ld.global")
                                  for op in entry.ops[body.head:body.tail + 1])
    return out


# the rows each curve is reduced from: loops holding four loads per thread in flight, as
# compiled. A copy written with one load a pass is unrolled four times and its four loads
# issued together (its SASS, benchmarks/gpu/loop_depth.py); a read so written was not on
# the H200's characterisation (it drew 0.57-0.6 of the read written with four loads a
# pass at 1 to 8 warps: its loads waited on its sums), so the reads are those written
# with four, which the compiler leaves as they are (the H100's one- and four-load reads
# agree within 1 %). The L2's curve stays the reads written with one load (at its latency
# they were not short of loads: they drew more than the four-load reads there)
CURVE_ROWS = {"copy": 1, "read": 4}
# the element curve's blocks: up to 8 warps (timing.ELEMENT_WARPS), whose waves end
# together; bigger blocks' stragglers the model adds apart (timing's tail)
ELEMENT_BLOCK = 256


def _curve(rows: list[dict], kind: str, sms: int, level: str = "dram") -> list[list[float]]:
    """(bytes in flight per SM of one load per thread a pass, as a source writes a loop,
    GB/s): the loops of CURVE_ROWS, every SM busy, X their bytes a pass over the loads
    written a pass; the median over vector widths and block shapes at each X. Four loads
    are truly in flight at each X: the model's facts count a loop's loads as its source
    writes them, its unrolling apart (docs/validation.md, "Loads in flight")."""
    by_x: dict[int, list[float]] = {}
    unroll = CURVE_ROWS[kind] if level == "dram" else 1
    for r in rows:
        if (r["level"] == level and r["kind"] == kind and r["unroll"] == unroll
                and r["sms"] == sms):
            by_x.setdefault(r["bytes_in_flight_per_sm"] // unroll, []).append(r["gbps"])
    return [[x, round(statistics.median(v), 1)] for x, v in sorted(by_x.items())]


def _resident(row: dict, arch: str = "sm_90") -> int:
    """Blocks per SM of an ``element_bandwidth`` row: the CUDA occupancy calculator's, as
    occlint computes it (tests/test_occupancy_nvidia_oracle.py checks it against NVIDIA's)."""
    from occlint.devices.db import shipped_db
    from occlint.occupancy import nvidia

    func = nvidia.NvFunction(registers=row["registers"], max_threads=1024, optin=True,
                             max_dynamic_shared=227 * 1024)
    return nvidia.active_blocks(shipped_db().nv_archs[arch], func, row["block"],
                                row["smem"]).blocks_per_sm


def _rising(by_x: dict[int, list[float]], digits: int) -> list[list[float]]:
    """The median at each X, then the running maximum (more in flight never does less)."""
    out, top = [], 0.0
    for x, v in sorted(by_x.items()):
        top = max(top, statistics.median(v))
        out.append([x, round(top, digits)])
    return out


def element_curve(rows: list[dict], block_rate: float) -> list[list[float]]:
    """(bytes of loads in flight per SM, GB/s of copy traffic) of one element per thread:
    resident threads per SM x the bytes each loads, against what the copy drew. Rows whose
    blocks take half their time or more to start (blocks / block_rate) are left out, so
    that the start rate is not counted twice (the model adds it), and so are blocks past
    ELEMENT_BLOCK threads, whose stragglers the model adds (timing's tail); the median at
    each X, then the running maximum (more in flight never draws less)."""
    by_x: dict[int, list[float]] = {}
    for r in rows:
        if "smem" not in r or r["block"] > ELEMENT_BLOCK:
            continue
        threads = (1 << 28) // r["vector"]
        if threads / r["block"] / block_rate * 1e3 >= 0.5 * r["ms"]:
            continue
        x = _resident(r) * r["block"] * r["vector"] * 4
        by_x.setdefault(x, []).append(r["gbps"])
    return _rising(by_x, 1)


def fp64_ratio(rows: list[dict]) -> float:
    """The FP32 FMA rate at best over the FP64 one (``fma64``: the same one- and four-chain
    kernels in each precision, 8 to 64 warps an SM)."""
    best = {p: max(r["fma_per_s"] for r in rows if r["precision"] == p)
            for p in ("fp32", "fp64")}
    return round(best["fp32"] / best["fp64"], 2)


def issue_curve(rows: list[dict]) -> list[list[float]]:
    """(resident warps per SM x independent chains each, share of the peak FMA rate) of the
    ``fma_steady`` rows (16 waves): the median at each X over the 1- and 4-chain rows, then
    the running maximum (more in flight never issues less); the peak is the largest rate
    measured."""
    peak = max(r["fma_per_s"] for r in rows)
    by_x: dict[int, list[float]] = {}
    for r in rows:
        by_x.setdefault(r["resident_warps_per_sm"] * r["chains"], []).append(
            r["fma_per_s"] / peak)
    return _rising(by_x, 4)


def wave_curve(rows: list[dict]) -> list[list[float]]:
    """(waves of blocks, bandwidth over one wave's) of a grid-stride copy in 256-thread
    blocks, 8 resident per SM (one wave) to 512 per SM: the median over the float and
    float4 copies at each number of waves, then the running maximum."""
    by_x: dict[int, list[float]] = {}
    for kernel in {r["kernel"] for r in rows if "grid" in r}:
        by = {r["blocks_per_sm"]: r["gbps"] for r in rows if r.get("kernel") == kernel
              and "grid" in r}
        for per_sm, gbps in by.items():
            by_x.setdefault(per_sm // 8, []).append(gbps / by[8])
    return _rising(by_x, 3)


def wave_curve_one(rows: list[dict]) -> list[list[float]]:
    """(waves of blocks, bandwidth over one wave's) of grid-stride copies with one block
    resident per SM (``characterize.wave_resident``, dynamic shared memory capping them):
    the median over kernels, block sizes and repeats at each number of waves. Not a
    running maximum: with one block an SM, more waves lose (each wave's blocks end
    together, nothing else resident keeps the SM's loads in flight). The rows of 2 to 8
    resident are not used: their shared memory shrinks the L1 the loads go through, and
    the 8-resident curve measured without it (``wave_curve``) stands for them."""
    one = {(r["kernel"], r["block"], r["repeat"]): r["gbps"] for r in rows
           if r["resident"] == 1 and r["waves"] == 1}
    by: dict[int, list[float]] = {}
    for r in rows:
        if r["resident"] == 1:
            by.setdefault(r["waves"], []).append(
                r["gbps"] / one[(r["kernel"], r["block"], r["repeat"])])
    return [[waves, round(statistics.median(v), 3)] for waves, v in sorted(by.items())]


def row_curves(rows: list[dict]) -> dict[int, list[list[float]]]:
    """Per element width (4 and 16 bytes: ``characterize.row_bandwidth``'s floats and
    float4s), (bytes a 2-D block's row holds, bandwidth over the same copy's in rows of the
    whole block) of 256-thread blocks; then the running maximum, capped at 1 (a wider row
    never draws less). The 64-thread rows are not used: those blocks start no faster than
    the block rate allows, whatever their rows (about 835 GB/s from 8-byte rows up)."""
    out = {}
    for vector in sorted({r["vector"] for r in rows}):
        by = {r["row_bytes"]: r["gbps"] for r in rows
              if r["vector"] == vector and r["block"][0] * r["block"][1] == 256}
        whole = by[max(by)]
        out[4 * vector] = [[x, min(y, 1.0)] for x, y in _rising(
            {x: [g / whole] for x, g in by.items()}, 3)]
    return out


def reduce_curve(rows: list[dict], sms: int, kernel: str = "reduce_store"
                 ) -> list[list[float]]:
    """(threads per block, us) a block's reduction tree adds to its lifetime: blocks capped
    at two per SM by dynamic shared memory, the tree ending in a store (``reduce_store``)
    against the same block with one barrier and no tree (``reduce_none``), over the waves
    of blocks the launch ran (blocks / (SMs x 2))."""
    by = {(r["kernel"], r["block"]): r for r in rows if r["smem"]}
    out = []
    for block in sorted({b for _, b in by}):
        tree, none = by[(kernel, block)], by[("reduce_none", block)]
        waves = tree["blocks"] / (sms * 2)
        out.append([block, round(max(tree["ms"] - none["ms"], 0.0) * 1e3 / waves, 3)])
    return out


def tree_curve(rows: list[dict]) -> list[list[float]]:
    """(threads per block, ns) a block's reduction tree in shared memory costs the chip
    when trees are what its SMs do: 2^18 blocks as many per SM as fit, the tree ending in
    a store (``reduce_store``) against the same block with one barrier and no tree
    (``reduce_none``), over the blocks. Up to 128 threads the block starts hide it."""
    by = {(r["kernel"], r["block"]): r for r in rows
          if not r["smem"] and r["blocks"] == 1 << 18}
    return [[block, round(max(by[("reduce_store", block)]["ms"]
                              - by[("reduce_none", block)]["ms"], 0.0) * 1e6 / (1 << 18), 3)]
            for block in sorted({b for _, b in by})]


# the p-norms tried for an atomics' queue joining the rest of a launch
BLOCK_ATOMICS_PS = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 32.0)


def loop_tree_curve(rows: list[dict], kernel: str = "sum_store") -> list[list[float]]:
    """(threads per block, ns) of the chip's time each more block ending in a tree costs a
    grid-stride loop (reduce_stream: ``sum_store`` over 2^26 floats, the slope of its time
    over 1,056 to 42,240 blocks, least squares; none below zero); ``sum_shfl_store``: a
    block's sum by warp shuffles instead (the loop sum curve)."""
    by: dict[tuple[int, int], list[float]] = {}
    for r in rows:
        if r["kernel"] == kernel and r["n"] == 1 << 26 and r["grid"] >= 1056:
            by.setdefault((r["block"], r["grid"]), []).append(r["ms"])
    out = []
    for block in sorted({b for b, _ in by}):
        pts = [(g, statistics.median(v) * 1e6) for (b, g), v in sorted(by.items()) if b == block]
        slope = statistics.linear_regression(*zip(*pts, strict=True)).slope
        out.append([block, round(max(slope, 0.0), 3)])
    return out


def queue_memory_p(rows: list[dict], atomic_one_ns: float) -> float:
    """The p by which a block's atomic on one address joins a launch's memory
    (timing.QUEUE_MEMORY_P): reduce_stream's ``sum_atomic`` over 2^26 floats against
    ``sum_store`` where that launch is memory-bound (within 10 % of the fastest), the
    atomics' queue ``atomic_one_ns`` each; the p of the least mean |log error|."""
    by: dict[tuple[str, int, int], list[float]] = {}
    for r in rows:
        if r["n"] == 1 << 26:
            by.setdefault((r["kernel"], r["block"], r["grid"]), []).append(r["ms"])
    store = {key[1:]: statistics.median(v) for key, v in by.items() if key[0] == "sum_store"}
    fastest = min(store.values())
    cases = [(store[key[1:]], key[2] * atomic_one_ns * 1e-6, statistics.median(v))
             for key, v in by.items() if key[0] == "sum_atomic"
             and store[key[1:]] <= 1.1 * fastest]
    return min(BLOCK_ATOMICS_PS, key=lambda p: _pnorm_error(cases, p))


def _pnorm_error(cases: list[tuple[float, float, float]], p: float) -> float:
    """Mean |log error| of (a^p + b^p)^(1/p) against the measured time, over ``cases``."""
    return statistics.fmean(abs(math.log((a ** p + b ** p) ** (1 / p) / ms))
                            for a, b, ms in cases)


def block_atomics_p(runs: list[list[dict]], atomic_one_ns: float) -> float:
    """The p by which a block's one atomic on one address joins the rest of its launch
    (timing.BLOCK_ATOMICS_P): each run's block_reduce rows, a tree ending in an atomicAdd
    on one address (``reduce_atomic``) against the same tree ending in a store
    (``reduce_store``), the atomics' queue ``atomic_one_ns`` each; the p of the least mean
    |log error| over the runs' rows."""
    cases = []
    for rows in runs:
        by = {(r["kernel"], r["block"], r["blocks"], r["smem"]): r["ms"] for r in rows}
        cases += [(by[("reduce_store", *key)], key[1] * atomic_one_ns * 1e-6, ms)
                  for (kernel, *key), ms in by.items() if kernel == "reduce_atomic"]
    return min(BLOCK_ATOMICS_PS, key=lambda p: _pnorm_error(cases, p))


def pass_curve(rows: list[dict], sms: int) -> list[list[float]]:
    """(threads per block, us) a pass of a block per row costs its block besides its bytes
    (row_phases): the slope of the time a wave of blocks capped at two per SM takes over 1
    to 4 passes (least squares), each pass a load from DRAM and a block's sum by warp
    shuffles."""
    by = {(r["passes"], r["block"]): r for r in rows if r["smem"]}
    out = []
    for block in sorted({b for _, b in by}):
        pts = [(p, by[(p, block)]["ms"] * 1e3 / (by[(p, block)]["blocks"] / (sms * 2)))
               for p, b in sorted(by) if b == block]
        out.append([block, round(statistics.linear_regression(*zip(*pts, strict=True)).slope, 3)])
    return out


def math_fma(rows: list[dict], fma_per_s: float) -> dict[str, float]:
    """FP32 FMAs' issue a call of each math function costs (math_ops): the loop with the
    call less the loop without, over its calls, at the device's peak FMA rate."""
    by = {r["op"]: r for r in rows}
    none = by["none"]
    calls = none["grid"] * none["block"] * none["iters"] * none["chains"]
    return {op: round(max(r["ms"] - none["ms"], 0.0) * 1e-3 * fma_per_s / calls, 1)
            for op, r in by.items() if op != "none"}


def warp_reduce_curve(rows: list[dict], sms: int) -> list[list[float]]:
    """(threads per block, us) a block's sum by warp shuffles (``reduce_shfl``: two
    barriers, every thread reading it back) adds to its lifetime, as reduce_curve reads
    the tree's."""
    return reduce_curve(rows, sms, "reduce_shfl")


def reread_curve(rows: list[dict]) -> list[list[float]]:
    """(bytes per SM of the rows, share) of a block per row's second read of its row that
    the SM's cache serves (row_reread): a fresh second pass moves 12 bytes an element (two
    reads and a write), one finding its row in the cache 8, so the share is the time the
    re-read saves over a third of the fresh pass's; the median over the block sizes at each
    bytes per SM, within [0, 1]."""
    fresh = {(r["block"], r["cols"]): r["ms"] for r in rows if r["kernel"] == "fresh_row"}
    by_x: dict[int, list[float]] = {}
    for r in rows:
        if r["kernel"] == "reread_row":
            f = fresh[(r["block"], r["cols"])]
            by_x.setdefault(r["bytes_per_sm"], []).append((f - r["ms"]) / (f / 3))
    return [[x, round(min(max(statistics.median(v), 0.0), 1.0), 3)]
            for x, v in sorted(by_x.items())]


def l1_line_ns(rows: list[dict]) -> float:
    """ns an SM's L1 takes per 128-byte line a warp's request touches (l1_lines): the
    median of the time a request over its lines where it touches four or more (one or two
    lines cost more per line: the request's own issue)."""
    return round(statistics.median(r["ns_per_request_per_sm"] / r["lines"] for r in rows
                                   if r["lines"] >= 4), 3)


def atomic_set_ns(rows: list[dict]) -> float:
    """ns each word of a set every block adds to queues for a block's atomic (atomic_set):
    the launch's time over its blocks, the median over blocks of 64 to 1,024 threads and
    sets of 256 and 1,024 words (the time does not grow with the words up to there: the
    L2 serves the words side by side)."""
    return round(statistics.median(r["ms"] * 1e6 / r["blocks"] for r in rows
                                   if r["words"] <= 1024), 2)


def atomic_max_ns(rows: list[dict]) -> float:
    """ns an integer atomicMax request on one address takes (atomic_ops' atomic_max_warp:
    a warp's lane 0 each)."""
    return round(next(r["ns_per_atomic"] for r in rows if r["kernel"] == "atomic_max_warp"), 3)


# a share of the L2's gain under which copies past the L2 gain nothing measurable (their warm
# and cold durations differ by about as much as repeated runs do: 1-2 %)
KEPT_NOISE = 0.05


def l2_kept_curve(rows: list[dict], l2_bytes: int) -> list[list[float]]:
    """The share of a launch's data the L2 keeps from the launch before (1: all it can
    serve), against the launch's bytes read and written over the L2's size: each kernel's
    warm time's gain over its cold one at that size, over its gain at the smallest size
    (all of it kept), the median over the kernels; 0 past the last size still gaining."""
    cold = {(r["kernel"], r["bytes"]): r["us"] for r in rows if r["state"] == "cold"}
    gains: dict[str, dict[int, float]] = {}
    for r in rows:
        if r["state"] == "warm":
            gains.setdefault(r["kernel"], {})[r["bytes"]] = \
                max(0.0, 1 - r["us"] / cold[r["kernel"], r["bytes"]])
    sizes = sorted({size for g in gains.values() for size in g})
    out: list[list[float]] = []
    for size in sizes:
        share = statistics.median(min(1.0, g[size] / g[min(g)]) for g in gains.values())
        if (out and out[-1][1] == 0.0) or (size > l2_bytes and share < KEPT_NOISE):
            share = 0.0  # a copy's warm and cold times within their spread: nothing kept
        out.append([round(size / l2_bytes, 3), round(share, 3)])
    return out


def l2_copy_gain(rows: list[dict], kept: list[list[float]], l2_bytes: int) -> float:
    """A grid-stride copy's cold time over its warm one where the L2 keeps all of its data
    (``copy_float4_1``, sizes whose kept share is 0.9 or more): what a copy's bytes gain
    from the L2, its writes with its reads (its read curve gains more)."""
    shares = {round(x * l2_bytes): y for x, y in kept}
    cold = {r["bytes"]: r["us"] for r in rows
            if r["state"] == "cold" and r["kernel"] == "copy_float4_1"}
    return round(statistics.median(
        cold[r["bytes"]] / r["us"] for r in rows
        if r["state"] == "warm" and r["kernel"] == "copy_float4_1"
        and min(shares.items(), key=lambda kv: abs(kv[0] - r["bytes"]))[1] >= 0.9), 3)


def params(doc: dict) -> dict:
    env, sms = doc["env"], doc["env"]["sms"]
    bw = doc["bandwidth"]
    partial = [r["gbps"] / r["sms"] for r in bw if r["sms"] < sms]
    starts = [r["blocks_per_s"] for r in doc["block_starts"]
              if r["block"] <= 512 and r["blocks"] >= 1 << 22]
    starts_1024 = [r["blocks_per_s"] for r in doc["block_starts"]
                   if r["block"] == 1024 and r["blocks"] >= 1 << 22]
    peak = max(r["fma_per_s"] for r in doc["fma"])
    # one dependent chain per thread, as most kernels' arithmetic is; w resident warps per
    # SM (the launch puts 8 blocks of the row's block size on every SM, 64 warps at most):
    # rate = peak w / (w + k), k the warps at half the peak
    halves = []
    for r in doc["fma"]:
        if r["chains"] != 1:
            continue
        warps = r.get("resident_warps_per_sm") or min(8 * r["warps_per_sm"], 64)
        f = r["fma_per_s"] / peak
        halves.append(warps * (1 - f) / f)
    one = [r["ns_per_atomic"] for r in doc["atomics"] if r["kernel"] == "atomic_one"]
    block = [r["ns_per_atomic"] for r in doc["atomics"] if r["kernel"] == "atomic_block"]
    floor = doc.get("floor", {}).get("median_us")
    element = doc.get("element_bandwidth")
    rows = row_curves(doc["row_bandwidth"]) if doc.get("row_bandwidth") else {}
    kept = l2_kept_curve(doc["l2_residency"], env["l2_bytes"]) \
        if doc.get("l2_residency") else None
    return {
        "sms": sms,
        "read_curve": _curve(bw, "read", sms),
        "copy_curve": _curve(bw, "copy", sms),
        "l2_curve": _curve(bw, "read", sms, "l2") if doc.get("floor") else None,
        "l2_kept_curve": kept,
        "l2_bytes": env.get("l2_bytes"),
        "l2_copy_gain": l2_copy_gain(doc["l2_residency"], kept, env["l2_bytes"])
        if kept else None,
        "element_curve": element_curve(element, statistics.median(starts)) if element
        else None,
        "wave_curve": wave_curve(element) if element else None,
        "wave_curve_one": wave_curve_one(doc["wave_resident"]) if doc.get("wave_resident")
        else None,
        "issue_curve": issue_curve(doc["fma_steady"]) if doc.get("fma_steady") else None,
        "atomic_block_curve": [[r["block"], round(r["ns_per_atomic"], 4)]
                               for r in doc["block_atomics"]] if doc.get("block_atomics")
        else None,
        "reduce_curve": reduce_curve(doc["block_reduce"], sms) if doc.get("block_reduce")
        else None,
        "tree_curve": tree_curve(doc["block_reduce"]) if doc.get("block_reduce") else None,
        "loop_tree_curve": loop_tree_curve(doc["reduce_stream"]) if doc.get("reduce_stream")
        else None,
        "loop_sum_curve": loop_tree_curve(doc["reduce_stream"], "sum_shfl_store")
        if any(r["kernel"] == "sum_shfl_store" for r in doc.get("reduce_stream", ()))
        else None,
        "warp_reduce_curve": warp_reduce_curve(doc["block_reduce"], sms)
        if any(r["kernel"] == "reduce_shfl" for r in doc.get("block_reduce", ())) else None,
        "pass_curve": pass_curve(doc["row_phases"], sms) if doc.get("row_phases") else None,
        "math_fma": math_fma(doc["math_ops"], peak) if doc.get("math_ops") else None,
        "reread_curve": reread_curve(doc["row_reread"]) if doc.get("row_reread") else None,
        "l1_line_ns": l1_line_ns(doc["l1_lines"]) if doc.get("l1_lines") else None,
        "atomic_set_ns": atomic_set_ns(doc["atomic_set"]) if doc.get("atomic_set") else None,
        "atomic_max_ns": atomic_max_ns(doc["atomic_ops"]) if doc.get("atomic_ops") else None,
        "row_curve": rows.get(4), "row_curve_16": rows.get(16),
        "gather_gbs": round(statistics.median(
            r["sector_gbps"] for r in doc["gather_bandwidth"] if r["level"] == "dram"))
        if doc.get("gather_bandwidth") else None,
        "latency_ns": round(next(r["ns_per_load"] for r in doc["latency"]
                                 if r["level"] == "dram"), 1),
        "sm_bandwidth_gbs": round(max(partial), 1),
        "block_rate": float(f"{statistics.median(starts):.4g}"),
        "block_rate_1024": float(f"{statistics.median(starts_1024):.4g}"),
        "fma_per_s": float(f"{peak:.4g}"),
        "half_rate_warps": round(statistics.median(halves), 1),
        "fp64_ratio": fp64_ratio(doc["fma64"]) if doc.get("fma64") else None,
        "atomic_one_ns": round(statistics.median(one), 3),
        "atomic_spread_ns": round(statistics.median(block), 3),
        "floor_us": round(floor, 2) if floor else None,
        "stream_launch_us": round(doc["launch"]["stream_us_per_launch"], 2),
        "graph_node_us": round(doc["launch"]["graph_us_per_node"], 3),
        "measured": f"{env['gpu']}, {env['date']} UTC, CUDA runtime {env['runtime']}, "
                    f"driver {env['driver']}",
    }


def toml(name: str, p: dict) -> str:
    lines = ["[[device]]", f'name = "{name}"', 'basis = "measured"',
             f'source = "benchmarks/gpu/characterize.py: {p.pop("measured")}"']
    for k, v in p.items():
        if v is None:
            continue
        if isinstance(v, dict):  # a TOML inline table
            lines.append(f"{k} = {{" + ", ".join(f"{n} = {x}" for n, x in v.items()) + "}")
        else:
            lines.append(f"{k} = {json.dumps(v)}")
    return "\n".join(lines) + "\n"


def load(path: str | Path) -> dict:
    raw = Path(path).read_bytes()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def merged(*docs: dict) -> dict:
    """The first characterisation with the later ones' measurements (partial runs,
    ``characterize.py --only``) added; the first's environment."""
    out: dict = {}
    for doc in docs:
        out.update({k: v for k, v in doc.items() if k != "env" or "env" not in out})
    return out


def main(argv: list[str]) -> int:
    """Each argument a characterisation; ``A+B``: B's measurements added to A's."""
    for arg in argv:
        doc = merged(*(load(path) for path in arg.split("+")))
        print(toml(doc["env"]["gpu"], params(doc)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
