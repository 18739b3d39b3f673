"""The launch-time model at launch sites read from source alone (issue 28;
occlint.judgement.site_plan; docs/validation.md, "Launch sites from source alone").

The measured half: every swept held-out and zoo run's defects written as launch sites
(benchmarks/gpu/heldout/sites.py) and scored against the sweeps' times, per split, as a
trace's claims are (benchmarks/gpu/heldout/score.py). The site path's one choice of its
own, WIDE_GAIN, was made on the held-out fit halves; the score halves and the zoo are
scored with it. The other half: what is priced and what is not, and why."""

from __future__ import annotations

import json
from functools import cache

import pytest

from benchmarks.gpu.heldout import score, sites
from tests.conftest import REPO


@cache
def _rows(kind: str) -> tuple[dict, ...]:
    out = []
    for run in sites.runs():
        if f"/{kind}" in str(run):
            out.extend(r for r in score.rows(run, "source", doc=sites.doc(run))
                       if r["family"] not in sites.LOOPS)
    return tuple(out)


@pytest.mark.parametrize(("kind", "split"), [("heldout", "score"), ("zoo", None)])
def test_sites_priced_from_source_reach_the_best(kind, split):
    """One element per thread, its registers unknown (read at 32 and 64), no time: the
    advised launches reach 0.97 of the best measured (geometric mean; the habit of 256
    threads 0.94-0.95), the claims hold for 90 % or more, and no more than 1 launch in 200
    is advised over 3 % slower (held-out score halves: 4 of 986, tiles and one elementwise
    kernel of 56-60 registers; the zoo: none)."""
    rows = [r for r in _rows(kind) if split is None or r["split"] == split]
    t = score.targets(rows)
    assert len(rows) > 200 and t["claims"] > 150
    assert t["advised_vs_best"] >= 0.97, t["advised_vs_best"]
    assert t["advised_vs_best"] > t["habit_vs_best"]
    assert t["inside"] >= 0.90, t["inside"]
    assert len(t["slower"]) <= len(rows) / 200, t["slower"]
    assert len(t["false_warnings"]) <= 1, t["false_warnings"]


SCALE = """__global__ void scale(float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
void run(float *x, int n) {
    scale<<<LAUNCH>>>(x, 2.0f, n);
}
"""


def _doc(occlint, tmp_path, launch: str, *devices: str, kernel: str = SCALE) -> dict:
    (tmp_path / "k.cu").write_text(kernel.replace("LAUNCH", launch))
    args = [a for d in devices for a in ("--device", d)]
    return occlint("k.cu", *args, "--format", "json", "--exit-zero", cwd=tmp_path).json()


def test_a_block_of_100_is_priced_at_an_assumed_size(occlint, tmp_path):
    """``scale<<<(n + 99) / 100, 100>>>``: LCH001's fix is the model's, a block of whole
    warps whose grid covers the assumed problem (its size unknown, said so), a range from
    a low end to a high one; the site's JSON holds the plan, its registers named unknown."""
    doc = _doc(occlint, tmp_path, "(n + 99) / 100, 100", "h100")
    (f,) = [f for f in doc["findings"] if f["rule"] == "LCH001"]
    assert f["fix"]["block"][0] % 32 == 0 and f["fix"]["block"][1:] == [1, 1]
    assert f["fix"]["block"][0] * f["fix"]["grid"][0] >= 1 << 26
    assert 0 <= f["saving"]["low"] < f["saving"]["high"] <= 1
    assert "launch-time model" in f["advice"]
    (site,) = doc["sources"][0]["launches"]
    unknown = " ".join(site["model"]["unknown"])
    assert "registers" in unknown and "67,108,864 elements" in unknown


