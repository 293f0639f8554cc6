"""Interleaved sampling of several configurations (A/B, sweeps): one sample of each per round,
in a rotated order, so slow drift (clocks, temperature) spreads over all of them instead of
biasing whichever ran last. The seed report shows ~1.4 % drift between identical configurations
measured at different times, more than the tail effects it studied."""

from collections.abc import Callable, Mapping

from ..cuda import cupy
from .events import Mode, Timing, _read_clock, _Sampler, build_timing
from .nvtx import nvtx_range


def interleave(fns: Mapping[str, Callable[[], object]], *, iterations: int = 5, warmup: int = 1,
               mode: Mode = "cold", on_sample: Callable[[str, int, float], None] | None = None,
               rotate: int = 0) -> dict[str, Timing]:
    """Time each ``fns[name]`` ``iterations`` times, round-robin with a rotating start.

    Args:
        fns: name -> zero-argument launcher (CuPy's current stream).
        on_sample: called as (name, round, seconds) after each sample (progress, saving).
        rotate: where round 0 starts in ``fns``' order (a study whose rounds are separate calls
            passes the round's number, so the rotation continues across calls).
    """
    if mode == "graph":
        raise ValueError("interleave times eagerly: use mode 'cold' or 'hot'")
    cp = cupy()
    names = list(fns)
    smp = _Sampler.create(mode)
    samples: dict[str, list[float]] = {n: [] for n in names}
    with smp.stream:
        for _ in range(warmup):
            for n in names:
                fns[n]()
        smp.stream.synchronize()
        clock_start = _read_clock()
        for r in range(iterations):
            at = (r + rotate) % len(names)
            order = names[at:] + names[:at]
            for n in order:
                smp.pad()
                with nvtx_range(n):
                    start = smp.event()
                    fns[n]()
                    stop = smp.event()
                stop.synchronize()
                t = cp.cuda.get_elapsed_time(start, stop) / 1e3
                samples[n].append(t)
                if on_sample is not None:
                    on_sample(n, r, t)
        clock_end = _read_clock()
    return {n: build_timing(n, mode, x, flush_bytes=smp.flush_bytes, clocks=(clock_start, clock_end),
                            stop_reason=f"iterations={iterations}, interleaved over {len(names)} configurations")
            for n, x in samples.items()}
