"""Issue 31, item 3: the text report of a fat binary names the architectures and prints a
finding that is the same in several images once; numbers in lists are in numeric order;
nothing after an input's error pretends a summary of nothing; `calc` at full occupancy
names no next step."""

from __future__ import annotations

import gzip
import json
import re

from tests.conftest import FIXTURES

FATBIN = FIXTURES / "nvidia" / "containers" / "small.default.fatbin"
RESNET = FIXTURES / "traces" / "kineto" / "resnet18_train.pt.trace.json.gz"


def _elf_archs(cuobjdump_listing: str) -> list[str]:
    """The architectures of the ELF images, as cuobjdump lists them."""
    return re.findall(r"Fatbin elf code:\n=+\narch = (\w+)", cuobjdump_listing)


def _arch_number(arch: str) -> int:
    return int(re.search(r"\d+", arch)[0])


def test_fat_binary_findings_name_their_architectures_once(occlint):
    listing = (FATBIN.parent / (FATBIN.name + ".cuobjdump.txt")).read_text()
    archs = _elf_archs(listing)
    assert archs == ["sm_75", "sm_80", "sm_90", "sm_100a", "sm_120"]
    run = occlint(str(FATBIN), "--isolated", "-q")
    lines = run.out.splitlines()
    assert lines and len(lines) == len(set(lines)), "a line printed twice"
    named: list[str] = []
    for line in lines:
        found = re.search(r"\) \[([\w, ]+)\]: OCC105 ", line)
        assert found, line
        these = found[1].split(", ")
        assert [_arch_number(a) for a in these] == sorted(_arch_number(a) for a in these)
        named += these
    # each image's kernel is limited by its registers: every architecture named, once
    assert sorted(named, key=_arch_number) == archs
    # 151 registers x 384 threads fit once in the 64K registers of every SM from sm_75 to
    # sm_120; what differs is the warps an SM holds: 32 on sm_75, 48 on sm_120 and 64 on
    # sm_80, sm_90 and sm_100 (CUDA C++ Programming Guide, compute capabilities table)
    assert any("[sm_80, sm_90, sm_100a]: OCC105" in line and "12/64 warps" in line
               for line in lines)


def test_a_single_image_names_no_architecture(occlint):
    cubin = FIXTURES / "nvidia" / "cubin" / "regheavy.sm_100a.cubin"
    run = occlint(str(cubin), "--isolated", "-q")
    assert run.code == 1 and ": OCC105 warning:" in run.out
    assert "[sm_100a]" not in run.out


def _grids_of(line: str) -> list[str]:
    return re.search(r"\(grids ([^)]*?)(?:, \.\.\.)?\)", line)[1].split(", ")


def _blocks(grid: str) -> int:
    total = 1
    for n in grid.split("x"):
        total *= int(n)
    return total


def test_library_lines_list_grids_in_numeric_order(occlint):
    run = occlint(str(RESNET), "--isolated")
    owner_lines = [line for line in run.out.splitlines() if "(grids " in line]
    assert len(owner_lines) >= 3
    for line in owner_lines:
        grids = _grids_of(line)
        assert [_blocks(g) for g in grids] == sorted(_blocks(g) for g in grids), line
    # PyTorch's smallest grids in the trace: its launches of 1 and 2 blocks come first
    events = json.loads(gzip.decompress(RESNET.read_bytes()))["traceEvents"]
    assert any(e.get("cat") == "kernel" and e.get("args", {}).get("grid") == [2, 1, 1]
               for e in events)
    pytorch = next(line for line in owner_lines if line.lstrip().startswith("PyTorch"))
    assert _grids_of(pytorch)[:2] == ["1", "2"]


def test_no_saving_summary_after_a_trace_that_could_not_be_read(occlint, tmp_path):
    broken = tmp_path / "broken.pt.trace.json"
    broken.write_text('{"traceEvents": [')
    run = occlint(str(broken), "--isolated")
    assert run.code == 2 and run.err.startswith(f"occlint: error: {broken}: ")
    assert "saving" not in run.out and "0.0 µs" not in run.out


def test_calc_names_no_next_step_at_full_occupancy(occlint):
    # 32 registers x 256 threads: 8 blocks of 8 warps fill the 64 warps of an sm_90 SM
    full = occlint("calc", "--arch", "sm_90", "--registers", "32", "--block", "256")
    assert full.code == 0 and "64 of 64" in full.out
    assert "next step" not in full.out
    # 64 registers: 4 blocks (65536 / (64 x 256)), 32 of 64 warps: a next step exists
    half = occlint("calc", "--arch", "sm_90", "--registers", "64", "--block", "256")
    assert "32 of 64" in half.out and "next step" in half.out
