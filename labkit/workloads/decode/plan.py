"""How one decode call runs on a GPU: its kernel build (stages, Q K^T chains), KV split count and PDL or not.

Occupancy comes from the build's cubin (NVRTC, no GPU needed), so the split heuristic and the stage choice see the CTAs
per SM the launch will really get.

Stages: when the call's (sequence, KV head) units already fill the GPU without splitting, the tensor-core kernel builds
with one stage per CTA, so more CTAs share an SM and hide each other's prologue and epilogue; otherwise it keeps the
deeper per-CTA pipeline that a few long CTAs need. The one-stage candidates, most CTAs per SM first: one Q K^T
accumulator chain (fewest registers: 4 CTAs per SM at head_dim 128, 3 at 256), then two (2 CTAs per SM at 256); the
first whose waves are at least ``ONE_STAGE_MIN_FILL`` busy wins (measured: docs/decode.md, "How a call is planned").

Clusters: when one CTA fills an SM, a unit's splits (2, 4 or 8) combine in a thread-block cluster (distributed shared
memory) instead of through global partials, a fence and a counter, if the GPU holds all of the call's clusters at once
(``cluster_ctas``); a call that would take more than 8 splits runs 8 CTAs of 8 warps per unit, one per SM, as one
cluster, each CTA with a stage for every 128 (head_dim 128) or 64 (256) tokens of its split, up to 3 (a short call of at
most ``CLUSTER_SHORT_TOKENS`` per sequence; a longer one at the head dims and lengths of ``CLUSTER_LONG_MAX_TOKENS``,
whose clusters must also fill more than half of what the GPU holds: batch 1 x 8k and 32k d128, up to 4 % faster, level
on one machine, and 1 x 8k d256; where the default build puts two CTAs on an SM, only at one query token and without
build knobs, as measured; the measurements, and clusters of 16: docs/decode.md).

Split calls at head_dim 128 run one 8-warp CTA per SM, not 4-warp splits at 2 per SM, where ``PAIR_SPLIT_MIN_TOKENS``
(2 splits that fill a wave, in a cluster), ``CLUSTER_MID_MIN_TOKENS`` (16-56 shorter units, 2 or 4 in a cluster) or
``SM_SPLIT_MIN_TOKENS`` (16-56 long units, 2-8 splits; 67-118, 1) say so.
One-split calls of 133-237 units, which leave some SMs two 4-warp CTAs and some one, run 2 splits of a one-stage
build at 3 or 4 per SM instead (``UNEVEN_SPLIT_MIN_TOKENS``; 133-136 at 132 SMs: ``TAIL_PAST_SMS_SHARE``).
One-split calls of more units than a wave of the pipelined build holds run the one-stage build whose one wave holds
them, not a second, part-filled wave (``ONE_WAVE_MIN_TOKENS``), unless few pass it (``TAIL_PAST_WAVE_SHARE``).
One-split calls whose units take more than one wave of CTAs and leave the last one at most half filled run those last
units in more splits, as many as a wave's slots take (``TAIL_WAVE_MIN_TOKENS``); the few units past one pipelined CTA
per SM, as many as the SMs' second slots take (``TAIL_PAST_SMS_SHARE``); else tail splits are an A/B knob.

Persistent CTAs (``persistent``): one-split head_dim 256 calls of short units (``PERSISTENT_MAX_TOKENS``) launch one CTA
per SM that claims whole units from a counter, one stage ring across them (not in timelines and tail sweeps).

Warp pairs at head_dim 256 (its 4-warp stage loop was bound by its math): 8 warps, each pair the same 16 keys of a stage
and half of head_dim (``dim_warps=2``), one CTA per SM with the 4-warp plan's K/V bytes per SM (1..3 stages).
"""

import dataclasses
import functools
import math
from collections.abc import Mapping

from ..._text import counted
from ...errors import ArgumentError
from .geometry import DecodeGeometry, KernelBuild, default_splits, kernel_build, kv_bytes_read
from .knobs import TAIL_MAX_SPLITS, check_call_args, check_persistent, check_tail
from .loads import LOAD_KNOBS, choose_loads, short_page_bound, short_page_ring

