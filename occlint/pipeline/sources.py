"""Source files in a run: read, check and record one CUDA / HIP source (occlint.pipeline.run).

Kept apart from occlint.pipeline.run so that the run only routes source candidates here: a source
input gives an InputOutcome like a binary does, with its findings as input-level findings
(located at file:line:column) and its model for the document's ``sources`` section.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from occlint.model.demangle import base_name
from occlint.model.kernel import InputError, ReadResult
from occlint.model.source import SourceFile

if TYPE_CHECKING:
    from occlint.pipeline.inputs import Candidate
    from occlint.pipeline.run import InputOutcome, Setup


def check(source: SourceFile, setup: Setup,
          binaries: dict[str, list[dict[str, Any]]] | None = None,
          definitions: dict[str, Any] | None = None):
    from occlint.rules.sites import check_source, targets_for

    targets = targets_for(setup.devices, source, setup.read_options.targets)
    return check_source(source, targets, setup.settings, setup.settings.enabled(), binaries,
                        definitions)


def join(models: list[SourceFile], records: list[dict[str, Any]], setup: Setup,
         binaries: dict[str, list[dict[str, Any]]]) -> tuple[set[str], list]:
    """What only the whole run knows, after every input was read: launches of kernels
    defined in another source file of the run (their body and launch bounds: LCH103,
    LCH002), and launches of kernels with a binary in the run (its wave size: LCH001;
    its occupancy: LCH003). Returns the files checked again and their findings, which
    replace those of the first check; updates the records' advice and suppressed lists."""
    defined: dict[str, list[Any]] = {}
    for m in models:
        for k in m.kernels:
            defined.setdefault(k.name, []).append(k)
    definitions = {name: ks[0] for name, ks in defined.items()
                   if len({(k.body, k.launch_bounds) for k in ks}) == 1}
    out = []
    rechecked: set[str] = set()
    for model, record in zip(models, records, strict=True):
        external = {s.kernel for s in model.launches
                    if model.kernel(s.kernel) is None and s.kernel in definitions}
        joined = {s.kernel for s in model.launches if s.kernel in binaries}
        if not external and not joined:
            continue
        findings, suppressed, advice = check(model, setup, binaries, definitions)
        rechecked.add(model.path)
        out.extend(findings)
        for site, a in zip(record["launches"], advice, strict=True):
            site["advice"] = a
        record["suppressed"] = [f.to_dict() for f in suppressed]
    return rechecked, out


def analyse_source(candidate: Candidate, setup: Setup) -> InputOutcome:
    from occlint.pipeline.run import InputOutcome
    from occlint.readers.source import read_source
    from occlint.rules.sites import source_record

    try:
        source = read_source(candidate.path, candidate.display)
    except OSError as exc:
        error = InputError(candidate.display, f"cannot read source: {exc.strerror or exc}")
        from occlint.rules.engine import apply_rules

        result = ReadResult(path=candidate.display, errors=[error])
        return InputOutcome(record={"path": candidate.display, "size": 0, "sha256": None,
                                    "kernels": 0},
                            kernels=setup.sink.add([]), distinct=0, findings=[],
                            artifacts=[], errors=[error],
                            input_findings=apply_rules([], [result], setup.settings),
                            analysed=False, group=candidate.group)
    findings, suppressed, advice = check(source, setup)
    outcome = InputOutcome(record={"path": candidate.display, "size": source.size,
                                   "sha256": None, "kernels": 0},
                           kernels=setup.sink.add([]), distinct=0, findings=[], artifacts=[],
                           errors=[], input_findings=findings, analysed=True,
                           group=candidate.group)
    outcome.source = source_record(source, advice, suppressed)
    outcome.source_model = source
    return outcome


def launch_index(sources: list[SourceFile]) -> dict[str, dict[str, Any]]:
    """kernel name -> {"block": the one known block of its launches (absent when they
    differ), "body": its definition's body kind} over the run's sources."""
    blocks: dict[str, set[int | None]] = {}
    bodies: dict[str, set[str]] = {}
    for s in sources:
        for site in s.launches:
            blocks.setdefault(site.kernel, set()).add(site.block.total if site.block else None)
        for k in s.kernels:
            bodies.setdefault(k.name, set()).add(k.body)
    out: dict[str, dict[str, Any]] = {}
    for name in set(blocks) | set(bodies):
        entry: dict[str, Any] = {}
        b = blocks.get(name, set())
        if len(b) == 1 and None not in b:
            entry["block"] = next(iter(b))
        kinds = bodies.get(name, set())
        if len(kinds) == 1:
            entry["body"] = next(iter(kinds))
        if entry:
            out[name] = entry
    return out


def binaries_by_kernel(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Facts of binary kernel records, by kernel base name, for LCH003 on launch sites."""
    out: dict[str, list[dict[str, Any]]] = {}
    for k in records:
        occ, adv = k.get("occupancy"), k.get("advice") or {}
        if not occ:
            continue
        out.setdefault(base_name(k.get("demangled") or k["name"]), []).append({
            "file": k["file"], "device": k.get("device") or k.get("arch"),
            "wave": k.get("wavefront_size"), "block_source": occ.get("block_source"),
            "block": occ["block_size"], "occupancy": occ["occupancy"],
            "best_occupancy": adv.get("best_occupancy"),
            "block_sizes_at_best": adv.get("block_sizes_at_best") or [],
            "recommended_block": adv.get("recommended_block")})
    return out
