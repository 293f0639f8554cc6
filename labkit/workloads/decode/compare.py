"""``labkit decode compare``: the plan's own call beside the same call built with other ``plan_call`` knobs, every
output checked against the plan's before anything is timed, then cold interleaved rounds on the same data."""

import tempfile
from pathlib import Path

import numpy as np

from . import bench
from .build import MAX_SPLITS, build_plan
from .geometry import kernel_label, kv_bytes_read
from .knobs import OVERRIDES
from .plan import plan_call
from .run import geometry_for

BOOL_KNOBS = ("kv_evict_first", "cluster", "persistent", "wide_boxes", "row_boxes", "page_prefetch", "padded_rows")
BUILD_KNOBS = ("splits", *OVERRIDES)
KNOB_MAX = {"splits": MAX_SPLITS, "stages": 4}  # stages: kernel_build's own bound, so both say 1..4 (a review)


def parse_build(spec: str) -> dict:
    """``"warps=8,stages=2,persistent=1"`` as ``plan_call``'s knobs: ``variant`` mma or fma, ``kv_evict_first``,
    ``cluster``, ``persistent``, ``wide_boxes``, ``row_boxes``, ``page_prefetch`` and ``padded_rows`` 0 or 1, the
    others positive integers (``splits`` 1..MAX_SPLITS); whether the combination builds is ``plan_call``'s to say.

    Raises:
        ArgumentError: one line naming the spec, the knob and what was expected.
    """
    from ...errors import ArgumentError
    from ...values import parse_int

    knobs = {}
    for item in spec.split(","):
        key, eq, value = (t.strip() for t in item.partition("="))
        where = f"build {spec!r}: {item.strip() or '(empty)'}"
        if not eq or key not in BUILD_KNOBS:
            raise ArgumentError(f"{where}: expected KNOB=VALUE with KNOB one of {', '.join(BUILD_KNOBS)}")
        if key in knobs:
            raise ArgumentError(f"{where}: {key} given twice")
        if key == "variant":
            if value not in ("mma", "fma"):
                raise ArgumentError(f"{where}: expected variant=mma or variant=fma")
            knobs[key] = value
        elif key in BOOL_KNOBS:
            if value not in ("0", "1"):
                raise ArgumentError(f"{where}: expected {key}=0 or {key}=1")
            knobs[key] = value == "1"
        else:
            top = KNOB_MAX.get(key, 1 << 16)
            knobs[key] = parse_int(value, what=f"build {spec!r}: {key}", lo=1, hi=top)
    return knobs


def build_name(knobs: dict) -> str:
    """A build's knobs as ``parse_build`` reads them (``warps=8,stages=2,persistent=1``)."""
    return ",".join(f"{k}={int(v) if isinstance(v, bool) else v}" for k, v in knobs.items())


def plan_builds(batch: int, kv_len: int, head_dim: int, builds: tuple[dict, ...], *, heads_q: int = 32,
                heads_kv: int = 8, page_size: int = 64) -> dict[str, dict]:
    """``{"plan": {}, name: knobs, ...}`` for ``compare_builds``: the plan and every build planned for this call on this
    GPU and built as its launch will be (compiled, manifest written and checked: split count, grid), with no kernel
    run. A build is ``plan_call``'s knobs, so any build knob sets aside the plan's own choices (its clustered pair,
    its persistent CTAs) and ``splits`` alone takes that count's default build.

    Raises:
        ArgumentError: the call or a build that cannot run, named; a build that runs the same call as the plan or as
            another build; none given; more K/V than the GPU holds for one copy per build.
    """
    from ...device import describe
    from ...errors import ArgumentError, LabkitError

    g = geometry_for(batch, kv_len, head_dim=head_dim, heads_q=heads_q, heads_kv=heads_kv, page_size=page_size)
    at = f"batch {batch} x {kv_len} d{head_dim}"
    if not builds:
        raise ArgumentError("compare: no build to time beside the plan")
    per_call = kv_bytes_read(g)
    if per_call > bench.MAX_KV_BYTES:
        raise ArgumentError(f"compare at {at}: {per_call / 1e9:.1f} GB of K/V per call; at most "
                            f"{bench.MAX_KV_BYTES / 1e9:.0f} GB")
    from ...cuda import gpu_status, require_gpu
    from ...sched.clusters import resident_cluster_ctas

    # without a GPU the builds are still planned and built, for the H200 (plan_call's defaults), so a knob the call
    # cannot take is named before "needs a CUDA GPU"
    dev = describe() if gpu_status()[0] else None
    target = dict(sms=dev.sm_count, arch=dev.arch, l2_bytes=dev.l2_bytes,
                  cluster_fit=resident_cluster_ctas(dev.index)) if dev else {}
    if dev and (len(builds) + 1) * per_call > 0.8 * dev.memory_bytes:
        raise ArgumentError(f"compare at {at}: the plan and {len(builds)} build(s) each hold their own "
                            f"{per_call / 1e9:.1f} GB of K/V, more than 80 % of the GPU's "
                            f"{dev.memory_bytes / 1e9:.0f} GB")
    knobs, plans = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, kw in (("plan", {}), *((build_name(kw), kw) for kw in builds)):
            try:
                plan = plan_call(g, **target, **kw)
                build_plan(g, plan, Path(tmp) / str(len(plans)), arch=target.get("arch", "sm_90"))  # launch checks
            except LabkitError as exc:
                raise ArgumentError(f"build {name!r} at {at}: {exc}") from None
            same = next((other for other, p in plans.items() if p == plan), None)
            if same is not None:
                raise ArgumentError(f"build {name!r} at {at} runs the same call as {same!r} ("
                                    f"{kernel_label(plan.kernel)}, {plan.splits} split(s)): nothing to compare")
            knobs[name], plans[name] = kw, plan
    require_gpu("decode compare")
    return knobs


