"""The report document: one plain dict per run, versioned (``schema_version``).

Every output format is a view of this document: ``--format json`` serialises it as is
(schema: docs/schema/occlint-report.schema.json), the text, SARIF, CI and HTML reporters
render it. Keys and order are stable so outputs are deterministic.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from occlint import __version__
from occlint.devices.models import Device
from occlint.model.finding import OVERHEAD_RULES
from occlint.model.kernel import AmdResources, Artifact, InputError, NvResources, ReadResult
from occlint.occupancy import amd, nvidia

SCHEMA_VERSION = 1


def resources_record(res: AmdResources | NvResources) -> dict[str, Any]:
    if isinstance(res, AmdResources):
        return {
            "vgpr": res.vgpr, "agpr": res.agpr, "vgpr_alloc": res.vgpr_alloc,
            "vgpr_count": res.vgpr_count, "vgpr_exact": res.vgpr_exact, "sgpr": res.sgpr,
            "lds_bytes": res.lds_bytes, "scratch_bytes": res.scratch_bytes,
            "vgpr_spill": res.vgpr_spill, "sgpr_spill": res.sgpr_spill,
            "dynamic_stack": res.dynamic_stack, "max_block_size": res.max_block_size,
            "reqd_workgroup_size": list(res.reqd_workgroup_size)
            if res.reqd_workgroup_size else None,
            "workgroup_size_hint": list(res.workgroup_size_hint)
            if res.workgroup_size_hint else None,
            "kernarg_bytes": res.kernarg_bytes, "uniform_work_group_size":
                res.uniform_work_group_size,
            "wgp_mode": res.wgp_mode, "uses_dynamic_lds": res.uses_dynamic_lds,
            "descriptor": res.descriptor,
        }
    return {
        "registers": res.registers, "shared_bytes": res.shared_bytes,
        "local_bytes": res.local_bytes, "spill_instructions": res.spill_instructions,
        "max_block_size": res.max_block_size,
        "required_block": list(res.required_block) if res.required_block else None,
        "min_blocks": res.min_blocks, "max_reg_count": res.max_reg_count,
        "cluster_dims": list(res.cluster_dims) if res.cluster_dims else None,
        "param_bytes": res.param_bytes, "barriers": res.barriers,
        "stack_bytes": res.stack_bytes, "crs_stack_bytes": res.crs_stack_bytes,
        "uses_recursion": res.uses_recursion,
    }


def occupancy_record(report) -> dict[str, Any] | None:
    occ = report.occupancy
    if occ is None:
        return None
    common = {"block_size": report.block_size, "block_source": report.block_source,
              "dynamic_shared_bytes": report.launch.dynamic_lds}
    if isinstance(occ, amd.AmdOccupancy):
        return {
            **common,
            "waves_per_simd": occ.waves_per_simd, "max_waves_per_simd": occ.max_waves_per_simd,
            "blocks_per_cu": occ.blocks_per_cu, "unit": occ.unit,
            "waves_per_cu": occ.waves_per_cu, "occupancy": round(occ.occupancy, 6),
            "limiters": list(occ.limiters), "limits": dict(occ.limits),
            "vgpr_alloc_granulated": occ.vgpr_alloc, "wgp_mode": occ.wgp_mode,
            "hip_blocks_per_cu": occ.hip_blocks_per_cu, "model": "llvm",
            "reason": occ.reason or None,
        }
    assert isinstance(occ, nvidia.NvOccupancy)
    return {
        **common,
        "warps_per_sm": occ.warps_per_sm, "max_warps_per_sm": occ.max_warps_per_sm,
        "blocks_per_cu": occ.blocks_per_sm, "blocks_per_sm": occ.blocks_per_sm, "unit": "SM",
        "occupancy": round(occ.occupancy, 6), "limiters": list(occ.limiters),
        "limits": {k: v for k, v in occ.limits.items() if v != nvidia.INT_MAX},
        "allocated_registers_per_block": occ.allocated_registers_per_block,
        "allocated_shared_per_block": occ.allocated_shared_per_block,
        "model": "cuda_occupancy.h",
    }


def device_record(device: Device | None) -> dict[str, Any] | None:
    if device is None:
        return None
    return {"name": device.name, "arch": device.arch_name,
            "compute_units": device.compute_units,
            "scheduling_units": device.scheduling_units(),
            "unit": device.unit_name(), "arch_only": device.arch_only}


def kernel_record(report, shared: bool = False) -> dict[str, Any]:
    """The record of one KernelReport. ``shared``: the sections that kernels of one resource
    profile share (occupancy, next steps, advice) come as their JSON text, encoded once
    (for occlint.model.records.encode; see :func:`_shared_text`)."""
    k = report.kernel
    if shared:
        occupancy, next_steps, advice = _shared_sections(report)
    else:
        occupancy = occupancy_record(report)
        next_steps = [s.to_dict() for s in report.next_steps]
        advice = report.advice or None
    return {
        "file": k.file,
        "entry": k.entry,
        "name": k.name,
        "demangled": k.demangled,
        "vendor": k.vendor,
        "arch": k.arch,
        "target_id": k.target_id,
        "code_object_version": k.code_object_version,
        "wavefront_size": k.wavefront_size,
        "device": report.device.name if report.device else None,
        "status": report.status,
        "message": report.message or None,
        "resources": _shared_resources(k.resources) if shared else resources_record(k.resources),
        "occupancy": occupancy,
        "next_steps": next_steps,
        "mismatches": [{"field": m.field, "metadata": m.metadata, "descriptor": m.descriptor,
                        "used": m.used} for m in k.mismatches],
        "notes": list(k.notes),
        "findings": [f.to_dict() for f in report.findings],
        "advice": advice,
    } | ({"source": _source(k.source)} if k.source else {}) \
        | ({"owner": _shared_text(("owner", report.owner), None, report.owner.to_dict)
            if shared else report.owner.to_dict()} if report.owner is not None else {}) \
        | ({"design": report.design} if report.design is not None else {}) \
        | ({"model": report.plan.to_dict()} if report.plan is not None else {})


def _source(source: tuple[str, int]) -> dict[str, Any] | None:
    from occlint.model.finding import source_location

    return source_location(source)


# JSON text of record sections, keyed by the identity of the objects they are made of:
# the analysis and the advice return one shared object per resource profile, and the cache
# keeps each object alive, so that its id cannot be reused while it is a key.
_SHARED: dict[tuple, tuple[Any, Any]] = {}
_MAX_SHARED = 8192


def _shared_text(key: tuple, pinned: Any, make) -> Any:
    hit = _SHARED.get(key)
    if hit is None:
        if len(_SHARED) >= _MAX_SHARED:
            _SHARED.clear()
        from occlint.model.jsonenc import RawJSON, encode
        from occlint.model.records import DEPTH

        value = make()  # encoded at the depth of a record's sections
        hit = _SHARED[key] = (pinned, RawJSON(encode(value, DEPTH + 1))
                              if isinstance(value, (dict, list)) and value else value)
    return hit[1]


_NV_RESOURCES = attrgetter(*NvResources.__dataclass_fields__)  # every field, in order
_AMD_RESOURCES = attrgetter(*(f for f in AmdResources.__dataclass_fields__ if f != "descriptor"))


def _shared_resources(res: AmdResources | NvResources) -> Any:
    """The resources section of a kernel, its JSON text shared by the kernels with the same
    values: a cubin's fields are of fixed types (equal values, equal text); a code object's
    descriptor is a dict, and the key holds every value's type beside it (``1`` and
    ``True`` are equal keys but not equal text)."""
    if type(res) is NvResources:
        return _shared_text(("nv-resources", _NV_RESOURCES(res)), None,
                            lambda: resources_record(res))
    if type(res) is not AmdResources:
        return resources_record(res)
    values = _AMD_RESOURCES(res)
    descriptor = None if res.descriptor is None else tuple(res.descriptor.items())
    key = ("amd-resources", values, tuple(map(type, values)), descriptor,
           None if descriptor is None else tuple(type(v) for _, v in descriptor))
    return _shared_text(key, None, lambda: resources_record(res))


def _shared_sections(report) -> tuple[Any, Any, Any]:
    occ, steps, advice = report.occupancy, tuple(report.next_steps), report.advice
    if occ is None:  # no occupancy: no next steps, no advice
        return None, [s.to_dict() for s in steps], advice or None
    occupancy = _shared_text(
        ("occupancy", id(occ), report.block_size, report.block_source,
         report.launch.dynamic_lds), occ, lambda: occupancy_record(report))
    next_steps = _shared_text(("steps", *map(id, steps)), steps,
                              lambda: [s.to_dict() for s in steps])
    if advice:
        advice = _shared_text(("advice", id(advice)), advice, lambda: advice)
    return occupancy, next_steps, advice or None


def artifact_record(a: Artifact) -> dict[str, Any]:
    return {"file": a.file, "entry": a.entry, "kind": a.kind, "arch": a.arch,
            "message": a.message, "kernels": list(a.kernels)}


def input_record(r: ReadResult) -> dict[str, Any]:
    return {"path": r.path, "size": r.size, "sha256": r.sha256, "kernels": len(r.kernels)}


def error_record(e: InputError) -> dict[str, Any]:
    return {"file": e.file, "entry": e.entry, "message": e.message}


def assemble(devices: list[Device], inputs: list[dict[str, Any]],
             kernels: Any, distinct_kernels: int,
             artifacts: list[dict[str, Any]], errors: list[dict[str, Any]],
             skipped: int = 0) -> dict[str, Any]:
    """The document from its parts. ``kernels``: a list of records, or KernelRecords
    (occlint.model.records); ``distinct_kernels``: distinct (file, entry, name) among them;
    ``skipped``: files without GPU code (archive members, files found in directories)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "occlint", "version": __version__},
        "devices": [device_record(d) for d in devices],
        "inputs": inputs,
        "kernels": kernels,
        "artifacts": artifacts,
        "errors": errors,
        "summary": {
            "inputs": len(inputs),
            "kernels": distinct_kernels,
            "reports": len(kernels),
            "errors": len(errors),
            "skipped": skipped,
        },
    }


def all_findings(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Every finding of the document, of every subject, in document order: input-level
    ones (launch sites in source among them), then per kernel, then per launch group."""
    out = list(doc.get("findings") or [])
    for k in doc.get("kernels") or []:
        out.extend(k.get("findings") or [])
    for launch in doc.get("launches") or []:
        out.extend(launch.get("findings") or [])
    return out


def overhead_savings(launches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The savings of the launch-overhead findings (LCH201, one per stream and its bursts;
    LCH202, one per function of the user's a graph could capture): of the GPU's idle time,
    no launch group's own (the summary adds them apart)."""
    return [f["saving"] for r in launches for f in r["findings"]
            if f["rule"] in OVERHEAD_RULES and f.get("saving")]
