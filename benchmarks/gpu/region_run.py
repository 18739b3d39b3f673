"""Functions a CUDA graph could capture, recorded and timed (issue 29; the held-out check of
LCH202, written after its constants were set: docs/validation.md).

    PYTHONPATH=. python3 benchmarks/gpu/region_run.py OUT_DIR      # on the lent GPU machine

A user's script of five functions, recorded by the PyTorch profiler with ``with_stack``
(OUT_DIR/regions-stack.pt.trace.json.gz) and with every option
(OUT_DIR/regions-all.pt.trace.json.gz):

* ``decode_step()``: one token of a small decoder (embedding, 4 blocks of layer norm,
  two linears and a GELU, a head and an argmax on the GPU), called 6 times;
* ``sgd_step()``: a hand-written SGD update over 48 parameters (two ops each), 4 times;
* ``outer()``: calls ``inner()`` (30 small ops) twice and adds, 3 times: the outer function
  is the one to capture;
* ``log_loss()``: 24 ops then ``.item()`` (it waits for the GPU: not capturable), 3 times;
* ``big_matmul()``: two 4096 x 4096 products (the GPU is busy: nothing to gain), 3 times.

Then, without the profiler, each function eager and replayed from a CUDA graph
(synchronised wall time, median of 50, ms; three rounds in turn, their median) for the
capturable ones:
OUT_DIR/fixes.json; OUT_DIR/truth.json names the functions, their first lines and calls.
"""

from __future__ import annotations

import inspect
import json
import statistics
import sys
from pathlib import Path

from benchmarks.gpu.timers import graphed, save_trace, wall


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "/tmp/regions")
    out.mkdir(parents=True, exist_ok=True)
    import torch
    from torch import nn
    from torch.profiler import ProfilerActivity, profile

    torch.manual_seed(1)
    d, vocab, batch = 384, 2048, 8
    blocks = nn.ModuleList(nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.GELU(),
                                         nn.Linear(4 * d, d)) for _ in range(4)).cuda()
    embed, head = nn.Embedding(vocab, d).cuda(), nn.Linear(d, vocab).cuda()
    token = torch.randint(0, vocab, (batch,), device="cuda")
    params = [torch.randn(1024 + 64 * i, device="cuda") for i in range(48)]
    grads = [torch.randn_like(p) for p in params]
    x = torch.randn(2048, device="cuda")
    a = torch.randn(4096, 4096, device="cuda")
    b = torch.randn(4096, 4096, device="cuda")

    @torch.no_grad()
    def decode_step():
        h = embed(token)
        for blk in blocks:
            h = h + blk(h)
        token.copy_(head(h).argmax(-1))

    @torch.no_grad()
    def sgd_step():
        for p, g in zip(params, grads, strict=True):
            p.mul_(0.9999).add_(g, alpha=-1e-4)

    def inner(y):
        for i in range(30):
            y = torch.sin(y) * 0.5 if i % 2 else y + 0.25
        return y

    def outer():
        return inner(x) + inner(x * 2)

    def log_loss():
        y = x
        for _ in range(24):
            y = y * 1.0001
        return y.sum().item()

    def big_matmul():
        return (a @ b) @ b

    schedule = [(decode_step, 6), (sgd_step, 4), (outer, 3), (log_loss, 3), (big_matmul, 3)]
    for fn, _ in schedule:  # warm-up: cuBLAS handles, the allocator
        fn()
    torch.cuda.synchronize()
    for name, options in (("stack", {"with_stack": True}),
                          ("all", {"with_stack": True, "record_shapes": True,
                                   "profile_memory": True, "with_modules": True})):
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                     **options) as prof:
            for fn, calls in schedule:
                for _ in range(calls):
                    fn()
            torch.cuda.synchronize()
        save_trace(prof, out / f"regions-{name}.pt.trace.json")

    # three rounds, each function eager then replayed in turn (a first run timed each once,
    # in order, and read decode_step 1.46 ms eager where its traced call took 1.11 ms)
    replays = {fn.__name__: graphed(fn) for fn in (decode_step, sgd_step, outer, big_matmul)}
    rounds: dict[str, dict[str, list[float]]] = {}
    for _ in range(3):
        for fn, _calls in schedule:
            times = rounds.setdefault(fn.__name__, {"eager_ms": [], "graph_ms": []})
            times["eager_ms"].append(wall(fn))
            if fn.__name__ in replays:
                times["graph_ms"].append(wall(replays[fn.__name__]))
    fixes = {name: {k: statistics.median(v) for k, v in times.items() if v}
             | {"rounds": times} for name, times in rounds.items()}
    (out / "fixes.json").write_text(json.dumps(fixes, indent=1))
    truth = {"script": "benchmarks/gpu/region_run.py",
             "first_lines": {fn.__name__: inspect.getsourcelines(fn)[1]
                             for fn in (decode_step, sgd_step, inner, outer, log_loss,
                                        big_matmul)},
             "calls": {fn.__name__: calls for fn, calls in schedule},
             "capturable": ["decode_step", "sgd_step", "outer"],
             "torch": torch.__version__, "gpu": torch.cuda.get_device_name()}
    (out / "truth.json").write_text(json.dumps(truth, indent=1))
    print(json.dumps(fixes, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
