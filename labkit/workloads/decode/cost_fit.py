"""Where a decode report's cold calls spend their time: each call's p50 as a fixed part plus its K+V bytes at one
streaming rate, ``p50 = fixed + bytes / rate``, fitted by least squares over the report's calls of ``MIN_FIT_MB`` or
more, one fit per geometry (head_dim, heads), mode and kernel variant (a bench of ``--variant mma --variant fma``
times every call once with each).

The fixed part is what a call pays whatever it reads: the launch and the timing window, the first stage's DRAM latency,
the dirty lines a cold flush leaves for the call to write back, the last CTAs' drain. It is why a call of 268 MB reads
at 3.5 TB/s where one of 2 GB reads at 4.4 on the same H200 (``data/runs/20261204T185600Z-decode_bench_targets``:
17.4 us + bytes / 4.53 TB/s over its 8 d128 calls of 100 MB or more, each within -1.1 to +4.0 %). The calls keep the
plan's builds, so the fit describes the plan, not one kernel; its residuals say how well one line holds them.
"""

from dataclasses import asdict, dataclass

from .report import PEERS, DecodePoint, DecodeReport
from .targets import call_label

MIN_FIT_MB = 100.0  # smaller calls are launch- and latency-bound, and their builds differ most
MIN_FIT_CALLS = 3  # two calls always fit a line
FEW_FIT_CALLS = 5  # under it the residuals are one or two degrees of freedom: the line says so


@dataclass(frozen=True)
class CostFit:
    """``p50_us = fixed_us + kv_MB / TBps`` over ``calls`` cold calls of one geometry, mode and kernel variant."""

    head_dim: int
    heads: str
    mode: str
    variant: str  # DecodePoint.variant: mma, fma
    calls: int
    fixed_us: float
    TBps: float  # the streaming rate: K+V bytes per second that each further byte costs
    residual_min: float  # (fit - p50) / p50 over the fitted calls
    residual_max: float
    smallest: str  # the fitted calls with the fewest and the most bytes, and the fixed part's share of each
    smallest_fixed_share: float
    largest: str
    largest_fixed_share: float
    # the same fit of each peer's times (and labkit's in the peers' rounds) where it timed every one of these calls;
    # on the H100s it puts cuDNN's lead at large calls in its rate, not its fixed part
    peers: tuple[tuple[str, float, float, float], ...] = ()  # (column, fixed_us, TBps, largest |residual|)
    peers_unfit: tuple[str, ...] = ()  # peers timed at every one of these calls whose times no line holds

    @property
    def line(self) -> str:
        """``17.4 us + bytes / 4.53 TB/s over 8 calls (each within ...); the fixed part is ...`` (``fit_text``)."""
        return _described(self.fixed_us, self.TBps, self.calls, self.residual_min, self.residual_max,
                          (self.smallest_fixed_share, self.smallest), (self.largest_fixed_share, self.largest))

    def to_dict(self) -> dict:
        return asdict(self)


def _described(fixed: float, rate: float, calls: int, rmin: float, rmax: float, small: tuple[float, str],
               large: tuple[float, str]) -> str:
    few = f", though {calls} calls test one line little" if calls < FEW_FIT_CALLS else ""
    return (f"{fixed:.1f} us + bytes / {rate:.2f} TB/s over {calls} calls (each within {rmin:+.1%} to "
            f"{rmax:+.1%}{few}); the fixed part is {small[0]:.0%} of {small[1]} and {large[0]:.1%} of {large[1]}")


def fit_line(calls) -> tuple[float, float] | None:
    """(fixed_us, TBps) fitted by least squares to ``calls``, (kv_MB, p50_us) pairs of ``MIN_FIT_MB`` or more (the
    caller picks them); None where fewer than ``MIN_FIT_CALLS``, where the bytes do not vary, or where one line does
    not hold them (no positive rate, or a fixed part under zero). A notebook's sweep, which keeps no report, fits
    its calls with it."""
    calls = list(calls)
    n = len(calls)
    if n < MIN_FIT_CALLS:
        return None
    mx = sum(mb for mb, _ in calls) / n
    my = sum(us for _, us in calls) / n
    sxx = sum((mb - mx) ** 2 for mb, _ in calls)
    if sxx == 0:
        return None
    us_per_MB = sum((mb - mx) * (us - my) for mb, us in calls) / sxx
    fixed = my - us_per_MB * mx
    return None if us_per_MB <= 0 or fixed < 0 else (fixed, 1 / us_per_MB)


