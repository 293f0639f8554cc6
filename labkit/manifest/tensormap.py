"""Tensor maps: legality rules, dims derived from a buffer's extent, and the one place that
calls ``cuTensorMapEncodeTiled`` (CUDA Driver API, Tensor Map Object Management)."""

from .model import DTYPES, L2_PROMOTION_BYTES, SWIZZLE_BYTES, TensorMapField, dtype_bytes

MAP_BYTES = 128


def footprint_bytes(tm: TensorMapField, dims: tuple[int, ...]) -> int:
    """Bytes from the map's base to one past its last element."""
    elem = dtype_bytes(tm.dtype)
    strides = (elem, *tm.strides)
    return elem + sum((d - 1) * s for d, s in zip(dims, strides))


def derive_dims(tm: TensorMapField, buffer_bytes: int, offset: int) -> tuple[tuple[int, ...], dict[int, int]]:
    """Replace each 0 in ``dims`` by the largest count that keeps the map inside the buffer.

    Returns (dims, {index: derived value}). A derived value of 0 means even one slab does not fit.
    """
    dims = list(tm.dims)
    derived = {}
    elem = dtype_bytes(tm.dtype)
    strides = (elem, *tm.strides)
    for i, d in enumerate(tm.dims):
        if d != 0:
            continue
        inner = elem + sum((dj - 1) * sj for j, (dj, sj) in enumerate(zip(dims, strides)) if j != i and dj > 0)
        room = buffer_bytes - offset - inner
        dims[i] = derived[i] = max(0, room // strides[i] + 1) if room >= 0 else 0
    return tuple(dims), derived


def check(tm: TensorMapField) -> list[tuple[str, str]]:
    """Driver rules that need no buffer: (sub-path, problem) pairs; empty when legal."""
    out = []
    rank = len(tm.dims)
    if not 1 <= rank <= 5:
        out.append(("dims", f"rank {rank}: expected 1..5 dimensions"))
        return out
    if len(tm.strides) != rank - 1:
        out.append(("strides", f"{len(tm.strides)} entries: expected rank - 1 = {rank - 1} (innermost omitted)"))
    if len(tm.box) != rank:
        out.append(("box", f"{len(tm.box)} entries: expected rank = {rank}"))
    if len(tm.element_strides) != rank:
        out.append(("element_strides", f"{len(tm.element_strides)} entries: expected rank = {rank}"))
    for i, d in enumerate(tm.dims):
        if d > 2**32:
            out.append((f"dims[{i}]", f"{d} > 2^32"))
    for i, s in enumerate(tm.strides):
        if s % 16 or s >= 2**40 or s == 0:
            out.append((f"strides[{i}]", f"{s} B: expected a non-zero multiple of 16 below 2^40"))
    for i, b in enumerate(tm.box):
        if not 1 <= b <= 256:
            out.append((f"box[{i}]", f"{b}: expected 1..256"))
    for i, e in enumerate(tm.element_strides):
        if not 1 <= e <= 8:
            out.append((f"element_strides[{i}]", f"{e}: expected 1..8"))
    if tm.box:
        inner = tm.box[0] * dtype_bytes(tm.dtype)
        if inner % 16:
            out.append(("box[0]", f"{tm.box[0]} x {dtype_bytes(tm.dtype)} B = {inner} B: expected a multiple of 16 B"))
        if tm.swizzle and inner > tm.swizzle:
            out.append(("box[0]", f"inner box {inner} B exceeds the {tm.swizzle} B swizzle span"))
    if DTYPES[tm.dtype][1] is None:
        out.append(("dtype", f"{tm.dtype} has no CUtensorMapDataType"))
    return out


def encode(tm: TensorMapField, dims: tuple[int, ...], address: int) -> bytes:
    """Encode the 128-byte CUtensorMap for ``address`` (needs a CUDA driver).

    Raises:
        LaunchError: the driver rejected the map (the message names the call).
    """
    from .. import _deps
    from ..cuda import check as check_cu

    cu = _deps.require("cuda.bindings.driver")
    if address % 16:
        from ..errors import LaunchError

        raise LaunchError(f"tensor map base 0x{address:x} is not 16-byte aligned")
    rank = len(dims)
    tmap = check_cu(cu.cuTensorMapEncodeTiled(
        cu.CUtensorMapDataType(DTYPES[tm.dtype][1]), rank, address,
        [cu.cuuint64_t(d) for d in dims], [cu.cuuint64_t(s) for s in tm.strides],
        [cu.cuuint32_t(b) for b in tm.box], [cu.cuuint32_t(e) for e in tm.element_strides],
        cu.CUtensorMapInterleave(0), cu.CUtensorMapSwizzle(SWIZZLE_BYTES[tm.swizzle]),
        cu.CUtensorMapL2promotion(L2_PROMOTION_BYTES[tm.l2_promotion]), cu.CUtensorMapFloatOOBfill(0)),
        f"cuTensorMapEncodeTiled(dims={list(dims)}, strides={list(tm.strides)}, box={list(tm.box)})")
    import ctypes

    raw = ctypes.string_at(tmap.getPtr(), MAP_BYTES)
    return bytes(raw)
