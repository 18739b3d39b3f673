"""Kernels whose types the source names indirectly (issue 28), held against NVRTC's PTX
(fixtures/make_zoo_ptx.py):

* a template kernel's facts per instantiation: each instantiation a trace names is read
  from the template's text with the name's arguments (a value type, an unrolled count, a
  block size); fixtures/sources/templates.cu, fixtures/ptx/templates.ptx.gz. Read without
  its arguments, a template's pointers have no element size and its loops no count;
* a file's type aliases (``typedef float2 Complex;``, ``using real_t = double;``) read as
  the types they name: fixtures/sources/aliases.cu, fixtures/ptx/aliases.ptx.gz. Read as
  unknown names, their pointers had no element size and their doubles were single
  precision.
"""

from __future__ import annotations

import gzip
import json
import pickle
from pathlib import Path

import pytest

from occlint.model.demangle import base_name, demangle, template_arguments
from occlint.pipeline.run import Options, execute
from occlint.readers.nvidia.ptx import facts_by_entry
from occlint.readers.source import read_source
from occlint.readers.source.facts import instantiated, type_aliases
from tests.conftest import FIXTURES
from tests.test_traces_input import kernel, kineto

SOURCE = FIXTURES / "sources" / "templates.cu"
PTX = FIXTURES / "ptx" / "templates.ptx.gz"
ALIASES = FIXTURES / "sources" / "aliases.cu"


def _ptx_facts(path: Path = PTX) -> dict[str, object]:
    """The PTX's facts by demangled entry name."""
    facts = facts_by_entry(gzip.decompress(path.read_bytes()).decode())
    return {demangle(name): f for name, f in facts.items()}


def _templates() -> dict[str, object]:
    return {k.name: k for k in read_source(SOURCE, "templates.cu").kernels}


def test_every_instantiation_reads_as_the_compiler_built_it():
    """Bytes loaded and stored an element, double precision and the loop as the PTX holds
    them; multiply-adds within one (a per-element kernel's index product, which the PTX
    computes in integers). The template read alone knows neither the bytes nor the
    counts."""
    templates = _templates()
    compiled = _ptx_facts()
    assert len(compiled) == 9
    unknown = 0
    for name, ptx in compiled.items():
        template = templates[base_name(name)]
        assert template.template and template.instantiable is not None
        source = instantiated(template.instantiable, template_arguments(name))
        assert (source.load_bytes, source.store_bytes, source.fp64, source.loop) == \
            (ptx.load_bytes, ptx.store_bytes, ptx.fp64, ptx.loop), name
        assert 0 <= source.fma - ptx.fma <= 1, name
        own = template.facts
        unknown += own.load_bytes is None or abs(own.fma - ptx.fma) > 1
    assert unknown == len(compiled)


def test_a_trace_of_instantiations_gets_each_ones_facts(tmp_path):
    """The run's JSON: each traced instantiation's model facts are its own (an unrolled
    count of 8 and of 64, float4 and short copies), not the template's."""
    names = {"void poly_n<64>(float const*, float*, float, long)": (4.0, 64.0),
             "void poly_n<8>(float const*, float*, float, long)": (4.0, 8.0),
             "void copy_t<float4>(float4 const*, float4*, long)": (16.0, 0.0),
             "void copy_t<short>(short const*, short*, long)": (2.0, 0.0)}
    events = [kernel(name=name, grid=(65536, 1, 1), block=(256, 1, 1), ts=i * 100.0,
                     dur=80.0) for i, name in enumerate(names)]
    trace = tmp_path / "trace.json"
    trace.write_text(kineto(events))
    doc = execute(Options(paths=[str(trace), str(SOURCE)], isolated=True)).doc
    got = {g["kernel"]: g["model"]["facts"] for g in doc["launches"]}
    for name, (load, fma) in names.items():
        assert got[name]["load_bytes"] == load
        assert 0 <= got[name]["fma"] - fma <= 1


