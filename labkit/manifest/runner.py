"""Run a validated manifest program: allocate, fill, encode, pack, launch, time.

Order of a call: zero every scratch buffer (the multi-CTA counter must start at zero), then
``cuLaunchKernelEx`` per launch with the packed parameter block, all on CuPy's current
stream. ``run()`` times each call with ``labkit.timing`` inside an NVTX range named by its
label; the zeroing happens in the untimed setup. In ``graph`` mode the graph holds the launches
only, behind one zeroing before the replays: split-KV kernels reset their counters themselves
(trtllm-gen's ``atom.inc`` wraps to 0 on the last arrival; labkit's decode kernel the same), and a
zeroing captured per call would be timed with it (measured: ~6 us per seed-sized decode call).
"""

import ctypes
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import _deps
from ..cuda import check as check_cu
from ..cuda import cupy, launch, require_gpu
from ..timing import Timing, nvtx_range, time_gpu
from . import tensormap
from .families import member_names
from .model import BufArg, Manifest, TensorMapField, VarArg
from .pack import Bindings, pack_bytes
from .validate import CheckResult, check

# manifest dtype -> numpy dtype used to allocate (bf16 / e4m3 as raw 16 / 8-bit words)
_NP = {"u8": np.uint8, "i8": np.int8, "e4m3": np.uint8, "u16": np.uint16, "i16": np.int16, "u32": np.uint32,
       "i32": np.int32, "u64": np.uint64, "i64": np.int64, "f16": np.float16, "f32": np.float32,
       "f64": np.float64, "bf16": np.uint16}


@dataclass
class _Prepared:
    label: str
    func: object
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem: int
    blob: ctypes.Array
    params: ctypes.Array
    pdl: bool


def _random_fill(cp, arr, dtype: str, rng) -> None:
    if dtype in ("f16", "f32", "f64"):
        arr[...] = cp.asarray(rng.standard_normal(arr.shape).astype(arr.dtype))
    elif dtype == "bf16":  # bf16 = top half of an f32
        f = rng.standard_normal(arr.shape).astype(np.float32)
        arr[...] = cp.asarray((f.view(np.uint32) >> 16).astype(np.uint16))
    else:
        arr[...] = cp.asarray(rng.integers(0, 16, arr.shape).astype(arr.dtype))


# Models whose inputs generic random data would make invalid (indices, lengths): the module and function that give
# ``(arrays, note)`` for a manifest of that model (host arrays by buffer name; the other inputs take random data),
# used when the caller brings no fill of its own.
MODEL_INPUTS = {"labkit-paged-decode": ("labkit.workloads.decode.build", "manifest_inputs")}


def model_inputs(manifest: Manifest, seed: int) -> tuple[dict, str]:
    """``(arrays, note)``: the manifest model's own input arrays (none for other models) and what the inputs are."""
    if manifest.model in MODEL_INPUTS:
        import importlib

        module, name = MODEL_INPUTS[manifest.model]
        return getattr(importlib.import_module(module), name)(manifest, seed)
    return {}, f"inputs: seeded random data (seed {seed}; integers 0..15)"


def poison(cp, arr) -> None:
    """NaN for floats, all-ones bits otherwise: an unwritten element cannot pass a check."""
    if arr.dtype.kind == "f":
        arr.fill(np.nan)
    else:
        arr.view(np.uint8).fill(0xFF)


