"""What launched each kernel of a Kineto trace, and ROCm PyTorch traces (issue 19 item 3,
issue 18 item 6, cooperative launches).

Fixtures: four public ROCm traces copied by fixtures/fetch_rocm_kineto.py (MI250, MI210,
MI300X; fixtures/traces/README.md) and links.pt.trace.json.gz, recorded on an H100 by
benchmarks/traces/record_links.py (a tiny model under with_stack/with_modules, a CuPy raw
kernel, a cudaLaunchCooperativeKernel launch). The truth is the traces read with the standard
library's json, the recording script's own truth file (function first lines, grids) and the
HIP API: hipExtModuleLaunchKernel takes globalWorkSizeX/Y/Z, work-items, which libkineto
records as ``grid`` (hip_ext.h; RoctracerLogger reads the call's arguments as
hipModuleLaunchKernel's, whose fields have the same order).
"""

from __future__ import annotations

import gzip
import json
import math
from collections import Counter
from pathlib import Path

import pytest

from occlint.pipeline.run import Options, execute
from occlint.reporters import render

KINETO = Path(__file__).resolve().parent.parent / "fixtures" / "traces" / "kineto"
ROCM = KINETO / "rocm"


def events(path: Path) -> list[dict]:
    with gzip.open(path) as fh:
        return json.load(fh)["traceEvents"]


def run(path: Path) -> tuple[dict, int]:
    out = execute(Options(paths=[str(path)], isolated=True))
    return out.doc, out.exit_code


def honest_exit(doc: dict, code: int) -> bool:
    """Exit 1 exactly when a warning or error is reported, never 2 for an analysed trace."""
    worst = {f["severity"] for r in doc["launches"] for f in r["findings"]}
    return code == (1 if worst & {"warning", "error"} else 0)


def launched_grids(evs: list[dict]) -> Counter:
    """(kernel, grid in blocks, block) of every kernel event, from its runtime call: a
    work-item grid (hipExtModuleLaunchKernel) divided by the block, rounded up."""
    calls = {e["args"]["correlation"]: e for e in evs
             if e.get("cat") == "cuda_runtime" and "grid" in e.get("args", {})}
    out: Counter = Counter()
    for k in (e for e in evs if e.get("cat") == "kernel"):
        call = calls.get(k["args"]["correlation"])
        if call is None:
            continue
        grid, block = call["args"]["grid"], call["args"]["block"]
        if call["name"] == "hipExtModuleLaunchKernel":
            grid = [math.ceil(g / b) for g, b in zip(grid, block, strict=True)]
        out[(k["name"], tuple(grid), tuple(block))] += 1
    return out


def occlint_grids(doc: dict) -> Counter:
    out: Counter = Counter()
    for r in doc["launches"]:
        out[(r["kernel"], tuple(r["grid"]), tuple(r["block"]))] += r["count"]
    return out


@pytest.fixture(scope="module")
def docs() -> dict[str, tuple[dict, int]]:
    return {p.name: run(p) for p in sorted(ROCM.glob("*.json.gz"))}


# -- ROCm traces (issue 19 item 3) -------------------------------------------------------------
@pytest.mark.parametrize("name", ["mi250_minitoy_train.json.gz", "mi210_gpu_only.json.gz"])
def test_rocm_grids_in_blocks_and_every_launch_analysed(docs, name):
    """Dimensions from the runtime call; Tensile's hipExtModuleLaunchKernel grids are
    work-items: 512 x 256 work-items is 2 blocks, not 512. Every launch is on a known device
    and its block and grid are checked (no register count: no occupancy)."""
    doc, code = docs[name]
    evs = events(ROCM / name)
    assert occlint_grids(doc) == launched_grids(evs)
    assert sum(r["count"] for r in doc["launches"]) == sum(e.get("cat") == "kernel"
                                                           for e in evs)
    assert {r["status"] for r in doc["launches"]} == {"no-registers"}
    assert all("not for a" not in (r["message"] or "") for r in doc["launches"])
    assert {r["arch"] for r in doc["launches"]} == {"gfx90a"}  # HIP 9.0, 104 CUs: MI210/MI250
    assert doc["errors"] == [] and honest_exit(doc, code)


