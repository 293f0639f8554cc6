"""Sage2 on the GPU at hand: the five prep kernels and the fused mainloop, one-shot or phase by phase.

``Sage2Plan(inputs)`` compiles (NVRTC, cached) and allocates once; ``run()`` is the one-shot
call; ``steps()`` gives the same launches one at a time under the seed's phase names, which
``timing.Pipeline`` times (each phase its own NVTX range and events).
"""

import functools
import math

import numpy as np

from ...cuda import cupy, require_gpu
from ...errors import ArgumentError
from ...kernels import kernel_path, load_module
from ...report.model import PHASE_GROUPS
from ...timing import Pipeline, PipelineTiming, nvtx_range
from ...values import check_int
from .inputs import Inputs
from .schedule import Schedule, ceil_div

PHASES = ("k_mean_and_smoothing_preparation", "q_int8_quantization", "k_int8_subtract_mean_quantization",
          "v_transpose_pad_permute", "v_scale_fp8_quantization", "fused_mainloop")
MEAN_CHUNK = 512  # tokens per CTA of k_mean_partial (CHUNK in k_mean.cu)
KERNELS = {name: kernel_path(__file__, f"{name}.cu") for name in ("k_mean", "quant_int8", "v_prep", "attn_fwd")}


def build_options(head_dim: int, dtype: str, schedule: Schedule) -> tuple[str, ...]:
    return (f"-DHEAD_DIM={head_dim}", f"-DIN_BF16={int(dtype == 'bf16')}", *schedule.defines())


def mainloop_occupancy(schedule: Schedule, head_dim: int, dtype: str = "bf16") -> dict:
    """Registers per thread, CTAs per SM and what limits them for the mainloop build of ``schedule`` on sm_90
    (an H100 / H200): NVRTC compiles the cubin and its ELF gives the registers, so no GPU is needed."""
    from ...kernels import compile_cubin
    from ...sched.occupancy import cubin_occupancy

    if schedule.mainloop == "sm90":
        from . import sm90

        source, arch, entry, hd = sm90.SOURCE, sm90.ARCH, sm90.ENTRY, 128
    else:
        source, arch, entry, hd = KERNELS["attn_fwd"], "sm_90", "attn_fwd", head_dim
    cubin = compile_cubin(source, arch=arch, options=build_options(hd, dtype, schedule))
    occ = cubin_occupancy(cubin.image, kernel=entry, arch="sm_90", threads_per_cta=schedule.threads_per_cta,
                          dynamic_smem_bytes=schedule.dynamic_smem_bytes(hd))
    out = {"cubin_arch": arch, "registers_per_thread": occ.registers_per_thread, "ctas_per_sm": occ.ctas_per_sm,
           "limiter": occ.limiter, "warps_per_sm": occ.warps_per_sm, "smem_per_cta_bytes": occ.smem_per_cta_bytes}
    if schedule.mainloop == "sm90":
        out["setmaxnreg"] = dict(sm90.SETMAXNREG)
    return out