CLUSTER_SIZES = (2, 4, 8)  # portable cluster sizes that divide head_dim: the splits a cluster can combine
CLUSTER_SHORT_TOKENS = 8 * 128  # up to 8 stages of the 8-warp build: one each for a cluster of 8
# A short call's split holds every stage it reads; longer calls take the cluster of 8 (3 stages of 128 tokens per
# CTA) when their clusters fill more than half of what the GPU holds, at head_dim 256 up to 8k tokens. Measured:
# docs/decode.md, "The plan's constants". {head_dim: the most tokens per sequence (None: no bound)}
CLUSTER_LONG_MAX_TOKENS = {128: None, 256: 8192}
# ... and pages of these sizes: with pages of 16 (8 page slices a 128-token stage) 16 splits of two 4-warp CTAs per SM
# ran 1 x 4k d128 -7 %, 1 x 8k -17 to -20 %, 1 x 32k -33 % against them (data/runs/20261203T070400Z-decode_small_pages).
CLUSTER_LONG_PAGE_SIZES = (32, 64)
PAIR_HEAD_DIMS = (256,)  # head dims whose tensor-core calls run the warp-pair build (dim_warps=2)
ONE_STAGE_MIN_FILL = 0.85  # units / (waves x slots) of a one-stage build: 0.86 won 11 %, 0.65 lost 7 %
# K/V loads carry L2 evict_first when a call reads at most this many L2 sizes: a cold call then does not write back
# the dirty lines it would evict (33-134 MB faster, from 268 MB slower; docs/decode.md, "The plan's constants").
EVICT_FIRST_MAX_L2 = 3.0
# Persistent CTAs claim whole units from a counter, one 2-stage ring across them, where head_dim 256 calls take one
# split and units are at most this many tokens (docs/decode.md, "The plan's constants").
PERSISTENT_MAX_TOKENS = 2048
# Split calls whose units in 2 splits of one 8-warp CTA per SM fill a wave run that way, the 2 splits in a cluster, from
# this many tokens; a caller's build knobs or split count keep the 4-warp plan (docs/decode.md, "The plan's constants").
PAIR_SPLIT_MIN_TOKENS = 1024
# Where a two-per-SM pipelined build's units alone give nearly every SM a CTA, one split beats the splits that fill the
# second slots (no partials or reduction; docs/decode.md, "The plan's constants").
ONE_SPLIT_MIN_SM_FILL = 0.9  # units / SMs
# Split calls of 16-56 units of at least this many tokens: one 8-warp CTA of 2 stages per SM, 132 // units splits (2: in
# a cluster); 67-118 units from 1k tokens (pages of 32 or 64) one split of it (docs/decode.md, "The plan's constants").
SM_SPLIT_MIN_TOKENS = 8192
ONE_SPLIT_PAGE_SIZES = (32, 64)
# 16-56 units under SM_SPLIT_MIN_TOKENS whose clusters of 8 do not all fit: the 8-warp 2-stage build, one per SM, in
# clusters of 4 (where they fit) or 2 (docs/decode.md, "The plan's constants").
CLUSTER_MID_MIN_TOKENS = 512
# One-split calls of 133-237 units (some SMs two 4-warp CTAs, some one; not 133-136 at 132 SMs: TAIL_PAST_SMS_SHARE):
# 2 splits of the one-stage build whose one wave holds them, 3 CTAs per SM (2 Q K^T chains) up to 198 units, else 4
# (1 chain), from these many tokens (docs/decode.md, "The plan's constants").
UNEVEN_SPLIT_MIN_TOKENS = {3: 2048, 4: 8192}  # {one-stage CTAs per SM: the fewest tokens}
# One-split calls of more units than one wave of the pipelined build (2 per SM) holds, which a one-stage build holds in
# one wave (265-528 units at 132 SMs, filling it under ONE_STAGE_MIN_FILL): that build, 3 CTAs per SM (2 chains) where
# they fit, else 4 (1 chain), at pages of 32 or 64 and from these many tokens (docs/decode.md, "The plan's constants").
ONE_WAVE_MIN_TOKENS = 1024
# ... but where the units past that wave are at most a share of the SMs, the pipelined build and the tail-wave rule's
# tail: {fewest tokens: share} (8-56 past from 8k, 34-40 x 8k-32k: -0.3 to -4.4 %, 41 x 8k +0.2 %; 8-24 from 4k, 34-36 x
# 4k: -1.3 to -3.1 %, 37 x 4k level; 34 x 2k +0.4 to +1.0 %; docs/decode.md, "The plan's constants")
TAIL_PAST_WAVE_SHARE = {4096: 3 / 16, 8192: 7 / 16}
# One-split calls of more units than a wave of their CTAs holds, whose last wave they would leave at most half filled:
# the units past the last whole wave in as many splits as one wave's slots take (up to TAIL_MAX_SPLITS), at pages of
# 32 or 64, from these many tokens (batch 72-110 x 8k at 8 KV heads, 48-112 units left: -1.0 to -7.8 %; 8-40 left:
# level; batch 166-690 x 2k-8k: -5.2 to +0.4 %, the pipelined build level; docs/decode.md, "The plan's constants").
TAIL_WAVE_MIN_TOKENS = 2048
# ... and so, from as many tokens, do the units past one pipelined CTA per SM where they are at most this share of the
# SMs, not the 133-237 unit rule (17 x 2k-32k at 8 KV heads, 4 past: -1.5 to -4.2 %; 18 x 8k, 12 past: +1.2 %).
TAIL_PAST_SMS_SHARE = 1 / 32
H200_L2_BYTES = 60 * 1024 * 1024  # plan_call's default target, as sms=132
# Clusters sit whole in a GPC: one CTA per SM, the H200 holds 66 clusters of 2, 30 of 4, 15 of 8 at once (every such
# build; data/runs/20261202T045000Z-decode_cluster_fit). More clustered CTAs wait for a second wave: 4 x 8k d256 in 4
# splits, clusters of 4 (128 CTAs), 108.8 us, unclustered 78.1 (-28 %; 8 x 8k 24/4 heads -28 %, 1k -25 %, 32k -31 %).
H200_CLUSTER_CTAS = {2: 132, 4: 120, 8: 120}


