"""The launch-time model on hand-written kernels in the patterns real code uses (issue 28;
docs/validation.md, "The zoo"): benchmarks/gpu/heldout/zoo.py's forty-eight sets, swept on an H200
(fixtures/traces/zoo*/h200: sweep.py's times, the PyTorch profiler's trace of each defect,
Nsight Compute's estimates). The first set was scored once against the model as it stood
(7d6493d: two launches advised slower, one 50 %) and the model's reading of access
patterns, local pointers, passes and warps' atomics was built on what it showed; the second
was written and swept after that and scored once (0.862 of the best), then a small stride
read as streaming; the third was written and swept before a block per row's reductions and
re-reads were measured on the device and priced, and scored once against 6d056e8 (0.839,
habit 0.935); the fourth after that, scored once against 64fec09 (0.876, habit 0.943),
then a block per row's loads in flight read as one pass's and a table many threads read
as the L1's; the fifth after that, scored once against 7c2a9a0 (0.776, habit 0.807: all
but a privatised histogram's flush 0.99), then the flush's atomics measured and priced;
the sixth after that, scored once against 694455a, the model's figure on work it had not
seen: 0.973 of the best (habit 0.936), none slower, none unwarned, 7 of 9 claims inside;
then an element stored in each branch of an if read as one store (8 of 9) and an integer
atomicMax priced as measured (0.982), then its argmax read as the block per row it is (no
longer advised a grid that launches other rows: 0.931); the seventh, scored once against c21e8b7
and left as it was: 0.994 of the best (habit 0.902), none slower, no false warning, none
unwarned, 7 of 8 claims inside; the eighth after the stop's last change (da58960), scored
once and left as it was: 0.995 (habit 0.888), none slower, no false warning, 7 of 8
inside, one launch saving 13 % claimed 0-16 % (an info); the ninth after c47f594, scored
once: 0.951 (habit 0.975), none slower, 3 of 6 inside, then a parameter cast and
subscripted in place read, a small stride's sectors counted once and a widening store
priced at what its loads bring (0.957, 5 of 6); the tenth, six of its ten a block per row,
after a block per row's loop was measured (row_loop) and before either reading of its
reduction was chosen, scored once: 0.992 (habit 0.946), none slower, 5 of 7 inside, then
math functions priced as measured (6 of 7); the eleventh, math-heavy, after that, scored
once: 0.980 (habit 0.972), none slower, 10 of 10 inside; the twelfth after the stop's last
change (a fix predicted to save 15 % warns), scored once: 0.972 (habit 0.863), none
slower, no false warning, 6 of 7 inside; the thirteenth at stop 40's end, scored once:
0.989 (habit 0.916), none slower, no false warning, 6 of 8 inside; the fourteenth
after 307fa93, scored once: 0.824 (habit 0.950), none slower, 5 of 6 inside, then a table
a literal bounds read as the L1's (0.985, 6 of 7); the fifteenth after 4ace439, scored
once: 0.899 (habit 0.892), none slower, 3 of 5 inside, then a loop stepped by a multiple
of a grid-stride variable read as one, and an int index against a long bound as not
unrolled (0.960, 4 of 6); the sixteenth after fc01796's readers and c95c9aa's
loads written as calls or dereferences, scored once: 0.962 (habit 0.969), one launch
12 % slower, 7 of 9 inside, then a local pointer's cast dereference and a store after an
if's head read (0.960, 7 of 8), then a later pass's re-read counted at what it streams
(a float2's pair: 0.985, 8 of 8, none slower); the seventeenth after that, scored once:
0.986 (habit 0.977), none slower, one false warning (a warp per row whose loop over its
row from the lane read as one element), 4 of 6 inside, then a lane's walk by a literal
stride counted (0.985, no false warning, 4 of 5); the eighteenth after that, scored once:
0.976 (habit 0.985), none slower, no false warning, 8 of 9 inside, then a load a
constant loop does not index counted once (0.995, 8 of 10); the nineteenth after that,
scored once: 0.963 (habit 0.991), none slower, no false warning, 7 of 9
inside, then a stride loop's own unroll pragma read (0.990, 8 of 10); the twentieth
after that, the stop's final model, scored once and left as it was: 0.994 (habit
0.983), none slower, no false warning, 8 of 8 inside; the twenty-first after it too:
0.980 (habit 0.951), none slower, no false warning, 5 of 7 inside; the twenty-second at
stop 42's start, scored once: 0.950 (habit 0.846), none slower, no false warning, 8 of 9
inside, then a byte's load held in flight at its byte (0.960, 9 of 9); the twenty-third
after that, scored once: 0.878 (habit 0.891), none slower, no false warning, 6 of 9
inside, then an in-place loop's passes read as waiting for each other (7 of 9) and a
block scan's steps priced as the device measured a tree (8 of 9); the
twenty-fourth after that, left as it is: 0.990 (habit 0.919), none slower, no false
warning, 8 of 8 inside (5 of 8 read as before the twenty-third's change: its three loops
whose passes wait); the twenty-fifth after the tree's price, scored once: 0.962
(habit 0.936), none slower, no false warning, 7 of 8 inside, then an __ldg beside plain
stores read as the compiler's choice (8 of 8); the twenty-sixth after that, scored
once: 0.983 (habit 0.940), none slower, no false warning, 7 of 9 inside, then a float4's
__ldg read as not unrolled (8 of 9); the twenty-seventh after that, the stop's last
model, scored once and left as it is: 0.937 (habit 0.979), none slower, no false
warning, 5 of 6 inside; the twenty-eighth too: 0.990 (habit 0.909), none slower, no
false warning, 5 of 5 inside; the twenty-ninth too: 0.898 (habit 0.978), none slower,
no false warning, 5 of 6 inside, then a grid-stride loop written as CUDA_KERNEL_LOOP read
as one (0.990, 6 of 7) and a pointer's own element ``*p`` read as a load or a store
(0.992, 7 of 7); the thirtieth after that, scored once: 0.974 (habit 0.969), none
slower, no false warning, 4 of 5 inside, then a body's own integer constant read as the
file's #defines are (0.972, 5 of 5); the thirty-first at stop 43's start (run-time
divisors, a vector loop's remainder, a 2-D stride loop), scored once: 0.836 (habit
0.965), none slower, 3 of 5 inside, then a quotient by a run-time value read as one value a
warp, a 2-D launch of a stride loop kept 2-D and a remainder loop not counted (0.985, 6 of
7); the thirty-second (launches of 1-30 us), scored once on times that held the CPU's
submission (0.911), swept again behind a spinning kernel (0.895, one advised slower), then
fewer blocks than SMs read as one wave and what the L2 keeps of a launch's data priced
(characterize.py short_launches and l2_residency: 0.901, one info advised slower); the
thirty-third (short launches again, written before the L2 was measured), scored once:
0.886 (habit 0.790), two advised slower, one false warning, then the same (0.925, none
slower, no false warning); the thirty-fourth after that, scored once and left as it is:
0.923 (habit 0.978), none slower, no false warning, 6 of 6 inside, a gather saving 24 %
unadvised; the thirty-fifth too (an LLM's decode- and prefill-sized launches, 3-45 us):
0.978 (habit 0.798), none slower, no false warning, none unwarned, 4 of 4 inside; the
thirty-sixth too (grid-stride loops over what the L2 holds, 2-20 us): 0.958 (habit 0.974),
one info 4 % slower (0.2 us), no false warning, 4 of 7 inside; the thirty-seventh
(half precision) after that, scored once: 0.951 (habit 0.978), none slower, 7 of 7
inside, a block per row of halves unadvised (28 %: its rows, pointers cast and then
offset, read no loads), then that alias read (0.990, 8 of 8); the thirty-eighth (index
and pointer idioms) after that, scored once: 0.887 (habit 0.962), one info 16 % slower (a
second store to the same 1,024 words from every thread), 6 of 8 inside, then a pointer
``auto`` deduces read as an alias (0.921); the thirty-ninth (cooperative groups,
unsigned indices, a float2 with a scalar remainder) after that, scored once: 0.808 (habit
0.949), none slower, 3 of 5 inside, then a grid's and a block's group methods read as the
registers they stand for and an else-branch over a bound's last elements as no element's
work (0.964, 4 of 6); the fortieth (more idioms: the thread's indices in constants, a
loop with no init, bf16, parameters advanced to a row, pointers in a struct, __ldg(a +
i), fmaf chains) after that, scored once and left as it is: 0.966 (habit 0.986), none
slower, no false warning, 6 of 7 inside, pointers in a local struct unread (20 %
unadvised); the forty-first (atomics and reductions as real code writes them), scored once:
0.982 (habit 0.942), none slower, 4 of 5 inside, one false warning (an atomicMax on one
address a thread), then such atomics read as streaming beside the blocks' starts (no
warning; 4 of 4); the forty-second (grid-stride loops: float4 saxpy, dot and
sum-of-squares reductions, in-place updates, an ``int`` index, half the SMs idle), written
after a loop's loads in flight were read as the compiler keeps them (loop_depth.py) and
scored once: 0.974 (habit 0.950), none slower, no false warning, none unwarned, 5 of 5
inside (the model before that change: the same advice, 4 of 5, a float4 saxpy claimed 6-30
% for 47 %); the forty-third (a functor, a loop in a template device function, CUB-style
striped elements, a flattened 2-D grid, ``__umul24``), scored once: 0.993 where measured
(habit 0.960), none slower, 2 of 4 inside, the template's loop unseen (advised a grid the
sweep never timed, 2-100 % claimed), then the file's ``__device__`` functions read where
a kernel calls them (0.993, 3 of 5); the forty-fourth (helpers as code calls them, a
float4 loop at one warp an SM, a float2 read loop), scored once: five of six within 4 %
of the best with their claims inside, one warned to save 74-99 % by a launch 36 % slower
(a row's sum in a helper whose result initialises a local, unread), then a kernel whose
facts predict under a quarter of its time not priced and such calls read (0.993, 5 of 5,
none slower, no false warning); the forty-fifth (block reductions after a grid-stride
loop ending in an atomic on one address or a store, trees from ``blockDim.x / 2`` and from
a literal, a warp-shuffle one), written after a block's atomic and tree were priced as
reduce_stream measured them and scored once: 0.975 (habit 0.959; the stop's starting model
0.965, one launch saving 11 % unwarned), none slower, no false warning, 5 of 5 inside,
Spearman 0.71 (0.89); the forty-sixth (a block per row as ML code writes it: rows of 768,
1,000, 1,536, 3,072 and 4,000, a GELU with a bias, a softmax, an RMS norm, float4 rows),
written after a row's blocks were given their stragglers' tail and scored once: 0.946
(habit 0.958), none slower, no false warning, 3 of 3 inside, a GELU's 14.6 % unadvised
(7 % predicted); the forty-seventh (grid-stride loops in grids of more threads than
elements or two elements a thread, an atomic a thread, an ``int`` index), written after a
loop's idle blocks and short blocks' tail and scored once: 0.877 (habit 0.750; the stop's
starting model 0.831), none slower, no false warning, 1 of 3 inside, a 10 us GELU over 1 M
elements unadvised (49 %); the forty-eighth (double precision: a DAXPY, a polynomial of
dependent FP64 multiply-adds, a grid-stride scale, a dot product into one double, a row's
RMS norm, float data computed in double), swept with the FP64 rate (characterize.py fma64)
and scored once after the rate entered the model: 0.988 (habit 0.786), none slower, no
false warning, 5 of 6 inside. What holds is asserted; what does not is a strict xfail with
the figures."""

