"""The one door to CUDA: lazy CuPy, GPU detection, and checking driver results.

Nothing here runs at import; the first call that needs a GPU pays for CUDA start-up.
"""

import functools
from typing import Any

from . import _deps
from .errors import LaunchError, NoGPU


def cupy():
    """The CuPy module (imported on first use: `import cupy` itself is cheap and GPU-free)."""
    return _deps.require("cupy")


@functools.cache
def gpu_status() -> tuple[bool, str]:
    """(available, reason). Never raises: the reason says why no GPU is usable."""
    try:
        cp = cupy()
    except Exception as exc:  # MissingDependency or a broken install
        return False, str(exc)
    try:
        n = cp.cuda.runtime.getDeviceCount()
    except Exception as exc:  # cudaErrorInsufficientDriver / NoDevice on CPU machines
        import glob

        if not glob.glob("/dev/nvidia[0-9]*") and not glob.glob("/dev/dxg"):  # no driver: not a version problem
            return False, "no NVIDIA GPU or driver on this machine (no /dev/nvidia* device)"
        return False, f"CUDA is not usable here: {type(exc).__name__}: {exc}"
    if n == 0:
        return False, "the CUDA driver reports no device"
    return True, f"{n} CUDA device(s)"


def gpu_available() -> bool:
    return gpu_status()[0]


def require_gpu(what: str = "this") -> None:
    ok, reason = gpu_status()
    if not ok:
        raise NoGPU(f"{what} needs a CUDA GPU: {reason}")


def check(result: Any, what: str) -> Any:
    """Unwrap a cuda-bindings call result ``(err, *values)``; raise LaunchError naming ``what``.

    Returns None, the single value, or the tuple of values.
    """
    if not isinstance(result, tuple):
        result = (result,)
    err, *values = result
    if int(err) != 0:
        name = getattr(err, "name", str(int(err)))
        raise LaunchError(f"{what} failed: {name}")
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


def load_function(image: bytes, entry: str, dynamic_smem_bytes: int = 0):
    """Load a cubin through the driver API and return ``entry``'s CUfunction (and its module, which must
    stay alive), its dynamic shared-memory limit raised to ``dynamic_smem_bytes`` when that is non-zero."""
    cu = _deps.require("cuda.bindings.driver")
    cupy().cuda.Device().synchronize()  # CuPy's primary context is current for the driver calls
    module = check(cu.cuModuleLoadData(image), f"cuModuleLoadData({entry})")
    func = check(cu.cuModuleGetFunction(module, entry.encode()), f"cuModuleGetFunction({entry})")
    if dynamic_smem_bytes:
        attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        check(cu.cuFuncSetAttribute(func, attr, dynamic_smem_bytes), f"cuFuncSetAttribute({entry}, max dynamic smem)")
    return func, module


def _launch_config(grid: tuple[int, int, int], block: tuple[int, int, int], shared_mem: int, attrs: list):
    """A ``CUlaunchConfig`` on CuPy's current stream with launch attributes ``attrs``."""
    cu = _deps.require("cuda.bindings.driver")
    cfg = cu.CUlaunchConfig()
    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = grid
    cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = block
    cfg.sharedMemBytes = shared_mem
    cfg.hStream = cu.CUstream(cupy().cuda.get_current_stream().ptr)
    if attrs:
        cfg.attrs = attrs
    cfg.numAttrs = len(attrs)
    return cfg


def launch(func, grid: tuple[int, int, int], block: tuple[int, int, int], shared_mem: int, params, what: str, *,
           pdl: bool = False) -> None:
    """``cuLaunchKernelEx`` on CuPy's current stream; ``params``: a ctypes array of one pointer to the packed
    parameter block. ``pdl``: programmatic stream serialization, so the launch may begin while the previous
    kernel finishes (the kernel must ``griddepcontrol.wait`` before it touches memory that kernel writes)."""
    import ctypes

    cu = _deps.require("cuda.bindings.driver")
    attrs = []
    if pdl:
        attr = cu.CUlaunchAttribute()
        attr.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
        attr.value.programmaticStreamSerializationAllowed = 1
        attrs.append(attr)
    cfg = _launch_config(grid, block, shared_mem, attrs)
    check(cu.cuLaunchKernelEx(cfg, func, ctypes.addressof(params), 0), f"cuLaunchKernelEx({what})")


def max_active_clusters(func, cluster: int, block: int, shared_mem: int, what: str) -> int:
    """How many clusters of ``cluster`` CTAs of ``func`` (``block`` threads, ``shared_mem`` dynamic bytes) the GPU
    holds at once (``cuOccupancyMaxActiveClusters``). A cluster sits whole in one GPC, so this can be fewer than the
    SMs over ``cluster``; a kernel with compile-time cluster dims must be asked with the same ``cluster``."""
    cu = _deps.require("cuda.bindings.driver")
    attr = cu.CUlaunchAttribute()
    attr.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = cluster, 1, 1
    cfg = _launch_config((cluster, 1, 1), (block, 1, 1), shared_mem, [attr])
    return int(check(cu.cuOccupancyMaxActiveClusters(func, cfg), f"cuOccupancyMaxActiveClusters({what})"))


def torch_on_cupy_stream(call):
    """``call`` (torch work) wrapped so it runs on CuPy's current stream, the one labkit's timing records on; the
    wrapper returns what ``call`` returns. CuPy's null stream is left to torch's own default stream: torch on
    ``ExternalStream(0)`` was measured unordered with the null stream's work, reading inputs CuPy was still writing
    and leaving outputs unwritten past a sync of it (data/runs/20261202T141300Z-decode_paging_cost)."""

    def run():
        import torch

        ptr = cupy().cuda.get_current_stream().ptr
        if not ptr:
            return call()
        with torch.cuda.stream(torch.cuda.ExternalStream(ptr)):
            return call()
    return run