@pytest.mark.parametrize(("launch", "devices", "kernel", "why"), [
    ("(n + 99) / 100, 100", ("h100", "h200"), SCALE, "two devices: the rules' estimates"),
    ("(n + 99) / 100, 100", ("w7800",), SCALE, "an AMD device: VGPRs, not read"),
    ("132, 256", ("h100",), SCALE.replace("if (i < n) x[i] *= a;",
                                          "for (; i < n; i += blockDim.x * gridDim.x) "
                                          "x[i] *= a;"), "a grid-stride loop: its work"),
    ("(n + 99) / 100, 100", ("h100",), SCALE.replace("if (i < n) x[i] *= a;", ""),
     "a body moving no data"),
    ("(n + 99) / 100, 100", ("h100",), SCALE.replace(
        "if (i < n) x[i] *= a;", "if (i < n) atomicAdd(&x[(int)x[i]], a);"),
     "atomics to addresses the data picks"),
])
def test_what_the_model_does_not_price_at_a_site(occlint, tmp_path, launch, devices,
                                                 kernel, why):
    doc = _doc(occlint, tmp_path, launch, *devices, kernel=kernel)
    assert all("model" not in site for s in doc["sources"] for site in s["launches"]), why
    for f in doc["findings"]:  # a fix is the rule's own advice, not the model's
        assert "launch-time model" not in (f["advice"] or ""), why
        if f.get("fix"):
            changed = f["fix"]["block"] if f["rule"] in ("LCH001", "LCH003") \
                else f["fix"]["grid"]
            assert f" {changed[0]} " in f["advice"], (why, f["advice"], f["fix"])


@pytest.mark.parametrize(("launch", "kernel"), [
    ("2, 128", SCALE),
    ("1, 1", SCALE.replace("if (i < n) x[i] *= a;", "if (i == 0) x[0] = a / x[1];")),
])
def test_a_saving_under_the_shortest_kernel_is_not_advised(occlint, tmp_path, launch, kernel):
    """HPCTrainingExamples' saxpy: 256 elements in 2 blocks of 128; cuda-samples'
    r1_div_x: one thread. The model prices a move at a fraction of a microsecond, under the
    shortest kernel's 0.86 us: the launch is kept (before, LCH102 claimed 74-99 % for 132
    blocks; and the first version of this pricing told r1_div_x a block of 32)."""
    doc = _doc(occlint, tmp_path, launch, "h100", kernel=kernel)
    (site,) = doc["sources"][0]["launches"]
    assert site["model"]["fix"] is None
    (f,) = [f for f in doc["findings"] if f["rule"] == "LCH102"]
    assert f["severity"] == "info" and not f.get("fix") and "keep it" in f["advice"]


def test_the_site_benchmark_writes_what_it_launches():
    """sites.py's launches are the sweep's defects, as the trace recorded them."""
    run = REPO / "fixtures/traces/heldout/h100"
    text = sites.site_file(run)
    first = score.load(run / "heldout.json")["kernels"][0]
    c = first["configs"][0]
    assert (f"{first['name']}<<<dim3({c['grid'][0]}, {c['grid'][1]}, {c['grid'][2]}), "
            f"dim3({c['block'][0]}, {c['block'][1]}, {c['block'][2]}), "
            f"{c.get('smem', 0)}>>>") in text
    assert text.count("<<<") == len(score.load(run / "heldout.json")["kernels"])


def test_sites_timed_on_the_h200():
    """fixtures/sources/sites.cu's six sites (blocks of 100, 32, 48, 64, 1,000 and 64, each
    grid following the problem's size) read alone, their claims priced at the model's
    assumed 2^26 elements, against the H200's times at every block of whole warps
    (benchmarks/gpu/site_launches.py; fixtures/traces/sites/h200): at 2^26 and 2^24
    elements the advice is within 3 % of the best block for each and every claim holds; at
    2^20, a sixteenth of the assumed work, 0.93 of the best, and the compute-bound
    polynomial's move from 1,000 threads to 256 is 3.6 % slower (its claim, 6-33 %, does
    not hold there: the size is the site's unknown)."""
    from benchmarks.gpu import site_launches

    result = site_launches.score(REPO / "fixtures/traces/sites/h200", "h200")
    assert len(result) == 6 and all("low" in r for k in result.values() for r in k.values())
    for n in (1 << 24, 1 << 26):
        rows = [k[str(n)] for k in result.values()]
        assert all(r["ratio"] >= 0.97 and r["inside"] for r in rows), (n, rows)
    small = {name: k[str(1 << 20)] for name, k in result.items()}
    assert [name for name, r in small.items() if r["saved"] < -0.03] == ["poly"]
    assert all(r["ratio"] >= 0.85 for r in small.values())  # (0.88-1.00)


