"""A decode call's geometry, checked before anything is built or launched, and the kernel's build.

The numbers a paged-KV decode call needs (batch, heads, head_dim, page size, page-table width,
pool size, query tokens per sequence) as one frozen value; every rule the kernel relies on is
checked here, so bad geometry never reaches NVRTC or the GPU.
"""

import dataclasses
import math
import numbers
from dataclasses import dataclass

from ...errors import ArgumentError
from ...values import check_int

HEAD_DIMS = (128, 256)
MAX_POOL_BYTES = 1 << 40  # per pool buffer: the manifest reader takes at most this per buffer (manifest/parse.py)
PAGE_SIZES = (16, 32, 64)
LAYOUTS = ("plain", "interleaved")  # [pages, Hkv, P, D] K and V pools; trtllm-gen's kv[pages, 2, P, Hkv, 2, D]
WARPS = 4  # per CTA; the tensor-core kernel also builds with 8 (KernelBuild.warps)
MAX_ROWS = {128: 64, 256: 32}  # rows (q tokens x q heads per kv head) a CTA holds; more take row blocks
STAGE_BUDGET = 96 * 1024  # bytes of K/V stages in flight per CTA: two CTAs fit an SM (228 KB)


def check_heads(heads_q: int, heads_kv: int) -> None:
    """The kernel's rule for a head group: query heads a multiple of KV heads, 1..16 of them per KV head (the one
    check of it, for a geometry and for a notebook's parameter alike)."""
    if heads_q % heads_kv:
        raise ArgumentError(f"decode geometry: heads_q {heads_q} is not a multiple of heads_kv {heads_kv}")
    if not 1 <= heads_q // heads_kv <= 16:
        raise ArgumentError(f"decode geometry: {heads_q // heads_kv} query heads per KV head: expected 1..16")


@dataclass(frozen=True)
class DecodeGeometry:
    """One decode call.

    Args:
        batch: sequences.
        heads_q, heads_kv: query and KV heads (heads_q / heads_kv = G, 1..16).
        head_dim: 128 or 256.
        page_size: tokens per page (16, 32, 64).
        max_pages: page-table row length (pages per sequence at most).
        num_pages: pages in the KV pool.
        max_q_len: query tokens per sequence at most (1 for plain decode, up to 8).
        layout: ``plain`` or ``interleaved`` (the seed's kv[pages, 2, P, Hkv, 2, D]).
    """

    batch: int
    heads_q: int
    heads_kv: int
    head_dim: int
    page_size: int
    max_pages: int
    num_pages: int
    max_q_len: int = 1
    layout: str = "plain"

    def __post_init__(self):
        for name in ("batch", "heads_q", "heads_kv", "max_pages", "num_pages", "max_q_len", "head_dim", "page_size"):
            v = getattr(self, name)
            if isinstance(v, numbers.Integral) and not isinstance(v, bool) and type(v) is not int:
                object.__setattr__(self, name, v := int(v))  # numpy's, as a notebook's values often are: kept as int
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ArgumentError(f"decode geometry: {name} = {v!r}: expected an integer >= 1")
        if self.batch > 65535 or self.heads_kv > 65535:  # grid z and y (y also counts row blocks: build.py)
            raise ArgumentError(f"decode geometry: batch {self.batch}, heads_kv {self.heads_kv}: grid y and z "
                                "take at most 65535")
        if self.head_dim not in HEAD_DIMS:
            raise ArgumentError(f"decode geometry: head_dim {self.head_dim}: the decode kernel takes "
                                f"{', '.join(map(str, HEAD_DIMS))}")
        if self.page_size not in PAGE_SIZES:
            raise ArgumentError(f"decode geometry: page_size {self.page_size}: expected one of "
                                f"{', '.join(map(str, PAGE_SIZES))}")
        check_heads(self.heads_q, self.heads_kv)
        if not 1 <= self.max_q_len <= 8:
            raise ArgumentError(f"decode geometry: max_q_len {self.max_q_len}: expected 1..8")
        if self.layout not in LAYOUTS:
            raise ArgumentError(f"decode geometry: layout {self.layout!r}: expected one of {', '.join(LAYOUTS)}")
        if self.max_pages * self.page_size >= 1 << 31:
            raise ArgumentError(f"decode geometry: a sequence of {self.max_pages} pages x {self.page_size} tokens = "
                                f"{self.max_pages * self.page_size} tokens: must stay below 2**31")
        if self.num_pages >= 1 << 31:  # which count: the pool's, by default batch x pages per sequence
            made = (f" (batch {self.batch} x {self.max_pages} pages per sequence)"
                    if self.num_pages == self.batch * self.max_pages else "")
            raise ArgumentError(f"decode geometry: a pool of {self.num_pages} pages{made}: the pool's page count must "
                                "stay below 2**31")
        kv_bytes = self.num_pages * self.heads_kv * self.page_size * self.head_dim * 2  # K or V, bf16
        buffer_bytes = kv_bytes * (2 if self.layout == "interleaved" else 1)  # plain: K and V are two buffers
        if buffer_bytes > MAX_POOL_BYTES:
            raise ArgumentError(f"decode geometry: a pool of {self.num_pages} pages is a {buffer_bytes / 1e12:.1f} TB "
                                f"buffer; at most {MAX_POOL_BYTES / 1e12:.1f} TB (a manifest buffer's limit)")

    @property
    def group(self) -> int:
        return self.heads_q // self.heads_kv

    @property
    def rows(self) -> int:
        return self.group * self.max_q_len

    @property
    def max_kv_len(self) -> int:
        return self.max_pages * self.page_size

    @property
    def q_tokens(self) -> int:
        return self.batch * self.max_q_len

    def pool_shape(self) -> tuple[int, ...]:
        """Shape of the KV pool buffer(s): one per tensor (plain) or the seed's interleaved one."""
        if self.layout == "plain":
            return (self.num_pages, self.heads_kv, self.page_size, self.head_dim)
        return (self.num_pages, 2, self.page_size, self.heads_kv, 2, self.head_dim)


