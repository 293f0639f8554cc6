"""Decode inputs on the host: random calls that exercise the page table, and the checks every call
passes before a launch (a page id past the pool, a seq_len past the table, ragged q tokens)."""

from dataclasses import dataclass

import numpy as np

from ...errors import ArgumentError
from .geometry import DecodeGeometry

# The kernels round a sequence up to whole stages in 32-bit ints, (seq_len + tokens_per_stage - 1) / tokens_per_stage;
# a stage takes at most 256 tokens (8 warps x 32 keys), so past this the count wraps negative and every row is 0.
MAX_SEQ_LEN = (1 << 31) - 256

@dataclass(frozen=True)
class DecodeInputs:
    """Host arrays of one call (bf16 as uint16 words). ``k``/``v`` are [pages, Hkv, P, D] views of the
    pool whatever its layout; ``pool`` holds the buffer(s) as the kernel's maps see them."""

    geometry: DecodeGeometry
    q: np.ndarray  # [batch * max_q_len, Hq, D] uint16 (bf16)
    k: np.ndarray  # [pages, Hkv, P, D] uint16
    v: np.ndarray
    pool: dict  # buffer name -> array (plain: k_pool, v_pool; interleaved: kv)
    page_table: np.ndarray  # [batch, max_pages] int32
    seq_lens: np.ndarray  # [batch] int32
    cu_seqlens_q: np.ndarray  # [batch + 1] int32

    @property
    def q_lens(self) -> np.ndarray:
        return np.diff(self.cu_seqlens_q)


def _bf16(x: np.ndarray) -> np.ndarray:
    """Round-to-nearest-even f32 -> bf16 words."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_to_f32(words: np.ndarray) -> np.ndarray:
    """bf16 words -> float32 (exact), NumPy or CuPy alike."""
    return (words.astype(np.uint32) << 16).view(np.float32)


def check_call(g: DecodeGeometry, page_table, seq_lens, cu_seqlens_q) -> None:
    """Refuse a call the kernel would read wrongly; each message names the entry and the value."""
    table, lens, cu = (np.asarray(a) for a in (page_table, seq_lens, cu_seqlens_q))
    if table.shape != (g.batch, g.max_pages):
        raise ArgumentError(f"page_table shape {list(table.shape)}: expected [{g.batch}, {g.max_pages}]")
    if lens.shape != (g.batch,) or cu.shape != (g.batch + 1,):
        raise ArgumentError(f"seq_lens shape {list(lens.shape)} / cu_seqlens_q shape {list(cu.shape)}: expected "
                            f"[{g.batch}] / [{g.batch + 1}]")
    if cu[0] != 0:
        raise ArgumentError(f"cu_seqlens_q[0] = {cu[0]}: expected 0")
    for b in range(g.batch):
        q_len = int(cu[b + 1] - cu[b])
        if not 1 <= q_len <= g.max_q_len:
            raise ArgumentError(f"cu_seqlens_q[{b + 1}] - cu_seqlens_q[{b}] = {q_len}: expected 1..{g.max_q_len} "
                                "query tokens")
        n = int(lens[b])
        if not q_len <= n <= min(g.max_kv_len, MAX_SEQ_LEN):
            most = (f"max_pages x page_size = {g.max_pages} x {g.page_size}" if g.max_kv_len <= MAX_SEQ_LEN else
                    "2**31 - 256: the kernels count a sequence's stages in 32-bit ints")
            raise ArgumentError(f"seq_lens[{b}] = {n}: expected {q_len}..{min(g.max_kv_len, MAX_SEQ_LEN)} (q_len.."
                                f"{most})")
        used = table[b, : -(-n // g.page_size)]
        bad = np.flatnonzero((used < 0) | (used >= g.num_pages))
        if bad.size:
            j = int(bad[0])
            raise ArgumentError(f"page_table[{b}][{j}] = {int(used[j])}: expected a page id in 0..{g.num_pages - 1} "
                                f"(seq_lens[{b}] = {n} uses {used.size} pages)")
    if int(cu[-1]) > g.q_tokens:
        raise ArgumentError(f"cu_seqlens_q[{g.batch}] = {int(cu[-1])}: more query tokens than the q buffer's "
                            f"{g.q_tokens} rows")


def make_inputs(g: DecodeGeometry, *, seq_lens=None, q_lens=None, seed: int = 0, share_pages: bool = True
                ) -> DecodeInputs:
    """N(0, 1) q, k, v (bf16), a shuffled page table over the pool, ragged lengths.

    Args:
        seq_lens: KV tokens per sequence (default: random in 1..max_kv_len, the first one max_kv_len).
        q_lens: query tokens per sequence (default: max_q_len each).
        share_pages: the second sequence starts with the first one's first page (a shared prefix).
    """
    rng = np.random.default_rng(seed)
    if seq_lens is None:
        seq_lens = rng.integers(1, g.max_kv_len + 1, g.batch)
        seq_lens[0] = g.max_kv_len
    q_lens = np.full(g.batch, g.max_q_len) if q_lens is None else np.asarray(q_lens)
    if np.shape(seq_lens) != (g.batch,) or q_lens.shape != (g.batch,):
        raise ArgumentError(f"seq_lens shape {list(np.shape(seq_lens))} / q_lens shape {list(q_lens.shape)}: expected "
                            f"[{g.batch}] each (one per sequence)")
    for name, lens in (("seq_lens", np.asarray(seq_lens)), ("q_lens", q_lens)):  # before any cast can wrap or cut
        if lens.dtype.kind not in "iu":
            raise ArgumentError(f"{name} {lens.tolist()!r}: expected integers")
        bad = np.flatnonzero((lens < 1) | (lens > np.iinfo(np.int32).max))
        if bad.size:
            raise ArgumentError(f"{name}[{int(bad[0])}] = {int(lens[bad[0]])}: expected 1..{np.iinfo(np.int32).max}")
    seq_lens = np.maximum(np.asarray(seq_lens), q_lens).astype(np.int32)  # a sequence holds its own query tokens
    cu = np.concatenate([[0], np.cumsum(q_lens)]).astype(np.int32)
    # the lengths and q tokens first (an empty table passes the page checks): a length past the table is one line
    check_call(g, np.zeros((g.batch, g.max_pages), np.int32), seq_lens, cu)
    pages_used = -(-seq_lens // g.page_size)
    order = rng.permutation(g.num_pages)
    table = np.full((g.batch, g.max_pages), -1, np.int32)  # entries past a sequence's pages are never read
    at = 0
    for b in range(g.batch):
        n = int(pages_used[b])
        take = order[np.arange(at, at + n) % g.num_pages]  # wraps: pages shared when the pool is small
        at += n
        table[b, :n] = take
    if share_pages and g.batch > 1:
        table[1, 0] = table[0, 0]
    q = _bf16(rng.standard_normal((g.q_tokens, g.heads_q, g.head_dim)).astype(np.float32))
    shape = g.pool_shape()
    if g.layout == "plain":
        k = _bf16(rng.standard_normal(shape).astype(np.float32))
        v = _bf16(rng.standard_normal(shape).astype(np.float32))
        pool = {"k_pool": k, "v_pool": v}
    else:
        kv = _bf16(rng.standard_normal(shape).astype(np.float32))
        k = kv[:, 1, :, :, 0, :].transpose(0, 2, 1, 3)  # [pages, Hkv, P, D] views of the seed's layout
        v = kv[:, 1, :, :, 1, :].transpose(0, 2, 1, 3)
        pool = {"kv": kv}
    check_call(g, table, seq_lens, cu)
    return DecodeInputs(g, q, k, v, pool, table, seq_lens, cu)