from __future__ import annotations

import json
from functools import cache

import pytest

from benchmarks.gpu.heldout import score, zoo
from occlint.devices.db import shipped_db
from occlint.devices.launch_params import launch_model
from occlint.judgement.timing import Config, predict
from occlint.readers.source import read_source
from tests.conftest import FIXTURES

RUNS = {f"zoo{'' if k == 1 else f'-{k}'}/h200": k for k in range(1, 49)}


@cache
def _rows(run: str, facts: str | None = "source") -> str:
    return json.dumps(score.rows(FIXTURES / "traces" / run, facts))


def _targets(run: str, facts: str | None = "source") -> dict:
    return score.targets(json.loads(_rows(run, facts)))


def _row(run: str, name: str) -> dict:
    return next(r for r in json.loads(_rows(run)) if r["name"] == name)


def _devices() -> tuple:
    """The H200's launch-model parameters and the H100's."""
    return tuple(launch_model(shipped_db().get(n)) for n in ("h200", "h100"))


def _characterisations(run: str, *names: str) -> list[dict]:
    """characterize.py's documents saved beside a run (NAME.characterization.json)."""
    folder = FIXTURES / "traces" / run
    return [json.loads((folder / f"{n}.characterization.json").read_text()) for n in names]


@pytest.mark.parametrize("which", list(RUNS.values()))
def test_each_set_is_the_scripts(tmp_path, which):
    zoo.main(["--set", str(which), "--out", str(tmp_path)])
    folder = FIXTURES / "traces" / ("zoo" if which == 1 else f"zoo-{which}")
    for name in ("suite.json", "kernels.cu"):
        assert (tmp_path / name).read_bytes() == (folder / name).read_bytes()


# runs whose advice is slower than the launch as traced, or warns where nothing saves 2 %
ADVISED_WORSE = {
    "zoo-11/h200": "entropy_sum_atomic (1,024 x 10,560, a block_sum after a loop of __logf) "
                   "is advised 128 x 6,336 as an info (0-11 % claimed), 4.4 % slower, since "
                   "a block's sum by shuffles after a loop is priced as reduce_stream "
                   "measured it (nothing was advised before)",
    "zoo-8/h200": "dot_tree (1,024 x 2,112, a tree a block after two loads an element) is "
                  "advised 128 x 8,448 as an info (0-13 % claimed), 5.6 % slower: the loop "
                  "tree curve (reduce_stream, one load an element) prices its 2,112 trees "
                  "as 17 us the two loads hide",
    "zoo-38/h200": "two_outputs_gs stores sum[i & 1023] from every thread (the same 1,024 "
                   "words): advised more threads, 12 % slower, as a warning (5-27 % claimed) "
                   "since a loop's loads in flight are what the compiler keeps",
    "zoo-36/h200": "mul_l2_gs (512 K elements, 1,024 x 132, a launch of about 2 us) is "
                   "advised 1,024 x 264 as an info (0-13 % claimed), 4.3 % slower: 0.2 us",
}
# runs where, from the trace alone, the advice is slower or fewer than 80 % of claims hold
TRACE_ALONE_UNMET = {
    "zoo/h200": "without the source transpose_naive's column cannot be seen: 32 x 32 "
                "advised 256 x 1, 4.6 % slower",
    "zoo-28/h200": "3 of 4 claims hold from the trace alone (row_odd_cols, rows of 300 in "
                   "512-thread blocks: 0-18 % claimed, 22 % saved by the advice; read as one "
                   "element per thread)",
    "zoo-13/h200": "1 of 2 claims holds from the trace alone (add_bias_rows: 0-30 % claimed, "
                   "39 % saved)",
    "zoo-46/h200": "3 of 4 claims hold from the trace alone (layer_scale_row_768, rows of "
                   "768 in 1,024-thread blocks: 0-30 % claimed, 40 % saved)",
}


def _unmet(request, why: str | None) -> None:
    """A target the run does not meet: a strict xfail saying what was measured."""
    if why:
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"issue 28: {why}"))


