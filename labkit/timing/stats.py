"""Statistics as a pure function of samples (no GPU imports: tested on CPU against numpy)."""

import math
from dataclasses import asdict, dataclass, fields
from typing import Sequence

import numpy as np

from .._json import I32
from ..errors import ArgumentError

STAT_FIELDS = ("count", "mean_s", "p50_s", "p90_s", "p95_s", "p99_s", "min_s", "max_s")
MAX_SECONDS = 86400.0  # one timed region longer than a day is not a measurement
MEAN_ROUNDING = 1e-12  # relative: a few ulps


@dataclass(frozen=True)
class Stats:
    """The Sage2 report's statistics record, field for field.

    Percentiles interpolate linearly between order statistics (numpy's default ``linear``
    method); the seed report's values reproduce it. With 10 samples p99 only interpolates
    between the two largest samples: read p95/p99 only with >= 100 samples.
    """

    count: int
    mean_s: float
    p50_s: float
    p90_s: float
    p95_s: float
    p99_s: float
    min_s: float
    max_s: float

    @classmethod
    def from_samples(cls, samples_s: Sequence[float]) -> "Stats":
        x = np.asarray(samples_s, dtype=np.float64)
        if x.ndim != 1 or x.size == 0:
            raise ArgumentError(f"Stats need a non-empty 1-D list of samples, got shape {x.shape}")
        if not np.all(np.isfinite(x)):
            raise ArgumentError("Stats samples contain NaN or inf")
        if x.min() < 0 or x.max() > MAX_SECONDS:  # what from_node refuses: a saved Stats must load back
            bad = float(x.min() if x.min() < 0 else x.max())
            raise ArgumentError(f"a sample of {bad!r} s: expected 0..{MAX_SECONDS} s (a negative one is an event pair "
                             "read out of order, as cudaEventElapsedTime can under Confidential Computing)")
        p50, p90, p95, p99 = np.percentile(x, [50, 90, 95, 99], method="linear")
        mean = min(max(float(x.mean()), float(x.min())), float(x.max()))  # equal samples' mean rounds an ulp past them
        return cls(count=int(x.size), mean_s=mean, p50_s=float(p50), p90_s=float(p90),
                   p95_s=float(p95), p99_s=float(p99), min_s=float(x.min()), max_s=float(x.max()))

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_node(cls, n) -> "Stats":
        """A record read from a file (``labkit._json.Node``): every field, in range and in order.

        Raises:
            FormatError: naming the file and the field.
        """
        n.obj(STAT_FIELDS)
        count = n["count"].int(1, I32[1])
        vals = {k: n[k].num(0, MAX_SECONDS) for k in STAT_FIELDS if k != "count"}
        if not vals["min_s"] <= vals["p50_s"] <= vals["p90_s"] <= vals["p95_s"] <= vals["p99_s"] <= vals["max_s"]:
            order = " <= ".join(f"{k} {vals[k]!r}" for k in ("min_s", "p50_s", "p90_s", "p95_s", "p99_s", "max_s"))
            raise n.error(f"expected min_s <= p50_s <= p90_s <= p95_s <= p99_s <= max_s, not {order}")
        # a mean of equal samples can round an ulp past them (reports written before Stats clamped it)
        if not vals["min_s"] * (1 - MEAN_ROUNDING) <= vals["mean_s"] <= vals["max_s"] * (1 + MEAN_ROUNDING):
            raise n["mean_s"].fail(f"a mean within [min_s, max_s] = [{vals['min_s']}, {vals['max_s']}]")
        return cls(count=count, **vals)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))


@dataclass(frozen=True)
class Spread:
    """What makes a Stats record interpretable: spread and a normal-theory 95 % CI of the mean."""

    std_s: float
    iqr_s: float
    ci95_s: float  # half-width: mean +- ci95_s
    rel_std: float

    @classmethod
    def from_samples(cls, samples_s: Sequence[float]) -> "Spread":
        x = np.asarray(samples_s, dtype=np.float64)
        std = float(x.std(ddof=1)) if x.size > 1 else 0.0
        q1, q3 = np.percentile(x, [25, 75])
        mean = float(x.mean())
        return cls(std_s=std, iqr_s=float(q3 - q1), ci95_s=1.96 * std / math.sqrt(x.size),
                   rel_std=std / mean if mean else math.inf)


def median_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float] | None:
    """A distribution-free interval for the median of ``values`` (the sign test's): the order statistics x_(k) and
    x_(n+1-k), 1-based, for the largest k with P(Binomial(n, 1/2) < k) <= (1 - confidence) / 2, which cover the
    median at least ``confidence`` of the time whatever the distribution, so a handful of slow samples widen it
    no more than they move a median. None where ``values`` are too few for any (5 or fewer at 95 %)."""
    if not 0 < confidence < 1:
        raise ArgumentError(f"confidence {confidence!r}: expected a fraction between 0 and 1")
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or not np.all(np.isfinite(x)):
        raise ArgumentError("median_interval needs a 1-D list of finite values")
    x = np.sort(x)
    n, tail_allowed = x.size, (1 - confidence) / 2
    k, below = 0, 0.0  # below: P(Binomial(n, 1/2) <= k - 1)
    while k < n and below + math.comb(n, k) / 2**n <= tail_allowed:
        below += math.comb(n, k) / 2**n
        k += 1
    return None if k == 0 else (float(x[k - 1]), float(x[n - k]))