def test_grid_rules_fire_without_registers(docs):
    """Grids below the 104 CUs of the MI250 GCD get LCH102, every one; no block of these is
    off the 64-lane wavefront, so no LCH001 (the trace's blocks are multiples of 64)."""
    doc, _ = docs["mi250_minitoy_train.json.gz"]
    for r in doc["launches"]:
        assert ("LCH102" in r["finding_codes"]) == (r["blocks"] < 104), r["kernel"]
        assert "LCH001" not in r["finding_codes"]
        assert r["threads_per_block"] % 64 == 0
    doc, _ = docs["mi210_gpu_only.json.gz"]
    small = [r for r in doc["launches"] if r["blocks"] < 104]
    assert small and all("LCH102" in r["finding_codes"] for r in small)
    tails = [r for r in doc["launches"] if "LCH101" in r["finding_codes"]]
    assert tails and all(r["blocks"] % 104 for r in tails)


def test_graph_replays_are_counted_not_errors(docs):
    """hipGraphLaunch: one call, the kernels it replays carry its correlation and no
    dimensions. They are counted (a note), not an error."""
    for name in ("mi300x_vllm_graph.json.gz", "mi300x_sglang_decode.json.gz"):
        doc, code = docs[name]
        evs = events(ROCM / name)
        graphs = {e["args"]["correlation"] for e in evs if e.get("name") == "hipGraphLaunch"}
        kernels = [e for e in evs if e.get("cat") == "kernel"]
        replayed = sum(k["args"]["correlation"] in graphs for k in kernels)
        assert replayed > 400
        (record,) = doc["inputs"]
        assert record["launches"] == len(kernels)
        assert any(n.startswith(f"{replayed:,} kernel launches replayed by graph launches")
                   for n in record["notes"])
        assert sum(r["count"] for r in doc["launches"]) == len(kernels) - replayed
        assert doc["summary"]["launches"]["launches"] == len(kernels)
        assert doc["summary"]["launches"]["without_dimensions"] == replayed
        assert doc["errors"] == [] and honest_exit(doc, code)
        # their time is the GPU's all the same: in the kernel time, and busy in the calls
        # around them (vLLM's decode: 10.39 of its 10.67 ms replayed; it read 286 us)
        replayed_ns = sum(k["dur"] for k in kernels if k["args"]["correlation"] in graphs) * 1e3
        assert record["ungrouped_kernel_time_ns"] == pytest.approx(replayed_ns, abs=1)
        assert doc["summary"]["launches"]["kernel_time_ns"] == pytest.approx(
            sum(k["dur"] for k in kernels) * 1e3, abs=len(kernels))


def test_launches_whose_call_is_not_in_the_trace_are_counted_not_errors():
    """Kernels launched before the profiler's window opened run inside it: their events
    name a correlation id no runtime call of the trace has (TraceLens' MI300X ResNet trace:
    its first 757 kernels). Counted (a note, and in the summary's launches), not analysed,
    not an error."""
    path = ROCM / "mi300x_resnet_before_window.json.gz"
    evs = events(path)
    calls = {e["args"]["correlation"] for e in evs if e.get("cat") == "cuda_runtime"}
    kernels = [e for e in evs if e.get("cat") == "kernel"]
    uncalled = sum(k["args"]["correlation"] not in calls for k in kernels)
    assert uncalled == 12 and len(kernels) == 18
    doc, code = run(path)
    (record,) = doc["inputs"]
    assert record["launches"] == doc["summary"]["launches"]["launches"] == len(kernels)
    assert doc["summary"]["launches"]["without_dimensions"] == uncalled
    assert sum(r["count"] for r in doc["launches"]) == len(kernels) - uncalled
    assert any(n.startswith(f"{uncalled} kernel launches whose runtime call is not in the "
                            "trace") for n in record["notes"])
    assert doc["errors"] == [] and honest_exit(doc, code)
    assert f"{len(kernels)} launches (5 launch groups, {uncalled} without grid or block)" in \
        render("text", doc)
    assert record["ungrouped_kernel_time_ns"] == pytest.approx(sum(
        k["dur"] for k in kernels if k["args"]["correlation"] not in calls) * 1e3, abs=1)


