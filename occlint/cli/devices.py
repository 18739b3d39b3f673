"""``occlint devices``: list the devices occlint knows, or show one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from occlint.cli.common import device_file_option, dumps_json, format_option
from occlint.pipeline.output import write_output


def device_record(device) -> dict[str, Any]:
    from occlint.devices.models import AmdArch

    arch = device.arch
    record: dict[str, Any] = {
        "name": device.name,
        "id": device.aliases[0] if device.aliases else device.name,
        "aliases": list(device.aliases),
        "vendor": device.vendor,
        "arch": device.arch_name,
        "family": arch.family,
    }
    if isinstance(arch, AmdArch):
        record.update({"compute_units": device.compute_units, "wgps": device.wgps
                       or (device.compute_units // arch.cus_per_wgp
                           if arch.has_wgp and device.compute_units else None)})
        if device.devices_per_package > 1:
            record["devices_per_package"] = device.devices_per_package
        record["wave_sizes"] = list(arch.wave_sizes)
        record["max_waves_per_simd"] = arch.max_waves_per_simd
        record["simds_per_cu"] = arch.simds_per_cu
    else:
        record.update({"sms": device.compute_units,
                       "compute_capability": f"{arch.cc[0]}.{arch.cc[1]}",
                       "max_threads_per_sm": arch.max_threads_per_sm,
                       "max_blocks_per_sm": arch.max_blocks_per_sm})
    for key in ("memory_gib", "memory_bandwidth_gbs", "max_clock_mhz", "l2_kib"):
        record[key] = getattr(device, key)
    record["unconfirmed"] = list(device.unconfirmed)
    record["source"] = device.source
    return record


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _table(records: list[dict[str, Any]]) -> str:
    header = ["ID", "PRODUCT", "ARCH", "CUs/SMs", "WGPs", "MEM GiB", "BW GB/s", "CLOCK MHz"]
    rows = [[r["id"], r["name"], r["arch"], _fmt(r.get("compute_units", r.get("sms"))),
             _fmt(r.get("wgps")), _fmt(r["memory_gib"]), _fmt(r["memory_bandwidth_gbs"]),
             _fmt(r["max_clock_mhz"])] for r in records]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    numeric = {3, 4, 5, 6, 7}

    def line(row: list[str]) -> str:
        cells = [c.rjust(w) if i in numeric else c.ljust(w)
                 for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        return "  ".join(cells).rstrip()

    return "\n".join([line(header), *(line(r) for r in rows)]) + "\n"


def _details(device) -> str:
    record = device_record(device)
    lines = [f"{record['name']}"]
    for key, value in record.items():
        if key == "name" or value in (None, [], ""):
            continue
        shown = ", ".join(map(str, value)) if isinstance(value, list) else value
        lines.append(f"  {key:<22} {shown}")
    arch = device.arch
    lines.append("  architecture sources:")
    lines.extend(f"    - {s}" for s in arch.sources)
    return "\n".join(lines) + "\n"


@click.command()
@click.argument("name", required=False)
@click.option("--vendor", type=click.Choice(["amd", "nvidia"]), help="Only this vendor's devices.")
@format_option(["text", "json"])
@device_file_option()
def devices(name: str | None, vendor: str | None, fmt: str, device_files: tuple[str, ...]) -> None:
    """List known devices (or show one: occlint devices w7800).

    Names match case-insensitively, ignoring spaces, '-' and '_'; any listed alias works,
    as does a bare architecture (gfx1100, sm_90) with that architecture's limits.
    """
    from occlint.devices.db import load_db

    db = load_db(Path(p) for p in device_files)
    if name:
        device = db.get(name)
        write_output(dumps_json(device_record(device)) if fmt == "json" else _details(device),
                     None)
        return
    selected = [d for d in db.devices if vendor in (None, d.vendor)]
    selected.sort(key=lambda d: (d.vendor, d.arch.name, d.name))
    records = [device_record(d) for d in selected]
    if fmt == "json":
        write_output(dumps_json({"devices": records}), None)
    else:
        counts = {v: sum(r["vendor"] == v for r in records) for v in ("amd", "nvidia")}
        summary = ", ".join(f"{n} {v.upper() if v == 'amd' else 'NVIDIA'}"
                            for v, n in counts.items() if n)
        write_output(_table(records) + f"\n{len(records)} devices ({summary})\n", None)