@pytest.mark.parametrize(("name", "arguments"), [
    ("void ns::k<float, 4>(float*, int)", ("float", "4")),
    ("void a::b<int>::k<float>(float*)", ("float",)),  # the class's arguments are not its
    ("void k<c10::Half, (int)4, true>(c10::Half const*)", ("c10::Half", "(int)4", "true")),
    ("void k<std::pair<int, float>, 8u>(int)", ("std::pair<int, float>", "8u")),
    ("void a<int>::k(float*)", None),
    ("k(float*)", None),
    ("void k<float>(float*) [clone .kd]", ("float",)),  # ROCm's descriptor symbol's name
])
def test_template_arguments_of_a_demangled_name(name, arguments):
    assert template_arguments(name) == arguments
    if arguments and "<int>::" not in name:  # (a kernel is no class template's member)
        assert base_name(name) == "k"


def test_arguments_that_do_not_pair_with_the_parameters_read_nothing():
    template = _templates()["poly_t"]
    assert instantiated(template.instantiable, ("float",)) is None
    # a trace's name is untrusted: nothing but a type or a value goes into the text
    assert instantiated(template.instantiable, ("float; } while (1) {", "16")) is None
    assert instantiated(template.instantiable, ("float" * 100, "16")) is None
    assert instantiated(template.instantiable, ("float", "(int)16")).fma == 16
    assert instantiated(template.instantiable, ("float", "16u")).fma == 16


def test_a_template_kernel_crosses_processes_with_its_text():
    template = _templates()["axpy_b"]
    assert pickle.loads(pickle.dumps(template)) == template


def test_aliased_types_read_as_the_types_they_name():
    """Element bytes and double precision as NVRTC built them, through typedef, using and
    an alias of an alias."""
    compiled = _ptx_facts(FIXTURES / "ptx" / "aliases.ptx.gz")
    source = {k.name: k.facts for k in read_source(ALIASES, "aliases.cu").kernels}
    assert len(compiled) == 5
    for name, ptx in compiled.items():
        got = source[name]
        assert (got.load_bytes, got.store_bytes, got.fp64, got.loop) == \
            (ptx.load_bytes, ptx.store_bytes, ptx.fp64, ptx.loop), name
    assert {n for n, f in compiled.items() if f.fp64} == {"axpy_real", "scale_scalar"}


def test_type_aliases_of_a_file():
    text = b"""typedef float2 Complex;
typedef unsigned int uint_t;
using real_t = double;
typedef real_t scalar;
#if USE_FP32
typedef float floatX;
#else
typedef __nv_bfloat16 floatX;
#endif
typedef struct { float x; } Point;
typedef Unknown Mine;
mytypedef float NotOne;
typedef const float cfloat;
"""
    assert type_aliases(text) == {"Complex": "float2", "uint_t": "unsigned int",
                                  "real_t": "double", "scalar": "double",
                                  "cfloat": "const float"}


def test_library_and_short_scalar_names_have_their_sizes():
    """POSIX's and CUDA samples' uint/ushort/ulong, C23's _Float16, PyTorch's c10::Half and
    c10::BFloat16 (a uint16_t each, c10/util/Half.h, BFloat16.h) and FP8 (cuda_fp8.h)."""
    from occlint.readers.source.facts import pointer_sizes

    params = ("(const uint* a, ushort* b, ulong* c, const _Float16* d, at::Half* e, "
              "const c10::BFloat16* __restrict__ f, __nv_fp8_e4m3* g)")
    assert pointer_sizes(params) == {"a": 4, "b": 2, "c": 8, "d": 2, "e": 2, "f": 2, "g": 1}



TIMED = FIXTURES / "traces" / "templates" / "h200"