class Sage2Plan:
    """Compiled kernels and allocated intermediates for one input geometry.

    Args:
        inputs: from ``check_inputs``.
        schedule: mainloop tiles (default: the seed's 128/64/32).
        sm_scale: softmax scale; default ``head_dim ** -0.5`` of the given (unpadded) head_dim.
    """

    def __init__(self, inputs: Inputs, schedule: Schedule = Schedule(), sm_scale: float | None = None, *,
                 timeline: bool = False):
        require_gpu("the Sage2 kernels")
        cp = cupy()
        self.inputs = x = inputs
        self.schedule = s = schedule
        if s.mainloop == "sm90":  # before anything is compiled or allocated
            from ...device import describe

            if timeline:
                raise ArgumentError("the sm90 mainloop has no per-CTA recorder yet (timeline=True): use the seed "
                                    "schedule")
            arch = describe().arch
            if arch != "sm_90":
                raise ArgumentError(f"the sm90 mainloop is built for sm_90a (wgmma, setmaxnreg): this GPU is {arch}; "
                                    "use the seed schedule")
        # the sm90 mainloop's tiles are 128-byte rows: head_dim 64 pads to 128 as 72..120 do (zero channels)
        self.kernel_head_dim = hd = 128 if schedule.mainloop == "sm90" else inputs.kernel_head_dim
        self.sm_scale = sm_scale if sm_scale is not None else inputs.head_dim ** -0.5
        opts = build_options(hd, inputs.dtype, schedule) + (("-DLABKIT_TIMELINE",) if timeline else ())
        self._options = opts
        self.modules = {name: load_module(path, options=opts) for name, path in KERNELS.items()
                        if not (name == "attn_fwd" and s.mainloop == "sm90")}
        b, hq, hk = x.batch, x.heads_q, x.heads_kv
        self.padded_q_len = ceil_div(x.q_len, s.cta_q) * s.cta_q
        self.padded_kv_len = ceil_div(x.kv_len, s.cta_k) * s.cta_k
        self.mean_chunks = ceil_div(x.kv_len, MEAN_CHUNK)
        self.k_mean_partial = cp.empty((b, hk, self.mean_chunks, hd), cp.float32)
        self.v_amax_partial = cp.empty_like(self.k_mean_partial)
        self.k_mean = cp.empty((b, hk, hd), cp.float32)
        self.v_amax = cp.empty((b, hk, hd), cp.float32)  # max |V| per channel, beside K's mean
        self.q8 = cp.empty((b, hq, self.padded_q_len, hd), cp.int8)
        self.q_scale = cp.empty((b, hq, self.padded_q_len // s.warp_q), cp.float32)
        self.k8 = cp.empty((b, hk, self.padded_kv_len, hd), cp.int8)
        self.k_scale = cp.empty((b, hk, self.padded_kv_len // s.cta_k), cp.float32)
        self.v8 = cp.empty((b, hd, hk, self.padded_kv_len), cp.uint8)
        self.v8_lo = cp.empty_like(self.v8) if s.pv_terms == 2 else None
        self.v_scale = cp.empty((b, hk, hd), cp.float32)
        self.out = cp.empty(x.q.shape, x.q.dtype)
        self.dynamic_smem_bytes = s.dynamic_smem_bytes(hd)
        self._sm90 = None
        if s.mainloop == "sm90":
            from .sm90 import Sm90Mainloop

            self._sm90 = Sm90Mainloop(self, opts)
        else:
            f = self.modules["attn_fwd"].get_function("attn_fwd")
            if self.dynamic_smem_bytes > 48 * 1024:  # above the default limit the kernel must opt in
                f.max_dynamic_shared_size_bytes = self.dynamic_smem_bytes
            self._attn = f
        # per-CTA records of the mainloop (labkit.sched.Timeline), written by the instrumented build only
        self.timeline = cp.zeros((ceil_div(x.q_len, s.cta_q) * hq * b, 6), dtype=cp.uint64) if timeline else None
        self._prepare_launches()

    # ---- the phases, in pipeline order ----------------------------------------------------
    # Kernels and arguments are resolved once here, so a phase's host cost is the launch itself.
    def _prepare_launches(self) -> None:
        x, s, hd, i32 = self.inputs, self.schedule, self.kernel_head_dim, np.int32
        k_strides, q_strides, v_strides = (tuple(map(np.int64, x.strides(a))) for a in (x.k, x.q, x.v))
        fn = {name: mod.get_function for name, mod in self.modules.items()}
        q_tiles, k_tiles = self.padded_q_len // s.warp_q, self.padded_kv_len // s.cta_k
        v_tiles = (self.padded_kv_len // 64, x.heads_kv, x.batch)
        v_args = (x.v, *v_strides, i32(x.kv_len), i32(x.head_dim), self.v_amax, self.v8)
        v_transpose = ((fn["v_prep"]("v_transpose_pad_permute"), v_tiles, (256,), v_args) if self.v8_lo is None else
                       (fn["v_prep"]("v_transpose_pad_permute_x2"), v_tiles, (256,), v_args + (self.v8_lo,)))
        self._launch = {  # seed phase name -> [(kernel, grid, block, args)]
            "k_mean_and_smoothing_preparation": [  # K's mean and V's |v| maximum: one pass over K and V
                (fn["k_mean"]("k_mean_partial"), (self.mean_chunks, x.heads_kv, x.batch), (256,),
                 (x.k, *k_strides, x.v, *v_strides, i32(x.kv_len), i32(x.head_dim), self.k_mean_partial,
                  self.v_amax_partial)),
                (fn["k_mean"]("k_mean_finish"), (x.heads_kv, x.batch), (hd,),
                 (self.k_mean_partial, self.v_amax_partial, i32(self.mean_chunks), i32(x.kv_len), self.k_mean,
                  self.v_amax))],
            "q_int8_quantization": [
                (fn["quant_int8"]("q_int8_quant"), (q_tiles, x.heads_q, x.batch), (min(s.warp_q, 64) * hd // 16,),
                 (x.q, *q_strides, i32(x.q_len), i32(x.head_dim), self.q8, self.q_scale))],
            "k_int8_subtract_mean_quantization": [
                (fn["quant_int8"]("k_int8_sub_mean_quant"), (k_tiles, x.heads_kv, x.batch),
                 (min(s.cta_k, 64) * hd // 16,),
                 (x.k, *k_strides, i32(x.kv_len), i32(x.head_dim), self.k_mean, self.k8, self.k_scale))],
            "v_transpose_pad_permute": [v_transpose],  # quantizes to e4m3 as it transposes
            "v_scale_fp8_quantization": [
                (fn["v_prep"]("v_scale_fp8_quant"), (ceil_div(self.v_scale.size, 256),), (256,),
                 (self.v_amax, i32(self.v_scale.size), self.v_scale))],
        }
        self._mainloop_args = self._attn_args(x.q_len, x.kv_len, self.out)

    def run_phase(self, phase: str) -> None:
        """One prep phase by its seed name (``PHASES``); ``fused_mainloop`` is ``mainloop()``."""
        for f, grid, block, args in self._launch[phase]:
            f(grid, block, args)

    def _attn_args(self, ql: int, kl: int, o) -> tuple:
        x, s = self.inputs, self.schedule
        ob, on, oh = x.strides(o)
        v8_lo = np.uint64(0) if self.v8_lo is None else self.v8_lo  # a null pointer the kernel never reads
        extra = () if self.timeline is None else (self.timeline,)
        return ((ceil_div(ql, s.cta_q), x.heads_q, x.batch), (s.threads_per_cta,),
                (self.q8, self.k8, self.v8, v8_lo, self.q_scale, self.k_scale, self.v_scale, o, np.int64(ob),
                 np.int64(on), np.int64(oh), np.int32(ql), np.int32(kl), np.int32(self.padded_q_len),
                 np.int32(self.padded_kv_len), np.int32(x.heads_kv), np.int32(x.head_dim),
                 np.float32(self.sm_scale * math.log2(math.e)), *extra))

    def mainloop(self, q_len: int | None = None, kv_len: int | None = None, out=None) -> None:
        """The fused kernel; ``q_len``/``kv_len`` below the prepared lengths run on the same
        quantized data (rows/keys beyond are ignored)."""
        default = q_len is None and kv_len is None and out is None
        ql = self.inputs.q_len if q_len is None else check_int(q_len, what="q_len", lo=1, hi=self.inputs.q_len)
        kl = self.inputs.kv_len if kv_len is None else check_int(kv_len, what="kv_len", lo=1, hi=self.inputs.kv_len)
        o = self.out if out is None else out
        if self._sm90 is not None:
            self._sm90.launch(ql, kl, o)
            return
        args = self._mainloop_args if default else self._attn_args(ql, kl, o)
        if self.timeline is not None:
            self.timeline.fill(0)  # records of this call only (a smaller grid leaves no stale CTAs behind)
        self._attn(*args, shared_mem=self.dynamic_smem_bytes)

    def read_timeline(self):
        """The last mainloop call's per-CTA records as a ``labkit.sched.Timeline`` (instrumented plans only)."""
        from ...device import describe
        from ...errors import LabkitError
        from ...kernels import compile_cubin
        from ...sched import Timeline, cubin_occupancy

        if self.timeline is None:
            raise LabkitError("this Sage2Plan was built without timeline=True: no per-CTA records")
        dev = describe()
        cubin = compile_cubin(KERNELS["attn_fwd"], arch=dev.arch, options=self._options)
        occ = cubin_occupancy(cubin.image, threads_per_cta=self.schedule.threads_per_cta,
                              dynamic_smem_bytes=self.dynamic_smem_bytes)
        records = self.timeline.get().astype(np.int64)
        return Timeline(records[records[:, 3] > 0], sms=dev.sm_count, ctas_per_sm=occ.ctas_per_sm)

    def steps(self) -> list[tuple[str, object]]:
        """(seed phase name, call) in pipeline order: the one name each phase has."""
        return [(name, functools.partial(self.run_phase, name)) for name in PHASES[:-1]] + \
            [(PHASES[-1], self.mainloop)]

    # ---- the two call paths ------------------------------------------------------------------
    def run(self):
        """One-shot call: every kernel back to back in one NVTX range; returns the output
        (a view of ``self.out``: a torch tensor when the inputs were torch tensors)."""
        with nvtx_range("sage2/one_shot"):
            for _, fn in self.steps():
                fn()
        return self.output()

    def output(self):
        """``self.out`` as the caller passed the inputs: CuPy (bf16 as uint16 words) or torch."""
        if not self.inputs.torch_out:
            return self.out
        import torch

        cp = cupy()
        t = torch.from_dlpack(self.out.view(cp.int16))
        return t.view(torch.bfloat16 if self.inputs.dtype == "bf16" else torch.float16)

    def run_phases(self, *, iterations: int = 10, warmup: int = 3, mode: str = "cold") -> PipelineTiming:
        """Phase by phase: each phase in its own NVTX range and event pair (groups as the seed)."""
        return Pipeline(self.steps(), groups=PHASE_GROUPS).run(iterations=iterations, warmup=warmup, mode=mode)