@pytest.mark.parametrize("run", list(RUNS))
def test_no_advice_makes_a_hand_written_launch_slower(request, run):
    _unmet(request, ADVISED_WORSE.get(run))
    t = _targets(run)
    assert t["unmeasured"] == [] and t["slower"] == []
    assert t["false_warnings"] == []


def test_atomics_a_thread_on_one_address_stream_beside_the_block_starts():
    """zoo set 41's absmax_bits_elem: an atomicMax on one address per element, 16 M of
    them (0.40 ms at the device's measured rate, a warp's lanes one request), in blocks of
    32 to 1,024 threads: the sweep timed every block at 0.398 ms, its 262,144 64-thread
    blocks' starts (0.16 ms) hidden behind the atomics. The model, once adding them (0.56
    ms: a warning, 0-30 % claimed, where nothing saves), predicts each within 5 % from 64
    threads up, within 11 % at 32 (524,288 blocks' starts, 0.32 ms, which the overlap's p
    leaves a little of)."""
    import gzip

    h200, _ = _devices()
    facts = next(k for k in read_source(FIXTURES / "traces/zoo-41/kernels.cu", "zoo-41").kernels
                 if k.name == "absmax_bits_elem").facts
    doc = json.loads(gzip.decompress(
        (FIXTURES / "traces/zoo-41/h200/heldout.json.gz").read_bytes()))
    k = next(k for k in doc["kernels"] if k["name"] == "absmax_bits_elem")
    for c in k["configs"]:
        b = c["block"][0]
        t = predict(h200, facts, Config(b, c["grid"][0], min(2048 // b, 32)), 16 * 2 ** 20)
        assert t.total * 1e3 == pytest.approx(score._time(c), rel=0.05 if b > 32 else 0.11), b
    row = _row("zoo-41/h200", "absmax_bits_elem")
    assert row["fix"] is None and row["severity"] is None


def test_a_kernel_whose_source_shows_too_little_is_not_priced():
    """Set 44's row_sum_helper_row sums its row in a helper whose result initialises a
    local (``float t = partial_row_sum(a + blockIdx.x * cols, cols);``). Scored once, the
    reader did not write that call in: its facts (no loads) predicted 10.5 us for a launch
    traced at 112 us, and it warned to save 74-99 % by 1,024-thread blocks 36 % slower. A
    kernel whose own facts predict under fastest.UNSEEN of its traced time is not priced
    (set 1's mandelbrot, whose escape loop's trips are the data's: no fix); and such a call
    is now read (its body, its return assigning the local): the row predicted within 5 %
    of its traced time, and nothing advised (none saves)."""
    from occlint.judgement.fastest import UNSEEN

    assert UNSEEN == 0.25
    mandel = _row("zoo/h200", "mandelbrot")
    assert mandel["fix"] is None and mandel["model"] is None
    row = _row("zoo-44/h200", "row_sum_helper_row")
    assert row["model"]["facts"]["loop"] == "block-stride"
    assert row["model"]["now"]["ns"] / 1e6 == pytest.approx(row["defect_ms"], rel=0.05)
    assert row["fix"] is None and not row["warned"]


def test_a_short_loops_range_spans_what_the_l2_may_have_held():
    """A grid-stride loop whose work the trace's time gives, short enough for the L2 to
    hold its data (zoo set 36's scale4_l2_gs: a float4 scale of 1 M elements, 10 us as
    traced): whether the L2 held it from the launch before the trace cannot say, so the
    claim spans both readings. A loop whose work the time reads far past the L2 (64 M
    elements: 512 MB) has no such reading."""
    row = _row("zoo-36/h200", "scale4_l2_gs")
    assert any("how much of its data the L2 held" in u for u in row["model"]["unknown"])
    big = _row("zoo-30/h200", "pragma_one_gs")
    assert big["fix"] and not any("L2 held" in u for u in big["model"]["unknown"])


@pytest.mark.xfail(strict=True, reason="issue 28: since a loop's loads in flight are what the "
                   "compiler keeps (loop_depth.py), scale4_l2_gs is advised 256 x 3,168 "
                   "(16.5 % saved; 1,024 x 792 saved 14 %) with 25-57 % claimed: both "
                   "readings price the launch of 4 us the advice would be near 8 us of "
                   "fixed costs")
def test_a_short_loops_claim_holds_what_it_saves():
    """scale4_l2_gs's claim holds the measured saving (it did, 13-51 % for 14 %, when the
    model advised 1,024 x 792), under 20 %."""
    row = _row("zoo-36/h200", "scale4_l2_gs")
    assert row["inside"] and row["low"] < row["saving"] < 0.2


def test_a_fix_predicted_to_save_much_warns_though_its_range_starts_near_none():
    """naive_sum (set 3) ends each thread in an atomic on one address: whether the atomics
    wait for the work the trace cannot say, so its range is 0-89 %; the model, reading its
    source, predicts the advice to save more than WARN_PREDICTED, and it warns (79 %
    measured). A launch whose fix it predicts to save less, with a range from under 2 %,
    stays an info (set 9's max pool: 1 % measured)."""
    from occlint.judgement.cost import WARN_MIN_SAVING, WARN_PREDICTED

    warned = _row("zoo-3/h200", "naive_sum")
    model = warned["model"]
    assert warned["low"] < WARN_MIN_SAVING and warned["warned"] and warned["best_saving"] > 0.5
    assert model["fastest"]["ns"] <= (1 - WARN_PREDICTED) * model["now"]["ns"]
    info = _row("zoo-9/h200", "maxpool2x2")
    assert info["fix"] and info["low"] < WARN_MIN_SAVING and not info["warned"]
    assert info["model"]["fastest"]["ns"] > (1 - WARN_PREDICTED) * info["model"]["now"]["ns"]


def test_a_transposes_column_is_advised_the_block_that_coalesces_it():
    """transpose_naive and column_major: 32 x 32 and 32 x 4 blocks write (or read) a column
    a sector a lane; the sweep's best is 8 x 32 (71 % faster), which the model now
    advises (before it read the accesses, 256 x 1: 4.6 % and 50 % slower)."""
    rows = {r["name"]: r for r in json.loads(_rows("zoo/h200"))}
    for name in ("transpose_naive", "column_major"):
        r = rows[name]
        assert r["fix"]["block"] == r["best"]["block"] == [8, 32, 1], name
        assert r["saving"] > 0.65


def test_a_block_per_rows_reductions_and_rereads_are_advised_within_five_percent():
    """softmax, RMS norm, layer norm, log-sum-exp, L2 norm, cross-entropy, an online
    softmax, rows gathered: rows in blocks too large (their reductions stop every thread,
    fewer rows in flight) or too small (the rows resident per SM overflow its cache, so the
    later passes read DRAM again): the advice is within 5 % of the best the sweep timed,
    never slower than the launch as traced (before the reductions and re-reads were
    priced, softmax's 61 %, RMS norm's 26 %, layer norm's 56 % and log-sum-exp's 40 % were
    not advised at all; before a row's loads in flight were one pass's, cross-entropy's
    24 %)."""
    for run, names in (("zoo/h200", ("softmax_row", "rmsnorm_row")),
                       ("zoo-2/h200", ("layernorm_row",)),
                       ("zoo-3/h200", ("logsumexp_row", "l2norm_row")),
                       ("zoo-4/h200", ("cross_entropy_row", "online_softmax_row",
                                       "gather_rows"))):
        rows = {r["name"]: r for r in json.loads(_rows(run))}
        for name in names:
            assert rows[name]["ratio"] >= 0.95 and rows[name]["saving"] > -0.015, name


def test_the_row_curves_are_the_characterisation_reduced():
    """pass_curve, warp_reduce_curve, reread_curve: device_params.py's reductions of
    characterize.py's row_phases, block_reduce and row_reread rows (H200), the H100's the
    H200's. A pass of a block per row costs its block about half a microsecond whatever
    its threads; a second read of the row is served by the SM's cache while the resident
    rows hold up to 128 KB, and not at all past 512 KB."""
    from benchmarks.gpu.device_params import pass_curve, reread_curve, warp_reduce_curve

    h200, h100 = _devices()
    phases, repeat, reduce, reread = _characterisations(
        "zoo-3/h200", "row-phases", "row-phases-repeat", "reduce", "reread")
    assert [list(x) for x in h200.pass_curve] == pass_curve(phases["row_phases"], 132)
    again = dict(map(tuple, pass_curve(repeat["row_phases"], 132)))
    assert all(abs(again[x] - y) < 0.01 for x, y in h200.pass_curve)
    assert all(0.5 < y < 0.7 for _, y in h200.pass_curve)
    assert [list(x) for x in h200.warp_reduce_curve] == warp_reduce_curve(
        reduce["block_reduce"], 132)
    assert [list(x) for x in h200.reread_curve] == reread_curve(reread["row_reread"])
    share = dict(h200.reread_curve)
    assert share[131072] > 0.8 and share[524288] < 0.05
    assert (h100.pass_curve, h100.warp_reduce_curve, h100.reread_curve) == (
        h200.pass_curve, h200.warp_reduce_curve, h200.reread_curve)


def test_a_math_functions_cost_is_the_characterisation_reduced():
    """math_fma: device_params.py's reduction of characterize.py's math_ops (H200; the
    H100's the H200's): the special-function unit's approximations (__expf, rsqrtf,
    __sinf) cost about five FMAs' issue, their accurate forms two to six times that
    (expf 10, tanhf 17, logf 27, powf 33). zoo set 10's tanh GELU, a grid-stride loop on
    two blocks an SM whose tanhf calls were counted as nothing, was claimed 34-65 % and
    saves 76 %; priced, its claim holds it, and set 11, written after, held all ten (nine
    since a short block's stragglers are its busy warps': log_softmax_row claims 63-85 %
    for 52 %)."""
    from benchmarks.gpu.device_params import math_fma

    h200, h100 = _devices()
    [doc] = _characterisations("zoo-10/h200", "math")
    peak = max(r["fma_per_s"] for r in doc["fma"])
    assert dict(h200.math_fma) == math_fma(doc["math_ops"], peak)
    cost = dict(h200.math_fma)
    assert all(4 < cost[f] < 7 for f in ("__expf", "__logf", "__sinf", "rsqrtf", "exp2f"))
    assert 2 * cost["__expf"] > cost["expf"] > cost["__expf"]
    assert cost["tanhf"] > cost["expf"] and cost["powf"] > cost["logf"] > cost["tanhf"]
    assert h100.math_fma == h200.math_fma
    row = _row("zoo-10/h200", "gelu_tanh_vec4_gs")
    assert row["inside"] and row["ratio"] >= 0.97
    assert _targets("zoo-11/h200")["inside"] >= 0.9


def test_a_naive_matrix_products_l1_requests_are_what_it_waits_for():
    """matmul_naive in 8 x 8 blocks: each warp's a[y * 64 + k] touches four lines of the L1
    and b[k * width + x] one, 64 times an element; at the L1's measured 0.51 ns a line an
    SM (characterize.py l1_lines) the model predicts the launch within 10 % of the time
    the sweep measured (it predicted 4x before the table was read as the caches'), and
    advises 256 x 1 (one line each), within 5 % of the best the sweep timed (32 x 2)."""
    from benchmarks.gpu.device_params import l1_line_ns

    h200, h100 = _devices()
    first, repeat = _characterisations("zoo-4/h200", "l1", "l1-repeat")
    assert h200.l1_line_ns == l1_line_ns(first["l1_lines"]) == h100.l1_line_ns
    assert abs(l1_line_ns(repeat["l1_lines"]) - h200.l1_line_ns) < 0.005
    r = _row("zoo-4/h200", "matmul_naive")
    assert r["model"]["now"]["ns"] / 1e6 == pytest.approx(r["defect_ms"], rel=0.1)
    assert r["ratio"] >= 0.95 and r["fix"]["block"] == [256, 1, 1]


def test_a_lookup_table_a_literal_bounds_is_read_from_the_l1():
    """Set 14's lut_gather_small, in 32-thread blocks, reads ``b[(int)(|a[i]| * 255) &
    255]``: a 1 KB table every thread reads. Read as a DRAM gather (a 32-byte sector a
    lane) the model predicted 1.8 ms for a launch of 1.27 ms, memory-bound in every block,
    and advised nothing (83 % saved by 256 threads); read as the L1's (eight lines, at the
    measured 0.51 ns a line), the launch is its 2 million blocks' starts, predicted within
    10 %, and 256 threads are advised with a claim that holds."""
    r = _row("zoo-14/h200", "lut_gather_small")
    assert r["model"]["facts"]["cached_bytes"] == 4
    assert r["model"]["now"]["ns"] / 1e6 == pytest.approx(r["defect_ms"], rel=0.1)
    assert r["model"]["now"]["binding"] == "block starts"
    assert r["fix"]["block"] == r["best"]["block"] == [256, 1, 1]
    assert r["inside"] and r["warned"]


def test_a_loop_whose_warps_each_end_in_an_atomic_is_advised_fewer_threads_as_such():
    """Set 14's mse_atomic_per_warp: a grid-stride loop on 32 blocks an SM whose every warp
    ends in an atomicAdd on one address. The model predicts every grid of the same threads
    alike (the atomics count the warps, the loop the threads); of those it now advises the
    one nearest the 256-thread blocks its curves were measured in (256 x 1,056: 9.8 %
    saved, measured) where the first it met was 64 x 4,224 (6 %). And the finding is the
    model's (LCH106, naming the atomics' time), not the oversubscription rule's "grid
    below the target", which read as the opposite of its own advice."""
    r = _row("zoo-14/h200", "mse_atomic_per_warp")
    assert r["fix"]["block"] == [256, 1, 1] and r["fix"]["grid"] == [1056, 1, 1]
    assert r["saving"] > 0.09
    doc = score.occlint_json(FIXTURES / "traces/zoo-14/h200/heldout.pt.trace.json.gz")
    [group] = [g for g in doc["launches"] if g["kernel"] == "mse_atomic_per_warp"]
    rules = {f["rule"]: f for f in group["findings"]}
    assert "LCH103" not in rules
    assert "atomics queuing" in rules["LCH106"]["message"]


def test_a_loop_doing_four_elements_a_pass_is_read_as_the_grid_stride_loop_it_is():
    """Set 15's axpy_ilp4_gs_int steps ``i += 4 * stride`` and loads a[i + k * stride]:
    it read as one element per thread (1.3 us predicted for 366 traced: nothing advised, 48
    % to save); read as a grid-stride loop of 32 bytes loaded and 16 stored a pass, not
    unrolled (an int index against a long bound), the advice is within 4 % of the best the
    sweep timed (the best itself until a loop's blocks of two passes or fewer paid their
    stragglers' tail: 512 x 10,560 now, 0.97, for 1,024 x 10,560) and its claim holds."""
    r = _row("zoo-15/h200", "axpy_ilp4_gs_int")
    assert r["model"]["facts"]["loop"] == "grid-stride" and r["model"]["facts"]["unroll"] == 1
    assert r["ratio"] >= 0.96 and r["inside"] and r["warned"]


def test_a_block_per_rows_second_pass_over_float2s_counts_the_pairs_it_rereads():
    """Set 16's RMS norm reads its row twice as float2 pairs through ``x[2 * j]``: the
    second pass's re-read, counted at the float's 4 bytes, put half the resident rows in
    the SM's cache, so 64-thread blocks (32 rows of 8 KB an SM, 256 KB: the cache serves
    13 % of the re-read, reread_curve) looked as fast as 128 (16 rows, 128 KB: 85 %) and
    were advised, 12 % slower than the launch as traced; at the pair's 8 bytes, 128
    threads are advised, the best the sweep timed."""
    r = _row("zoo-16/h200", "row_rmsnorm_vec2")
    assert r["model"]["facts"]["reread_row_bytes"] == 8
    assert r["best"]["block"] == [128, 1, 1] and r["fix"]["block"][0] <= 256
    assert r["inside"] and r["ratio"] >= 0.9


def test_a_warp_per_rows_walk_from_its_lane_is_counted():
    """Set 17's warp_per_row_sum: each warp sums a row of 1,024 floats, ``for (int j =
    lane; j < 1024; j += 32)``. Its trips were not counted (the start is a variable), so
    each thread read 4 bytes, the launch looked block-start-bound and 288-thread blocks
    were warned to save 75-92 % (0.7 % measured). A walk from a variable by a literal
    stride makes bound / stride trips: 128 bytes a thread, predicted within 25 % of the
    measured time (within 10 % until the read curve was the four-load reads': 18 % fast
    since, 21 % since a thread's first element draws the element curve of blocks of 8
    warps or fewer), memory-bound, and nothing advised."""
    r = _row("zoo-17/h200", "warp_per_row_sum")
    assert r["model"]["facts"]["load_bytes"] == 128
    assert r["model"]["now"]["ns"] / 1e6 == pytest.approx(r["defect_ms"], rel=0.25)
    assert r["fix"] is None and not r["warned"]


def test_a_load_a_constant_loop_does_not_index_is_read_once():
    """Set 18's experts8_elem: ``for (int e = 0; e < 8; ++e) acc += a[i] * b[e];``. Its
    ``a[i]`` was counted eight times from DRAM (32 bytes an element for 4; 2.3x the
    traced time), so no block was advised for 17.7 %; a load whose index names no counter
    of the loops around it reads the same element each pass (the compiler keeps it; the
    caches serve the rest): 4 bytes from DRAM, and 256 threads, the best timed, advised."""
    r = _row("zoo-18/h200", "experts8_elem")
    assert r["model"]["facts"]["load_bytes"] - r["model"]["facts"]["cached_bytes"] == 4
    assert r["fix"]["block"] == r["best"]["block"] == [256, 1, 1]


def test_a_stride_loops_own_unroll_pragma_is_read():
    """Set 19's row_sum_unroll4: ``#pragma unroll 4`` on a block per row's loop, which
    NVRTC unrolls so (four loads a pass in its PTX; fixtures/ptx/unroll's pragma forms)
    where it would leave the loop alone: read as one load a pass, 1,024-thread blocks
    looked as fast as any and nothing was advised (24.7 % saved by 64); read as four, 64
    threads are advised, the best the sweep timed, and the claim holds."""
    r = _row("zoo-19/h200", "row_sum_unroll4")
    assert r["model"]["facts"]["unroll"] == 4
    assert r["fix"]["block"] == r["best"]["block"] == [64, 1, 1] and r["inside"]


def test_a_privatised_histograms_flush_queues_one_atomic_a_block_on_each_word():
    """hist_shared: bins in shared memory, then each block adds its 256 to the same 256
    words. characterize.py atomic_set: 2^16 blocks each adding to every word of a set of
    256 or 1,024 take 9.5-9.9 ns a block whatever the words and threads (each word's queue
    holds one atomic a block); the sweep: the launch's time follows its blocks (64
    threads: 2.50 ms, 1,024: 0.17 ms). The model: 2.76 ms for the launch as it is (the
    atomics added to its block starts), 1,024 threads advised, the best."""
    from benchmarks.gpu.device_params import atomic_set_ns

    h200, h100 = _devices()
    first, repeat = _characterisations("zoo-5/h200", "atomic-set", "atomic-set-repeat")
    assert h200.atomic_set_ns == atomic_set_ns(first["atomic_set"]) == h100.atomic_set_ns
    assert atomic_set_ns(repeat["atomic_set"]) == pytest.approx(h200.atomic_set_ns, rel=0.05)
    r = _row("zoo-5/h200", "hist_shared")
    assert r["model"]["now"]["ns"] / 1e6 == pytest.approx(r["defect_ms"], rel=0.15)
    assert r["fix"]["block"] == r["best"]["block"] == [1024, 1, 1]


def test_an_integer_atomic_max_is_priced_as_measured():
    """characterize.py atomic_ops on one address: a float atomicAdd 1.8 ns a request
    (atomic_one_ns), an integer atomicMax 0.77 ns, and every thread's atomicMax 0.03 ns
    (a warp's lanes merge). max_abs_warp's atomicMax a warp had been priced at the float's
    1.8 ns (240 us of atomics in a launch of 175): now 104 us, and 64 x 4,224 advised, 56 %
    saved of the best's 57 % (it was 51 %)."""
    from benchmarks.gpu.device_params import atomic_max_ns

    h200, h100 = _devices()
    first, repeat = _characterisations("zoo-6/h200", "atomic-ops", "atomic-ops-repeat")
    ns = {r["kernel"]: r["ns_per_atomic"] for r in first["atomic_ops"]}
    assert h200.atomic_max_ns == atomic_max_ns(first["atomic_ops"]) == h100.atomic_max_ns
    assert atomic_max_ns(repeat["atomic_ops"]) == pytest.approx(h200.atomic_max_ns, rel=0.05)
    assert ns["atomic_add_warp"] == pytest.approx(h200.atomic_one_ns, rel=0.05)
    assert ns["atomic_max_one"] < h200.atomic_max_ns / 16  # merged in the warp
    r = _row("zoo-6/h200", "max_abs_warp")
    assert r["ratio"] >= 0.97 and r["saving"] > 0.5


def test_a_widening_stores_bytes_are_written_at_what_its_loads_bring():
    """zoo set 9's dequant_char4 reads 4 bytes and writes 16 an element: the copy curve
    counts a write per byte loaded, so its stores were priced at the loads' rate (advised
    1,024 threads for 88-98 %, with its bytes read 256 for 30-62 %); measured, the advice
    saves 72 % of the 73 % the best does, inside its claim."""
    row = _row("zoo-9/h200", "dequant_char4")
    assert row["ratio"] >= 0.97 and row["inside"]


def test_a_byte_loads_holds_a_byte_in_flight():
    """Set 22's uchar_threshold_2d loads and stores one byte a pixel: a warp's request is
    one 32-byte sector, a byte a thread in flight. Held at four bytes (the floor every
    load had), its bandwidth was read four times what Little's law gives: 256 x 2 blocks
    advised, 107 us predicted, 194 us measured (41 % saved, outside its 47-76 % claim).
    At the byte it holds, 256 x 1 is advised, the sweep's best, and the claim holds."""
    r = _row("zoo-22/h200", "uchar_threshold_2d")
    assert r["model"]["facts"]["load_bytes"] == 1.0
    assert r["fix"]["block"] == r["best"]["block"] == [256, 1, 1] and r["inside"]


def test_an_in_place_loops_passes_wait_for_each_other():
    """Set 23's axpy_inplace_gs, ``c[i] += s * a[i]`` in a grid-stride loop that NVRTC
    unrolls four times: each pass loads ``c`` after the last pass's store to it (its PTX,
    as fixtures/ptx/unroll's order_in_place), and the store waits for its loads, so a
    pass holds one element in flight. Read as four, the 64 threads an SM it was traced
    with looked four times faster than they are: its work was solved at 2.7 times the
    truth and 65-87 % claimed for the 92.8 % the grid of 64 x 4,224 saves. Read as one,
    the work is within 10 % of the sweep's and the claim holds."""
    r = _row("zoo-23/h200", "axpy_inplace_gs")
    assert r["model"]["facts"]["unroll"] == 1
    n = 64 * (1 << 20)
    assert r["model"]["elements"] == pytest.approx(n, rel=0.1) and r["inside"]


def test_loops_whose_passes_wait_written_after_the_rule_are_claimed_right():
    """Set 24, written after the rule that a stride loop's passes wait for each other
    where its loads cannot move above its stores: a copy without ``__restrict__``, an
    in-place complex product of float2s, a three-point stencil without ``__restrict__``,
    each in a grid-stride loop, each read as one element in flight a pass, each claim
    holding the measured saving (read as four, each was claimed short: 16-46 % for 59 %,
    5-27 % for 60 %, 27-59 % for 64 %)."""
    for name in ("plain_scale_gs", "cmul_inplace_gs", "stencil3_plain_gs"):
        r = _row("zoo-24/h200", name)
        assert r["model"]["facts"]["unroll"] == 1, name
        assert r["inside"] and r["ratio"] >= 0.95, name


def test_a_block_scans_steps_are_priced_as_the_device_measured_a_tree():
    """tree_curve: device_params.py's reduction of characterize.py's block_reduce rows at
    full residency (H200; the H100's the H200's): a tree over a block's threads in shared
    memory costs the chip 4.0 ns a block of 1,024 threads, 0.36 of 256, nothing the block
    starts do not hide up to 128. Set 23's block scan (a Hillis-Steele scan, two barriers
    a step, in 1,024-thread blocks) was predicted at 0.56 of its traced time and 6-30 %
    claimed for 34.5 % (256 advised); priced so, its curve over the blocks follows the
    sweep's: 128 was advised, the best timed (38.7 %), until the element curve was the
    blocks' of 8 warps or fewer; 160 since (32 % saved), and the claim holds."""
    from benchmarks.gpu.device_params import tree_curve

    h200, h100 = _devices()
    [doc] = _characterisations("heldout-46/h200", "block-reduce")
    assert [list(x) for x in h200.tree_curve] == tree_curve(doc["block_reduce"])
    assert h100.tree_curve == h200.tree_curve
    ns = dict(h200.tree_curve)
    assert max(ns[32], ns[64], ns[128]) < 0.01 and ns[1024] > 10 * ns[256] > 3
    r = _row("zoo-23/h200", "block_scan_elem")
    assert r["model"]["facts"]["block_trees"] == 1
    assert r["best"]["block"] == [128, 1, 1] and r["fix"]["block"][0] <= 256
    assert r["inside"] and r["ratio"] >= 0.9


def test_an_ldg_beside_plain_stores_is_claimed_for_either_compiler():
    """Set 25's ldg_plain_gs: ``c[i] = __ldg(&a[i]) * s`` in a grid-stride loop over plain
    pointers, which NVRTC 13.5 unrolls and 13.0 (the sweep's) leaves alone: read as
    unrolled, 16-46 % was claimed for the 59 % measured; read as not known, the range
    spans both readings and holds it."""
    r = _row("zoo-25/h200", "ldg_plain_gs")
    assert r["model"]["facts"].get("unroll") is None
    assert r["inside"] and r["ratio"] >= 0.95


def test_a_float4s_ldg_loop_is_read_as_the_compiler_leaves_it():
    """Set 26's ldg_float4_gs: ``__ldg(a4 + i)`` of a float4 in a grid-stride loop, which
    neither NVRTC 13.0 nor 13.5 unrolls (fixtures/ptx/unroll's order_restrict_ldg_float4):
    read as unrolled, 47-76 % was claimed for the 84.6 % measured; read as one element a
    pass, 77-93 %."""
    r = _row("zoo-26/h200", "ldg_float4_gs")
    assert r["model"]["facts"]["unroll"] == 1 and r["inside"]


def test_a_grid_stride_loop_written_as_a_macro_is_read_as_one():
    """Set 29's kernel_loop_macro: Caffe's CUDA_KERNEL_LOOP, defined in the file, on one
    block of 512 an SM. The syntax tree sees a call and a block: the body was 'other',
    its facts one element per thread, the model's time 1.3 us for 498 traced, and nothing
    was advised (55 % saved by 128 x 6,336). Read as the loop it expands to: a grid-stride
    loop, advised within 3 % of the best, the claim holding."""
    r = _row("zoo-29/h200", "kernel_loop_macro")
    assert r["model"]["facts"]["loop"] == "grid-stride"
    assert r["ratio"] >= 0.97 and r["inside"]


def test_a_loop_walking_pointers_loads_and_stores_through_them():
    """Set 29's pointer_walk_gs: ``*out = *p * s`` with ``p`` and ``out`` local pointers
    stepped by the grid: ``*p`` was no access the reader knew, so the kernel loaded and
    stored nothing, read as compute-bound, claimed 47-76 % for 77.5 %; read as ``p[0]``
    and ``out[0]``, 4 bytes each, the claim holds."""
    r = _row("zoo-29/h200", "pointer_walk_gs")
    facts = r["model"]["facts"]
    assert (facts["load_bytes"], facts["store_bytes"]) == (4.0, 4.0) and r["inside"]


def test_a_bodys_own_constant_divides_an_index_as_a_define_does():
    """Set 30's mmcv_downsample_loop: ``const int width = 2048;`` then ``pw = index %
    width`` and ``ph = index / width`` in mmcv's CUDA_1D_KERNEL_LOOP. A variable divisor
    leaves the quotient's spread over a warp unknown, so ``a[ph * 2 * width + pw]`` read as
    a gather (32 bytes moved an element) and 3-23 % was claimed for 53 %; the body's own
    constant divides as a ``#define``d one does: the load is coalesced and the claim
    holds."""
    r = _row("zoo-30/h200", "mmcv_downsample_loop")
    assert not r["model"]["facts"].get("scattered_bytes") and r["inside"]


def test_the_gather_bandwidth_is_the_characterisation_reduced():
    """gather_gbs: device_params.py's reduction of characterize.py's gather_bandwidth rows
    (H200); random 4-byte gathers draw under a third of the streamed plateau, whatever the
    block; the H100's is the H200's scaled by the two read plateaus."""
    from benchmarks.gpu.device_params import params

    doc = json.loads((FIXTURES / "traces/zoo/h200/gather.characterization.json").read_text())
    dram = [r["sector_gbps"] for r in doc["gather_bandwidth"] if r["level"] == "dram"]
    h200, h100 = _devices()
    reduced = params({**doc, **_stand_ins(doc)})["gather_gbs"]
    assert h200.gather_gbs == reduced
    assert max(dram) / min(dram) < 1.02
    assert h200.gather_gbs < max(y for _, y in h200.read_curve) / 3
    ratio = max(y for _, y in h100.read_curve) / max(y for _, y in h200.read_curve)
    assert h100.gather_gbs == pytest.approx(h200.gather_gbs * ratio, abs=1)


def _stand_ins(doc: dict) -> dict:
    """The keys params() needs besides gather_bandwidth (the --only run has no others):
    the H200's full characterisation."""
    import gzip

    full = json.loads(gzip.decompress(
        (FIXTURES / "traces/heldout-31/h200-characterization/characterization.json.gz")
        .read_bytes()))
    return {k: v for k, v in full.items() if k not in doc}


# the issue's targets on the sets: (run, target) -> what was measured
UNMET = {
    ("zoo-2/h200", "advised 0.97"): "0.960 (habit 0.970): data_gather (25 %: an L2-resident "
                                    "gather priced at DRAM's random rate) is not advised",
    ("zoo-2/h200", "inside 90 %"): "5 of 7 claims hold",
    ("zoo/h200", "width 15 points"): "27 points",
    ("zoo-2/h200", "width 15 points"): "31 points",
    ("zoo-3/h200", "width 15 points"): "22 points",
    ("zoo-4/h200", "width 15 points"): "30 points",
    ("zoo-5/h200", "width 15 points"): "26 points",
    ("zoo-6/h200", "width 15 points"): "25 points",
    ("zoo-7/h200", "width 15 points"): "25 points",
    ("zoo-7/h200", "spearman 0.9"): "0.84",
    ("zoo-8/h200", "width 15 points"): "24 points",
    ("zoo-8/h200", "inside 90 %"): "7 of 8 claims hold (rotate90: 26-58 % claimed, 69 % "
                                   "saved)",
    ("zoo-8/h200", "every 10 % warned"): "row_shift_2d (13 % saved, 0-16 % claimed: an info)",
    ("zoo-6/h200", "inside 90 %"): "7 of 8 claims hold (max_abs_warp: 0-48 % claimed, 56 % "
                                   "saved: whether its atomics wait for the work is unknown)",
    ("zoo-2/h200", "every 10 % warned"): "data_gather",
    ("zoo-9/h200", "width 15 points"): "25 points",
    ("zoo-10/h200", "inside 90 %"): "6 of 7 claims hold (row_normalize_l1: 54-81 % claimed, "
                                    "41 % saved)",
    ("zoo-10/h200", "width 15 points"): "26 points",
    ("zoo-11/h200", "width 15 points"): "25 points",
    ("zoo-12/h200", "width 15 points"): "25 points",
    ("zoo-12/h200", "every 10 % warned"): "huber_loss_gs (10.2 %: nothing advised)",
    ("zoo-13/h200", "width 15 points"): "27 points",
    ("zoo-14/h200", "inside 90 %"): "6 of 7 claims hold (row_sumsq_vec4: 54-80 % claimed, 49 % "
                                    "saved: a float4 row of 256 in 512-thread blocks)",
    ("zoo-14/h200", "width 15 points"): "19 points",
    ("zoo-14/h200", "every 10 % warned"): "mse_atomic_per_warp (12 % saved by 512 x 264; "
                                          "64 x 4,224 advised, 2-20 % claimed, 6 % saved)",
    ("zoo-15/h200", "width 15 points"): "27 points",
    ("zoo-15/h200", "every 10 % warned"): "softsign_elem (17.5 %), row_softmax_cols128 (13 %: "
                                          "0-16 % claimed), row_absmax_warp (26 %: nothing "
                                          "advised)",
    ("zoo-16/h200", "width 15 points"): "26 points",
    ("zoo-17/h200", "width 15 points"): "22 points",
    ("zoo-18/h200", "width 15 points"): "27 points",
    ("zoo-18/h200", "every 10 % warned"): "experts8_elem (17.7 %: 0-14 % claimed), "
                                          "relu_backward (10.3 %: 0-16 %)",
    ("zoo-19/h200", "width 15 points"): "27 points",
    ("zoo-19/h200", "every 10 % warned"): "compound_twice (12.2 %: 1-18 % claimed)",
    ("zoo-20/h200", "width 15 points"): "23 points",
    ("zoo-20/h200", "every 10 % warned"): "lerp_three_elem (14.9 %: 2-20 % claimed, an info)",
    ("zoo-21/h200", "inside 90 %"): "5 of 7 claims hold (broadcast_quarter_gs: 9-35 % "
                                    "claimed, 37 % saved; row_scale_int_index: 41-71 %, "
                                    "29 %)",
    ("zoo-21/h200", "width 15 points"): "30 points",
    ("zoo-22/h200", "width 15 points"): "30 points",
    ("zoo-23/h200", "advised 0.97"): "0.882 (habit 0.891): mix8_elem (55 % saved by 32 "
                                     "threads) not advised, hist_shared_gs advised 1,024 x "
                                     "792 (11 %; 256 x 1,056 saves 39 %)",
    ("zoo-23/h200", "width 15 points"): "25 points",
    ("zoo-23/h200", "every 10 % warned"): "mix8_elem (55 %: nothing advised)",
    ("zoo-23/h200", "spearman 0.9"): "0.81",
    ("zoo-24/h200", "width 15 points"): "27 points",
    ("zoo-25/h200", "advised 0.97"): "0.962 (habit 0.936): tree_interleaved_elem advised "
                                     "160 threads (15 %; 25.7 % by 128: a tree whose steps "
                                     "diverge, priced as the measured halving tree)",
    ("zoo-25/h200", "width 15 points"): "26 points",
    ("zoo-25/h200", "every 10 % warned"): "atomic_spread_gs (11.8 %: 0.5-17 % claimed, an "
                                          "info)",
    ("zoo-26/h200", "inside 90 %"): "8 of 9 claims hold (block_sum_elem: 17-48 % claimed, "
                                    "11.9 % saved: a block's warp-shuffle sum, unpriced)",
    ("zoo-26/h200", "width 15 points"): "27 points",
    ("zoo-27/h200", "width 15 points"): "25 points",
    ("zoo-28/h200", "width 15 points"): "26 points",
    ("zoo-29/h200", "width 15 points"): "29 points",
    ("zoo-30/h200", "width 15 points"): "26 points",
    ("zoo-31/h200", "width 15 points"): "31 points",
    ("zoo-32/h200", "advised 0.97"): "0.931 (habit 0.597): small_dot_atomic_gs advised 32 "
                                     "x 396 (93.9 % saved; 32 x 132 saves 95.5 %)",
    ("zoo-32/h200", "inside 90 %"): "3 of 6 claims hold (small launches of 1-8 us: "
                                    "small_scale_gs under-claimed, small_blend_2d and "
                                    "mid_copy4_gs over)",
    ("zoo-32/h200", "width 15 points"): "26 points",
    ("zoo-33/h200", "advised 0.97"): "0.925 (habit 0.790): short_sum_warp_gs advised 256 x "
                                     "396 (85 % saved; 90 % by 32 x 792: 9.2 against 6.2 us), "
                                     "short_copy_gs 1,024 x 264 (14 %; 22 % by 192 x 528)",
    ("zoo-33/h200", "inside 90 %"): "3 of 5 claims hold (short_add3_elem 51-78 % claimed, 42 "
                                    "% saved; short_copy_gs 37-68 %, 14 %)",
    ("zoo-33/h200", "width 15 points"): "31 points",
    ("zoo-34/h200", "advised 0.97"): "0.923 (habit 0.978, written after stop 43's model and "
                                     "scored once): gather_mid_elem (a random gather over a "
                                     "64 MB table the L2 mostly holds, priced at DRAM's "
                                     "random rate, 2.8x the traced time) not advised, 24 % "
                                     "saved by 256 threads; axpy_mid_vec2_gs advised 1,024 "
                                     "x 4,224 (3 %; 256 x 10,560 saves 18 %)",
    ("zoo-34/h200", "width 15 points"): "30 points",
    ("zoo-34/h200", "every 10 % warned"): "gather_mid_elem (24 %: nothing advised)",
    ("zoo-35/h200", "width 15 points"): "25 points",
    ("zoo-36/h200", "advised 0.97"): "0.958 (habit 0.974, written after stop 43's model and "
                                     "scored once): grid-stride loops of 2-20 us whose work "
                                     "is read from their time (relu_l2_int_gs advised 1,024 "
                                     "x 792: 49 %, 52 % by 512 x 528)",
    ("zoo-36/h200", "inside 90 %"): "4 of 7 claims hold (relu_l2_int_gs 8-34 % claimed, 49 % "
                                    "saved; scale4_l2_gs 20-51 %, 14 %; poly_l2_gs 69-89 %, "
                                    "60 %)",
    ("zoo-36/h200", "width 15 points"): "24 points",
    ("zoo-36/h200", "spearman 0.9"): "0.86",
    ("zoo-37/h200", "width 15 points"): "25 points",
    ("zoo-38/h200", "advised 0.97"): "0.921 (habit 0.962, written after stop 43's model): "
                                     "two_outputs_gs, whose second store writes the same "
                                     "1,024 words from every thread, advised 1,024 x 8,448 "
                                     "(16 % slower; 64 x 2,112 saves 36 %: stores to the "
                                     "same lines queue, which the model does not price)",
    ("zoo-38/h200", "inside 90 %"): "6 of 8 claims hold (pragma4_stride_gs 66-87 % claimed, "
                                    "93 % saved; ternary_store_elem 19-50 %, 52 %)",
    ("zoo-38/h200", "width 15 points"): "22 points",
    ("zoo-39/h200", "inside 90 %"): "4 of 6 claims hold (vec2_guard_elem 28-60 % claimed, 65 "
                                    "% saved; mask_count_block_gs 3-24 %, 39 %)",
    ("zoo-39/h200", "width 15 points"): "25 points",
    ("zoo-40/h200", "advised 0.97"): "0.966 (habit 0.986, written after stop 43's model and "
                                     "scored once): member_ptr_elem (pointers in a local "
                                     "struct, p.y[i] = p.x[i], read as no access) not "
                                     "advised, 20 % saved by 256 threads",
    ("zoo-40/h200", "width 15 points"): "30 points",
    ("zoo-40/h200", "every 10 % warned"): "member_ptr_elem (20 %: nothing advised)",
    ("zoo-41/h200", "width 15 points"): "30 points",
    ("zoo-42/h200", "width 15 points"): "23 points (written after a loop's loads in flight "
                                        "were what the compiler keeps, scored once)",
    ("zoo-43/h200", "width 15 points"): "21 points",
    ("zoo-44/h200", "width 15 points"): "23 points",
    # since a short block's stragglers are its busy warps'
    ("zoo-34/h200", "spearman 0.9"): "0.79 (layernorm_mid_row 55-92 % claimed, 47 % saved)",
    ("zoo-45/h200", "width 15 points"): "26 points (written after a block's atomic and tree "
                                        "were priced as measured, scored once)",
    ("zoo-45/h200", "spearman 0.9"): "0.71 (sq_tree_atomic_gs claimed 2-41 % for 11 %, "
                                     "mean_tree_small_gs 0-77 % for 30 %)",
    ("zoo/h200", "spearman 0.9"): "0.77",
    ("zoo-2/h200", "spearman 0.9"): "0.27",
    # since a loop's loads in flight are what the compiler keeps (loop_depth.py) and the
    # band was refitted (-0.727, 0.334 -> -0.744, 0.262: claims' high ends lower)
    ("zoo-3/h200", "inside 90 %"): "10 of 12 claims hold (logsumexp_row 41-70 % claimed, 37 "
                                   "% saved; planar_to_rgb 0-15 %, 22 %)",
    ("zoo-3/h200", "every 10 % warned"): "planar_to_rgb (22 %: 0-15 % claimed, an info)",
    # since the element curve was the blocks' of 8 warps or fewer
    ("zoo-32/h200", "spearman 0.9"): "0.88",
    # since a block's atomic on one address joins the launch as reduce_stream measured
    ("zoo-4/h200", "spearman 0.9"): "0.85",
    ("zoo-16/h200", "inside 90 %"): "6 of 8 claims hold (ldcs_gelu_gs 45-73 % claimed, 79 % "
                                    "saved; bias_add_rowptr_2d 7-30 %, 34 %)",
    ("zoo-24/h200", "inside 90 %"): "7 of 8 claims hold (affine_rows_2d 7-30 % claimed, 35 % "
                                    "saved)",
    ("zoo-28/h200", "every 10 % warned"): "two_per_pass_gs (19 %: 1.5-19 % claimed, an info)",
    ("zoo-31/h200", "spearman 0.9"): "0.83",
    ("zoo-34/h200", "inside 90 %"): "5 of 6 claims hold (channel_scale_rt_elem 20-50 % "
                                    "claimed, 52 % saved)",
    ("zoo-38/h200", "spearman 0.9"): "0.85",
    # since a loop whose work the trace leaves open is advised by the least worst ratio
    # over that span
    ("zoo-12/h200", "advised 0.97"): "0.965 (habit 0.863): sum_atomic_per_thread (an "
                                     "atomicAdd a thread after its loop, which fill its "
                                     "traced time) advised 256 x 132, 0.80 of the best "
                                     "(64 x 1,056; 0.96 read at the span's middle)",
    # since a loop's short blocks pay their stragglers' tail (timing.TAIL_PASSES)
    ("zoo/h200", "every 10 % warned"): "scale4 (10.9 %: 512 x 10,560 advised for 1,024 x "
                                       "10,560, 1.5-19 % claimed, 9.3 % saved, an info)",
    ("zoo-46/h200", "advised 0.97"): "0.946 (habit 0.958, written after a block per row's "
                                     "rows were given their stragglers' tail, scored once): "
                                     "bias_gelu_row (rows of 3,072 in 1,024-thread blocks) "
                                     "not advised, 14.6 % saved by 256 (7 % predicted)",
    ("zoo-46/h200", "width 15 points"): "29 points",
    ("zoo-46/h200", "every 10 % warned"): "bias_gelu_row (14.6 %: nothing advised)",
    ("zoo-46/h200", "spearman 0.9"): "0.88",
    ("zoo-47/h200", "advised 0.97"): "0.877 (habit 0.750; the stop's starting model 0.831, "
                                     "written after the idle blocks and the loops' tail, "
                                     "scored once): gelu_short_gs (1 M elements in 256 x "
                                     "8,448 threads, 10 us) not advised, 49 % saved: its "
                                     "work solved from the trace is 4.1x the true",
    ("zoo-47/h200", "inside 90 %"): "1 of 3 claims holds (relu_wide_grid_gs 24-61 % claimed, "
                                    "65 % saved; saxpy_two_per_thread_gs 1.6-20 %, 28 %)",
    ("zoo-47/h200", "width 15 points"): "37 points",
    ("zoo-47/h200", "every 10 % warned"): "saxpy_two_per_thread_gs (28.5 %: an info), "
                                          "gelu_short_gs (49 %: nothing advised)",
    ("zoo-47/h200", "spearman 0.9"): "0.82",
    ("zoo-48/h200", "inside 90 %"): "5 of 6 claims hold (dpoly_elem 29-59 % claimed, 69.5 % "
                                    "saved: its 48 FP64 multiply-adds read as 99 from the "
                                    "source, the unrolled loop's 0.01 * k counted, which "
                                    "the compiler folds; 48-75 % before the FP64 rate)",
    ("zoo-48/h200", "width 15 points"): "29 points",
    # since a block per row's rows end with their stragglers (timing.TAIL_PASSES)
    ("zoo-3/h200", "spearman 0.9"): "0.89 (logsumexp_row 58-81 % claimed, 40 % saved: its "
                                    "two passes and reductions were priced 2.4x slow at "
                                    "1,024 threads, the rows' tail adds to that)",
}
TARGETS = {
    "advised 0.97": lambda t: t["advised_vs_best"] >= 0.97,
    "inside 90 %": lambda t: t["inside"] >= 0.9,
    "width 15 points": lambda t: t["median_width"] <= 0.15,
    "every 10 % warned": lambda t: t["missed"] == [],
    "spearman 0.9": lambda t: t["spearman"] >= 0.9,
}


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("run", list(RUNS))
def test_the_issues_target(request, target, run):
    _unmet(request, UNMET.get((run, target)))
    assert TARGETS[target](_targets(run))


@pytest.mark.parametrize("run", list(RUNS))
def test_from_the_trace_alone_the_advice_is_never_slower(request, run):
    _unmet(request, TRACE_ALONE_UNMET.get(run))
    t = _targets(run, None)
    assert t["slower"] == [] and t["inside"] >= 0.8
