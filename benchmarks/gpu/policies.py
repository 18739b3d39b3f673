"""Score block-size policies offline on a validation run's measured block sweeps.

    python benchmarks/gpu/policies.py docs/validation/h200-run2.json [--cubins DIR]

For every kernel of the run, each policy picks a block size; its score is the sweep's
fastest time over the time measured at that block (the block sweep launches every block
size with the same grid rule, so this compares block sizes only). occlint's policies are
evaluated by occlint itself on the suite's cubins (fixtures/nvidia/gpu-suite, as run.py uses),
with the run's problem sizes; this is how the defaults in occlint.judgement.advice were chosen
(docs/validation.md, "Calibration").
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from benchmarks.gpu.summarize import load  # noqa: E402
from occlint.analysis.kernels import LaunchConfig, analyse_kernel  # noqa: E402
from occlint.devices.db import shipped_db  # noqa: E402
from occlint.judgement.advice import AdviceSettings, advice  # noqa: E402
from occlint.validate.harness import find_kernel  # noqa: E402


def occlint_policy(preferred: int):
    def pick(result: dict, cubins: Path) -> int:
        cubin = cubins / Path(result["binary"]).name
        kernel = find_kernel(cubin, result["kernel"])
        device = shipped_db().get(result["device"]["occlint_device"])
        report = analyse_kernel(kernel, device,
                                LaunchConfig(problem_size=result["problem_size"]))
        return advice(report, AdviceSettings(preferred_block=preferred))["recommended_block"]
    return pick


def before_calibration(result: dict, cubins: Path) -> int:
    """occlint before this calibration: the smallest best-occupancy block >= 128."""
    at_best = result["advice"]["block_sizes_at_best"]
    return next((b for b in at_best if b >= 128), at_best[-1])


POLICIES = {
    "occlint (preferred-block 256)": occlint_policy(256),
    "occlint, preferred-block 128": occlint_policy(128),
    "occlint, preferred-block 512": occlint_policy(512),
    "before calibration (smallest >= 128)": before_calibration,
    "fixed 128": lambda r, c: 128,
    "fixed 256": lambda r, c: 256,
    "max potential block size": lambda r, c: r["baselines"]["max_potential"]["block"],
}


def score(results: list[dict], cubins: Path) -> dict[str, list[tuple[str, int, float]]]:
    out: dict[str, list[tuple[str, int, float]]] = {name: [] for name in POLICIES}
    for r in results:
        if "error" in r:
            continue
        times = {m["block"]: m["ms"] for m in r["block_sweep"]}
        fastest = min(times.values())
        for name, policy in POLICIES.items():
            block = policy(r, cubins)
            out[name].append((r["name"], block, fastest / times[block]))
    return out


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--cubins", type=Path,
                        default=HERE.parent.parent / "fixtures" / "nvidia" / "gpu-suite")
    args = parser.parse_args()
    doc = load(args.results)
    table = score(doc["results"], args.cubins)
    print("| Policy | Geomean | Worst kernel |\n|---|---:|---|")
    for name, rows in table.items():
        worst = min(rows, key=lambda row: row[2])
        print(f"| {name} | {100 * geomean([x for _, _, x in rows]):.1f}% | "
              f"{worst[0]} ({worst[1]}): {100 * worst[2]:.1f}% |")


if __name__ == "__main__":
    main()
