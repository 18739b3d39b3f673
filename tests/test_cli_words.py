"""The words of the text output and the CLI (issue 22): names as the tables show them,
what was read, plurals, rounded waves, why the advice differs from the analysed block, help
that names every input kind, a suggestion for a mistyped command, errors printed once."""

from __future__ import annotations

import math
import re
import sqlite3

import pytest

from occlint.devices.db import shipped_db
from tests.conftest import FIXTURES

NSYS = "fixtures/traces/nsys/h100_report.sqlite"
RAW_ODD = "fixtures/traces/kineto/raw_odd.pt.trace.json.gz"
GAMMA = "fixtures/amd/co/gamma.gfx1100.hsaco"


def test_trace_findings_name_kernels_as_the_table_does(occlint):
    """Nsight Systems records each kernel's mangled and demangled name (StringIds): the text
    findings show the demangled one the export holds, as the launch table does — not the
    mangled form (the CUTLASS kernel; the fixture's other kernel has a hostile demangled
    name, tested elsewhere)."""
    db = sqlite3.connect(FIXTURES / "traces" / "nsys" / "h100_report.sqlite")
    names = dict(db.execute(
        "SELECT m.value, d.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds m ON m.id = k.mangledName JOIN StringIds d ON d.id = k.demangledName "
        "WHERE m.value LIKE '_ZN7cutlass%'"))
    db.close()
    assert len(names) == 1
    run = occlint(NSYS, "--isolated", "--show-all")  # CUTLASS is a library: --show-all
    assert not re.search(r"\b_Z\w+", run.out)
    [demangled] = names.values()
    findings = [line for line in run.out.splitlines() if line.startswith(f"{NSYS}: ")]
    assert sum(f"{NSYS}: {demangled} <<<" in line for line in findings) == 3
    table = [line for line in run.out.splitlines() if line.startswith("    ")]
    assert any(demangled[:80] in line for line in table)


def test_summary_says_what_was_read(occlint, tmp_path):
    trace = occlint(RAW_ODD, "--isolated").out.splitlines()[-1]
    assert trace.startswith("129 launches (8 launch groups) in 1 input: ")
    (tmp_path / "k.cu").write_text(
        "__global__ void k(float *x) { x[threadIdx.x] = 0; }\n"
        "void go(float *x) { k<<<4, 128>>>(x); k<<<8, 64>>>(x); }\n")
    source = occlint(str(tmp_path / "k.cu"), "--isolated").out.splitlines()[-1]
    assert source.startswith("2 launch sites in 1 source file: "), source
    both = occlint(str(tmp_path / "k.cu"), GAMMA, "--isolated").out.splitlines()[-1]
    assert both.startswith("2 launch sites (1 source file) and 1 kernel in 2 inputs: ")


def test_one_of_a_thing_is_singular(occlint):
    """133 blocks on the 132 SMs of an H100: one SM runs two blocks, 131 run one."""
    sms = shipped_db().get("h100").compute_units
    assert sms == 132
    out = occlint(RAW_ODD, "--isolated", "--select", "LCH101", "--show-all").out
    assert "133 blocks is not a multiple of the 132 SMs" in out
    assert ": 1 SM runs 2 blocks while 131 run 1:" in out
    assert not re.search(r"\b1 (SM|CU|WGP|block|warp|wave)s\b", out)


def test_device_waves_rounded(occlint):
    """1,000,000 elements at 1024 threads per block: 977 blocks; a W7800 holds 2 blocks of
    1024 on each of its 35 WGPs: 977 / 70 = 13.957... full-device waves, printed 13.96."""
    run = occlint(GAMMA, "--device", "w7800", "--problem-size", "1000000", "--isolated", "-q")
    blocks = math.ceil(1_000_000 / 1024)
    assert f"grid of {blocks} blocks = {blocks / 70:.2f} full-device waves" in run.out
    assert "13.96 full-device waves" in run.out


def test_advice_says_why_it_differs_from_the_analysed_block(occlint):
    out = occlint("fixtures/nvidia/cubin/bigparam.sm_120.cubin", "--isolated").out
    assert "block 768 (CUDA's max-potential block size; pass --block)" in out
    assert ("advice: block 256 (best occupancy 100%: the largest block at the best "
            "occupancy up to 256)") in out
    same = occlint(GAMMA, "--block", "256", "--isolated").out
    assert "advice: block 256 (best occupancy 100%)" in same  # nothing to explain


@pytest.mark.parametrize("args", [["--help"], ["check", "--help"]])
def test_help_names_traces_and_sources(occlint, args):
    out = occlint(*args).out
    assert "profiler traces" in out and "CUDA / HIP" in out and "sources" in out


@pytest.mark.parametrize("typo,command", [("devcies", "devices"), ("calcc", "calc"),
                                          ("rules", "rule"), ("vaildate", "validate")])
def test_mistyped_command_gets_a_suggestion(occlint, typo, command):
    run = occlint(typo)
    assert run.code == 2 and run.out == ""
    assert run.err == (f"occlint: error: {typo}: no such file, directory or command; did you "
                       f"mean 'occlint {command}'? (see 'occlint --help')\n")


def test_a_file_named_like_a_command_is_read(occlint, tmp_path):
    (tmp_path / "devcies").write_bytes(b"not gpu code")
    run = occlint("devcies", "--isolated", cwd=tmp_path)
    assert run.code == 2 and "did you mean" not in run.err


def test_errors_are_printed_once(occlint):
    run = occlint("no-such-file", GAMMA, "--isolated")
    assert run.err == "occlint: error: no-such-file: no such file or directory\n"
    assert "no-such-file" not in run.out and "1 kernel in 1 input: 1 error" in run.out
    only = occlint("no-such-file", "--isolated")
    assert only.code == 2 and only.out == "0 kernels in 0 inputs: 1 error\n"
