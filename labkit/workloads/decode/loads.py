"""How a call's build loads its K/V stages: wide boxes (one 5-D TMA load per page slice), row boxes (the same with
each token row read whole), page ids a stage ahead and, with short pages, the ring's depth.

Wide boxes and page ids ahead are build knobs with a default the plan applies last, once the build, its splits and its
CTAs per SM are chosen (``labkit.workloads.decode.plan.plan_call``); both are bit-identical to the loads they replace.
The ring's depth changes the build and its split count, so the plan applies it with them.
"""

import dataclasses
from collections.abc import Callable

from ...errors import ArgumentError
from .geometry import MAX_DYNAMIC_SMEM, DecodeGeometry, KernelBuild, default_splits

# Warp-pair builds at these head dims whose stage is one page slice load it with wide boxes (5-D tensor maps, one TMA
# load per slice for all its 64-dim parts): on the H200 (cold, p50, interleaved, three rounds;
# data/runs/20261202T184700Z-decode_issue_anatomy) faster at every d256 point measured: the seed call -0.7 to -1.1 %
# (in a CUDA graph 6.29 -> 6.07 us), 1 x 8k -0.2 to -1.5 %, 8 x 32k -0.1 to -0.45 %, 64 x 1k -0.5 %, 256 x 1k -0.4 %.
# At head_dim 128 (half the loads) short calls ran level to +2 % with pages of 64, so not there.
WIDE_BOX_HEAD_DIMS = (256,)
# At head_dim 128 with pages of 16 (4 page slices in a 64-token stage, 8 in a 128-token one) every build takes them, and
# with pages of 32 the long clusters of 8 (several stages). H200, cold, p50 of 20, interleaved, outputs bit-identical;
# on two machines (data/runs/20261203T070400Z-decode_small_pages): pages of 16, 256 x 1k -1.8 / -1.9 % (with page ids
# ahead -3.2 %), 8 x 8k -2.6 / -3.0 %, 8 x 1k -2.0 %, 16 x 4k -0.7 / -3.3 %, 64 x 1k +0.3 / -0.8 % (page ids ahead
# -1.3 %), 1 x 8k in 16 splits -1.1 / -5.1 %; pages of 32, 1 x 8k -1.7 / -2.1 % (with page ids ahead -4.0 %), 1 x 32k
# with them -9.3 %, but the clustered pair 8 x 8k +1.2 / +1.5 % and 16 x 4k +0.3 / -1.1 %; the one-stage cluster of
# 8 at 1 x 1k, pages of 16, +1.7 %.
WIDE_BOX_D128_PAGE_SIZES = (16,)
WIDE_BOX_D128_CLUSTER8_PAGE_SIZES = (16, 32)
# The 8-warp builds at these head dims (one CTA per SM: the batch-1 clusters of 8, the clustered pairs) load each
# refill's page ids a stage ahead where that costs no CTA per SM: thread 0's refills held it ~0.45 us each, 0.11 of
# that the page ids' L2 round trip (data/runs/20261202T213800Z-decode_refill_parts). On the H200 (cold, p50,
# interleaved, three rounds, two machines; data/runs/20261202T214400Z-decode_page_prefetch) 1 x 8k d128 -1.8 to -3.5 %
# and -1.2 to -1.9 %, 8 x 1k -1.5 to -3.1 % and +0.3 to -1.6 %, 8 x 8k / 8 x 32k -0.6 to -1.0 %, 1 x 1k -0.3 to -0.5 %,
# 1 x 4k level, 1 x 32k -0.8 to -1.5 % on one machine and +0.2 to +1.1 % on the other. The 4-warp one-stage builds
# of large calls would lose a CTA per SM to it (128 -> 154 registers), and with __launch_bounds__ keeping 4 they ran
# level or slower (64 x 1k -0.2 to +0.6 %, 256 x 1k +0.8 to +1.1 %; data/runs/20261202T232000Z-decode_pp_min_ctas); at
# head_dim 256 the wide boxes stay (4-D loads with page ids ahead: 1 x 8k -0.7 to -1.4 % against them, the seed call
# in a CUDA graph +2 %).
PAGE_PREFETCH_HEAD_DIMS = (128,)
# With pages of 16 (four page ids a 64-token stage) the 4-warp builds take them too, where they keep their CTAs per SM:
# with wide boxes, against wide boxes alone, 256 x 1k -1.4 %, 64 x 1k -0.5 %, 1 x 8k -0.8 %, 16 x 4k +0.2 %
# (...070400Z-decode_small_pages); with pages of 64 the 4-warp builds ran level (+0.3 to -0.9 %, 16 x 2k-8k, 4 x 16k).
PAGE_PREFETCH_4WARP_PAGE_SIZES = (16,)
# With pages of 16 the 4-warp pipelined build rings 2 stages instead of 3, so 3 CTAs share an SM instead of 2, where
# its CTAs (at the count that fills the 3 slots, or one split) then fit one wave and are more than the SMs. H200, cold,
# p50 of 20, interleaved, against the 3-stage build on three machines (data/runs/20261203T093000Z-decode_page16_ring):
# 16 x 4k -3.5 / -1.4 % (3 splits; 2 splits -2.1 / -3.2 / -2.4 %), 16 x 2k -2.2 / -1.9 %, 16 x 8k -4.1 %, 32 x 4k
# (one split) -3.6 / -3.1 %, 4 x 16k -1.3 %, 2 x 8k -0.75 %, 4 x 4k +0.2 %. Where the CTAs would take a second wave it
# lost (64 x 1k +3.1 %: 512 CTAs on 396 slots), and so with one CTA per SM, where the third slot stays empty and the
# shallower ring is all a CTA holds in flight (batch 1, 128 CTAs: 1 x 4k +2.9 %, 1 x 8k +4.7 %, 1 x 32k -0.9 %).
# Pages of 32 and 64: 16 x 4k +0.6 / +1.4 %.
TWO_STAGE_PAGE_SIZES = (16,)
# With pages of 16 the d128 4-warp one-stage build takes 162 registers where pages of 32 and 64 take 128, so it holds
# 3 CTAs per SM instead of 4; __launch_bounds__ give it back the count it has at pages of 64 (ptxas: 128 registers,
# 4 bytes spilled with wide boxes and page ids ahead), and with it the plan's one-stage choice at 64 x 1k-8k. H200,
# cold, p50 of 20 and 40, interleaved, bit-identical (data/runs/20261203T110000Z-decode_page16_bound), the previous
# plan against it: 256 x 1k +3.8 %, 128 x 1k +2.0 / +2.5 %, 256 x 8k +5.6 %; 64 x 1k / 4k / 8k (3 stages, 2 per SM)
# +1.4 to +2.3 %.
BOUNDED_PAGE_SIZES = (16,)
LOAD_KNOBS = ("wide_boxes", "row_boxes", "page_prefetch", "padded_rows")  # choose_loads' knobs, in a plan's dict


