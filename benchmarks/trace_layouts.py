"""The layouts Kineto traces are found in, written from the events of a real trace.

Used by benchmarks/traces_scale.py (the speed on each layout) and tests/test_traces_layouts.py
(every layout reads the same launches as ``json.load``). Writers stream: a trace of millions
of events is written without holding it as one document.

* ``libkineto``: what ``export_chrome_trace`` writes (one event per ``\\n  {`` block, its
  keys on the first line, ``args`` on lines of their own);
* ``libkineto-2021``: the same layout as libkineto wrote it in 2021: capitalised categories
  (``Kernel``, ``Runtime``, ``Memcpy``, ``Memset``), ``traceEvents`` first, the list closed
  by ``\\n]``;
* ``pretty``: ``json.dump(doc, f, indent=2)`` (what Python tools that edit traces write);
* ``json-dump``: ``json.dump(doc, f)``: one line, ``", "`` and ``": "`` separators;
* ``compact``: ``json.dump(doc, f, separators=(",", ":"))``: minified, one line;
* ``per-line``: one event per line (JSON-lines style tools), ``json.dump``'s separators;
* ``sorted``: the same with each event's keys sorted (``json.dumps(e, sort_keys=True)``:
  ``args`` before ``cat``), the key order of tools that sort (or build events field by
  field).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import IO, Any

LAYOUTS = ("libkineto", "libkineto-2021", "pretty", "json-dump", "compact", "per-line",
           "sorted")
CAPITALISED = {"kernel": "Kernel", "cuda_runtime": "Runtime", "gpu_memcpy": "Memcpy",
               "gpu_memset": "Memset"}


def libkineto_event(e: dict[str, Any]) -> bytes:
    """One event as libkineto writes it: keys on the first line, args on their own."""
    args = e.get("args")
    head = ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in e.items() if k != "args")
    text = "\n  {\n    " + head
    if args is not None:
        text += ",\n    \"args\": {\n      " + ", ".join(
            f"{json.dumps(k)}: {json.dumps(v)}" for k, v in args.items()) + "\n    }"
    return (text + "\n  }").encode()


def _capitalised(e: dict[str, Any]) -> dict[str, Any]:
    cat = e.get("cat")
    return {**e, "cat": CAPITALISED[cat]} if cat in CAPITALISED else e


def _indented(e: dict[str, Any]) -> str:
    return "\n    " + json.dumps(e, indent=2).replace("\n", "\n    ")


def layout_of(layout: str, head: dict[str, Any],
              tail: dict[str, Any]) -> tuple[str, str, str, Callable[[dict[str, Any]], str]]:
    """(text before the first event, text between events, text after the last, the
    writer of one event) of a trace in ``layout``."""
    if layout in ("libkineto", "libkineto-2021"):
        if layout == "libkineto-2021":
            return ('{\n  "traceEvents": [', ",", "\n]," + json.dumps({**head, **tail},
                                                                    indent=2)[1:] + "\n",
                    lambda e: libkineto_event(_capitalised(e)).decode())
        return (json.dumps(head, indent=2)[:-2] + ',\n  "traceEvents": [', ",",
                "\n  ]," + json.dumps(tail, indent=2)[1:] + "\n",
                lambda e: libkineto_event(e).decode())
    if layout == "pretty":
        rest = ",\n" + json.dumps(tail, indent=2)[2:] if tail else "\n}"
        return (json.dumps(head, indent=2)[:-2] + ',\n  "traceEvents": [', ",",
                "\n  ]" + rest, _indented)
    item, key = (",", ":") if layout == "compact" else (", ", ": ")
    keys = json.dumps(head, separators=(item, key))[:-1]
    keys += (item if head else "") + json.dumps("traceEvents") + key + "["
    rest = (item + json.dumps(tail, separators=(item, key))[1:]) if tail else "}"
    per_line, ordered = layout in ("per-line", "sorted"), layout == "sorted"
    return (keys + ("\n" if per_line else ""), item + ("\n" if per_line else ""),
            ("\n]" if per_line else "]") + rest,
            lambda e: json.dumps(e, separators=(item, key), sort_keys=ordered))


def write_trace(out: IO[bytes], layout: str, head: dict[str, Any],
                events: Iterable[dict[str, Any]], tail: dict[str, Any]) -> None:
    """Write a trace: the keys of ``head``, then ``traceEvents``, then those of ``tail``."""
    before, between, after, dump = layout_of(layout, head, tail)
    out.write(before.encode())
    sep = ""
    for e in events:
        out.write((sep + dump(e)).encode())
        sep = between
    out.write(after.encode())


def split_document(doc: dict[str, Any]) -> tuple[dict, list, dict]:
    """(keys before traceEvents, the events, keys after it) of a loaded trace."""
    keys = list(doc)
    at = keys.index("traceEvents")
    return ({k: doc[k] for k in keys[:at]}, doc["traceEvents"],
            {k: doc[k] for k in keys[at + 1:]})