def cluster_ctas(size: int, sms: int = 132, arch: str = "sm_90", fit: Mapping[int, int] | None = None) -> int:
    """CTAs in clusters of ``size``, one per SM, that the GPU holds at once: ``fit[size]`` where the GPU was asked
    (``labkit.sched.clusters.resident_cluster_ctas``, as ``plan_for_device`` does); else as measured on the H200
    (sm_90, 132 SMs), and elsewhere taken as every SM (rounded down to whole clusters), which is unmeasured."""
    if fit is not None:
        return fit[size]
    return H200_CLUSTER_CTAS[size] if arch == "sm_90" and sms == 132 else sms - sms % size


@dataclasses.dataclass(frozen=True)
class CallPlan:
    """The build, its CTAs per SM, the split count of one decode call, and whether it launches with programmatic
    dependent launch (``pdl``: on when one CTA fills an SM, so the next call's CTAs can only take SMs this one has left;
    with two per SM they sat beside it: 1 x 8k d128 in a graph 13.3 us with PDL against 12.0 without, the seed-sized
    call, one per SM, 11.95 with it against 12.7: data/runs/20261201T104700Z-decode_pdl_ab)."""

    kernel: KernelBuild
    splits: int
    ctas_per_sm: int
    pdl: bool = False
    tail_units: int = 0  # the call's last units, run in kernel.tail_splits splits each (the others in `splits`)
    cluster_resident_ctas: int = 0  # a clustered call: its CTAs the GPU holds at once in whole clusters (0: no cluster)

    def to_dict(self) -> dict:
        k = self.kernel
        tail = {"tail_units": self.tail_units, "tail_splits": k.tail_splits} if self.tail_units else {}
        persistent = {"persistent_ctas": k.persistent_ctas} if k.persistent_ctas else {}
        loads = {name: True for name in LOAD_KNOBS if getattr(k, name)}
        return {"variant": k.variant, "warps": k.warps, "dim_warps": k.dim_warps, "stages": k.stages,
                "qk_chains": k.qk_chains, **persistent, **loads,
                "kv_evict_first": k.kv_evict_first, "cluster_splits": k.cluster_splits, "splits": self.splits,
                "ctas_per_sm": self.ctas_per_sm, "pdl": self.pdl, **tail}


