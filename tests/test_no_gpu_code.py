"""One rule for inputs without GPU code: an error for a file named on the command line, a
silently skipped (and counted) file for archive members and files found by a directory
walk."""

from __future__ import annotations

import json
import shutil
import zipfile

from benchmarks.fuzz import Host, Raw
from tests.conftest import REPO, run_occlint

GAMMA = REPO / "fixtures/amd/co/gamma.gfx1100.hsaco"
HOST_ONLY = REPO / "fixtures/amd/containers/app_main.host_only.o"  # clang, no offload code
# a host library whose read-only data holds the text of the container magics (a string
# table of a tool that recognises them), but no container
MAGIC_TEXT = Host(((".rodata", Raw(b"see __CLANG_OFFLOAD_BUNDLE__ and CCOB\x01\x00 and "
                                   b"\x50\xed\x55\xba\x01\x00 magics\0"), 1),
                   (".text", Raw(b"\xc3" * 16), 1))).render()
WHEEL_MEMBERS = {"pkg/_C.so": HOST_ONLY.read_bytes(), "pkg/libstrings.so": MAGIC_TEXT,
                 "pkg/kernels/gamma.hsaco": GAMMA.read_bytes(), "pkg/__init__.py": b""}


def _zip(path, members: dict[str, bytes]):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def _json(*args: str, cwd=REPO):
    run = run_occlint(*args, "--isolated", "--format", "json", cwd=cwd)
    return run, json.loads(run.out) if run.out else None


def test_named_host_file_without_gpu_code_is_an_error(tmp_path):
    lib = tmp_path / "libstrings.so"
    lib.write_bytes(MAGIC_TEXT)
    for path in (str(HOST_ONLY), str(lib)):
        run, doc = _json(path)
        assert run.code == 2
        assert run.err.splitlines() == [f"occlint: error: {path}: no GPU code found in this ELF "
                                        "(no .hip_fatbin, .nv_fatbin, __nv_relfatbin, embedded "
                                        "fatbin or device ELF image)"]
        assert doc["summary"]["skipped"] == 0


def test_wheel_members_without_gpu_code_are_skipped_and_counted(tmp_path):
    for name in ("pkg-1.0-py3-none-any.whl", "model.pt2", "bundle.zip"):
        archive = _zip(tmp_path / name, WHEEL_MEMBERS)
        run, doc = _json(str(archive))
        assert run.code == 0 and run.err == "", run.err
        assert not doc["errors"] and doc["summary"]["skipped"] == 2
        assert [k["file"] for k in doc["kernels"]] == [f"{archive}!/pkg/kernels/gamma.hsaco"]
        text = run_occlint(str(archive), "--isolated", cwd=REPO)
        assert text.code == 0 and text.err == ""
        assert text.out.splitlines()[-1] == "skipped: 2 files without GPU code"


def test_wheel_of_host_libraries_only_has_no_errors(tmp_path):
    archive = _zip(tmp_path / "host-1.0-py3-none-any.whl",
                   {"a/_C.so": HOST_ONLY.read_bytes(), "b/libstrings.so": MAGIC_TEXT})
    run, doc = _json(str(archive))
    assert run.code == 0 and run.err == ""
    assert doc["summary"]["skipped"] == 2 and not doc["kernels"] and not doc["errors"]
    assert doc["summary"]["inputs"] == 1


def test_directory_walk_skips_and_counts_host_files(tmp_path):
    shutil.copy(HOST_ONLY, tmp_path / "app.o")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub/libstrings.so").write_bytes(MAGIC_TEXT)
    shutil.copy(GAMMA, tmp_path / "sub/gamma.hsaco")
    (tmp_path / "notes.txt").write_text("not a binary at all: neither read nor counted")
    _zip(tmp_path / "w.whl", {"x/_C.so": HOST_ONLY.read_bytes()})
    for jobs in ("1", "2"):
        run, doc = _json(str(tmp_path), "-j", jobs)
        assert run.code == 0 and run.err == ""
        # app.o and sub/libstrings.so (walk), x/_C.so (wheel member)
        assert doc["summary"]["skipped"] == 3
        assert [i["path"] for i in doc["inputs"]] == [str(tmp_path / "w.whl"),
                                                      str(tmp_path / "sub/gamma.hsaco")]
    text = run_occlint(str(tmp_path), "--isolated", cwd=REPO)
    assert text.out.splitlines()[-2:] == ["1 kernel in 2 inputs: no findings",
                                          "skipped: 3 files without GPU code"]


def test_broken_gpu_member_is_still_an_error(tmp_path):
    archive = _zip(tmp_path / "w.whl", {"a/_C.so": HOST_ONLY.read_bytes(),
                                        "b/broken.hsaco": GAMMA.read_bytes()[:200]})
    run, doc = _json(str(archive))
    assert run.code == 2 and len(doc["errors"]) == 1 and doc["summary"]["skipped"] == 1
    assert run.err.startswith(f"occlint: error: {archive}!/b/broken.hsaco: ")