def test_kfd_node_device_ids(docs):
    """roctracer-era libkineto writes the KFD node id as the kernel's device (ROCclr's
    driverNodeId_, CPU nodes first): device 9 on a trace describing one MI300X is that GPU;
    device 2 of the vLLM trace (eight identical unnamed GPUs) is one of them."""
    doc, _ = docs["mi300x_sglang_decode.json.gz"]
    assert {r["device"] for r in doc["launches"]} == {"AMD Instinct MI300X"}
    assert any("kernels on device 9" in n for n in doc["inputs"][0]["notes"])
    doc, _ = docs["mi300x_vllm_graph.json.gz"]
    with gzip.open(ROCM / "mi300x_vllm_graph.json.gz") as fh:
        props = json.load(fh)["deviceProperties"]
    assert {p["name"] for p in props} == {""} and len(props) == 8
    assert {(r["arch"], r["status"]) for r in doc["launches"]} == {("gfx942", "no-registers")}


def test_rocm_ops_frames_and_modules(docs):
    """The op of each group's first launch is the cpu_op with its External id; the Python
    frame is the innermost one around the runtime call in the user's code (here sglang's
    checkout, an absolute path outside site-packages), the module the nn.Module scope."""
    doc, _ = docs["mi300x_sglang_decode.json.gz"]
    evs = events(ROCM / "mi300x_sglang_decode.json.gz")
    ops = {e["args"]["External id"]: e["name"] for e in evs if e.get("cat") == "cpu_op"}
    calls = {e["args"]["correlation"]: e for e in evs if e.get("cat") == "cuda_runtime"}
    frames = [e for e in evs if e.get("cat") == "python_function"]
    checked = 0
    for r in doc["launches"]:
        link = r["launched_by"]
        assert link["op"] == ops.get(link["external_id"])
        call = calls[link["correlation"]]
        assert link["api"] == call["name"]
        around = [f["name"] for f in sorted(frames, key=lambda f: (f["ts"], -f["dur"]))
                  if f["tid"] == call["tid"] and f["ts"] <= call["ts"] <= f["ts"] + f["dur"]]
        mine = [n for n in around if n.startswith("/sgl-workspace/sglang/")]
        assert link["python"]["file"] + f"({link['python']['line']}): " \
            + link["python"]["function"] == mine[-1]
        checked += link["op"] is not None
    argmax = next(r for r in doc["launches"] if (r["launched_by"]["op"] == "aten::argmax"))
    assert argmax["launched_by"]["module"] == "Sampler_0"
    assert argmax["launched_by"]["python"]["file"].endswith("srt/layers/sampler.py")
    assert checked == 8


# -- a recorded CUDA trace: stacks, modules, cooperative launches ------------------------------
@pytest.fixture(scope="module")
def links():
    truth = json.loads((KINETO / "links.truth.json").read_text())
    doc, code = run(KINETO / "links.pt.trace.json.gz")
    return doc, code, truth, events(KINETO / "links.pt.trace.json.gz")


def test_cooperative_launch_is_a_design(links):
    """coop_scale went through cudaLaunchCooperativeKernel (the runtime call with its
    correlation id): a deliberate design, said in the JSON, and no finding against it."""
    doc, _, truth, evs = links
    (coop,) = [r for r in doc["launches"] if r["kernel"].startswith("coop_scale")]
    assert coop["grid"] == [truth["coop_scale_grid"], 1, 1]
    calls = {e["args"]["correlation"]: e["name"] for e in evs
             if e.get("cat") in ("cuda_runtime", "cuda_driver")}
    assert calls[coop["launched_by"]["correlation"]] == "cudaLaunchCooperativeKernel"
    assert coop["launched_by"]["cooperative"] is True
    assert coop["design"]["kind"] == "cooperative"
    assert coop["findings"] == []  # no grid, tail or occupancy finding against the design
    others = [r for r in doc["launches"] if r is not coop]
    assert all((r["design"] or {}).get("kind") != "cooperative" for r in others)


def test_user_frames_modules_and_ops(links):
    """Each group names its op, module and the user's function (the line PyTorch's tracer
    gives: where the function was entered, its first line)."""
    doc, _, truth, evs = links
    ops = {e["args"]["External id"]: e["name"] for e in evs if e.get("cat") == "cpu_op"}
    modules = Counter()
    for r in doc["launches"]:
        link = r["launched_by"]
        assert link["op"] == ops.get(link["external_id"])
        frame = link["python"]
        if r["kernel"] == "saxpy" and r["grid"][0] == truth["cupy_coop_grid"]:
            # CuPy's cooperative launch is cuLaunchCooperativeKernel: not a call Kineto
            # records, so neither its call nor its frame is known
            assert link["api"] is None and frame is None
            continue
        function = "step" if r["kernel"] in ("saxpy", "coop_scale(float*, int, float)") \
            else "forward"
        assert (frame["function"], frame["line"]) == (function,
                                                      truth["first_lines"][function])
        assert frame["path"] == truth["script"]
        modules[link["module"]] += 1
    assert modules == Counter({"Tiny_0.Linear_0": 2, "Tiny_0.Linear_1": 2,
                               "Tiny_0.LayerNorm_0": 1, "Tiny_0": 1, None: 2})