def describe_plan(plan: CallPlan) -> str:
    """One line for the CLI: splits, build, CTAs per SM, and the cluster / evict_first / PDL choices."""
    k = plan.kernel
    extras = [f"splits combined in a cluster of {k.cluster_splits}" if k.cluster_splits > 1 else "",
              "K/V L2 evict_first" if k.kv_evict_first else "", "PDL" if plan.pdl else "",
              f"the last {plan.tail_units} units in {k.tail_splits} splits each" if plan.tail_units else "",
              f"{k.persistent_ctas} persistent CTAs claim the units" if k.persistent_ctas else "",
              "one TMA load per page slice (wide boxes)" if k.wide_boxes else "",
              "one TMA load per page slice, each token row whole (row boxes)" if k.row_boxes else "",
              "page ids a stage ahead" if k.page_prefetch else "", "rows padded to 136 dims" if k.padded_rows else ""]
    warps = f"{k.warps} warps" + (" (pairs split head_dim)" if k.dim_warps > 1 else "")
    head = [counted(plan.splits, "split"), f"{warps} x {counted(k.stages, 'stage')}",
            f"{counted(plan.ctas_per_sm, 'CTA')} per SM"]
    return ", ".join(head + [e for e in extras if e])


def occupancy(kb: KernelBuild, arch: str = "sm_90") -> int:
    """CTAs per SM of the plain (uninstrumented) build, from its cubin."""
    from .build import occupancy as build_occupancy

    return build_occupancy(dataclasses.replace(kb, timeline=False), arch).ctas_per_sm


def wave_fill(ctas: int, slots: int) -> float:
    """Busy share of the CTA slots over the waves ``ctas`` take."""
    return ctas / (math.ceil(ctas / slots) * slots)


