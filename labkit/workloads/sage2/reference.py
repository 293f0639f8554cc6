"""References for Sage2: exact fp32 attention (CuPy, blockwise) and the quantizers' math (NumPy).

The quantizer references repeat the kernels' float operations one for one (fp32 multiply by
127/amax, round half to even, saturate; e4m3 round to nearest even, saturate at 448), so
the kernels must match them exactly. ``accuracy`` gives the paper's metrics.
"""

import math

import numpy as np

from ...cuda import cupy

PERM16 = np.array([0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15])
CHECKSUM_DEFINITION = ("sum of every output element (upcast to fp32) accumulated in fp64 and rounded to fp32; "
                       "the seed's checksums are integer-valued fp32 sums of the same kind")


def to_bhnd(x, layout: str):
    """[B, N, H, D] view of an NHD or HND array."""
    return x if layout == "NHD" else x.transpose(0, 2, 1, 3)


def attention_ref(q, k, v, *, sm_scale: float, layout: str = "NHD", block: int = 2048):
    """Exact softmax attention in fp32 on the GPU (query blocks of ``block`` rows).

    Args: fp32 CuPy arrays in ``layout``; grouped-query heads allowed. Returns fp32 NHD.
    """
    cp = cupy()
    q, k, v = (to_bhnd(a, layout) for a in (q, k, v))
    b, nq, hq, d = q.shape
    hk = k.shape[2]
    out = cp.empty((b, nq, hq, d), cp.float32)
    for bi in range(b):
        for h in range(hq):
            kh = k[bi, :, h // (hq // hk), :]
            vh = v[bi, :, h // (hq // hk), :]
            for s in range(0, nq, block):
                sc = (q[bi, s:s + block, h, :] @ kh.T) * np.float32(sm_scale)
                sc -= sc.max(axis=1, keepdims=True)
                p = cp.exp(sc)
                out[bi, s:s + block, h, :] = (p @ vh) / p.sum(axis=1, keepdims=True)
    return out


def accuracy(out, ref) -> dict:
    """cos similarity, relative L1, RMSE, max |err| and NaN count over all elements (fp64 sums)."""
    cp = cupy()
    o, r = out.astype(cp.float64).ravel(), ref.astype(cp.float64).ravel()
    diff = o - r
    return {"cos": float(o @ r / (cp.linalg.norm(o) * cp.linalg.norm(r))),
            "rel_l1": float(cp.abs(diff).sum() / cp.abs(r).sum()),
            "rmse": float(cp.sqrt((diff * diff).mean())), "max_abs": float(cp.abs(diff).max()),
            "nan": int(cp.isnan(o).sum()), "elements": int(o.size)}


# sage2-algorithm.md 9: the 8-bit kernels reach cos 0.9992 against exact attention on N(0, 1) inputs, their worst
# case; a wrong kernel (a row left zero, another head's values) falls below this, and no NaN is right.
MIN_COS = 0.999


def accuracy_line(acc: dict) -> str:
    """``accuracy``'s numbers as a progress line says them (its dict, printed whole, ran to 310 characters)."""
    return (f"accuracy against exact fp32 attention: cos {acc['cos']:.6f}, rel-L1 {acc['rel_l1']:.4f}, RMSE "
            f"{acc['rmse']:.2e}, max |err| {acc['max_abs']:.2e}, {acc['nan']} NaN of {acc['elements']:,} elements")


def check_accuracy(acc: dict, what: str) -> None:
    """Refuse to go on timing a kernel whose output is wrong: any NaN, or cos under ``MIN_COS``.

    Raises:
        LabkitError: naming ``what``, the bound and the numbers; the caller has timed nothing yet.
    """
    from ...errors import LabkitError

    if acc["nan"] or not acc["cos"] >= MIN_COS:
        raise LabkitError(f"{what}: check failed before timing (expected no NaN and cos >= {MIN_COS}); "
                          f"{accuracy_line(acc)}")


# Each output row's relative L2 error may reach this, whatever the inputs' bias or the P.V terms: a NumPy emulation of
# the kernels' roundings (int8 Q and K per block after K smoothing, e4m3 P~ and V) on N(0, 1) inputs puts its worst row
# near 0.05 (rel-L1 0.039, as the kernels measure), while a row left zero, another row's, or 15 % off exceeds it
# (tests/unit/test_sage2_cpu.py, test_row_bound_sits_between_the_roundings_and_a_wrong_row); the H200's worst row over
# the GPU tests' cases is 0.061 (data/runs/20261205T034000Z-gpu_tests_row_bound).
ROW_REL_L2_BOUND = 0.1


def worst_row(out, ref) -> tuple[float, tuple[int, ...]]:
    """The largest relative L2 error of one output row (the head_dim values of one batch, token and head) and that
    row's index in ``out``'s leading axes; NaN rows count as the worst. ``accuracy`` sums over every element, so one
    row that were zero or another head's is lost in it; here it is the result. NumPy or CuPy arrays, fp64 sums."""
    xp = np if isinstance(out, np.ndarray) else cupy()
    o, r = out.astype(xp.float64), ref.astype(xp.float64)
    rows = xp.linalg.norm(o - r, axis=-1) / xp.maximum(xp.linalg.norm(r, axis=-1), 1e-30)
    rows = xp.where(xp.isnan(rows), xp.inf, rows)
    at = int(rows.argmax())
    return float(rows.ravel()[at]), tuple(int(i) for i in np.unravel_index(at, rows.shape))


def checksum(out_f32) -> float:
    cp = cupy()
    return float(np.float32(float(out_f32.astype(cp.float64).sum())))


# ---- quantizer references (NumPy, [B, H, N, D] fp32 inputs) ------------------------------------
def int8_groups(x: np.ndarray, rows: int, npad: int, hd: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-group symmetric int8: groups of ``rows`` tokens x all channels, zero rows to ``npad``."""
    b, h, n, d = x.shape
    xp = np.zeros((b, h, npad, hd), np.float32)
    xp[:, :, :n, :d] = x
    g = xp.reshape(b, h, npad // rows, rows * hd)
    amax = np.maximum(np.float32(1e-7), np.abs(g).max(axis=-1)).astype(np.float32)
    inv = (np.float32(127.0) / amax).astype(np.float32)
    q = np.clip(np.rint((g * inv[..., None]).astype(np.float32)), -128, 127).astype(np.int8)
    return q.reshape(b, h, npad, hd), (amax / np.float32(127.0)).astype(np.float32)


def e4m3_round(x: np.ndarray) -> np.ndarray:
    """fp32 -> nearest e4m3 value (ties to even), saturating at +-448; returned as fp32."""
    x = x.astype(np.float32)
    a = np.abs(x).astype(np.float64)
    e = np.floor(np.log2(np.where(a > 0, a, 1.0)))
    e = np.clip(e, -6, 8)  # below 2^-6: subnormal spacing 2^-9
    quantum = np.exp2(e - 3)
    r = np.minimum(np.rint(a / quantum) * quantum, 448.0)
    return (np.sign(x) * r).astype(np.float32)


def e4m3_bits(x: np.ndarray) -> np.ndarray:
    """Encode exact e4m3 values (from ``e4m3_round``) as bytes."""
    x = x.astype(np.float64)
    sign = np.signbit(x).astype(np.uint8) << 7  # -0.0 (a negative value rounded to zero) is 0x80, as cvt gives
    a = np.abs(x)
    e = np.floor(np.log2(np.where(a > 0, a, 1.0))).astype(int)
    normal = a >= 2.0 ** -6
    exp_field = np.where(normal, e + 7, 0)
    mant = np.where(normal, np.rint((a / np.exp2(e) - 1.0) * 8), np.rint(a / 2.0 ** -9)).astype(int)
    bits = (exp_field << 3) | mant
    return (sign | np.where(a == 0, 0, bits).astype(np.uint8)).astype(np.uint8)


def v_prep_ref(v: np.ndarray, npad: int, hd: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """V [B, H, N, D] fp32 -> (vt [B, D, H, Npad] fp32 permuted, v8 bytes, v8_lo bytes, v_scale [B, H, D]).

    v8_lo is the second term of the two-term split (``v_transpose_pad_permute_x2``): e4m3(16 (x - v8)).
    """
    b, h, n, d = v.shape
    vp = np.zeros((b, h, npad, hd), np.float32)
    vp[:, :, :n, :d] = v
    pos = (np.arange(npad) // 16) * 16 + PERM16[np.arange(npad) % 16]  # position p holds token pos[p]
    vt = vp[:, :, pos, :].transpose(0, 3, 1, 2)  # [B, D, H, Npad]
    amax = np.maximum(np.float32(1e-7), np.abs(vt).max(axis=-1)).astype(np.float32)  # [B, D, H]
    inv = (np.float32(448.0) / amax).astype(np.float32)
    scaled = (vt * inv[..., None]).astype(np.float32)
    hi = e4m3_round(scaled)
    lo = e4m3_round((scaled - hi) * np.float32(16.0))
    return vt, e4m3_bits(hi), e4m3_bits(lo), (amax / np.float32(448.0)).astype(np.float32).transpose(0, 2, 1)


def sm_scale_log2(head_dim: int) -> float:
    return head_dim ** -0.5 * math.log2(math.e)
