"""benchmarks/source_trees.py: a pinned tree's source files, taken from a git directory."""

from __future__ import annotations

import subprocess

from benchmarks import source_trees


def _git(repo, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def test_extract_takes_the_matching_sources_of_the_commit(tmp_path):
    repo = tmp_path / "repo"
    files = {
        "src/a-cuda/main.cu": b"__global__ void k() {}\n",
        "src/a-cuda/sub/util.cu": b"\xff binary-ish \x00 bytes\n",
        "src/a-cuda/notes.txt": b"not a source\n",
        "src/a-cuda/image.h": b"#define W 4\n",
        "src/a-hip/main.cu": b"// another version\n",
        "README.cu": b"",
    }
    for name, data in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes(data)
    _git(tmp_path, "init", "-q", str(repo))
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "tree")
    commit = _git(repo, "rev-parse", "HEAD")
    (repo / "src/a-cuda/main.cu").write_bytes(b"changed after the commit\n")

    dest = tmp_path / "out"
    count, size = source_trees.extract(repo / ".git", commit, "src/*-cuda/*.cu", dest)
    kept = ["src/a-cuda/main.cu", "src/a-cuda/sub/util.cu"]
    assert sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file()) == kept
    assert all((dest / name).read_bytes() == files[name] for name in kept)
    assert (count, size) == (2, sum(len(files[name]) for name in kept))


def test_pinned_trees_name_a_commit_and_sources():
    repo, commit, pattern = source_trees.pinned("hecbench-cuda")
    assert repo == "zjin-lcf/HeCBench" and len(commit) == 40 and pattern.endswith(".cu")
    assert source_trees.pinned("llm.c")[2] == "*"
    assert source_trees.pinned("ggml-cuda")[2] == "src/ggml-cuda/*"
