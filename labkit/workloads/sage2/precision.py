"""Where Sage2's error comes from: the same inputs through several mainloop builds (Sage2's
single-term FP8 P.V, ``pv_terms`` 1, and the two-term split, ``pv_terms`` 2, at any tiles),
each checked against exact fp32 attention and its mainloop timed, so the price of the
precision is measured beside it. ``labkit sage2 precision`` is the CLI.

On N(0, 1) inputs attention is near uniform and the outputs are tiny averages, so each
P and V element's e4m3 rounding (about 2.5 % rel-L1 each) reaches the output unaveraged;
INT8 Q K^T alone costs about 1.3 %. The split leaves mostly the INT8 part.
"""

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from ..._json import Node
from ..._text import duration
from ...cuda import cupy, require_gpu
from ...errors import ArgumentError
from ...timing import Stats, time_gpu
from ...values import Shape, check_finite, check_int
from .inputs import check_inputs, random_inputs, to_f32
from .plan import Sage2Plan
from .reference import accuracy, attention_ref, to_bhnd
from .schedule import Schedule

MAX_BIAS = 1e4  # |k_bias|, |v_bias|: N(0, 1) + bias stays finite in bf16 and fp16 (fp16's largest is 65504)


@dataclass(frozen=True)
class PrecisionPoint:
    """One mainloop build at one shape: accuracy against exact fp32 attention and mainloop time."""

    pv_terms: int
    cta_q: int
    cta_k: int
    warp_q: int
    cos: float
    rel_l1: float
    rmse: float
    max_abs: float
    nan: int
    dynamic_shared_memory_bytes: int
    mainloop: Stats
    tops: float
    build: str = "seed"  # Schedule.mainloop: seed (attn_fwd.cu) or sm90 (attn_fwd_sm90.cu)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "PrecisionPoint":
        return cls(**{**d, "mainloop": Stats.from_node(Node(d["mainloop"], "mainloop"))})


def check_bias(bias: float, what: str, dtype: str = "bf16", *, shown: str | None = None) -> float:
    """A K or V bias: finite and within ``MAX_BIAS`` (1e300 had passed: the inputs became inf). ``shown``: the text
    the user typed, named as typed (1e9, not 1e+09)."""
    bias = check_finite(bias, what=what)
    if abs(bias) > MAX_BIAS:
        raise ArgumentError(f"{what} {shown or f'{bias:g}'}: expected -{MAX_BIAS:g}..{MAX_BIAS:g} "
                            f"(inputs stay finite in {dtype})")
    return bias


def precision_study(shape=(1, 37810, 56, 128), *, layout: str = "NHD", dtype: str = "bf16", k_bias: float = 0.0,
                    v_bias: float = 0.0, iterations: int = 5, seed: int = 0,
                    schedules: Sequence[Schedule] = (Schedule(), Schedule(pv_terms=2))) -> list[PrecisionPoint]:
    """Each schedule on the same fresh N(0, 1) inputs (plus optional per-channel biases):
    checked first (fp32 reference computed once), then the mainloop timed (cold L2). Arguments are
    checked before any GPU work (ArgumentError, as the CLI's)."""
    from .profile import check_options

    b, n, h, d = shape = Shape.of(shape)
    check_options(layout=layout, dtype=dtype, seed=seed)
    check_int(iterations, what="iterations", lo=1)
    k_bias, v_bias = check_bias(k_bias, "k_bias", dtype), check_bias(v_bias, "v_bias", dtype)
    schedules = list(schedules)
    if not schedules or not all(isinstance(s, Schedule) for s in schedules):
        raise ArgumentError(f"schedules {schedules!r}: expected one or more Schedule")
    require_gpu("the Sage2 precision study")
    q, k, v = random_inputs(b, n, n, h, h, d, layout=layout, dtype=dtype, seed=seed, k_bias=k_bias, v_bias=v_bias)
    x = check_inputs(q, k, v, layout=layout)
    ref = None
    points = []
    for sched in schedules:
        p = Sage2Plan(x, sched)
        p.run()
        if ref is None:
            ref = attention_ref(*(to_f32(a, dtype) for a in (q, k, v)), sm_scale=p.sm_scale, layout=layout)
        acc = accuracy(to_bhnd(to_f32(p.out, dtype), layout), ref)
        stats = time_gpu(p.mainloop, name=f"sage2/mainloop/{sched.text()}", iterations=iterations).stats
        points.append(PrecisionPoint(
            pv_terms=sched.pv_terms, cta_q=sched.cta_q, cta_k=sched.cta_k, warp_q=sched.warp_q, cos=acc["cos"],
            rel_l1=acc["rel_l1"], rmse=acc["rmse"], max_abs=acc["max_abs"], nan=acc["nan"],
            dynamic_shared_memory_bytes=p.dynamic_smem_bytes, mainloop=stats,
            tops=4 * b * n * n * h * d / stats.p50_s / 1e12, build=sched.mainloop))
        del p
        cupy().get_default_memory_pool().free_all_blocks()
    return points


