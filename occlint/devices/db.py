"""Load the device database (TOML) and resolve ``--device`` names.

The shipped database lives in ``device_db/`` (inside the wheel as ``occlint/device_db``).
Users add or override devices with their own TOML file (``--device-file``) in the same
format: ``[[device]]`` entries and, optionally, architecture tables under
``[amd_architectures.<gfx>]`` / ``[nvidia_architectures.<sm>]``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from occlint.devices.models import AmdArch, Device, NvArch, WaveRegisters
from occlint.errors import DeviceDbError, UnknownDeviceError
from occlint.tomlfile import read_shipped_toml, read_toml


def _db_root() -> Path:
    """The device_db folder: inside the installed package, else beside it in a checkout."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "device_db", here.parent / "device_db"):
        if (candidate / "amd" / "architectures.toml").is_file():
            return candidate
    raise DeviceDbError(f"device database not found next to {here}")


def normalize(name: str) -> str:
    """Case-, space-, '_'- and '-'-insensitive key used for name matching."""
    return re.sub(r"[\s_\-()]+", "", name.lower())


# --- architecture tables ------------------------------------------------------------------

_AMD_KEYS = {
    "family": str, "gfx_major": int, "wave_sizes": list, "default_wave_size": int,
    "simds_per_cu": int, "cus_per_wgp": int, "max_waves_per_simd": int,
    "hip_max_waves_per_simd": int, "addressable_vgprs": int, "agprs": int,
    "unified_vgpr_file": bool, "sgpr_waves": list, "sgprs_per_simd": int,
    "sgpr_encoding_granule": int, "addressable_sgprs": int, "lds_per_workgroup": int,
    "lds_per_cu": int, "lds_per_wgp": int, "lds_alloc_granule": int, "hip_lds_pool": int,
    "max_workgroup_size": int, "barriers_per_cu": int, "barriers_per_wgp": int,
    "wgp_mode_default": bool, "preliminary": bool, "sources": list,
}
_AMD_WAVE_KEYS = {
    "vgprs": int, "vgpr_alloc_granule": int, "vgpr_encoding_granule": int,
    "hip_vgpr_alloc_granule": int,
}
_NV_KEYS = {
    "cc": str, "family": str, "warp_size": int, "max_threads_per_block": int,
    "max_threads_per_sm": int, "max_blocks_per_sm": int, "regs_per_sm": int,
    "regs_per_block": int, "max_regs_per_thread": int, "reg_alloc_unit": int,
    "sub_partitions": int, "smem_per_sm": int, "smem_per_block": int,
    "smem_per_block_optin": int, "smem_reserved_per_block": int, "smem_alloc_unit": int,
    "carveout_kib": list, "barrier_factor": int, "virtual_resources_per_sm": int,
    "sources": list,
}


def _resolve_bases(tables: dict[str, dict[str, Any]], where: str) -> dict[str, dict[str, Any]]:
    """Apply ``base = "<name>"`` inheritance (deep merge of sub-tables)."""
    resolved: dict[str, dict[str, Any]] = {}

    def resolve(name: str, chain: tuple[str, ...]) -> dict[str, Any]:
        if name in resolved:
            return resolved[name]
        if name in chain:
            raise DeviceDbError(f"{where}: [{name}]: 'base' cycle through {' -> '.join(chain)}")
        table = tables.get(name)
        if table is None:
            raise DeviceDbError(f"{where}: [{chain[-1]}]: unknown base {name!r}")
        merged: dict[str, Any] = {}
        base = table.get("base")
        if base is not None:
            if not isinstance(base, str):
                raise DeviceDbError(f"{where}: [{name}]: 'base' must be a string")
            merged = {k: (dict(v) if isinstance(v, dict) else v)
                      for k, v in resolve(base, (*chain, name)).items()}
        for key, value in table.items():
            if key == "base":
                continue
            if isinstance(value, dict) and isinstance(merged.get(key), dict):
                merged[key] = {**merged[key], **value}
            else:
                merged[key] = value
        resolved[name] = merged
        return merged

    for name in tables:
        resolve(name, ())
    return resolved