LOOP_ATOMIC = """__global__ void loop_atomic_copy(const float* a, float* c, float* sum, float s,
                                 long n) {
    float acc = 0.0f;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)blockDim.x * gridDim.x) {
        float t = a[i];
        c[i] = t;
        acc += t;
    }
    atomicAdd(sum, acc);
}
void run(const float* a, float* c, float* sum, long n) {
    loop_atomic_copy<<<48, 128>>>(a, c, sum, 1.0f, n);
}
"""


def test_a_loop_ending_in_an_atomic_gets_no_oversubscription_grid(occlint, tmp_path):
    """The issue's case at a source's launch: a grid-stride loop whose every thread ends in
    atomicAdd on one address, in 48 blocks. Timed on the H200 (characterize.py's
    loop_atomic_copy, fixtures/traces/loop-atomic/h200: 2^24 floats in blocks of 128), 8,448
    blocks run over ten times slower than 264: no oversubscription grid (LCH103's 10x habit
    was "use a grid of 10560"); LCH102's one block an SM stays."""
    rows = json.loads((REPO / "fixtures/traces/loop-atomic/h200/loop-atomic.characterization"
                       ".json").read_text())["loop_atomic"]
    ms = {r["grid"]: r["ms"] for r in rows if r["kernel"] == "loop_atomic_copy"
          and r["block"] == 128 and r["repeat"] == 0 and r["n"] == 1 << 24}
    assert ms[8448] > 10 * ms[264]
    doc = _doc(occlint, tmp_path, "", "h100", kernel=LOOP_ATOMIC)
    assert {f["rule"] for f in doc["findings"]} == {"LCH102"}
    (site,) = doc["sources"][0]["launches"]
    assert site["advice"]["recommended_grid"] is None
    assert "atomics on one address" in site["advice"]["reason"]


def test_idle_units_claim_no_saving_where_more_blocks_would_not_fill_them(occlint, tmp_path):
    """LCH102 at a site the model does not price: its idle units' share (64 % for 48 blocks
    on 132 SMs) is what more blocks of the same work could save only in a grid-stride loop
    without a queue on one address; the issue's atomicAdd loop in 48 blocks saved 31 % at
    132, and a kernel not in the run may be a one-block tile whose blocks are its tiles:
    from no saving up there, the share as before for a plain grid-stride loop."""
    doc = _doc(occlint, tmp_path, "", "h100", kernel=LOOP_ATOMIC)
    (f,) = [f for f in doc["findings"] if f["rule"] == "LCH102"]
    assert f["saving"]["low"] == 0.0 and "queue longer" in f["saving"]["basis"]
    plain = LOOP_ATOMIC.replace("    atomicAdd(sum, acc);\n", "")
    doc = _doc(occlint, tmp_path, "", "h100", kernel=plain)
    (f,) = [f for f in doc["findings"] if f["rule"] == "LCH102"]
    assert f["saving"]["low"] > 0.3  # 0.75 x 84 / 132
    elsewhere = "void run(float* out) { tile<<<1, 64>>>(out); }\n"  # its kernel not in the run
    doc = _doc(occlint, tmp_path, "", "h100", kernel=elsewhere)
    (f,) = [f for f in doc["findings"] if f["rule"] == "LCH102"]
    assert f["saving"]["low"] == 0.0 and "grid is its work" in f["saving"]["basis"]