def plan_call(g: DecodeGeometry, *, splits: int | None = None, sms: int = 132, arch: str = "sm_90",
              l2_bytes: int = H200_L2_BYTES, variant: str | None = None, row_warps: int | None = None,
              stages: int | None = None, warps: int | None = None, keys_per_warp: int | None = None,
              qk_chains: int | None = None, dim_warps: int | None = None, kv_evict_first: bool | None = None,
              cluster: bool | None = None, tail_units: int | None = None, tail_splits: int | None = None,
              persistent: bool | None = None, wide_boxes: bool | None = None, page_prefetch: bool | None = None,
              row_boxes: bool | None = None, padded_rows: bool | None = None, timeline: bool = False,
              cluster_fit: Mapping[int, int] | None = None) -> CallPlan:
    """The build and split count for ``g`` on ``sms`` SMs of ``arch`` with ``l2_bytes`` of L2; given arguments
    override the choice. ``cluster_fit``: {cluster size: CTAs in such clusters the GPU holds at once}, as the GPU
    answered (None: ``cluster_ctas``'s table). ``tail_units`` and ``tail_splits`` (together, tensor cores, no
    cluster): the call's last ``tail_units`` units run in ``tail_splits`` splits each, more than the others'
    ``splits``, after those have started (the plan's own: ``TAIL_WAVE_MIN_TOKENS``, ``TAIL_PAST_SMS_SHARE``).
    ``persistent`` (tensor cores, q in registers, one split): as many CTAs as the SMs hold claim whole units from a
    counter, one stage ring across them. Loads (tensor cores; ``loads.choose_loads``): ``wide_boxes``, 5-D maps, one
    TMA load a page slice; ``page_prefetch`` (per-unit CTAs), page ids a stage ahead (for both None is the default);
    ``row_boxes``, those 5-D loads with the parts before the rows; ``padded_rows`` (head_dim 128), one unswizzled 4-D
    box a page slice, rows padded to 136 dims (these two off unless given). Pages of 16: ``loads.short_page_ring``."""
    check_call_args(splits, sms, arch)
    if tail_units is not None or tail_splits is not None:
        check_tail(g, tail_units, tail_splits, cluster)
        cluster = False
    # the caller described the build: the plan's own choices of build (the clustered pair below) stand aside
    build_given = any(k is not None for k in (variant, row_warps, stages, warps, keys_per_warp, qk_chains, dim_warps,
                                              kv_evict_first, tail_units))
    kw = dict(variant=variant, warps=warps, keys_per_warp=keys_per_warp, dim_warps=dim_warps, timeline=timeline)
    occ = functools.partial(occupancy, arch=arch)
    kb = kernel_build(g, row_warps=row_warps, stages=stages, qk_chains=qk_chains, **kw)
    if stages is None and kb.variant == "mma":
        for chains in (1, 2) if qk_chains is None else (qk_chains,):
            one = short_page_bound(g, kernel_build(g, stages=1, qk_chains=chains, **kw), occ)
            if wave_fill(g.batch * g.heads_kv * one.row_blocks(g), sms * occ(one)) >= ONE_STAGE_MIN_FILL:
                kb = one
                break
    pairs = (kb.variant == "mma" and g.head_dim in PAIR_HEAD_DIMS and warps is None and keys_per_warp is None
             and dim_warps is None)
    if pairs:  # as many K/V bytes in flight per SM as the 4-warp build would hold, in one CTA
        pair_stages = stages or max(1, min(3, kb.stages * occ(kb)))
        kb = kernel_build(g, variant="mma", stages=pair_stages, qk_chains=kb.qk_chains, warps=8, dim_warps=2,
                          timeline=timeline)
    if kv_evict_first is None:
        kv_evict_first = kv_bytes_read(g) <= EVICT_FIRST_MAX_L2 * l2_bytes
    kb = short_page_bound(g, dataclasses.replace(kb, kv_evict_first=bool(kv_evict_first)), occ)
    per_sm = occ(kb)
    if persistent:
        check_persistent(kb, splits, cluster, tail_units)
        kb, per_sm = _persistent(kb, sms, arch)
        splits, cluster = 1, False
    given_splits = splits
    # (sequence, KV head, row block) units: every build the plan may still switch to below keeps this one's variant,
    # and so its rows per block
    units = g.batch * g.heads_kv * kb.row_blocks(g)
    big = max(CLUSTER_SIZES)
    big_fit = cluster_ctas(big, sms, arch, cluster_fit)
    if splits is None:
        if (not build_given and cluster is None and not persistent and not pairs and kb.variant == "mma"
                and kb.stages > 1 and units > sms * per_sm and g.max_q_len == 1
                and g.page_size in ONE_SPLIT_PAGE_SIZES and g.max_kv_len >= ONE_WAVE_MIN_TOKENS):
            # not a second, part-filled wave; but a few units past it: the tail-wave rule's tail below
            share = max((s for t, s in TAIL_PAST_WAVE_SHARE.items() if g.max_kv_len >= t), default=0)
            one = None if units - sms * per_sm <= share * sms else _one_stage_holding(g, kb, units, sms, occ, timeline)
            if one is not None:
                kb, per_sm = one, occ(one)
        splits = default_splits(g, sms=sms, ctas_per_sm=per_sm, kernel=kb)
        if not build_given and per_sm > 1 and splits > 1 and not pairs and not persistent and kb.variant == "mma":
            # one 8-warp CTA per SM, not 4-warp splits at 2 per SM: clustered pair, 16-56 short, 16-56 long, 67-118
            fits_pair = 2 * units <= cluster_ctas(2, sms, arch, cluster_fit)
            fills = wave_fill(2 * units, sms) >= ONE_STAGE_MIN_FILL
            paired = cluster in (None, True) and g.max_kv_len >= PAIR_SPLIT_MIN_TOKENS and fits_pair and fills
            # 16-56 shorter units, whose clusters of 8 do not all fit at once: 2 or 4 splits of it, in a cluster
            mid = (cluster in (None, True) and g.max_q_len == 1 and g.page_size in ONE_SPLIT_PAGE_SIZES and fits_pair
                   and not fills and units * big > big_fit
                   and CLUSTER_MID_MIN_TOKENS <= g.max_kv_len < SM_SPLIT_MIN_TOKENS)
            spread = (cluster is None and g.max_q_len == 1 and g.page_size in ONE_SPLIT_PAGE_SIZES
                      and ((g.page_size == 64 and g.max_kv_len >= SM_SPLIT_MIN_TOKENS and units * big > big_fit
                            and 2 * units <= sms)
                           or (g.max_kv_len >= PAIR_SPLIT_MIN_TOKENS
                               and sms < 2 * units < 2 * ONE_SPLIT_MIN_SM_FILL * sms)))  # 67-118 units: one split
            sm_build = _one_8_warp_cta_per_sm(g, kb, occ, timeline) if paired or mid or spread else None
            if sm_build is not None:
                kb, per_sm = sm_build, 1
                if paired or mid:
                    splits, cluster = 4 if mid and 4 * units <= cluster_ctas(4, sms, arch, cluster_fit) else 2, True
                else:
                    splits = default_splits(g, sms=sms, ctas_per_sm=1, kernel=kb)
        if (splits > 1 and per_sm > 1 and kb.stages > 1 and kb.variant == "mma" and cluster is not True
                and tail_units is None and g.page_size in ONE_SPLIT_PAGE_SIZES
                and units >= ONE_SPLIT_MIN_SM_FILL * sms):
            splits = 1  # the units already take (nearly) every SM: no splits to fill its second slot
        if (not build_given and cluster is None and splits == 1 and per_sm == 2 and kb.stages > 1 and not pairs
                and kb.variant == "mma" and g.max_q_len == 1 and g.page_size in ONE_SPLIT_PAGE_SIZES
                and sms < units < 2 * ONE_SPLIT_MIN_SM_FILL * sms):
            if (units - sms <= TAIL_PAST_SMS_SHARE * sms and g.max_kv_len >= TAIL_WAVE_MIN_TOKENS
                    and _tail_splits(g, sms, units - sms) > 1):  # a few units past one per SM: split across the SMs
                tail_units, tail_splits = units - sms, _tail_splits(g, sms, units - sms)
            elif (one := _one_stage_holding(g, kb, 2 * units, sms, occ, timeline)) is not None and \
                    g.max_kv_len >= UNEVEN_SPLIT_MIN_TOKENS.get(occ(one), math.inf):  # the uneven second slots
                kb, per_sm, splits = one, occ(one), 2
        slots, last = sms * per_sm, units % (sms * per_sm)
        if (not build_given and cluster is None and splits == 1 and not pairs and kb.variant == "mma"
                and g.max_q_len == 1 and g.page_size in ONE_SPLIT_PAGE_SIZES and g.max_kv_len >= TAIL_WAVE_MIN_TOKENS
                and units > slots and last and _tail_splits(g, slots, last) > 1):
            # the part-filled last wave's units split across a wave's slots, which the whole units free as they end
            tail_units, tail_splits = last, _tail_splits(g, slots, last)
        if not build_given and cluster is not True:  # the ring's own test excludes pairs and persistent CTAs
            kb, splits = short_page_ring(g, kb, splits, units, sms, occ)
            per_sm = occ(kb)
    of_8_knobs = dict(qk_chains=qk_chains, keys_per_warp=keys_per_warp, dim_warps=2 if pairs else dim_warps,
                      kv_evict_first=bool(kv_evict_first), timeline=timeline)
    if cluster is None:
        cluster = False
        if kb.variant == "mma" and given_splits is None:
            short = g.max_kv_len <= CLUSTER_SHORT_TOKENS
            if per_sm == 1 and splits in CLUSTER_SIZES and units * splits <= cluster_ctas(splits, sms, arch,
                                                                                          cluster_fit):
                cluster = True
            elif (splits > big and stages is None and warps is None and units * big <= big_fit
                  and ((short and per_sm == 1)
                       or (not build_given and g.max_q_len == 1
                           and (short or (_cluster_long(g) and 2 * units * big > big_fit))))):
                # a call that would take more splits than a cluster holds, whose units' clusters fit at once: 8 CTAs of
                # 8 warps per unit, one per SM, as one cluster (where the default build puts two CTAs on an SM: as
                # measured, one query token and the plan's own knobs)
                of_8 = _cluster_of_8(g, arch, **of_8_knobs)
                if of_8 is not None:
                    kb, per_sm, splits, cluster = of_8, 1, big, True
    elif cluster and given_splits is None and splits > big and kb.variant == "mma" and stages is None and warps is None:
        # asked for a cluster, more splits than one holds: the plan's 8
        of_8 = _cluster_of_8(g, arch, **of_8_knobs)
        if of_8 is not None:
            kb, per_sm, splits = of_8, 1, big
    if cluster:
        if kb.variant != "mma" or splits not in CLUSTER_SIZES:
            sizes = ", ".join(map(str, CLUSTER_SIZES))
            raise ArgumentError(f"cluster: the splits of a unit combine in a cluster of {sizes} tensor-core CTAs; "
                                f"this call has {splits} split(s) (variant {kb.variant}); give it 2, 4 or 8")
        kb = dataclasses.replace(kb, cluster_splits=splits)
        per_sm = occ(kb)
    if persistent is None:  # short units at head_dim 256, one split each: persistent CTAs claim them
        persistent = (pairs and splits == 1 and not cluster and tail_units is None and given_splits is None
                      and stages is None and qk_chains is None and not timeline
                      and g.max_kv_len <= PERSISTENT_MAX_TOKENS)
        if persistent:
            kb = dataclasses.replace(kernel_build(g, variant="mma", stages=2, warps=8, dim_warps=2),
                                     kv_evict_first=bool(kv_evict_first))
            kb, per_sm = _persistent(kb, sms, arch)
    if tail_units is not None:
        if kb.variant != "mma":
            raise ArgumentError(f"tail_units: the tail splits are a tensor-core (mma) build's; this call builds "
                                f"{kb.variant}")
        if tail_splits <= splits:
            raise ArgumentError(f"tail_splits {tail_splits}: expected more than the other units' {splits} splits")
        if tail_units > units:
            raise ArgumentError(f"tail_units {tail_units}: expected 1..{units} (the call's (sequence, KV head, row "
                                "block) units)")
        kb = dataclasses.replace(kb, tail_splits=tail_splits)
    kb = choose_loads(g, kb, occ, wide_boxes, page_prefetch, row_boxes, padded_rows)
    per_sm = occ(kb)
    if (kb.tail_splits or kb.timeline) and kb.variant == "mma" and per_sm > 1:
        # the tail mapping (8 x 8k d128: 150 -> 168 registers) and the timeline's stamps (64 x 1k d128: 128 -> 158,
        # 4 -> 3 CTAs per SM) cost registers; __launch_bounds__ keeps the plain build's CTAs per SM, so an A/B or a
        # timeline shows the call as the plan runs it (NVRTC: no spills at the bench's plans)
        kb = dataclasses.replace(kb, min_ctas=per_sm)
        per_sm = occ(kb)
    resident = (min(sms * per_sm, cluster_ctas(kb.cluster_splits, sms, arch, cluster_fit) * per_sm)
                if kb.cluster_splits > 1 else 0)
    return CallPlan(kb, splits, per_sm, pdl=per_sm == 1, tail_units=tail_units or 0, cluster_resident_ctas=resident)