class Runner:
    """Launches one program of a manifest.

    Args:
        manifest: a parsed Manifest.
        program: program name (default: the first).
        vars: var values (others: their max).
        cubin_dirs: extra directories to search for cubins.
        fill: ``fill(name, array)`` for input buffers; default: the model's own (``MODEL_INPUTS``: valid page
            tables and lengths for labkit's decode manifests), else seeded random data; ``input_note`` says which.
        seed: seed of the default fill.

    Raises:
        ManifestError: validation failed (nothing is allocated or launched).
        NoGPU / LaunchError: no GPU, or the driver refused a module or launch.
    """

    def __init__(self, manifest: Manifest, *, program: str | None = None, vars: dict[str, int] | None = None,
                 cubin_dirs: tuple = (), fill: Callable[[str, object], None] | None = None, seed: int = 0,
                 load: bool = True):
        require_gpu("running a manifest")
        from ..device import describe

        self.device = describe()
        self.load = load  # False: allocate, encode and pack only (``labkit manifest pack``)
        self.result: CheckResult = check(manifest, program=program, vars=vars,
                                         device=self.device if load else None, cubin_dirs=cubin_dirs)
        self.result.raise_if_errors()
        self.manifest = manifest
        cp = cupy()
        self.cu = _deps.require("cuda.bindings.driver")
        rng = np.random.default_rng(seed)
        own, self.input_note = ({}, "inputs: the caller's") if fill is not None else model_inputs(manifest, seed)
        self.buffers = {}
        for name, b in manifest.buffers.items():
            arr = cp.empty(b.shape, dtype=_NP[b.dtype])
            if b.kind == "output":
                poison(cp, arr)
            elif fill is not None:
                fill(name, arr)
            elif name in own:
                arr.set(own[name])
            else:
                _random_fill(cp, arr, b.dtype, rng)
            self.buffers[name] = arr
        self.scratch = {(op.name, s.name): cp.zeros(s.nbytes, dtype=np.uint8)
                        for op in manifest.ops.values() for s in op.scratch.values()}
        cp.cuda.Device().synchronize()  # the primary context is now current for driver calls
        self._modules = {}
        for name, lm in (self.result.modules.items() if load else ()):
            self._modules[name] = check_cu(self.cu.cuModuleLoadData(lm.image), f"cuModuleLoadData({lm.path.name})")
        self.calls: list[list[_Prepared]] = []
        self.packed: list[tuple] = []  # (plan, parameter bytes, field rows) per launch
        for plan in self.result.plans:
            self._prepare(plan)

    def _pointer(self, arg) -> int:
        return int(self.buffers[arg.buf].data.ptr) + arg.offset

    def _prepare(self, plan) -> None:
        cu = self.cu
        op = self.manifest.ops[plan.op]
        launch = op.launches[plan.launch_index]
        func = None
        if self.load:
            func = check_cu(cu.cuModuleGetFunction(self._modules[launch.module], launch.entry.encode()),
                            f"cuModuleGetFunction({launch.entry})")
        if launch.shared_mem and self.load:
            attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            check_cu(cu.cuFuncSetAttribute(func, attr, launch.shared_mem),
                     f"cuFuncSetAttribute({launch.entry}, max dynamic smem)")
        values = [self._pointer(a) if isinstance(a, BufArg) else self.result.vars[a.var] if isinstance(a, VarArg)
                  else 0 for a in plan.call_args]
        names = tuple(a.buf if isinstance(a, BufArg) else a.var for a in plan.call_args)
        scratch = {s: int(self.scratch[(op.name, s)].data.ptr) for s in op.scratch}
        pack = launch.args[0]
        maps = {}
        for fi, f in enumerate(pack.fields):
            if isinstance(f, TensorMapField):
                maps[fi] = tensormap.encode(f, plan.tensormap_dims[fi], values[f.param])
        blob_bytes, rows = pack_bytes(pack, op, Bindings(tuple(values), names, scratch, maps), member_names(launch))
        self.packed.append((plan, blob_bytes, rows))
        blob = (ctypes.c_ubyte * len(blob_bytes)).from_buffer_copy(blob_bytes)
        params = (ctypes.c_void_p * 1)(ctypes.addressof(blob))
        if plan.launch_index == 0:  # a call's launches follow each other in the plan
            self.calls.append([])
        self.calls[-1].append(_Prepared(plan.call, func, plan.grid, plan.block, launch.shared_mem, blob, params,
                                        launch.pdl))

    def zero_scratch(self) -> None:
        cp = cupy()
        stream = cp.cuda.get_current_stream()
        for arr in self.scratch.values():
            cp.cuda.runtime.memsetAsync(arr.data.ptr, 0, arr.nbytes, stream.ptr)

    def launch_call(self, index: int) -> None:
        """Enqueue call ``index``'s launches on CuPy's current stream (no scratch zeroing)."""
        for p in self.calls[index]:
            launch(p.func, p.grid, p.block, p.shared_mem, p.params, p.label, pdl=p.pdl)

    def run_once(self) -> None:
        """Every call in order, each behind a scratch zeroing, in NVTX ranges; then synchronize."""
        cp = cupy()
        for i, call in enumerate(self.calls):
            with nvtx_range(call[0].label):
                self.zero_scratch()
                self.launch_call(i)
        cp.cuda.get_current_stream().synchronize()  # a faulting kernel raises here

    def time(self, *, iterations: int | None = None, mode: str = "cold") -> dict[str, Timing]:
        """Per-call Timing (label -> Timing); ``graph`` mode replays a captured graph of the call."""
        out = {}
        for i, call in enumerate(self.calls):
            if mode == "graph":
                self.zero_scratch()
            out[call[0].label] = time_gpu(lambda i=i: self.launch_call(i), name=call[0].label, mode=mode,
                                          iterations=iterations, setup=None if mode == "graph" else self.zero_scratch,
                                          min_time_s=0.1)
        return out