def test_locations_point_at_the_users_code(links):
    """SARIF, GitHub and GitLab put a launch group's findings on the user's line. (Without
    the kernel's source the launch-time model's claims start at no saving, so the block-100
    saxpy's findings are notes: issue 28.)"""
    doc, _, truth, _ = links
    where = (truth["script"], truth["first_lines"]["step"])
    results = json.loads(render("sarif", doc))["runs"][0]["results"]
    saxpy = [r for r in results if r["ruleId"] in ("LCH001", "LCH101")]
    assert {r["ruleId"] for r in saxpy} == {"LCH001", "LCH101"}  # the block-100 saxpy
    for r in saxpy:
        loc = r["locations"][0]["physicalLocation"]
        assert (loc["artifactLocation"]["uri"], loc["region"]["startLine"]) == where
    located = {(i["location"]["path"], i["location"]["lines"]["begin"])
               for i in json.loads(render("gitlab", doc))
               if i["check_name"].startswith(("LCH001", "LCH101"))}
    assert located == {where}
    annotations = [line for line in render("github", doc).splitlines()
                   if "title=LCH001" in line or "title=LCH101" in line]
    assert all(f"file={where[0]},line={where[1]}" in a for a in annotations)


def test_work_item_grids_round_up():
    """HSA dispatches a grid of work-items in work-groups, the last of each dimension
    partial: ceil(grid / block) blocks (the HIP docs' globalWorkSize); other calls' grids
    are blocks already."""
    from occlint.readers.traces.kineto_links import blocks_of

    assert blocks_of([1000, 3, 1], [256, 2, 1], "hipExtModuleLaunchKernel") == [4, 2, 1]
    assert blocks_of([1000, 3, 1], [256, 2, 1], "hipModuleLaunchKernel") == [1000, 3, 1]


def test_text_and_html_name_the_launcher(links):
    """The text rows and library lines, and the HTML launch table, say what launched."""
    doc, _, truth, _ = links
    step = f"step() at {truth['script']}:{truth['first_lines']['step']}"
    text = render("text", doc)
    saxpy = next(line for line in text.splitlines() if "1000 x 100" in line)
    assert saxpy.endswith(f"<- {step}")
    cublas = next(line for line in text.splitlines() if line.strip().startswith("cuBLAS"))
    assert cublas.endswith("the shapes you call it with (launched by aten::addmm)")
    html = render("html", doc)
    assert f"launched by {step} (cudaLaunchCooperativeKernel)" in html