def _cluster_long(g: DecodeGeometry) -> bool:
    """A longer call at a head dim that takes the cluster of 8 (``CLUSTER_LONG_MAX_TOKENS``)."""
    if g.head_dim not in CLUSTER_LONG_MAX_TOKENS:
        return False
    bound = CLUSTER_LONG_MAX_TOKENS[g.head_dim]
    return g.page_size in CLUSTER_LONG_PAGE_SIZES and (bound is None or g.max_kv_len <= bound)


def _cluster_of_8(g: DecodeGeometry, arch: str, *, kv_evict_first: bool, **knobs) -> KernelBuild | None:
    """The 8-warp build whose 8 splits of a unit form a cluster of 8, one CTA per SM, with as many stages as a split
    has, up to 3 (a short call's whole split in flight at once, see ``CLUSTER_SHORT_TOKENS``); None where no such
    build fits a CTA or it would put two on an SM (a cluster would then take half the SMs: 8 x 1k d128 ran 20.7 -> 25.5
    us)."""
    big = max(CLUSTER_SIZES)
    try:
        one = kernel_build(g, warps=8, stages=1, **knobs)
        split_stages = -(-(-(-g.max_kv_len // big)) // one.tokens_per_stage)
        build = dataclasses.replace(kernel_build(g, warps=8, stages=min(3, split_stages), **knobs),
                                    kv_evict_first=kv_evict_first)
    except ArgumentError:
        return None
    return build if occupancy(build, arch) == 1 else None


def _tail_splits(g: DecodeGeometry, slots: int, tail_units: int) -> int:
    """Splits of each of ``tail_units`` units that ``slots`` CTA slots take at once, as the kernel and pages allow."""
    return min(TAIL_MAX_SPLITS, g.max_pages, slots // tail_units)


def _one_8_warp_cta_per_sm(g: DecodeGeometry, kb: KernelBuild, occ, timeline: bool) -> KernelBuild | None:
    """The 8-warp 2-stage build (128 tokens a stage) with ``kb``'s L2 policy if one CTA of it fills an SM, else None."""
    build = dataclasses.replace(kernel_build(g, variant="mma", warps=8, stages=2, timeline=timeline),
                                kv_evict_first=kb.kv_evict_first)
    return build if occ(build) == 1 else None


def _one_stage_holding(g: DecodeGeometry, kb: KernelBuild, ctas: int, sms: int, occ,
                       timeline: bool) -> KernelBuild | None:
    """The one-stage build (2 Q K^T chains, then 1: the fewest CTAs per SM first) whose one wave holds ``ctas``, with
    ``kb``'s L2 policy, else None."""
    for chains in (2, 1):
        one = dataclasses.replace(kernel_build(g, variant="mma", stages=1, qk_chains=chains, timeline=timeline),
                                  kv_evict_first=kb.kv_evict_first)
        if ctas <= sms * occ(one):
            return one
    return None


def _persistent(kb: KernelBuild, sms: int, arch: str) -> tuple[KernelBuild, int]:
    """``kb`` as persistent CTAs, as many as ``sms`` SMs hold of its persistent build, and its CTAs per SM."""
    kb = dataclasses.replace(kb, persistent_ctas=1, min_ctas=0)  # no per-unit CTA's bound; the cubin ignores the count
    per_sm = occupancy(kb, arch)
    return dataclasses.replace(kb, persistent_ctas=sms * per_sm), per_sm


def plan_for_device(g: DecodeGeometry, **overrides) -> CallPlan:
    """``plan_call`` for the current GPU: its SM count, architecture, L2 size and the clusters it holds at once."""
    from ...device import describe
    from ...sched.clusters import resident_cluster_ctas

    dev = describe()
    return plan_call(g, sms=dev.sm_count, arch=dev.arch, l2_bytes=dev.l2_bytes,
                     cluster_fit=resident_cluster_ctas(dev.index), **overrides)