def _check_keys(table: dict[str, Any], schema: dict[str, type], where: str,
                allowed_subtables: Iterable[str] = ()) -> None:
    allowed = set(allowed_subtables)
    for key, value in table.items():
        if key in allowed:
            continue
        if key not in schema:
            raise DeviceDbError(f"{where}: unknown key {key!r}")
        expected = schema[key]
        ok = isinstance(value, expected) and not (expected is int and isinstance(value, bool))
        if not ok:
            raise DeviceDbError(f"{where}: {key!r} must be {expected.__name__}, got {value!r}")
    missing = [k for k in schema if k not in table]
    if missing:
        raise DeviceDbError(f"{where}: missing key(s) {', '.join(missing)}")


def _build_amd(name: str, t: dict[str, Any], where: str) -> AmdArch:
    waves: dict[int, WaveRegisters] = {}
    wave_tables = {k for k in t if k in ("wave32", "wave64")}
    _check_keys(t, _AMD_KEYS, f"{where}: [{name}]", wave_tables)
    for key in wave_tables:
        sub = t[key]
        _check_keys(sub, _AMD_WAVE_KEYS, f"{where}: [{name}.{key}]")
        waves[int(key[4:])] = WaveRegisters(**sub)
    for size in t["wave_sizes"]:
        if size not in waves:
            raise DeviceDbError(f"{where}: [{name}]: no [{name}.wave{size}] table")
    return AmdArch(
        name=name,
        family=t["family"], gfx_major=t["gfx_major"], wave_sizes=tuple(t["wave_sizes"]),
        default_wave_size=t["default_wave_size"], simds_per_cu=t["simds_per_cu"],
        cus_per_wgp=t["cus_per_wgp"], max_waves_per_simd=t["max_waves_per_simd"],
        hip_max_waves_per_simd=t["hip_max_waves_per_simd"], waves=waves,
        addressable_vgprs=t["addressable_vgprs"], agprs=t["agprs"],
        unified_vgpr_file=t["unified_vgpr_file"],
        sgpr_waves=tuple((int(a), int(b)) for a, b in t["sgpr_waves"]),
        sgprs_per_simd=t["sgprs_per_simd"], sgpr_encoding_granule=t["sgpr_encoding_granule"],
        addressable_sgprs=t["addressable_sgprs"], lds_per_workgroup=t["lds_per_workgroup"],
        lds_per_cu=t["lds_per_cu"], lds_per_wgp=t["lds_per_wgp"],
        lds_alloc_granule=t["lds_alloc_granule"], hip_lds_pool=t["hip_lds_pool"],
        max_workgroup_size=t["max_workgroup_size"], barriers_per_cu=t["barriers_per_cu"],
        barriers_per_wgp=t["barriers_per_wgp"], wgp_mode_default=t["wgp_mode_default"],
        preliminary=t["preliminary"], sources=tuple(t["sources"]),
    )


def _build_nv(name: str, t: dict[str, Any], where: str) -> NvArch:
    _check_keys(t, _NV_KEYS, f"{where}: [{name}]")
    match = re.fullmatch(r"(\d+)\.(\d+)", t["cc"])
    if not match:
        raise DeviceDbError(f"{where}: [{name}]: cc must look like '9.0', got {t['cc']!r}")
    fields = {k: v for k, v in t.items() if k not in ("cc", "sources", "carveout_kib")}
    return NvArch(
        name=name, cc=(int(match[1]), int(match[2])), sources=tuple(t["sources"]),
        carveout_kib=tuple(int(x) for x in t["carveout_kib"]), **fields,
    )


# --- products ------------------------------------------------------------------------------

_DEVICE_KEYS = {
    "name": str, "aliases": list, "arch": str, "vendor": str, "compute_units": int,
    "sms": int, "wgps": int, "devices_per_package": int, "memory_gib": (int, float),
    "memory_bandwidth_gbs": (int, float), "max_clock_mhz": (int, float),
    "l2_kib": (int, float), "unconfirmed": list, "source": str,
}


