"""The scheduling model of one launch of labkit's kernels (pure: no GPU): CTAs, waves and efficiencies.

Sage2 mainloop: one CTA per (q tile of ``cta_q`` rows, head, batch); every CTA runs
ceil(kv_len / cta_k) k iterations. Decode: one CTA per (split, KV head, row block, sequence) (row blocks:
more query rows than one CTA holds, e.g. 16 heads x 8 tokens); a sequence's
ceil(kv_len / tokens_per_stage) stages are cut into ``splits`` runs of ceil(stages / splits) (as
paged_decode*.cu do), so the longest split sets the time. Efficiencies, each a share in 0..1:

- ``wave_efficiency``: ctas / (ceil(waves) x slots), the static wave model (uniform CTAs; a decode call with tail
  splits: its CTAs' stage-time over the slot-time of a greedy schedule, see ``decode_launch``);
- ``q_tile_efficiency``, ``kv_tile_efficiency``: useful rows / keys over the scheduled ones;
- ``split_efficiency`` (decode): stages / (splits x the longest split's stages); with tail splits, the units' stages
  over all the CTAs' stages (``full_waves`` and ``last_wave_ctas`` then still count CTAs, not time);
- ``efficiency``: their product, the useful share of the slot-time the launch holds.
"""

import heapq
import math
from dataclasses import asdict, dataclass

from ..errors import ArgumentError
from ..values import check_int
from .waves import tile_efficiency, waves


@dataclass(frozen=True)
class LaunchModel:
    """The model of one launch; ``kind`` is ``sage2`` or ``decode``."""

    kind: str
    ctas: int
    sms: int
    ctas_per_sm: int
    slots: int
    waves: float
    full_waves: int  # ceil(waves): the waves the launch takes
    last_wave_ctas: int
    wave_efficiency: float
    q_tile_efficiency: float
    kv_tile_efficiency: float
    split_efficiency: float
    efficiency: float

    def to_dict(self) -> dict:
        return asdict(self)


def _launch(kind: str, ctas: int, sms: int, ctas_per_sm: int, q_eff: float, kv_eff: float,
            split_eff: float, resident: int | None = None, wave_eff: float | None = None) -> LaunchModel:
    """``wave_eff`` None: the static wave model's (uniform CTAs)."""
    w = waves(ctas, sms, ctas_per_sm, resident=resident)
    last = ctas - (w.full_waves - 1) * (resident or w.slots)
    wave_eff = w.efficiency if wave_eff is None else wave_eff
    return LaunchModel(kind, ctas, sms, ctas_per_sm, w.slots, w.waves, w.full_waves, last, wave_eff, q_eff, kv_eff,
                       split_eff, wave_eff * q_eff * kv_eff * split_eff)


def _greedy_makespan(lengths: list[int], slots: int) -> int:
    """The end of the last of ``lengths`` (CTAs in index order) when each starts on the first slot to free up, as the
    hardware starts CTAs."""
    ends = [0] * min(slots, len(lengths))
    for n in lengths:
        heapq.heapreplace(ends, ends[0] + n)
    return max(ends)


def sage2_launch(batch: int, heads: int, q_len: int, kv_len: int, *, sms: int, ctas_per_sm: int, cta_q: int = 128,
                 cta_k: int = 64) -> LaunchModel:
    """The Sage2 mainloop's grid (ceil(q_len / cta_q), heads, batch) on ``sms`` x ``ctas_per_sm`` slots."""
    for name, v in (("batch", batch), ("heads", heads), ("q_len", q_len), ("kv_len", kv_len)):
        check_int(v, what=name, lo=1)
    ctas = math.ceil(q_len / cta_q) * heads * batch
    return _launch("sage2", ctas, sms, ctas_per_sm, tile_efficiency(q_len, cta_q), tile_efficiency(kv_len, cta_k),
                   1.0)


def decode_launch(batch: int, kv_len: int, splits: int, *, heads_kv: int, tokens_per_stage: int, sms: int,
                  ctas_per_sm: int, row_blocks: int = 1, resident: int | None = None, tail_units: int = 0,
                  tail_splits: int = 0) -> LaunchModel:
    """A paged-decode call's grid (splits, heads_kv x row_blocks, batch), every sequence ``kv_len`` tokens long;
    ``resident``: the CTAs the GPU holds at once when fewer than its slots (a call whose splits form clusters);
    ``tail_units``: the last units run in ``tail_splits`` splits each, after the others' CTAs. Those CTAs are shorter,
    so the wave efficiency is then their stage-time over the slots x the end of a greedy schedule in index order, and
    the split efficiency the stages over the CTAs' stage-time."""
    for name, v in (("batch", batch), ("kv_len", kv_len), ("splits", splits), ("heads_kv", heads_kv),
                    ("tokens_per_stage", tokens_per_stage), ("row_blocks", row_blocks)):
        check_int(v, what=name, lo=1)
    units = heads_kv * row_blocks * batch
    stages = math.ceil(kv_len / tokens_per_stage)
    longest = math.ceil(stages / splits)
    kv_eff = tile_efficiency(kv_len, tokens_per_stage)
    if not tail_units:
        return _launch("decode", splits * units, sms, ctas_per_sm, 1.0, kv_eff, stages / (splits * longest), resident)
    check_int(tail_units, what="tail_units", lo=1, hi=units)
    check_int(tail_splits, what="tail_splits", lo=splits + 1)
    if resident is not None:
        raise ArgumentError("tail_units: tail splits take no clusters, so every slot holds a CTA (resident None)")
    tail_longest = math.ceil(stages / tail_splits)
    lengths = [longest] * ((units - tail_units) * splits) + [tail_longest] * (tail_units * tail_splits)
    held = sum(lengths)
    wave_eff = held / (sms * ctas_per_sm * _greedy_makespan(lengths, sms * ctas_per_sm))
    return _launch("decode", len(lengths), sms, ctas_per_sm, 1.0, kv_eff, units * stages / held, wave_eff=wave_eff)


def dense_lengths(points, *, step: int, span: int | None = None) -> list[int]:
    """Lengths for a model line through ``points``: every ``step``-th length (and each point, each
    point - 1 and + 1) from min - span to max + span, so the line shows each tile boundary it crosses."""
    pts = sorted({check_int(p, what="length", lo=1) for p in points})
    check_int(step, what="step", lo=1)
    span = 4 * step if span is None else span
    lo, hi = max(1, pts[0] - span), pts[-1] + span
    return sorted(set(range(lo, hi + 1, step)) | {x for p in pts for x in (p - 1, p, p + 1) if x >= 1})


def frame(models: list[LaunchModel], **columns):
    """Models as a DataFrame, one row each; ``columns``: extra per-row columns (e.g. ``q_len=[...]``)."""
    import pandas as pd

    df = pd.DataFrame([m.to_dict() for m in models])
    for k, v in columns.items():
        df.insert(0, k, list(v))
    return df