def precision_frame(points):
    """One row per build: the accuracy metrics, mainloop p50 (ms), TOPS and shared memory."""
    import pandas as pd

    rows = [{"build": p.build, "pv_terms": p.pv_terms, "cta_q/cta_k/warp_q": f"{p.cta_q}/{p.cta_k}/{p.warp_q}",
             "P.V": "Sage2: e4m3 P, e4m3 V" if p.pv_terms == 1 else "two-term e4m3 P and V",
             "cos": p.cos, "rel_l1": p.rel_l1, "rmse": p.rmse, "nan_elements": p.nan,  # a count, not a missing value
             "mainloop_p50_ms": p.mainloop.p50_s * 1e3, "TOPS": p.tops,
             "smem_bytes": p.dynamic_shared_memory_bytes} for p in points]
    return pd.DataFrame(rows).set_index(["build", "pv_terms", "cta_q/cta_k/warp_q"])


def shown_precision(frame):
    """``precision_frame`` as notebook 02 shows it: the mainloop to the us, as the tail table, and TOPS to 0.1 (it had
    shown 120.237411 ms and 1011.826788 TOPS; then 0.04 ms beside 0.03 at a small shape); the saved CSV keeps every
    digit."""
    from ...report.tables import rounded

    return rounded(frame, (("_ms", 3), ("TOPS", 1)))


def fastest_build(points, shown, *, on: str = "this GPU") -> str:
    """Which build of ``points`` ran the mainloop fastest, against ``shown`` (a Schedule: the build whose phases and
    tail study the notebook shows), so that a faster build beside the headline numbers is said in words; ``on``: the
    GPU that measured them (a recorded run's, by name: "here" had read as this machine)."""
    def is_shown(p) -> bool:
        return (p.build, p.pv_terms, p.cta_q, p.cta_k, p.warp_q) == (
            shown.mainloop, shown.pv_terms, shown.cta_q, shown.cta_k, shown.warp_q)

    best = min(points, key=lambda p: p.mainloop.p50_s)
    line = (f"fastest mainloop on {on}: {best.build} build, pv_terms {best.pv_terms}, "
            f"{duration(best.mainloop.p50_s * 1e9)} ({best.tops:.0f} TOPS)")  # 0.043 ms had read "0.0 ms"
    mine = next((p for p in points if is_shown(p)), None)
    if mine is None:
        return line + "; the build whose phases and tail study this notebook shows is not among these"
    if is_shown(best):
        return line + ", the build whose phases and tail study this notebook shows"
    # "2.97x the seed build's 120.2 ms" read as 2.97 times that time (a review): say which way
    return line + (f", {mine.mainloop.p50_s / best.mainloop.p50_s:.2f}x faster than the {mine.build} build "
                   f"({duration(mine.mainloop.p50_s * 1e9)}), whose phases and tail study this notebook shows")
