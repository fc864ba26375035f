"""The CUDA driver API through ctypes, for `studytui measure --clusters` (no PyTorch, no nvcc).

The probe kernels are PTX, compiled by the driver at load time; the queries are the driver's own
(cuOccupancyMaxActiveBlocksPerMultiprocessor, cuOccupancyMaxActiveClusters,
cuOccupancyMaxPotentialClusterSize, cuDeviceGetAttribute) and the residency check launches with
cuLaunchKernelEx and a cluster-dimension attribute. Imported only when a measurement runs.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any

from studytui.measure.backend import BackendUnavailable
from studytui.measure.clusters import ATTRIBUTES

# CUfunction_attribute / CUdevice_attribute / CUlaunchAttributeID values (cuda.h).
FUNC_NUM_REGS = 4
FUNC_SHARED_SIZE_BYTES = 1
FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14
DEV_COMPUTE_CAPABILITY_MAJOR = 75
DEV_COMPUTE_CAPABILITY_MINOR = 76
DEV_MULTIPROCESSOR_COUNT = 16
LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4

PTX = r"""
.version 7.8
.target sm_90
.address_size 64

.extern .shared .align 16 .b8 smem[];

.visible .entry probe(.param .u64 out)
{
    .reg .pred p<2>;
    .reg .b32 r<4>;
    .reg .b64 rd<4>;
    mov.u32 r1, %tid.x;
    mov.u32 r2, %ctaid.x;
    setp.ne.u32 p0, r1, 0;
    @p0 bra WAIT;
    st.shared.u32 [smem], r2;
WAIT:
    bar.sync 0;
    @p0 bra DONE;
    ld.param.u64 rd1, [out];
    setp.eq.u64 p1, rd1, 0;
    @p1 bra DONE;
    cvta.to.global.u64 rd1, rd1;
    ld.shared.u32 r3, [smem];
    mul.wide.u32 rd2, r2, 4;
    add.s64 rd3, rd1, rd2;
    st.global.u32 [rd3], r3;
DONE:
    ret;
}

