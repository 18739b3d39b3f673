"""The interface a GPU runtime offers the validation harness, and how to find one."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


class NoGpuError(RuntimeError):
    """No usable GPU runtime (driver library, device) on this machine."""


class GpuError(RuntimeError):
    """A GPU runtime call failed."""


@dataclass
class DeviceInfo:
    vendor: str  # "nvidia" | "amd"
    name: str
    arch: str  # sm_90 / gfx1100
    units: int  # SMs, or CUs / WGPs as the runtime counts them
    driver: str
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass
class FunctionAttributes:
    registers: int
    shared_bytes: int
    local_bytes: int
    max_threads: int
    const_bytes: int | None = None


class Backend(Protocol):
    vendor: str

    def device(self) -> DeviceInfo: ...
    def load(self, image: bytes, kernel: str) -> Any: ...
    def attributes(self, func: Any) -> FunctionAttributes: ...
    def occupancy(self, func: Any, block: int, dynamic_shared: int) -> int: ...
    def potential_block(self, func: Any, dynamic_shared: int) -> tuple[int, int]: ...
    def alloc(self, nbytes: int) -> int: ...
    def free(self, ptr: int) -> None: ...
    def upload(self, ptr: int, data: Any, nbytes: int) -> None: ...
    def copy(self, dst: int, src: int, nbytes: int) -> None: ...
    def set_max_dynamic_shared(self, func: Any, nbytes: int) -> None: ...
    def time_launch(self, func: Any, grid: int, block: int, dynamic_shared: int,
                    params: Any) -> float: ...
    def synchronize(self) -> None: ...
    def close(self) -> None: ...


def open_backend(vendor: str, device_index: int = 0) -> Backend:
    """The runtime for ``vendor``'s binaries; NoGpuError says why there is none."""
    if vendor == "nvidia":
        from occlint.validate.cuda import CudaBackend

        return CudaBackend(device_index)
    from occlint.validate.hip import HipBackend

    return HipBackend(device_index)
