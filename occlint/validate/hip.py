"""AMD backend: the HIP runtime through ctypes on libamdhip64.

Written against the HIP module API (hipModuleLoadData, hipModuleOccupancy*,
hipModuleLaunchKernel), using only calls and enum values that are stable across ROCm 5
and 6. It has not been run on AMD hardware yet (no AMD GPU was available); the CUDA
backend, which the harness shares, was validated on an H100.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any

from occlint.validate.backend import DeviceInfo, FunctionAttributes, GpuError, NoGpuError

HIP_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 63  # hipDeviceAttributeMultiprocessorCount
HIP_FUNC_ATTRIBUTE = {"max_threads": 0, "shared": 1, "const": 2, "local": 3, "regs": 4}
_c = ctypes


def _library():
    names = ["libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"]
    found = ctypes.util.find_library("amdhip64")
    if found:
        names.insert(0, found)
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    raise NoGpuError("the HIP runtime (libamdhip64) is not installed")


class HipBackend:
    vendor = "amd"

    def __init__(self, device_index: int = 0):
        self.lib = _library()
        if self.lib.hipInit(0) != 0:
            raise NoGpuError("the HIP runtime cannot initialise (no AMD GPU or driver)")
        count = _c.c_int(0)
        if self.lib.hipGetDeviceCount(_c.byref(count)) != 0 or count.value <= device_index:
            raise NoGpuError(f"no HIP device {device_index} ({count.value} found)")
        self.index = device_index
        self._check(self.lib.hipSetDevice(device_index), "hipSetDevice")
        self.start, self.stop = _c.c_void_p(), _c.c_void_p()
        self._check(self.lib.hipEventCreate(_c.byref(self.start)), "hipEventCreate")
        self._check(self.lib.hipEventCreate(_c.byref(self.stop)), "hipEventCreate")
        self.lib.hipModuleLaunchKernel.argtypes = [
            _c.c_void_p, _c.c_uint, _c.c_uint, _c.c_uint, _c.c_uint, _c.c_uint, _c.c_uint,
            _c.c_uint, _c.c_void_p, _c.c_void_p, _c.c_void_p]
        self.lib.hipMalloc.argtypes = [_c.POINTER(_c.c_void_p), _c.c_size_t]
        self.lib.hipMemcpyHtoD.argtypes = [_c.c_void_p, _c.c_void_p, _c.c_size_t]
        self.lib.hipMemcpyDtoD.argtypes = [_c.c_void_p, _c.c_void_p, _c.c_size_t]
        self.lib.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor.argtypes = [
            _c.POINTER(_c.c_int), _c.c_void_p, _c.c_int, _c.c_size_t]
        self.lib.hipModuleOccupancyMaxPotentialBlockSize.argtypes = [
            _c.POINTER(_c.c_int), _c.POINTER(_c.c_int), _c.c_void_p, _c.c_size_t, _c.c_int]
        self.lib.hipEventElapsedTime.argtypes = [_c.POINTER(_c.c_float), _c.c_void_p,
                                                 _c.c_void_p]
        self.modules: list = []

    def _check(self, err: int, what: str) -> None:
        if err != 0:
            self.lib.hipGetErrorName.restype = _c.c_char_p
            name = self.lib.hipGetErrorName(err) or b"error"
            raise GpuError(f"{what} failed: {name.decode()} ({err})")

    def device(self) -> DeviceInfo:
        name = _c.create_string_buffer(256)
        self._check(self.lib.hipDeviceGetName(name, 256, self.index), "hipDeviceGetName")
        units = _c.c_int(0)
        self._check(self.lib.hipDeviceGetAttribute(
            _c.byref(units), HIP_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, self.index),
            "hipDeviceGetAttribute(multiProcessorCount)")
        version = _c.c_int(0)
        self.lib.hipRuntimeGetVersion(_c.byref(version))
        return DeviceInfo("amd", name.value.decode(errors="replace"), "", units.value,
                          f"HIP runtime {version.value}")

    def load(self, image: bytes, kernel: str):
        module = _c.c_void_p()
        self._keep = _c.create_string_buffer(image, len(image))
        self._check(self.lib.hipModuleLoadData(_c.byref(module), self._keep),
                    "hipModuleLoadData")
        self.modules.append(module)
        func = _c.c_void_p()
        self._check(self.lib.hipModuleGetFunction(_c.byref(func), module, kernel.encode()),
                    f"hipModuleGetFunction({kernel})")
        return func

    def attributes(self, func) -> FunctionAttributes:
        def get(key: str) -> int:
            value = _c.c_int(0)
            self._check(self.lib.hipFuncGetAttribute(_c.byref(value), HIP_FUNC_ATTRIBUTE[key],
                                                     func), f"hipFuncGetAttribute({key})")
            return value.value

        return FunctionAttributes(registers=get("regs"), shared_bytes=get("shared"),
                                  local_bytes=get("local"), max_threads=get("max_threads"),
                                  const_bytes=get("const"))

    def set_max_dynamic_shared(self, func, nbytes: int) -> None:
        """HIP accepts but ignores the limit (the hardware maximum always applies)."""

    def occupancy(self, func, block: int, dynamic_shared: int) -> int:
        blocks = _c.c_int(0)
        self._check(self.lib.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(
            _c.byref(blocks), func, block, dynamic_shared),
            "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor")
        return blocks.value

    def potential_block(self, func, dynamic_shared: int) -> tuple[int, int]:
        grid, block = _c.c_int(0), _c.c_int(0)
        self._check(self.lib.hipModuleOccupancyMaxPotentialBlockSize(
            _c.byref(grid), _c.byref(block), func, dynamic_shared, 0),
            "hipModuleOccupancyMaxPotentialBlockSize")
        return grid.value, block.value

    def alloc(self, nbytes: int) -> int:
        ptr = _c.c_void_p()
        self._check(self.lib.hipMalloc(_c.byref(ptr), nbytes), f"hipMalloc({nbytes})")
        return ptr.value or 0

    def free(self, ptr: int) -> None:
        self.lib.hipFree(_c.c_void_p(ptr))

    def upload(self, ptr: int, data: Any, nbytes: int) -> None:
        address = data if isinstance(data, int) else _c.addressof(
            (_c.c_char * nbytes).from_buffer(data))
        self._check(self.lib.hipMemcpyHtoD(ptr, address, nbytes), "hipMemcpyHtoD")

    def copy(self, dst: int, src: int, nbytes: int) -> None:
        self._check(self.lib.hipMemcpyDtoD(dst, src, nbytes), "hipMemcpyDtoD")

    def time_launch(self, func, grid: int, block: int, dynamic_shared: int, params) -> float:
        self._check(self.lib.hipEventRecord(self.start, None), "hipEventRecord")
        self._check(self.lib.hipModuleLaunchKernel(func, grid, 1, 1, block, 1, 1,
                                                   dynamic_shared, None, params, None),
                    "hipModuleLaunchKernel")
        self._check(self.lib.hipEventRecord(self.stop, None), "hipEventRecord")
        self._check(self.lib.hipEventSynchronize(self.stop), "hipEventSynchronize")
        ms = _c.c_float(0)
        self._check(self.lib.hipEventElapsedTime(_c.byref(ms), self.start, self.stop),
                    "hipEventElapsedTime")
        return ms.value

    def synchronize(self) -> None:
        self._check(self.lib.hipDeviceSynchronize(), "hipDeviceSynchronize")

    def close(self) -> None:
        for module in self.modules:
            self.lib.hipModuleUnload(module)