@dataclass(frozen=True)
class KernelBuild:
    """Compile-time shape of the kernel for a geometry (which source, its -D options) and its launch.

    ``variant``: ``mma`` (tensor cores, paged_decode_mma.cu: up to 16 rows) or ``fma``
    (CUDA cores, paged_decode.cu: everything else); ``warps`` per CTA (4, or 8 for ``mma``); ``qk_chains``
    (``mma``): 2 accumulates Q K^T's odd k-steps apart (shorter dependent chains, more registers), 1 does not."""

    variant: str
    rows_per_warp: int
    row_warps: int
    keys_per_warp: int
    stages: int
    head_dim: int
    page_size: int
    warps: int = WARPS
    qk_chains: int = 2

    @property
    def source(self) -> str:
        return "paged_decode_mma.cu" if self.variant == "mma" else "paged_decode.cu"

    timeline: bool = False  # -DLABKIT_TIMELINE: per-CTA records (labkit.sched)
    kv_evict_first: bool = False  # -DKV_EVICT_FIRST=1: K/V TMA loads carry an L2 evict_first policy
    cluster_splits: int = 0  # -DCLUSTER_SPLITS=n (2, 4, 8): the n splits of a unit combine in a thread-block cluster
    dim_warps: int = 1  # -DDIM_WARPS=2 (mma, 8 warps): warp pairs take the same keys and half of head_dim each
    tail_splits: int = 0  # -DTAIL_SPLITS=n (mma, no clusters): the call's last CallPlan.tail_units units in n splits
    min_ctas: int = 0  # -DMIN_CTAS=n (mma): __launch_bounds__' CTAs per SM, so registers allow n (0: no bound)
    persistent_ctas: int = 0  # n > 0 (mma, -DPERSISTENT=1): n CTAs claim whole units from a counter, one stage ring
    wide_boxes: bool = False  # -DWIDE_BOXES=1 (mma): 5-D tensor maps; one TMA load takes a page slice's every part
    row_boxes: bool = False  # -DROW_BOXES=1 (mma, no dim pairs): 5-D maps with the parts before the rows (rows whole)
    page_prefetch: bool = False  # -DPAGE_PREFETCH=1 (mma, 4-D boxes, per-unit CTAs): refills' page ids a stage ahead
    padded_rows: bool = False  # -DPADDED_ROWS=1 (mma, head_dim 128): unswizzled tiles of 136-dim rows, one box a slice

    @property
    def threads(self) -> int:
        return 32 * self.warps

    @property
    def max_rows(self) -> int:
        return self.rows_per_warp * self.row_warps

    def row_blocks(self, g: DecodeGeometry) -> int:
        """CTAs per (sequence, KV head, split) that share ``g``'s rows, ``max_rows`` each."""
        return -(-g.rows // self.max_rows)

    @property
    def tokens_per_stage(self) -> int:
        return self.keys_per_warp * (self.warps // (self.row_warps * self.dim_warps))

    @property
    def box_rows(self) -> int:
        return min(self.page_size, self.tokens_per_stage)

    @property
    def stage_bytes(self) -> int:
        return 2 * self.tokens_per_stage * self.row_dims * 2

    @property
    def row_dims(self) -> int:
        """The dims a tile holds per token row: head_dim, and 8 more of zeros with padded rows."""
        return self.head_dim + (8 if self.padded_rows else 0)

    @property
    def dynamic_smem_bytes(self) -> int:
        merge = self.warps // self.dim_warps * self.rows_per_warp * (self.head_dim + 2) * 4  # reuses the stages
        if self.persistent_ctas:  # a slot holds a stage and a unit's q rows; the next unit loads during a merge
            return 1024 + self.stages * (self.stage_bytes + self.max_rows * self.head_dim * 2) + merge
        return 1024 + max(self.stages * self.stage_bytes, merge)  # + room to align the swizzled tiles

    def options(self) -> tuple[str, ...]:
        common = (f"-DHEAD_DIM={self.head_dim}", f"-DPAGE_SIZE={self.page_size}", f"-DSTAGES={self.stages}",
                  *(("-DLABKIT_TIMELINE",) if self.timeline else ()),
                  *(("-DKV_EVICT_FIRST=1",) if self.kv_evict_first else ()),
                  *((f"-DCLUSTER_SPLITS={self.cluster_splits}",) if self.cluster_splits > 1 else ()))
        if self.variant == "mma":
            return (*common, f"-DKEYS_PER_WARP={self.keys_per_warp}", f"-DWARPS={self.warps}",
                    f"-DQK_CHAINS={self.qk_chains}",
                    *((f"-DDIM_WARPS={self.dim_warps}",) if self.dim_warps > 1 else ()),
                    *((f"-DTAIL_SPLITS={self.tail_splits}",) if self.tail_splits > 1 else ()),
                    *((f"-DMIN_CTAS={self.min_ctas}",) if self.min_ctas else ()),
                    *(("-DPERSISTENT=1",) if self.persistent_ctas else ()),
                    *(("-DWIDE_BOXES=1",) if self.wide_boxes else ()),
                    *(("-DROW_BOXES=1",) if self.row_boxes else ()),
                    *(("-DPAGE_PREFETCH=1",) if self.page_prefetch else ()),
                    *(("-DPADDED_ROWS=1",) if self.padded_rows else ()))
        return (*common, f"-DROWS_PER_WARP={self.rows_per_warp}", f"-DROW_WARPS={self.row_warps}")


VARIANTS = ("mma", "fma")


MAX_DYNAMIC_SMEM = 200 * 1024  # sm_90 gives a CTA 227 KB; the rest is left for static shared memory


def kernel_build(g: DecodeGeometry, *, variant: str | None = None, row_warps: int | None = None,
                 stages: int | None = None, warps: int | None = None, keys_per_warp: int | None = None,
                 qk_chains: int | None = None, dim_warps: int | None = None, timeline: bool = False) -> KernelBuild:
    """Tensor cores (``mma``) for at most 16 rows, else CUDA cores (``fma``): there
    warps split the rows when one warp would hold too many (registers) or a stage would not fit, and
    the others split the keys, 32 each. Stages fill up to ``STAGE_BUDGET`` bytes (2..4 of them).
    Rows beyond what one CTA holds (``MAX_ROWS``; up to 16 heads x 8 tokens = 128) go to row blocks:
    more CTAs over the same keys (``KernelBuild.row_blocks``). ``stages``, ``warps``, ``keys_per_warp`` and
    ``qk_chains`` (the last three ``mma`` only) override the defaults, for tuning."""
    if variant is None:
        variant = "mma" if g.rows <= 16 and row_warps is None else "fma"
    if variant not in VARIANTS:
        raise ArgumentError(f"kernel variant {variant!r}: expected one of {', '.join(VARIANTS)}")
    # the CUDA-core kernel has its own fixed shape (WARPS warps, rows split by row_warps): these four knobs are mma's
    if warps is not None and (variant != "mma" or warps not in (4, 8)):
        raise ArgumentError(f"warps {warps!r}: " + ("only the tensor-core (mma) kernel takes warps; this build is the "
                                                     "CUDA-core (fma) one" if variant != "mma"
                                                     else "the tensor-core (mma) kernel takes 4 or 8"))
    if keys_per_warp is not None and (variant != "mma" or keys_per_warp not in (16, 32)):
        raise ArgumentError(f"keys_per_warp {keys_per_warp!r}: " + (
            "only the tensor-core (mma) kernel takes keys_per_warp; this build is the CUDA-core (fma) one"
            if variant != "mma" else "the tensor-core (mma) kernel takes 16 or 32"))
    if qk_chains is not None and (variant != "mma" or qk_chains not in (1, 2)):
        raise ArgumentError(f"qk_chains {qk_chains!r}: " + (
            "only the tensor-core (mma) kernel takes qk_chains; this build is the CUDA-core (fma) one"
            if variant != "mma" else "the tensor-core (mma) kernel takes 1 or 2"))
    if dim_warps is not None and (variant != "mma" or dim_warps not in (1, 2)
                                  or (dim_warps == 2 and (warps != 8 or keys_per_warp not in (None, 16)))):
        raise ArgumentError(f"dim_warps {dim_warps!r}: " + (
            "only the tensor-core (mma) kernel takes dim_warps; this build is the CUDA-core (fma) one"
            if variant != "mma" else "the tensor-core (mma) kernel takes 1 or 2" if dim_warps not in (1, 2)
            else "needs warps=8 and 16 keys per warp (" + (", ".join(
                f"{k}={v}" for k, v in (("warps", warps), ("keys_per_warp", keys_per_warp)) if v is not None)
                or "warps not given: 4") + ")"))
    if variant == "mma":
        kb = KernelBuild("mma", 16, 1, keys_per_warp or 16, 2, g.head_dim, g.page_size, warps or WARPS, qk_chains or 2,
                         dim_warps=dim_warps or 1)
    else:
        rows = min(1 << max(0, math.ceil(math.log2(g.rows))), MAX_ROWS[g.head_dim])  # a power of two: 1 ... 64
        per_warp_cap = 16 if g.head_dim == 128 else 8
        if row_warps is None:  # 2: two CTAs per SM; measured faster than 1 or 4 from batch 8 up (H200)
            row_warps = max(2, min(WARPS, rows // per_warp_cap))
        if row_warps not in (1, 2, 4) or rows / row_warps > per_warp_cap:
            raise ArgumentError(f"row_warps {row_warps}: expected 1, 2 or 4 with at most {per_warp_cap} rows per "
                                f"warp ({g.rows} rows)")
        kb = KernelBuild("fma", max(1, rows // row_warps), row_warps, 32, 2, g.head_dim, g.page_size)
    if stages is None:
        stages = max(2, min(4, STAGE_BUDGET // kb.stage_bytes))
    else:  # a notebook's numpy integer too: its repr had been said as out of range
        stages = check_int(stages, what="stages", lo=1, hi=4)
    kb = dataclasses.replace(kb, stages=stages, timeline=timeline)
    if kb.dynamic_smem_bytes > MAX_DYNAMIC_SMEM:
        raise ArgumentError(f"{kb.stages} stages of {kb.stage_bytes} B (head_dim {g.head_dim}, {kb.warps} warps): "
                            f"{kb.dynamic_smem_bytes} B of shared memory, more than a CTA gets from labkit's decode "
                            f"builds ({MAX_DYNAMIC_SMEM} B of sm_90's 232448)")
    return kb


def default_splits(g: DecodeGeometry, *, sms: int = 132, ctas_per_sm: int | None = None, seq_pages: int | None = None,
                   min_pages_per_split: int | None = None, kernel: KernelBuild | None = None) -> int:
    """KV splits per (sequence, KV head): as many as fill one wave of ``sms x ctas_per_sm`` CTA slots
    without starting a second (measured on the H200: batch 8 x 8k ran 2.05 TB/s at 2 splits = 128
    CTAs and 1.52 at 3 = 192 CTAs, 1.45 waves), with at least a sixteenth of the sequence per split, that
    minimum held between 64 and 2048 tokens (a split of a sequence over 32k may be under a sixteenth; a
    split's fixed cost is ~2 us of prologue plus its share of the reduction). Recorded split sweeps
    (data/runs/20261201T062100Z-decode_bench,
    data/runs/20261201T103600Z-decode_oracle): batch 1 x 8k 21.3 us at 16 splits (the pick), 25.4 at 8,
    23.6 at 32; batch 1 x 32k 50.4 at 16 (the pick), 52.9 at 33; batch 8 x 8k 81.0 at 4 (the pick), 81.3
    at 2; the seed-sized call, 2 x 704 tokens, 17.5 at 11 (the pick), 16.9 at 8, 23.6 at 2. Never more
    splits than pages. (The plan can take another build and count: ``plan_call`` runs batch 8 x 8k d128 as 2
    splits of one 8-warp CTA per SM in a cluster.)"""
    pages = g.max_pages if seq_pages is None else seq_pages
    min_tokens = min(2048, max(64, pages * g.page_size // 16))  # short sequences: latency wants splits
    min_pages = min_pages_per_split or max(1, min_tokens // g.page_size)
    if ctas_per_sm is None:  # shared memory decides: 228 KB per SM, up to ~13 KB of it static per CTA
        ctas_per_sm = max(1, (228 * 1024) // ((kernel or kernel_build(g)).dynamic_smem_bytes + 13 * 1024))
    units = g.batch * g.heads_kv * (kernel or kernel_build(g)).row_blocks(g)
    want = max(1, (sms * ctas_per_sm) // units)
    return max(1, min(want, pages // min_pages if pages >= min_pages else 1, 256))  # 256: MAX_SPLITS


def call_kv_bytes(batch: int, kv_len: int, heads_kv: int, head_dim: int) -> int:
    """The bf16 K and V bytes a call of ``batch`` sequences of ``kv_len`` tokens reads: what a report row's kv_MB and
    every rate divide (``kv_bytes_read`` is the same over whole page-table rows)."""
    return 2 * batch * kv_len * heads_kv * head_dim * 2


def kv_bytes_read(g: DecodeGeometry) -> int:
    """K and V bytes a call over full page-table rows reads."""
    return call_kv_bytes(g.batch, g.max_kv_len, g.heads_kv, g.head_dim)


def kernel_label(kb) -> str:
    """``mma w4s3``: variant, warps per CTA (``w8d2``: in pairs that split head_dim), stages, then ``k32`` for 32
    keys per warp, ``c1`` for one Q K^T chain, ``ef`` for K/V loads with L2 evict_first, `` cl8`` for splits
    combined in a cluster of 8, `` tail/4`` for a call's last units in 4 splits each, `` P`` for persistent CTAs and
    `` wide`` for one TMA load per page slice, `` rows`` for such loads that read each token row whole, `` pp`` for page
    ids loaded a stage ahead, `` pad`` for unswizzled padded rows (``fma r2s2``: row warps instead of warps)."""
    if kb.variant == "fma":
        return f"fma r{kb.row_warps}s{kb.stages}"
    pairs = f"d{kb.dim_warps}" if kb.dim_warps > 1 else ""
    return (f"mma w{kb.warps}{pairs}s{kb.stages}" + (f"k{kb.keys_per_warp}" if kb.keys_per_warp != 16 else "")
            + (f"c{kb.qk_chains}" if kb.qk_chains != 2 else "") + ("ef" if kb.kv_evict_first else "")
            + (f" cl{kb.cluster_splits}" if kb.cluster_splits > 1 else "")
            + (f" tail/{kb.tail_splits}" if kb.tail_splits > 1 else "") + (" P" if kb.persistent_ctas else "")
            + (" wide" if kb.wide_boxes else "") + (" rows" if kb.row_boxes else "")
            + (" pp" if kb.page_prefetch else "") + (" pad" if kb.padded_rows else ""))
