"""NVIDIA backend: the CUDA driver API through cuda-python (``cuda.bindings.driver``)."""

from __future__ import annotations

import ctypes
from typing import Any

from occlint.validate.backend import DeviceInfo, FunctionAttributes, GpuError, NoGpuError


def _driver():
    try:
        from cuda.bindings import driver
    except ImportError:
        try:
            from cuda import cuda as driver  # cuda-python < 12.6
        except ImportError:
            raise NoGpuError("cuda-python is not installed (pip install cuda-python), so "
                             "the CUDA driver API is not available") from None
    return driver


class CudaBackend:
    vendor = "nvidia"

    def __init__(self, device_index: int = 0):
        self.d = _driver()
        try:
            self._check(self.d.cuInit(0), "cuInit")
        except GpuError as exc:
            raise NoGpuError(f"the CUDA driver cannot initialise: {exc}") from None
        except Exception as exc:  # cuda-python raises its own types when libcuda is missing
            raise NoGpuError(f"no CUDA driver on this machine ({type(exc).__name__}: "
                             f"{exc})") from None
        count = self._check(self.d.cuDeviceGetCount(), "cuDeviceGetCount")
        if count <= device_index:
            raise NoGpuError(f"no CUDA device {device_index} ({count} found)")
        self.dev = self._check(self.d.cuDeviceGet(device_index), "cuDeviceGet")
        self.ctx = self._check(self.d.cuDevicePrimaryCtxRetain(self.dev),
                               "cuDevicePrimaryCtxRetain")
        self._check(self.d.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")
        self.stream = self.d.CUstream(0)
        self.start = self._check(self.d.cuEventCreate(0), "cuEventCreate")
        self.stop = self._check(self.d.cuEventCreate(0), "cuEventCreate")
        self.modules: list = []

    # -- plumbing ---------------------------------------------------------------------------
    def _check(self, result, what: str):
        err, *values = result if isinstance(result, tuple) else (result,)
        if int(err) != 0:
            name = getattr(err, "name", str(err))
            raise GpuError(f"{what} failed: {name}")
        if not values:
            return None
        return values[0] if len(values) == 1 else tuple(values)

    def _attr(self, name: str) -> int:
        enum = self.d.CUdevice_attribute
        return int(self._check(self.d.cuDeviceGetAttribute(getattr(enum, name), self.dev),
                               f"cuDeviceGetAttribute({name})"))

    # -- device -----------------------------------------------------------------------------
    def device(self) -> DeviceInfo:
        name = self._check(self.d.cuDeviceGetName(256, self.dev), "cuDeviceGetName")
        name = name.split(b"\0", 1)[0].decode() if isinstance(name, bytes) else str(name)
        major = self._attr("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR")
        minor = self._attr("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR")
        version = self._check(self.d.cuDriverGetVersion(), "cuDriverGetVersion")
        attrs = {key.lower(): self._attr("CU_DEVICE_ATTRIBUTE_" + key) for key in (
            "MAX_THREADS_PER_MULTIPROCESSOR", "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
            "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", "RESERVED_SHARED_MEMORY_PER_BLOCK",
            "MAX_REGISTERS_PER_MULTIPROCESSOR", "MAX_REGISTERS_PER_BLOCK",
            "MAX_THREADS_PER_BLOCK", "MAX_BLOCKS_PER_MULTIPROCESSOR", "CLOCK_RATE",
            "MEMORY_CLOCK_RATE", "GLOBAL_MEMORY_BUS_WIDTH", "L2_CACHE_SIZE")}
        return DeviceInfo("nvidia", name, f"sm_{major}{minor}",
                          self._attr("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT"),
                          f"CUDA driver {version // 1000}.{version % 1000 // 10}", attrs)

    # -- modules and functions ----------------------------------------------------------------
    def load(self, image: bytes, kernel: str):
        module = self._check(self.d.cuModuleLoadData(image), "cuModuleLoadData")
        self.modules.append(module)
        return self._check(self.d.cuModuleGetFunction(module, kernel.encode()),
                           f"cuModuleGetFunction({kernel})")

    def attributes(self, func) -> FunctionAttributes:
        enum = self.d.CUfunction_attribute

        def get(name: str) -> int:
            return int(self._check(self.d.cuFuncGetAttribute(getattr(enum, name), func),
                                   f"cuFuncGetAttribute({name})"))

        return FunctionAttributes(
            registers=get("CU_FUNC_ATTRIBUTE_NUM_REGS"),
            shared_bytes=get("CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES"),
            local_bytes=get("CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES"),
            max_threads=get("CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK"),
            const_bytes=get("CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES"))

    def set_max_dynamic_shared(self, func, nbytes: int) -> None:
        enum = self.d.CUfunction_attribute
        self._check(self.d.cuFuncSetAttribute(
            func, enum.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)")

    def occupancy(self, func, block: int, dynamic_shared: int) -> int:
        return int(self._check(self.d.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            func, block, dynamic_shared), "cuOccupancyMaxActiveBlocksPerMultiprocessor"))

    def potential_block(self, func, dynamic_shared: int) -> tuple[int, int]:
        """(min grid size, block size) of cuOccupancyMaxPotentialBlockSize."""
        last: Exception | None = None
        for b2d in (None, 0):  # the no-callback form has been spelt both ways
            try:
                grid, block = self._check(self.d.cuOccupancyMaxPotentialBlockSize(
                    func, b2d, dynamic_shared, 0), "cuOccupancyMaxPotentialBlockSize")
                return int(grid), int(block)
            except TypeError as exc:
                last = exc
        raise GpuError(f"cuOccupancyMaxPotentialBlockSize: {last}")

    # -- memory -------------------------------------------------------------------------------
    def alloc(self, nbytes: int) -> int:
        return int(self._check(self.d.cuMemAlloc(nbytes), f"cuMemAlloc({nbytes})"))

    def free(self, ptr: int) -> None:
        self._check(self.d.cuMemFree(self.d.CUdeviceptr(ptr)), "cuMemFree")

    def upload(self, ptr: int, data: Any, nbytes: int) -> None:
        self._check(self.d.cuMemcpyHtoD(self.d.CUdeviceptr(ptr), data, nbytes), "cuMemcpyHtoD")

    def copy(self, dst: int, src: int, nbytes: int) -> None:
        self._check(self.d.cuMemcpyDtoD(self.d.CUdeviceptr(dst), self.d.CUdeviceptr(src),
                                        nbytes), "cuMemcpyDtoD")

    # -- launches -----------------------------------------------------------------------------
    def time_launch(self, func, grid: int, block: int, dynamic_shared: int, params) -> float:
        """One launch timed with device events, in milliseconds."""
        self._check(self.d.cuEventRecord(self.start, self.stream), "cuEventRecord")
        self._check(self.d.cuLaunchKernel(func, grid, 1, 1, block, 1, 1, dynamic_shared,
                                          self.stream, params, 0), "cuLaunchKernel")
        self._check(self.d.cuEventRecord(self.stop, self.stream), "cuEventRecord")
        self._check(self.d.cuEventSynchronize(self.stop), "cuEventSynchronize (kernel failed?)")
        return float(self._check(self.d.cuEventElapsedTime(self.start, self.stop),
                                 "cuEventElapsedTime"))

    def synchronize(self) -> None:
        self._check(self.d.cuCtxSynchronize(), "cuCtxSynchronize")

    def close(self) -> None:
        for module in self.modules:
            self.d.cuModuleUnload(module)
        self.d.cuDevicePrimaryCtxRelease(self.dev)


def kernel_params(values: list[ctypes._SimpleCData]) -> tuple[int, Any]:
    """(address of the void* array, keep-alive object) for cuLaunchKernel's kernelParams."""
    array = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
    return ctypes.addressof(array), (array, values)
