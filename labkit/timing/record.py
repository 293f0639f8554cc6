"""What a timing keeps: ``Timing`` (the raw samples, their statistics, the SM clock per sample and at the ends, why
sampling stopped), the stop rule, and the clock checks that make two timings comparable."""

import math
from dataclasses import asdict, dataclass

import numpy as np

from .. import _deps
from .._json import Node
from ..cuda import cupy
from .stats import Spread, Stats


@dataclass(frozen=True)
class Timing:
    """Raw samples of one timed region and what makes them interpretable."""

    name: str
    mode: str
    samples_s: tuple[float, ...]
    stats: Stats
    spread: Spread
    calls_per_sample: int
    flush_bytes: int
    sm_clock_start_hz: int | None
    sm_clock_end_hz: int | None
    clock_dropped: bool
    stop_reason: str
    work_check: str
    # per kept sample, the SM clock its pad's spin ran at just before it [Hz], their median, and the samples dropped
    # for a clock under THROTTLE_FRACTION of the max (empty, None and 0 where not measured: Pipeline, interleave)
    sample_clocks_hz: tuple[float | None, ...] = ()
    sm_clock_hz: float | None = None
    dropped_throttled: int = 0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["samples_s"] = list(self.samples_s)
        d["sample_clocks_hz"] = list(self.sample_clocks_hz)
        return d

    def clock_span_mhz(self) -> str:
        """The SM clock at the start and end of the timing, in MHz ('1980-1755'; '' where NVML gave none): under a
        power cap the clock, not the kernel, may be what two timings differ by."""
        a, b = self.sm_clock_start_hz, self.sm_clock_end_hz
        return "" if a is None or b is None else f"{a / 1e6:.0f}-{b / 1e6:.0f}"

    @classmethod
    def from_dict(cls, d: dict) -> "Timing":
        d = dict(d)
        d["samples_s"] = tuple(d["samples_s"])
        d["sample_clocks_hz"] = tuple(d.get("sample_clocks_hz", ()))
        d["stats"] = Stats.from_node(Node(d["stats"], "stats"))  # in order and in range, as a report's
        d["spread"] = Spread(**d["spread"])
        return cls(**d)

    def to_frame(self):
        pd = _deps.require("pandas")
        return pd.DataFrame({"name": self.name, "mode": self.mode, "sample": range(len(self.samples_s)),
                             "time_s": self.samples_s})


THROTTLE_FRACTION = 0.75  # NVBench's --throttle-threshold: a sample whose SM clock ran under this share of the max
THROTTLE_PAUSE_S = 0.05  # and its --throttle-recovery-delay: the pause after a dropped sample


def read_clock() -> int | None:
    from ..device import sm_clock_hz

    return sm_clock_hz(cupy().cuda.Device().id)


def clock_dropped(start: int | None, end: int | None, max_hz: int | None) -> bool:
    if start is None or end is None:
        return False
    return end < 0.9 * start or (max_hz is not None and end < THROTTLE_FRACTION * max_hz)


def throttled(clock_hz: float | None, max_hz: int | None) -> bool:
    """Whether a sample's SM clock is under THROTTLE_FRACTION of the GPU's max (never where either is unknown)."""
    return clock_hz is not None and max_hz is not None and clock_hz < THROTTLE_FRACTION * max_hz


def throttled_error(name: str, dropped: int, kept: int, clock_hz: float, max_hz: int, timeout_s: float) -> str:
    """What ``time_gpu`` says when throttled samples leave it too few past its timeout."""
    return (f"{name}: {dropped} samples ran with the SM clock under {THROTTLE_FRACTION:.0%} of its max "
            f"{max_hz / 1e6:.0f} MHz (the last at {clock_hz / 1e6:.0f} MHz) and were dropped, {kept} kept in "
            f"{timeout_s:g} s: the GPU is throttled (power or heat); let it cool, or look at nvidia-smi -q -d "
            "PERFORMANCE")


def build_timing(name: str, mode: str, samples: list[float], *, flush_bytes: int,
                 clocks: tuple[int | None, int | None], stop_reason: str, work_check: str = "not checked",
                 calls_per_sample: int = 1, sample_clocks: list[float | None] | None = None,
                 dropped_throttled: int = 0) -> Timing:
    """A Timing from raw samples, with the clock-drop flag against this device's max SM clock; ``sample_clocks``
    (one per sample, or None) and the samples dropped as throttled where the sampler measured them."""
    from ..device import describe

    max_hz = describe(cupy().cuda.Device().id).sm_clock_max_hz
    known = [c for c in sample_clocks or () if c is not None]
    if dropped_throttled:  # said where the reason is read: these samples are not in the statistics
        stop_reason += (f"; {dropped_throttled} samples dropped, their SM clock under {THROTTLE_FRACTION:.0%} of "
                        f"{max_hz / 1e6:.0f} MHz")
    return Timing(name=name, mode=mode, samples_s=tuple(samples), stats=Stats.from_samples(samples),
                  spread=Spread.from_samples(samples), calls_per_sample=calls_per_sample, flush_bytes=flush_bytes,
                  sm_clock_start_hz=clocks[0], sm_clock_end_hz=clocks[1],
                  clock_dropped=clock_dropped(*clocks, max_hz), stop_reason=stop_reason, work_check=work_check,
                  sample_clocks_hz=tuple(None if c is None else round(c) for c in sample_clocks or ()),
                  sm_clock_hz=float(np.median(known)) if known else None, dropped_throttled=dropped_throttled)


@dataclass(frozen=True)
class StopRule:
    """When sampling stops: a pure function of the samples so far (tested on CPU with synthetic ones).

    ``iterations`` set: exactly that many. Otherwise at least ``min_samples`` and ``min_time_s``
    of GPU time, then until relative std < ``max_noise`` or 4 x ``min_time_s`` of GPU time; in
    any case at ``max_samples``, or past ``timeout_s`` of wall time with >= 3 samples.
    """

    iterations: int | None = None
    min_samples: int = 10
    max_samples: int = 2000
    min_time_s: float = 0.5
    max_noise: float = 0.005
    timeout_s: float = 15.0

    def reason(self, samples_s: list[float], *, per_sample: int = 1, elapsed_s: float = 0.0) -> str | None:
        """Why to stop now, or None to take another sample."""
        n, total = len(samples_s), sum(samples_s) * per_sample
        if self.iterations is not None:
            return f"iterations={self.iterations}" if n >= self.iterations else None
        if n >= self.min_samples and total >= self.min_time_s:
            mean = float(np.mean(samples_s))
            rel = float(np.std(samples_s, ddof=1) / mean) if mean > 0 else math.inf
            if rel < self.max_noise:
                return f"noise {rel:.2%} < {self.max_noise:.2%}"
            if total >= 4 * self.min_time_s:
                return f"time budget {4 * self.min_time_s:g} s (noise {rel:.2%})"
        if n >= self.max_samples:
            return f"max_samples={self.max_samples}"
        if elapsed_s > self.timeout_s and n >= 3:
            return f"timeout {self.timeout_s:g} s"
        return None


