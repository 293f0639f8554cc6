"""Sage2 inputs: check q, k, v before any launch and describe their geometry.

CuPy has no bf16 dtype, so bf16 tensors travel as ``uint16`` arrays of raw bf16 words
(``dtype="bf16"``); ``float16`` arrays are fp16. Torch tensors (bf16 or fp16) are accepted
and viewed through DLPack without a copy.
"""

from dataclasses import dataclass

import numpy as np

from ...cuda import cupy, require_gpu
from ...errors import ArgumentError

LAYOUTS = ("NHD", "HND")


@dataclass(frozen=True)
class Inputs:
    q: object  # cupy array, 16-bit words
    k: object
    v: object
    dtype: str  # bf16 | fp16
    layout: str
    batch: int
    q_len: int
    kv_len: int
    heads_q: int
    heads_kv: int
    head_dim: int  # as given
    torch_out: bool

    @property
    def kernel_head_dim(self) -> int:
        """64 stays 64; 64 < D <= 128 is zero-padded to 128 (as the public library does)."""
        return 64 if self.head_dim == 64 else 128

    def strides(self, x) -> tuple[int, int, int]:
        """(batch, token, head) element strides of a contiguous tensor in this layout."""
        s = [st // x.itemsize for st in x.strides]
        return (s[0], s[1], s[2]) if self.layout == "NHD" else (s[0], s[2], s[1])


def _as_cupy(x, name: str, dtype: str | None):
    cp = cupy()
    mod = type(x).__module__
    if mod.startswith("torch"):
        import torch

        if x.dtype not in (torch.bfloat16, torch.float16):
            raise ArgumentError(f"{name}: dtype {x.dtype}; expected torch.bfloat16 or torch.float16")
        if not x.is_cuda:
            raise ArgumentError(f"{name}: a CPU tensor; move it to the GPU first")
        if not x.is_contiguous():
            raise ArgumentError(f"{name}: not contiguous (strides {tuple(x.stride())}); call .contiguous()")
        kind = "bf16" if x.dtype == torch.bfloat16 else "fp16"
        return cp.from_dlpack(x.view(torch.int16)).view(cp.uint16 if kind == "bf16" else cp.float16), kind, True
    if not isinstance(x, cp.ndarray):
        raise ArgumentError(f"{name}: {type(x).__name__}; expected a CuPy array or a torch tensor on the GPU")
    if x.dtype == cp.float16:
        kind = "fp16"
    elif x.dtype == cp.uint16 and dtype in (None, "bf16"):
        kind = "bf16"
    else:
        raise ArgumentError(f"{name}: dtype {x.dtype}; expected float16, or uint16 holding bf16 words")
    if not x.flags.c_contiguous:
        raise ArgumentError(f"{name}: not contiguous (strides {x.strides}); make it contiguous first")
    return x, kind, False


def check_inputs(q, k, v, *, layout: str = "NHD", dtype: str | None = None) -> Inputs:
    """Validate q, k, v; raise ValueError naming the problem before anything launches.

    Args:
        layout: ``NHD`` ([B, N, H, D]) or ``HND`` ([B, H, N, D]).
        dtype: ``bf16`` to read uint16 CuPy arrays as bf16 words (the default for uint16).
    """
    if layout not in LAYOUTS:
        raise ArgumentError(f"layout {layout!r}; expected one of {LAYOUTS}")
    arrs = []
    for name, x in (("q", q), ("k", k), ("v", v)):
        if getattr(x, "ndim", None) != 4:
            raise ArgumentError(f"{name}: rank {getattr(x, 'ndim', '?')}; expected 4 ({layout})")
        arrs.append(_as_cupy(x, name, dtype))
    kinds = {a[1] for a in arrs}
    if len(kinds) != 1:
        raise ArgumentError(f"q, k, v dtypes differ ({[a[1] for a in arrs]}); expected one dtype")
    (qa, kind, is_torch), (ka, _, _), (va, _, _) = arrs

    def bnhd(x):
        b, a1, a2, d = x.shape
        return (b, a1, a2, d) if layout == "NHD" else (b, a2, a1, d)

    bq, nq, hq, dq = bnhd(qa)
    bk, nk, hk, dk = bnhd(ka)
    if ka.shape != va.shape:
        raise ArgumentError(f"k {tuple(ka.shape)} and v {tuple(va.shape)} differ; expected the same shape")
    if bq != bk or dq != dk:
        raise ArgumentError(f"q {tuple(qa.shape)} and k {tuple(ka.shape)}: batch and head_dim must match ({layout})")
    if min(nq, nk) == 0 or min(bq, hq, hk) == 0:
        raise ArgumentError(f"empty input: q {tuple(qa.shape)}, k {tuple(ka.shape)} ({layout}); N must be >= 1")
    if hq % hk:
        raise ArgumentError(f"{hq} query heads are not a multiple of {hk} kv heads (grouped-query attention)")
    if not (64 <= dq <= 128 and dq % 8 == 0):
        raise ArgumentError(f"head_dim {dq}; expected 64..128 and a multiple of 8 (64, 96, 128)")
    return Inputs(qa, ka, va, kind, layout, bq, nq, nk, hq, hk, dq, is_torch)


def random_inputs(batch: int, q_len: int, kv_len: int, heads_q: int, heads_kv: int, head_dim: int, *,
                  layout: str = "NHD", dtype: str = "bf16", seed: int = 0, k_bias: float = 0.0,
                  v_bias: float = 0.0):
    """Fresh N(0, 1) q, k, v (rounded to bf16/fp16) on the GPU; ``k_bias`` / ``v_bias`` add a
    per-channel offset drawn from N(0, bias) to K / V (K's is the case smoothing exists for)."""
    require_gpu("making Sage2 inputs")
    cp = cupy()
    rng = cp.random.default_rng(seed)

    def make(n, h, bias=0.0):
        shape = (batch, n, h, head_dim) if layout == "NHD" else (batch, h, n, head_dim)
        x = rng.standard_normal(shape, dtype=cp.float32)
        if bias:
            x += rng.standard_normal(head_dim, dtype=cp.float32) * bias
        return to_16bit(x, dtype)

    return make(q_len, heads_q), make(kv_len, heads_kv, k_bias), make(kv_len, heads_kv, v_bias)


def to_16bit(x, dtype: str):
    """fp32 CuPy array -> bf16 words (uint16, round to nearest even) or float16."""
    cp = cupy()
    if dtype == "fp16":
        return x.astype(cp.float16)
    bits = x.view(cp.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(cp.uint16)


def to_f32(x, dtype: str):
    """16-bit words -> fp32 (exact)."""
    cp = cupy()
    if dtype == "fp16" or x.dtype == cp.float16:
        return x.astype(cp.float32)
    return (x.astype(cp.uint32) << 16).view(cp.float32)


def np_to_f32(x: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "fp16" or x.dtype == np.float16:
        return x.astype(np.float32)
    return (x.astype(np.uint32) << 16).view(np.float32)