def compare_builds(batch: int, kv_len: int, head_dim: int = 128, builds: tuple[dict, ...] = (), *, heads_q: int = 32,
                   heads_kv: int = 8, page_size: int = 64, iterations: int = 40,
                   planned: dict[str, dict] | None = None, mode: str = "cold") -> list[dict]:
    """The plan's own call against the same call built with each of ``builds`` (``plan_call`` knobs, e.g.
    ``parse_build``'s), on the same data. Every build is planned (and compiled) before anything is allocated on the GPU;
    every output is poisoned, then checked against the plan's before any timing: finite, and within 2^-7 of its largest
    value (another split count or build sums in another order); then one cold sample (``mode``: ``cold`` or
    ``cold_clean``) of each per round in a shuffled order. Rows: ``bench_point``'s, with ``build`` (``"plan"`` or the
    knobs), ``vs_plan`` (p50 / the plan's - 1), ``max_diff`` and ``bit_equal`` against the plan's output;
    ``heuristic`` marks the plan. ``planned``: what ``plan_builds`` returned for these arguments, when the caller has
    planned them already (the CLI, to refuse first).

    Raises:
        ArgumentError: as ``plan_builds``; nothing ran.
        AssertionError: a build's output is not the plan's; nothing was timed.
    """
    shape = {"heads_q": heads_q, "heads_kv": heads_kv, "page_size": page_size}
    knobs = planned if planned is not None else plan_builds(batch, kv_len, head_dim, builds, **shape)
    diffs = {}

    def check(outs: dict) -> None:
        ref = outs["plan"]
        if not np.isfinite(ref).all():
            raise AssertionError(f"compare: the plan's own output has {int((~np.isfinite(ref)).sum())} values that "
                                 "are not finite (unwritten rows or NaN); nothing to check the builds against")
        scale = float(np.abs(ref).max())
        for name, out in outs.items():
            diffs[name] = float(np.abs(out - ref).max()) if np.isfinite(out).all() else float("nan")
            if not diffs[name] <= 2.0 ** -7 * scale:
                raise AssertionError(f"compare: build {name!r} does not give the plan's output (max difference "
                                     f"{diffs[name]:.3g}, allowed {2.0 ** -7 * scale:.3g})")

    plans, timing, outs = bench.time_builds(batch, kv_len, head_dim, knobs, shape, iterations, check, what="compare",
                                            mode=mode)
    base = timing["plan"].stats.p50_s
    return [{**bench.call_row(batch, kv_len, head_dim, heads_q, heads_kv, plans[name], t.stats.p50_s, mode,
                              page_size),
             "heuristic": name == "plan", "build": name, "ctas_per_sm": plans[name].ctas_per_sm,
             "vs_plan": t.stats.p50_s / base - 1, "max_diff": diffs[name],
             "bit_equal": bool(np.array_equal(outs[name], outs["plan"]))} for name, t in timing.items()]