.visible .entry arrive_and_wait(.param .u64 counter, .param .u64 timed_out, .param .u32 expected, .param .u64 timeout_ns)
{
    .reg .pred p<3>;
    .reg .b32 r<8>;
    .reg .b64 rd<8>;
    mov.u32 r1, %tid.x;
    setp.ne.u32 p0, r1, 0;
    @p0 bra SYNC;
    mov.u32 r7, 1;
    st.shared.u32 [smem], r7;
    ld.param.u64 rd1, [counter];
    cvta.to.global.u64 rd1, rd1;
    ld.param.u64 rd2, [timed_out];
    cvta.to.global.u64 rd2, rd2;
    ld.param.u32 r2, [expected];
    ld.param.u64 rd4, [timeout_ns];
    atom.global.add.u32 r3, [rd1], 1;
    add.u32 r3, r3, 1;
    mov.u64 rd5, %globaltimer;
LOOP:
    setp.ge.u32 p1, r3, r2;
    @p1 bra SYNC;
    mov.u64 rd6, %globaltimer;
    sub.u64 rd7, rd6, rd5;
    setp.gt.u64 p2, rd7, rd4;
    @p2 bra TIMEOUT;
    atom.global.add.u32 r3, [rd1], 0;
    bra LOOP;
TIMEOUT:
    atom.global.add.u32 r4, [rd2], 1;
SYNC:
    bar.sync 0;
    ret;
}
"""


class _Dim(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


class _AttrValue(ctypes.Union):
    _fields_ = [("pad", ctypes.c_char * 64), ("clusterDim", _Dim)]


class _Attr(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", _AttrValue)]


class _LaunchConfig(ctypes.Structure):
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p), ("attrs", ctypes.POINTER(_Attr)),
                ("numAttrs", ctypes.c_uint)]


class CudaError(RuntimeError):
    pass


class CudaDriverBackend:
    """Device 0, its primary context, and the two probe kernels."""

    def __init__(self, index: int = 0) -> None:
        name = ctypes.util.find_library("cuda") or "libcuda.so.1"
        try:
            self.lib = ctypes.CDLL(name)
        except OSError as exc:
            raise BackendUnavailable(f"no CUDA driver (libcuda) here: {exc}") from None
        if self.lib.cuInit(0) != 0:
            raise BackendUnavailable("the CUDA driver found no usable GPU (cuInit failed)")
        count = ctypes.c_int()
        self._check(self.lib.cuDeviceGetCount(ctypes.byref(count)), "cuDeviceGetCount")
        if count.value < 1:
            raise BackendUnavailable("no CUDA GPU is visible")
        self.dev = ctypes.c_int()
        self._check(self.lib.cuDeviceGet(ctypes.byref(self.dev), index), "cuDeviceGet")
        self.ctx = ctypes.c_void_p()
        self._check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.ctx), self.dev), "cuDevicePrimaryCtxRetain")
        self._check(self.lib.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")
        self.major = self._attr(DEV_COMPUTE_CAPABILITY_MAJOR)
        self.minor = self._attr(DEV_COMPUTE_CAPABILITY_MINOR)
        self.sms = self._attr(DEV_MULTIPROCESSOR_COUNT)
        self.probe = self.wait = ctypes.c_void_p()  # null until loaded (clusters need 9.0+)
        if self.major >= 9:
            self.module = ctypes.c_void_p()
            self._check(self.lib.cuModuleLoadData(ctypes.byref(self.module), ctypes.c_char_p(PTX.encode())), "cuModuleLoadData")
            self.probe = self._function(b"probe")
            self.wait = self._function(b"arrive_and_wait")
            self.optin = dict(self._attributes()).get("sharedMemPerBlockOptin", 0)
            for f in (self.probe, self.wait):
                self._check(self.lib.cuFuncSetAttribute(f, FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, self.optin), "cuFuncSetAttribute")
        self._nonportable: dict[int, bool] = {}

    # -- plumbing ----------------------------------------------------------------------------
    def _error(self, code: int) -> str:
        text = ctypes.c_char_p()
        self.lib.cuGetErrorString(code, ctypes.byref(text))
        return (text.value or b"").decode() or f"CUDA error {code}"

    def _check(self, code: int, what: str) -> None:
        if code != 0:
            raise CudaError(f"{what}: {self._error(code)}")

    def _attr(self, attr: int) -> int:
        value = ctypes.c_int()
        self._check(self.lib.cuDeviceGetAttribute(ctypes.byref(value), attr, self.dev), "cuDeviceGetAttribute")
        return value.value

    def _attributes(self) -> list[tuple[str, int]]:
        return [(name, self._attr(code)) for name, code, _unit in ATTRIBUTES]

    def _function(self, name: bytes) -> ctypes.c_void_p:
        f = ctypes.c_void_p()
        self._check(self.lib.cuModuleGetFunction(ctypes.byref(f), self.module, name), "cuModuleGetFunction")
        return f

    def _set_nonportable(self, f: ctypes.c_void_p, on: bool) -> None:
        key = id(f)
        if self._nonportable.get(key) is not on:
            self._check(self.lib.cuFuncSetAttribute(f, FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, int(on)), "cuFuncSetAttribute")
            self._nonportable[key] = on

    def _config(self, grid: tuple[int, int, int], threads: int, smem: int, dims: tuple[int, int, int]) -> tuple[_LaunchConfig, Any]:
        attr = (_Attr * 1)()
        attr[0].id = LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr[0].value.clusterDim = _Dim(*dims)
        cfg = _LaunchConfig(grid[0], grid[1], grid[2], threads, 1, 1, smem, None, attr, 1)
        return cfg, attr

    # -- ClusterBackend --------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        buf = ctypes.create_string_buffer(256)
        self._check(self.lib.cuDeviceGetName(buf, 256, self.dev), "cuDeviceGetName")
        mem = ctypes.c_size_t()
        self._check(self.lib.cuDeviceTotalMem_v2(ctypes.byref(mem), self.dev), "cuDeviceTotalMem")
        version = ctypes.c_int()
        self.lib.cuDriverGetVersion(ctypes.byref(version))
        return {"name": buf.value.decode(errors="replace"), "compute_capability": f"{self.major}.{self.minor}", "sm_count": self.sms,
                "memory_bytes": mem.value, "driver_api": version.value, "attributes": dict(self._attributes())}

    def kernel(self) -> dict[str, int]:
        regs, static = ctypes.c_int(), ctypes.c_int()
        self._check(self.lib.cuFuncGetAttribute(ctypes.byref(regs), FUNC_NUM_REGS, self.probe), "cuFuncGetAttribute")
        self._check(self.lib.cuFuncGetAttribute(ctypes.byref(static), FUNC_SHARED_SIZE_BYTES, self.probe), "cuFuncGetAttribute")
        return {"num_regs": regs.value, "static_smem": static.value}

    def blocks_per_sm(self, threads: int, dyn_smem: int) -> int:
        n = ctypes.c_int()
        self._check(self.lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(n), self.probe, threads, ctypes.c_size_t(dyn_smem)),
                    "cuOccupancyMaxActiveBlocksPerMultiprocessor")
        return n.value

    def max_active_clusters(self, threads: int, dyn_smem: int, dims: tuple[int, int, int], nonportable: bool) -> int | str:
        self._set_nonportable(self.probe, nonportable)
        cfg, _keep = self._config((dims[0] * 64, dims[1] * 2, dims[2]), threads, dyn_smem, dims)
        n = ctypes.c_int(-1)
        code = self.lib.cuOccupancyMaxActiveClusters(ctypes.byref(n), self.probe, ctypes.byref(cfg))
        return n.value if code == 0 else self._error(code)

    def max_potential_cluster_size(self, nonportable: bool) -> int:
        self._set_nonportable(self.probe, nonportable)
        cfg, _keep = self._config((16 * 64, 1, 1), 128, 0, (1, 1, 1))
        cfg.numAttrs = 0
        n = ctypes.c_int(-1)
        self._check(self.lib.cuOccupancyMaxPotentialClusterSize(ctypes.byref(n), self.probe, ctypes.byref(cfg)),
                    "cuOccupancyMaxPotentialClusterSize")
        return n.value

    def residency(self, dyn_smem: int, size: int, clusters: int, timeout_ns: int) -> dict[str, Any]:
        self._set_nonportable(self.wait, size > 8)
        dptr = ctypes.c_uint64()
        self._check(self.lib.cuMemAlloc_v2(ctypes.byref(dptr), ctypes.c_size_t(8)), "cuMemAlloc")
        try:
            self._check(self.lib.cuMemsetD32_v2(dptr, 0, ctypes.c_size_t(2)), "cuMemsetD32")
            counter = ctypes.c_uint64(dptr.value)
            timed_out = ctypes.c_uint64(dptr.value + 4)
            expected = ctypes.c_uint(clusters * size)
            timeout = ctypes.c_uint64(timeout_ns)
            args = (counter, timed_out, expected, timeout)
            params = (ctypes.c_void_p * len(args))(*(ctypes.addressof(v) for v in args))
            cfg, _keep = self._config((clusters * size, 1, 1), 64, dyn_smem, (size, 1, 1))
            code = self.lib.cuLaunchKernelEx(ctypes.byref(cfg), self.wait, params, None)
            if code == 0:
                code = self.lib.cuCtxSynchronize()
            host = (ctypes.c_uint * 2)()
            if code == 0:
                self._check(self.lib.cuMemcpyDtoH_v2(host, dptr, ctypes.c_size_t(8)), "cuMemcpyDtoH")
            return {"blocks": clusters * size, "arrived": host[0], "blocks_timed_out": host[1],
                    "status": "no error" if code == 0 else self._error(code)}
        finally:
            self.lib.cuMemFree_v2(dptr)


def make_cluster_backend() -> CudaDriverBackend:
    return CudaDriverBackend()