def choose_loads(g: DecodeGeometry, kb: KernelBuild, ctas_per_sm: Callable[[KernelBuild], int],
                 wide_boxes: bool | None, page_prefetch: bool | None, row_boxes: bool | None = None,
                 padded_rows: bool | None = None) -> KernelBuild:
    """``kb`` with its loads: each knob as given (True / False), or None for the default above (row boxes: off; measured
    within -0.5..+1 % of the plan's loads at the one-split d128 calls and 2.7 % slower at 1 x 8k; padded rows: off,
    1-3 % slower at 9 of 10 d128 calls on two H100s). ``ctas_per_sm`` is the plan's occupancy of a build, so page ids
    ahead are taken only where they keep it.

    Raises:
        ArgumentError: a knob the build cannot take, in one line.
    """
    if padded_rows:
        if kb.variant != "mma" or g.head_dim != 128:
            what = kb.variant if kb.variant != "mma" else f"head_dim {g.head_dim}"
            raise ArgumentError(f"padded_rows: the tensor-core (mma) kernel's loads at head_dim 128 (a TMA box takes "
                                f"at most 256 dims; a row and its pad are 136); this call builds {what}")
        if wide_boxes or row_boxes:
            raise ArgumentError("padded_rows: one 4-D box per page slice, unswizzled; not with wide_boxes or row_boxes")
        kb, wide_boxes = dataclasses.replace(kb, padded_rows=True), False
        if kb.dynamic_smem_bytes > MAX_DYNAMIC_SMEM:
            raise ArgumentError(f"padded_rows: {kb.stages} stages of {kb.stage_bytes} B: {kb.dynamic_smem_bytes} B "
                                f"of shared memory, more than a CTA gets from labkit's decode builds "
                                f"({MAX_DYNAMIC_SMEM} B)")
    if row_boxes:
        if kb.variant != "mma" or kb.dim_warps != 1:
            what = kb.variant if kb.variant != "mma" else "warp pairs that split head_dim"
            raise ArgumentError(f"row_boxes: the tensor-core (mma) kernel's loads where each warp takes all of "
                                f"head_dim; this call builds {what}")
        if wide_boxes:
            raise ArgumentError("row_boxes and wide_boxes: two orders of the same 5-D boxes; give one")
        kb, wide_boxes = dataclasses.replace(kb, row_boxes=True), False
    if wide_boxes is None:
        wide_boxes = _wide_by_default(g, kb)
    if wide_boxes:
        if kb.variant != "mma":
            raise ArgumentError(f"wide_boxes: the tensor-core (mma) kernel's loads; this call builds {kb.variant}")
        if not _warps_fit_wide_boxes(kb):
            raise ArgumentError(f"wide_boxes: warp pairs that split head_dim need a stage of one page slice; this "
                                f"build's {kb.tokens_per_stage}-token stages take {g.page_size}-token pages")
        kb = dataclasses.replace(kb, wide_boxes=True)
    if page_prefetch is None:  # the 8-warp builds, one CTA per SM, and with pages of 16 the 4-warp ones
        page_prefetch = (kb.variant == "mma" and g.head_dim in PAGE_PREFETCH_HEAD_DIMS and kb.dim_warps == 1
                         and (kb.warps == 8 or g.page_size in PAGE_PREFETCH_4WARP_PAGE_SIZES)
                         and not kb.persistent_ctas
                         and ctas_per_sm(dataclasses.replace(kb, page_prefetch=True)) == ctas_per_sm(kb))
    if page_prefetch:
        if kb.variant != "mma" or kb.persistent_ctas:
            what = "builds " + kb.variant if kb.variant != "mma" else "runs persistent CTAs"
            raise ArgumentError(f"page_prefetch: the per-unit tensor-core (mma) build's loads; this call {what}")
        kb = dataclasses.replace(kb, page_prefetch=True)
    return kb