def _advised_on_the_h200() -> dict[str, tuple]:
    """occlint on the H200's trace of the nine instantiations with their source
    (benchmarks/gpu/template_launches.py): per instantiation (its name expression), the
    claim, whether it warned, and the measured saving of its fix and of the best."""
    from benchmarks.gpu.heldout.score import TOLERANCE

    timed = json.loads((TIMED / "templates.json").read_text())["kernels"]
    doc = execute(Options(paths=[str(TIMED / "templates.pt.trace.json.gz"), str(SOURCE)],
                          isolated=True)).doc
    out = {}
    for group in doc["launches"]:
        name = group["kernel"].split("(")[0].removeprefix("void ")
        rows = timed[name]
        model = group.get("model") or {}
        fix, saving = model.get("fix"), model.get("saving")
        advised = rows[0] if fix is None else next(
            r for r in rows if r["block"] == fix["block"]
            and (r["grid"] == fix["grid"] or not name.startswith("poly_t")))
        got = 1 - advised["ms"] / rows[0]["ms"]
        inside = saving is None or saving["low"] - TOLERANCE <= got <= saving["high"] + TOLERANCE
        warned = any(f["severity"] == "warning" for f in group["findings"])
        out[name] = (got, 1 - min(r["ms"] for r in rows) / rows[0]["ms"], inside, warned)
    return out


def test_the_instantiations_timed_on_the_h200():
    """The nine instantiations traced by the PyTorch profiler on an H200 and timed over
    their blocks (and grids): with each instantiation's facts, every claim holds, every
    launch that can save 10 % is warned, none is advised slower and the fixes reach 0.93 of
    the best or more (the grid-stride loops: 25 of 30 % and all of 19 %). The kernels whose
    index steps by their own block (axpy_b) are left as they are."""
    import math

    result = _advised_on_the_h200()
    assert len(result) == 9
    for name, (got, best, inside, warned) in result.items():
        assert inside, name
        assert got >= -0.03, name
        assert warned == (best >= 0.10), name
        assert (1 - best) / (1 - got) >= 0.93, name
    assert math.prod((1 - best) / (1 - got) for got, best, _, _ in result.values()) \
        ** (1 / 9) >= 0.98
    assert result["axpy_b<256u, float>"][0] == result["axpy_b<128u, double>"][0] == 0.0


def test_the_template_read_alone_misses_what_its_instantiations_save(monkeypatch):
    """Without the arguments (the template's own text: no element sizes, no counts) the
    grid-stride loops get no fix (19 and 30 % left) and the copies' claims span 0 to 87 %,
    too wide to warn on savings of 59 to 84 %."""
    import occlint.pipeline.facts_index as facts_index

    monkeypatch.setattr(facts_index, "instantiation", lambda entry, kernel: entry)
    result = _advised_on_the_h200()
    assert result["poly_t<float, 32>"][0] == result["poly_t<double, 16>"][0] == 0.0
    assert sorted(n for n, (_, best, _, warned) in result.items()
                  if best >= 0.10 and not warned) == [
        "copy_t<float4>", "copy_t<float>", "copy_t<short>", "poly_t<double, 16>",
        "poly_t<float, 32>"]


def test_a_binary_of_instantiations_gets_each_ones_facts(monkeypatch):
    """The templates' cubin (NVRTC's SASS for sm_90, fixtures/ptx/templates.sm_90.cubin)
    with their source and a launch to judge: each instantiation's kernel gets the launch-time
    model's plan from its own facts (the unrolled counts, the element sizes); read as the
    template alone its facts are not known and the rules' own estimates stand."""
    import occlint.pipeline.facts_index as facts_index

    def models() -> dict[str, dict]:
        doc = execute(Options(paths=[str(FIXTURES / "ptx" / "templates.sm_90.cubin"),
                                     str(SOURCE)], isolated=True, devices=["h100"],
                              grid=65536, block=32)).doc
        return {r["demangled"].split("(")[0].removeprefix("void "): r.get("model")
                for r in doc["kernels"]}

    got = models()
    assert len(got) == 9
    assert got["poly_t<float, 32>"]["facts"]["fma"] == 32
    assert got["poly_t<double, 16>"]["facts"]["fp64"] == 1.0
    assert got["copy_t<float4>"]["facts"]["load_bytes"] == 16
    assert got["poly_n<64>"]["fix"]["block"][0] > 32
    monkeypatch.setattr(facts_index, "instantiation", lambda entry, kernel: entry)
    alone = models()
    assert alone["poly_t<float, 32>"] is None and alone["copy_t<float4>"] is None
