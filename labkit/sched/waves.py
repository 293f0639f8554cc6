"""The wave model: how a grid of CTAs fills the GPU's CTA slots, and what the last wave wastes."""

import math
from dataclasses import asdict, dataclass

from ..values import check_int


@dataclass(frozen=True)
class Waves:
    """``ctas`` over ``slots = sms x ctas_per_sm``: ``waves`` (fractional, as ncu's
    launch__waves_per_multiprocessor), the fill of the last wave, and the efficiency
    ctas / (ceil(waves) x slots): the share of slot-time that holds a CTA when every CTA takes as long."""

    ctas: int
    sms: int
    ctas_per_sm: int
    slots: int
    waves: float
    full_waves: int
    last_wave_fill: float
    efficiency: float

    def to_dict(self) -> dict:
        return asdict(self)


def waves(ctas: int, sms: int, ctas_per_sm: int, *, resident: int | None = None) -> Waves:
    """``resident``: fewer CTAs than ``sms x ctas_per_sm`` that the GPU holds at once (clusters sit whole in a GPC):
    they set the waves and the last wave's fill; the efficiency stays a share of all the slots, as a timeline
    measures it."""
    # a frame's numpy integers too (an API walk)
    ctas, sms, ctas_per_sm = (check_int(v, what=f"{name} =", lo=1) for name, v in (("ctas", ctas), ("sms", sms),
                                                                                   ("ctas_per_sm", ctas_per_sm)))
    slots = held = sms * ctas_per_sm
    if resident is not None:
        held = check_int(resident, what="resident (of the sms x ctas_per_sm slots) =", lo=1, hi=slots)
    n = math.ceil(ctas / held)
    return Waves(ctas, sms, ctas_per_sm, slots, ctas / held, n, (ctas - (n - 1) * held) / held,
                 ctas / (n * slots))


def one_wave_note(w: Waves) -> str | None:
    """What a part-filled single wave's efficiency leaves out: the block scheduler spreads a grid over the SMs before
    it stacks CTAs on one (the recorded timelines: 128 CTAs of 16 x 4k decode on 128 SMs), so SMs, not slots, sit
    idle, and a call bound by DRAM, which needs fewer CTAs per SM than fit, loses far less than the slots' share."""
    if w.full_waves != 1 or w.ctas >= w.slots:
        return None
    busy, least, most = min(w.ctas, w.sms), w.ctas // w.sms, math.ceil(w.ctas / w.sms)
    each = "one" if most == 1 else f"{most}" if least == most else f"{least}-{most}"
    return (f"one part-filled wave: the CTAs spread over the SMs first, so {busy} of {w.sms} SMs hold "
            f"{each} each ({busy / w.sms:.0%} of the SMs busy); "
            f"efficiency is the share of the {w.slots} slots held, which a DRAM-bound call need not fill")


def tile_efficiency(length: int, tile: int) -> float:
    """Useful share of the tiles that cover ``length``: length / (ceil(length / tile) x tile); e.g. q rows
    over scheduled rows (tile cta_q), kv tokens over k iterations x cta_k, or keys over a decode split's stages."""
    length, tile = (check_int(v, what=f"{name} =", lo=1) for name, v in (("length", length), ("tile", tile)))
    return length / (math.ceil(length / tile) * tile)