def _warps_fit_wide_boxes(kb: KernelBuild) -> bool:
    """Warp pairs that split head_dim each take one 64-dim part of a box, so they need a stage of one page slice."""
    return kb.dim_warps == 1 or kb.tokens_per_stage == kb.box_rows


def _wide_by_default(g: DecodeGeometry, kb: KernelBuild) -> bool:
    """The measured default: warp pairs at ``WIDE_BOX_HEAD_DIMS``; at head_dim 128 the short pages above."""
    if kb.variant != "mma" or not _warps_fit_wide_boxes(kb):
        return False
    if g.head_dim in WIDE_BOX_HEAD_DIMS:
        return kb.dim_warps > 1
    if g.head_dim != 128:
        return False
    if kb.cluster_splits == 8:
        return g.page_size in WIDE_BOX_D128_CLUSTER8_PAGE_SIZES and kb.stages > 1
    return g.page_size in WIDE_BOX_D128_PAGE_SIZES


def short_page_bound(g: DecodeGeometry, kb: KernelBuild, ctas_per_sm: Callable[[KernelBuild], int]) -> KernelBuild:
    """``kb`` bounded to the CTAs per SM the same d128 4-warp build holds at pages of 64, at ``BOUNDED_PAGE_SIZES``
    where its registers hold fewer and the bound keeps that count; else ``kb``."""
    if not (kb.variant == "mma" and g.head_dim == 128 and g.page_size in BOUNDED_PAGE_SIZES and kb.warps == 4
            and not kb.min_ctas):
        return kb
    held = ctas_per_sm(dataclasses.replace(kb, page_size=64, wide_boxes=False, page_prefetch=False))
    if ctas_per_sm(kb) >= held:
        return kb
    bounded = dataclasses.replace(kb, min_ctas=held)
    return bounded if ctas_per_sm(bounded) == held else kb


def short_page_ring(g: DecodeGeometry, kb: KernelBuild, splits: int, units: int, sms: int,
                    ctas_per_sm: Callable[[KernelBuild], int]) -> tuple[KernelBuild, int]:
    """The plan's 4-warp pipelined build and split count at ``TWO_STAGE_PAGE_SIZES``: 2 stages where the CTAs then fit
    one wave and outnumber the SMs, else ``kb`` and ``splits`` as they are."""
    if not (kb.variant == "mma" and g.head_dim == 128 and g.page_size in TWO_STAGE_PAGE_SIZES and kb.warps == 4
            and kb.dim_warps == 1 and kb.stages == 3 and not kb.cluster_splits and not kb.persistent_ctas):
        return kb, splits
    ring = dataclasses.replace(kb, stages=2)
    per_sm = ctas_per_sm(ring)
    ring_splits = 1 if splits == 1 else default_splits(g, sms=sms, ctas_per_sm=per_sm, kernel=ring)
    return (ring, ring_splits) if sms < units * ring_splits <= sms * per_sm else (kb, splits)