def test_block_off_the_wavefront_without_registers(docs):
    """MIOpen's transposes on an MI300X run blocks of 49 and 196 work-items (through
    hipExtModuleLaunchKernel): LCH001 on every one, with the idle lanes of its last
    wavefront, though the trace gives no register count. They are MIOpen's: an info the
    caller cannot act on by changing the kernel, so the run exits 0."""
    doc, code = docs["mi300x_resnet_odd_blocks.json.gz"]
    evs = events(ROCM / "mi300x_resnet_odd_blocks.json.gz")
    assert occlint_grids(doc) == launched_grids(evs)
    assert doc["launches"] and {r["status"] for r in doc["launches"]} == {"no-registers"}
    for r in doc["launches"]:
        threads = r["threads_per_block"]
        assert threads % 64
        (f,) = [f for f in r["findings"] if f["rule"] == "LCH001"]
        assert f["data"]["idle_lanes"] == -(-threads // 64) * 64 - threads
        assert r["owner"]["library"] == "MIOpen" and f["severity"] == "info"
    assert honest_exit(doc, code) and code == 0


@pytest.mark.parametrize(("major", "minor", "cus", "arch"), [
    (9, 0, 104, "gfx90a"),  # MI210, an MI250 GCD (the HTA trace's "AMD Radeon Graphics")
    (9, 0, 120, "gfx908"),  # MI100
    (9, 0, 60, "gfx906"),  # MI50
    (9, 4, 304, "gfx942"),  # MI300X, MI325X
    (11, 0, 96, "gfx1100"),  # RX 7900 XTX, PRO W7900
    (9, 0, 7, None),  # no product of 9.0 has 7 CUs
])
def test_gfx_from_hip_major_minor_and_cus(major, minor, cus, arch):
    """HIP's major.minor is the gfx number without its stepping; the CU count of the
    products AMD lists (device_db/amd/products.toml, from AMD's specifications) picks it."""
    from occlint.analysis.launches import amd_arch_from_properties
    from occlint.devices.db import shipped_db
    from occlint.model.launch import TraceDevice

    td = TraceDevice(key="0", vendor="amd", name="", compute_units=cus, wave_size=None,
                     properties={"computeMajor": major, "computeMinor": minor})
    found = amd_arch_from_properties(td, shipped_db())
    assert (found.name if found else None) == arch


def test_second_pass_reads_the_layout_and_stops_early():
    """The links pass sees the same events as json does in libkineto's layout, and stops
    once every wanted link is found past the last group's first launch; with Python frames
    (with_stack) it reads on (to SLACK kernels further, here the end) for the user's calls."""
    from occlint.readers.traces import kineto, kineto_links

    path = KINETO / "links.pt.trace.json.gz"
    evs = events(path)
    with kineto._open(path) as fh:
        seen = list(kineto_links.layout_events(fh, fh.read(1 << 12), 1 << 12))
    assert sum(k for k, _ in seen) == sum(e.get("cat") == "kernel" for e in evs)
    decoded = [e for k, e in seen if e is not None]
    assert decoded == [e for e in evs if e.get("cat") in kineto_links.LINK_CATEGORIES]
    frameless = [(k, e) for k, e in seen if e is None or e.get("cat") != "python_function"]
    for items, stops in ((frameless, True), (seen, False)):
        read = kineto.read_kineto(path, "t")
        for g in read.collector.group_list:  # CuPy's cooperative launch: no call was traced
            g.launched_by = {k: v for k, v in g.launched_by.items()
                             if k in ("external_id", "correlation") and v != 105}
        read.collector.host = None
        consumed = 0

        def counted(items=items):
            nonlocal consumed
            for item in items:
                consumed += 1
                yield item

        kineto_links.resolve_origins(counted(), read.collector, kernels_before=1)
        assert all(g.launched_by.get("api") for g in read.collector.group_list
                   if g.launched_by.get("correlation"))
        assert (consumed < len(items)) is stops
        assert (read.collector.host is None) is stops


def test_a_device_of_the_other_vendor_leaves_the_traces_own():
    """``--device h100`` on a trace of four MI210s (its deviceProperties say so): the
    launches are analysed on the MI210, with a note, not left on "an unknown device"."""
    path = ROCM / "mi210_gpu_only.json.gz"
    out = execute(Options(paths=[str(path)], devices=["h100"], isolated=True))
    doc, code = out.doc, out.exit_code
    with gzip.open(path) as fh:
        names = {p["name"] for p in json.load(fh)["deviceProperties"]}
    assert names == {"AMD Instinct MI210"}
    assert {r["device"] for r in doc["launches"]} == names
    assert any(n.startswith("--device names no AMD device") for n in doc["inputs"][0]["notes"])
    assert code != 2


def test_2021_libkineto_links_its_ops_and_calls():
    """PyTorch 1.9's libkineto (TensorBoard's ResNet-50 sample, fixtures/traces/public):
    categories "Operator" / "Runtime" / "Kernel", the kernel's id spelled "external id".
    Each group's op is the Operator of its kernel's external id where the trace holds it,
    its call the Runtime event of its correlation (none were linked before)."""
    path = KINETO.parent / "public/kineto_tb_resnet50_2021.pt.trace.json.gz"
    evs = events(path)
    ops = {e["args"]["External id"]: e["name"] for e in evs if e.get("cat") == "Operator"}
    calls = {e["args"]["correlation"]: e["name"] for e in evs if e.get("cat") == "Runtime"}
    doc, _ = run(path)
    linked = 0
    for r in doc["launches"]:
        link = r["launched_by"]
        assert link["api"] == calls[link["correlation"]]
        assert link["op"] == ops.get(link["external_id"])
        linked += link["op"] is not None
    assert linked >= 10