@dataclass
class DeviceDb:
    """All architectures and products, with name lookup."""

    amd_archs: dict[str, AmdArch] = field(default_factory=dict)
    nv_archs: dict[str, NvArch] = field(default_factory=dict)
    amd_generics: dict[str, tuple[str, ...]] = field(default_factory=dict)
    devices: list[Device] = field(default_factory=list)
    _index: dict[str, Device] = field(default_factory=dict)
    _raw: dict[str, dict[str, Any]] = field(default_factory=lambda: {"amd": {}, "nvidia": {}})

    # -- building ---------------------------------------------------------------------------
    def add_architectures(self, vendor: str, tables: dict[str, Any], where: str) -> None:
        tables = dict(tables)
        generic = tables.pop("generic", {}) if vendor == "amd" else {}
        for gname, gtable in generic.items():
            members = gtable.get("members")
            if not isinstance(members, list) or set(gtable) != {"members"}:
                raise DeviceDbError(f"{where}: [generic.{gname!r}]: needs only 'members' list")
            self.amd_generics[gname] = tuple(members)
        # Inherit from already-loaded architectures too (user files extend the shipped DB);
        # a table named like a known architecture overlays it (a few keys suffice).
        known = self._raw[vendor]
        for name, table in list(tables.items()):
            if name in known and isinstance(table, dict) and table.get("base") in (None, name):
                overlay = {k: v for k, v in table.items() if k != "base"}
                merged = {k: (dict(v) if isinstance(v, dict) else v)
                          for k, v in known[name].items()}
                for key, value in overlay.items():
                    if isinstance(value, dict) and isinstance(merged.get(key), dict):
                        merged[key] = {**merged[key], **value}
                    else:
                        merged[key] = value
                tables[name] = merged
        raw = {**known, **tables}
        resolved = _resolve_bases(raw, where)
        for name in tables:
            if vendor == "amd":
                self.amd_archs[name] = _build_amd(name, resolved[name], where)
            else:
                self.nv_archs[name] = _build_nv(name, resolved[name], where)
            self._raw[vendor][name] = resolved[name]
        # products of an overlaid architecture use its new limits
        archs = self.amd_archs if vendor == "amd" else self.nv_archs
        for device in list(self.devices):
            if device.vendor == vendor and device.arch.name in tables:
                self._register(dataclasses.replace(device, arch=archs[device.arch.name]))

    def add_devices(self, entries: list[Any], where: str) -> None:
        for i, entry in enumerate(entries):
            ctx = f"{where}: [[device]] #{i + 1}"
            if not isinstance(entry, dict):
                raise DeviceDbError(f"{ctx}: must be a table")
            for key, value in entry.items():
                expected = _DEVICE_KEYS.get(key)
                if expected is None:
                    raise DeviceDbError(f"{ctx}: unknown key {key!r}")
                if not isinstance(value, expected) or isinstance(value, bool):
                    raise DeviceDbError(f"{ctx}: {key!r} has the wrong type ({value!r})")
            for key in ("name", "arch"):
                if key not in entry:
                    raise DeviceDbError(f"{ctx}: missing key {key!r}")
            arch_name = entry["arch"]
            arch = self.amd_archs.get(arch_name) or self.nv_archs.get(arch_name)
            if arch is None:
                raise DeviceDbError(f"{ctx} ({entry['name']}): unknown arch {arch_name!r}")
            if "vendor" in entry and entry["vendor"] != arch.vendor:
                raise DeviceDbError(f"{ctx}: vendor {entry['vendor']!r} but arch is {arch.vendor}")
            units = entry.get("compute_units", entry.get("sms"))
            if units is None or units <= 0:
                raise DeviceDbError(f"{ctx} ({entry['name']}): needs compute_units or sms > 0")
            device = Device(
                name=entry["name"], vendor=arch.vendor, arch=arch,
                aliases=tuple(entry.get("aliases", ())), compute_units=units,
                wgps=entry.get("wgps"), devices_per_package=entry.get("devices_per_package", 1),
                memory_gib=entry.get("memory_gib"),
                memory_bandwidth_gbs=entry.get("memory_bandwidth_gbs"),
                max_clock_mhz=entry.get("max_clock_mhz"), l2_kib=entry.get("l2_kib"),
                unconfirmed=tuple(entry.get("unconfirmed", ())), source=entry.get("source", ""),
            )
            self._register(device)

    def _register(self, device: Device) -> None:
        keys = {normalize(device.name), *(normalize(a) for a in device.aliases)}
        short = re.sub(r"^(amd|nvidia)\s+", "", device.name, flags=re.I)
        keys.add(normalize(short))
        replaced = {id(self._index[k]) for k in keys if k in self._index}
        if replaced:  # a user device overrides a shipped one of the same name or alias
            self.devices = [d for d in self.devices if id(d) not in replaced]
            self._index = {k: d for k, d in self._index.items() if id(d) not in replaced}
        self.devices.append(device)
        for key in keys:
            self._index[key] = device

    # -- lookup -----------------------------------------------------------------------------
    def arch_device(self, name: str) -> Device | None:
        """A bare architecture named as a device: gfx1100, sm_90, sm_90a, sm90."""
        lowered = name.strip().lower()
        if lowered in self.amd_archs:
            return Device(name=lowered, vendor="amd", arch=self.amd_archs[lowered], arch_only=True,
                          source="architecture limits only (no CU count)")
        match = re.fullmatch(r"(?:sm_?|compute_)(\d+)([af]?)", lowered)
        if match:
            arch = self.nv_archs.get(f"sm_{match[1]}")
            if arch is not None:
                return Device(name=f"sm_{match[1]}{match[2]}", vendor="nvidia", arch=arch,
                              arch_only=True, arch_variant=match[2],
                              source="architecture limits only (no SM count)")
        return None

    def get(self, name: str) -> Device:
        device = self.arch_device(name) or self._index.get(normalize(name))
        if device is not None:
            return device
        choices = sorted({*self._index, *self.amd_archs, *self.nv_archs})
        import difflib  # only to name the closest devices

        close = difflib.get_close_matches(normalize(name), choices, n=3, cutoff=0.6)
        pretty = [self._index[c].aliases[0] if c in self._index and self._index[c].aliases else c
                  for c in close]
        raise UnknownDeviceError(name, list(dict.fromkeys(pretty)))

    def load_user_file(self, path: Path) -> None:
        data = read_toml(path, DeviceDbError)
        where = str(path)
        unknown = set(data) - {"device", "amd_architectures", "nvidia_architectures"}
        if unknown:
            raise DeviceDbError(f"{where}: unknown top-level key {sorted(unknown)[0]!r}")
        if "amd_architectures" in data:
            self.add_architectures("amd", data["amd_architectures"], where)
        if "nvidia_architectures" in data:
            self.add_architectures("nvidia", data["nvidia_architectures"], where)
        devices = data.get("device", [])
        if not isinstance(devices, list):
            raise DeviceDbError(f"{where}: 'device' must be an array of tables ([[device]])")
        self.add_devices(devices, where)


def _load_shipped() -> DeviceDb:
    root = _db_root()
    db = DeviceDb()
    for vendor in ("amd", "nvidia"):
        arch_path = root / vendor / "architectures.toml"
        db.add_architectures(vendor, read_shipped_toml(arch_path, DeviceDbError),
                             str(arch_path))
    for vendor in ("amd", "nvidia"):
        path = root / vendor / "products.toml"
        data = read_shipped_toml(path, DeviceDbError)
        unknown = set(data) - {"device"}
        if unknown:
            raise DeviceDbError(f"{path}: unknown top-level key {sorted(unknown)[0]!r}")
        db.add_devices(data.get("device", []), str(path))
    return db


@cache
def shipped_db() -> DeviceDb:
    """The database shipped with occlint (cached; treat as read-only)."""
    return _load_shipped()


def load_db(device_files: Iterable[Path] = ()) -> DeviceDb:
    """The shipped database plus user files, later files overriding earlier entries."""
    files = list(device_files)
    if not files:
        return shipped_db()
    db = _load_shipped()
    for path in files:
        db.load_user_file(Path(path))
    return db