def residuals(fit: tuple[float, float], calls) -> list[float]:
    """(fit - p50) / p50 at each (kv_MB, p50_us) call: under 0, the call took longer than the line says."""
    fixed, rate = fit
    return [(fixed + mb / rate - us) / us for mb, us in calls]


def fit_text(fit: tuple[float, float], calls: list[tuple[float, float, str]]) -> str:
    """``17.4 us + bytes / 4.53 TB/s over 8 calls (each within -1.1% to +4.0%); the fixed part is 39% of 1 x 32k d128
    and 0.9% of 256 x 8k d128``: the fit over ``calls`` (kv_MB, p50_us, label), and its share of the calls that read the
    fewest and the most bytes."""
    fixed, rate = fit
    off = residuals(fit, [(mb, us) for mb, us, _ in calls])
    small = min(calls, key=lambda c: (c[0], c[1]))
    large = max(calls, key=lambda c: (c[0], -c[1]))
    return _described(fixed, rate, len(calls), min(off), max(off), (fixed / small[1], small[2]),
                      (fixed / large[1], large[2]))


def _rate(v) -> bool:
    """A peer's TB/s at a call, not the text of a peer that did not run there."""
    return isinstance(v, float) and v > 0


def _peer_fit(points: list[DecodePoint], name: str) -> tuple[float, float, float] | None:
    calls = [(p.kv_MB, p.kv_MB / p.peers[name]) for p in points]
    if (line := fit_line(calls)) is None:
        return None
    return *line, max(map(abs, residuals(line, calls)))


def fit_costs(r: DecodeReport, *, min_MB: float = MIN_FIT_MB) -> tuple[CostFit, ...]:
    """One ``CostFit`` per geometry, cold mode and kernel variant whose calls of ``min_MB`` or more ``fit_line``
    fits."""
    groups: dict[tuple, list[DecodePoint]] = {}
    for p in r.points:
        if p.mode != "graph" and p.kv_MB >= min_MB:
            groups.setdefault((p.head_dim, p.heads, p.mode, p.variant), []).append(p)
    fits = []
    for (head_dim, heads, mode, variant), points in sorted(groups.items()):
        if (line := fit_line((p.kv_MB, p.p50_us) for p in points)) is None:
            continue
        fixed, rate = line
        off = residuals(line, [(p.kv_MB, p.p50_us) for p in points])
        small = min(points, key=lambda p: (p.kv_MB, p.p50_us))
        large = max(points, key=lambda p: (p.kv_MB, -p.p50_us))
        timed = {name: _peer_fit(points, name) for name in PEERS if all(_rate(p.peers.get(name)) for p in points)}
        fits.append(CostFit(head_dim, heads, mode, variant, len(points), fixed, rate, min(off), max(off),
                            call_label(small), fixed / small.p50_us, call_label(large), fixed / large.p50_us,
                            tuple((name, *line) for name, line in timed.items() if line is not None),
                            tuple(name for name, line in timed.items() if line is None)))
    return tuple(fits)


def format_fits(r: DecodeReport) -> list[str]:
    """The lines ``decode bench`` and ``report show`` print: a header and one line per fit; none without a fit."""
    fits = fit_costs(r)
    if not fits:
        return []
    lines = [f"time per call, fitted (p50 = fixed + K+V bytes / rate, least squares over the calls of "
             f"{MIN_FIT_MB:g} MB or more, each call in the build it ran):"]
    variants = len({f.variant for f in fits}) > 1  # a bench of both kernels: each line names its own
    for f in fits:
        geometry = f"d{f.head_dim}, {f.heads} heads, {f.mode}" + (f", {f.variant}" if variants else "")
        lines.append(f"  {geometry}: {f.line}")
        if f.peers or f.peers_unfit:
            lines.append("    the same fit of the peers' times at these calls: " + "; ".join(
                [f"{'labkit in their rounds' if name == 'labkit_beside_peers' else name} {fixed:.1f} us + bytes / "
                 f"{rate:.2f} TB/s (within {worst:.1%})" for name, fixed, rate, worst in f.peers]
                + [f"{name}: no line holds its times" for name in f.peers_unfit]))
    return lines


def to_frame(fits: tuple[CostFit, ...]):
    """The fits as a pandas DataFrame, one row each."""
    import pandas as pd

    return pd.DataFrame([f.to_dict() for f in fits])
