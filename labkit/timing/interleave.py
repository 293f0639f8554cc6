"""Interleaved sampling of several configurations (A/B, sweeps): one sample of each per round,
in a rotated or shuffled order, so slow drift (clocks, temperature) spreads over all of them instead of
biasing whichever ran last. The seed report shows ~1.4 % drift between identical configurations
measured at different times, more than the tail effects it studied.

A rotated order keeps each configuration's predecessor within a round, which matters on a
power-capped GPU: on the H200 at the Sage2 seed shape, a mainloop timed
right after FlashAttention-3 FP8 ran 8 % slower than after anything else (48.3 ms against 44.6 ms;
data/runs/20261201T144600Z-sage2_sm90_ring_max3), and a fixed order put every sample there. A shuffled
order (a seeded permutation per round) spreads predecessors too."""

import random
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from ..cuda import cupy
from ..errors import ArgumentError
from .events import Mode, _Sampler
from .nvtx import nvtx_range
from .record import Timing, build_timing, read_clock

Order = Literal["rotate", "shuffle"]


def round_orders(names: Sequence[str], iterations: int, *, rotate: int = 0, order: Order = "rotate",
                 seed: int = 0) -> list[list[str]]:
    """The configurations' order in each round: ``names`` rotated by ``rotate + round``, or a permutation
    drawn from ``random.Random(seed)`` per round (``order="shuffle"``)."""
    names = list(names)
    if not names:  # rotate divided by their count; shuffle gave empty rounds
        raise ArgumentError("round_orders: no configurations to order")
    if order == "shuffle":
        rng = random.Random(seed)
        return [rng.sample(names, len(names)) for _ in range(iterations)]
    if order != "rotate":
        raise ArgumentError(f"order must be 'rotate' or 'shuffle', not {order!r}")
    out = []
    for r in range(iterations):
        at = (r + rotate) % len(names)
        out.append(names[at:] + names[:at])
    return out


def interleave(fns: Mapping[str, Callable[[], object]], *, iterations: int = 5, warmup: int = 1,
               mode: Mode = "cold", on_sample: Callable[[str, int, float], None] | None = None,
               rotate: int = 0, order: Order = "rotate", seed: int = 0) -> dict[str, Timing]:
    """Time each ``fns[name]`` ``iterations`` times, one sample of each per round.

    Args:
        fns: name -> zero-argument launcher (CuPy's current stream).
        on_sample: called as (name, round, seconds) after each sample (progress, saving).
        rotate: where round 0 starts in ``fns``' order (a study whose rounds are separate calls
            passes the round's number, so the rotation continues across calls).
        order: ``"rotate"``, or ``"shuffle"`` (a permutation per round from ``seed``) where configurations
            draw different power (peers beside labkit's kernel): see the module's docstring.
    """
    if mode == "graph":
        raise ArgumentError("interleave times eagerly: use mode 'cold', 'cold_clean' or 'hot'")
    cp = cupy()
    names = list(fns)
    orders = round_orders(names, iterations, rotate=rotate, order=order, seed=seed)
    smp = _Sampler.create(mode)
    samples: dict[str, list[float]] = {n: [] for n in names}
    enqueue: dict[str, list[float]] = {n: [] for n in names}
    with smp.stream:
        for _ in range(warmup and max(warmup, 2)):  # two rounds at least: the first call may compile
            for n in names:
                t = time.perf_counter()
                fns[n]()
                enqueue[n].append(time.perf_counter() - t)
                smp.stream.synchronize()
        if warmup:  # as time_gpu: the pad outlasts the slowest host enqueue, so no sample times the host
            smp.cover_enqueue(max(statistics.median(v[1:]) for v in enqueue.values()))
        clock_start = read_clock()
        for r, names_r in enumerate(orders):
            for n in names_r:
                smp.pad()
                with nvtx_range(n):
                    start = smp.event()
                    fns[n]()
                    stop = smp.event()
                stop.synchronize()
                t = cp.cuda.get_elapsed_time(start, stop) / 1e3
                smp.rewind()  # read: the next sample records into the same two events, none created per sample
                samples[n].append(t)
                if on_sample is not None:
                    on_sample(n, r, t)
        clock_end = read_clock()
    reason = f"iterations={iterations}, interleaved ({order}) over {len(names)} configurations"
    return {n: build_timing(n, mode, x, flush_bytes=smp.flush_bytes, clocks=(clock_start, clock_end),
                            stop_reason=reason)
            for n, x in samples.items()}
