"""Exact decode attention in float64 on the host: gather each sequence's pages, causal softmax."""

import numpy as np

from .inputs import DecodeInputs, bf16_to_f32


def decode_reference(x: DecodeInputs, sm_scale: float, *, magnitude: bool = False) -> np.ndarray:
    """Output rows [q_tokens, Hq, D] in float64 for the tokens the call has (others: NaN).

    ``magnitude``: sum_k p_k |v_k| instead (the scale of the terms behind each output element: an
    error bound for bf16 P must use it where the terms cancel)."""
    g = x.geometry
    q = bf16_to_f32(x.q).astype(np.float64)
    out = np.full(q.shape, np.nan)
    for b in range(g.batch):
        n, lo, hi = int(x.seq_lens[b]), int(x.cu_seqlens_q[b]), int(x.cu_seqlens_q[b + 1])
        pages = x.page_table[b, : -(-n // g.page_size)]
        k = bf16_to_f32(x.k[pages]).astype(np.float64)  # [pages, Hkv, P, D]
        v = bf16_to_f32(x.v[pages]).astype(np.float64)
        v = np.abs(v) if magnitude else v
        k = k.transpose(1, 0, 2, 3).reshape(g.heads_kv, -1, g.head_dim)[:, :n]  # [Hkv, n, D]
        v = v.transpose(1, 0, 2, 3).reshape(g.heads_kv, -1, g.head_dim)[:, :n]
        q_len = hi - lo
        for i in range(q_len):
            visible = n - q_len + i + 1  # causal: token i sits at position n - q_len + i
            qi = q[lo + i].reshape(g.heads_kv, g.group, g.head_dim)
            s = np.einsum("hgd,hnd->hgn", qi, k[:, :visible]) * sm_scale
            p = np.exp(s - s.max(axis=-1, keepdims=True))
            p /= p.sum(axis=-1, keepdims=True)
            out[lo + i] = np.einsum("hgn,hnd->hgd", p, v[:, :visible]).reshape(g.heads_q, g.head_dim)
    return out


def reference_and_bound(x: DecodeInputs) -> tuple[np.ndarray, np.ndarray]:
    """Exact attention for ``x``'s call (scale head_dim ** -0.5) and each element's error bound, NaN past its q tokens.

    The bound: the output is rounded to bf16 (2^-9 relative), and the tensor-core kernel rounds P to bf16 before P.V
    (2^-9 per term, and terms can cancel), so it scales with the terms' magnitude M = sum_k p_k |v_k|, not |ref|:
    |out - ref| <= 2^-8 (|ref| + M) + 1e-3 (the fp32 softmax adds ~1e-6); tests/gpu/test_decode_gpu.py states it too.
    """
    scale = x.geometry.head_dim ** -0.5
    ref = decode_reference(x, scale)
    return ref, 2.0 ** -8 * (np.abs(ref) + decode_reference(x, scale, magnitude=True)) + 1e-3
