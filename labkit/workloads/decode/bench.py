"""Decode benchmark: KV bytes read per second at the issue's sweep, against the copy bandwidth.

Inputs are generated on the GPU (an 8 GB pool from the host would take minutes), the page table
is a shuffled pool; correctness lives in the tests (tests/gpu/test_decode_gpu.py), and one small
call is checked against the exact reference before anything is timed.
"""

import tempfile
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...cuda import cupy
from .build import MAX_SPLITS
from .geometry import DecodeGeometry, call_kv_bytes, kernel_label, kv_bytes_read
from .knobs import OVERRIDES, TAIL_MAX_SPLITS
from .labels import plan_label
from .plan import plan_for_device
from .run import decode_runner, geometry_for

SWEEP = [(b, n, d) for d in (128, 256) for b in (1, 8, 64, 256) for n in (1024, 8192, 32768)]
MAX_KV_BYTES = 9e9  # the largest points (8.6 GB); larger ones are skipped


def _gpu_fill(g: DecodeGeometry, seq_len: int, seed: int):
    cp = cupy()
    rng = np.random.default_rng(seed)
    pages = -(-seq_len // g.page_size)
    table = rng.permutation(g.num_pages)[: g.batch * pages].reshape(g.batch, pages).astype(np.int32)
    host = {"table": np.pad(table, ((0, 0), (0, g.max_pages - pages)), constant_values=-1),
            "seq": np.full(g.batch, seq_len, np.int32), "cuq": np.arange(g.batch + 1, dtype=np.int32)}

    def fill(name, arr):
        if name in host:
            arr.set(host[name])
        else:  # bf16 words of N(0, 1), drawn on the GPU in slices; seeded per buffer, so that builds of one
            # shape (a tail sweep's variants) see the same data whatever other buffers they have
            draw = cp.random.RandomState(seed * 1000003 + zlib.crc32(name.encode()))
            flat = arr.reshape(-1)
            for at in range(0, flat.size, 1 << 28):
                part = flat[at: at + (1 << 28)]
                part[...] = (draw.standard_normal(part.size, dtype=cp.float32).view(cp.uint32) >> 16
                             ).astype(cp.uint16)
    return fill


@contextmanager
def shape_runner(batch: int, kv_len: int, head_dim: int, *, heads_q: int = 32, heads_kv: int = 8, page_size: int = 64,
                 splits: int | None = None, timeline: bool = False, **overrides):
    """A manifest Runner for ``batch`` sequences of ``kv_len`` tokens over a shuffled pool of random K/V (drawn on
    the GPU), its ``CallPlan`` and the folder holding the built cubin; memory is given back afterwards.
    ``overrides``: ``plan_call``'s build knobs (``knobs.OVERRIDES``)."""
    g = geometry_for(batch, kv_len, heads_q=heads_q, heads_kv=heads_kv, head_dim=head_dim, page_size=page_size)
    with tempfile.TemporaryDirectory() as tmp:
        runner, plan = decode_runner(g, splits, tmp, _gpu_fill(g, kv_len, seed=batch * 7 + kv_len), timeline=timeline,
                                     **overrides)
        try:
            yield runner, plan, Path(tmp)
        finally:
            del runner
    cupy().get_default_memory_pool().free_all_blocks()


def bench_point(batch: int, kv_len: int, head_dim: int, *, heads_q: int = 32, heads_kv: int = 8, page_size: int = 64,
                splits: int | None = None, iterations: int = 20, mode: str = "cold", **overrides) -> dict:
    """Time one decode call (cold L2; ``graph``: replayed in a CUDA graph, L2 warm); returns its row."""
    with shape_runner(batch, kv_len, head_dim, heads_q=heads_q, heads_kv=heads_kv, page_size=page_size, splits=splits,
                      **overrides) as (runner, plan, _):
        runner.run_once()
        t = runner.time(iterations=iterations, mode=mode)["decode/paged"]
        del runner  # its buffers go back before the pool is emptied
    return call_row(batch, kv_len, head_dim, heads_q, heads_kv, plan, t.stats.p50_s, mode, page_size)


def heads_label(heads_q: int, heads_kv: int, page_size: int = 64) -> str:
    """A report row's ``heads``: ``32/8``, with a page size other than 64 named after it (``32/8 page 16``)."""
    return f"{heads_q}/{heads_kv}" + ("" if page_size == 64 else f" page {page_size}")


def call_row(batch: int, kv_len: int, head_dim: int, heads_q: int, heads_kv: int, plan, p50_s: float, mode: str,
             page_size: int = 64) -> dict:
    """A timed call as a report row (``bench_point``'s, the sweeps' and ``compare_builds``'): shape (a page size other
    than 64 named after the heads, "32/8 page 16"), plan (splits, build label; a tail's units), p50 and K+V TB/s."""
    nbytes = call_kv_bytes(batch, kv_len, heads_kv, head_dim)
    return {"batch": batch, "kv_len": kv_len, "head_dim": head_dim, "heads": heads_label(heads_q, heads_kv, page_size),
            "splits": plan.splits, "kernel": plan_label(plan),
            "kv_MB": nbytes / 1e6, "p50_us": p50_s * 1e6, "TBps": nbytes / p50_s / 1e12, "mode": mode}


# the cold timing modes a bench takes (labkit.timing), as its titles name them
COLD_L2 = {"cold": "cold L2 (memset flush, left dirty)", "cold_clean": "cold L2 (flushed, then left clean)"}

LARGE_CALL_BYTES = 1e9  # from here one split already fills the GPU: a sweep stops at LARGE_CALL_SPLITS
LARGE_CALL_SPLITS = 16


def sweep_counts(g: DecodeGeometry) -> list[int]:
    """The split counts a split sweep times besides the heuristic's: every power of two up to one per page and
    MAX_SPLITS, or up to ``LARGE_CALL_SPLITS`` for calls over ``LARGE_CALL_BYTES``."""
    top = min(g.max_pages, MAX_SPLITS if kv_bytes_read(g) <= LARGE_CALL_BYTES else LARGE_CALL_SPLITS)
    return [2 ** i for i in range(12) if 2 ** i <= top]


def split_sweep(batch: int, kv_len: int, head_dim: int = 128, **kw) -> list[dict]:
    """Every count of ``sweep_counts`` and the heuristic's, marked: at its count the row is the plan itself
    (its build and cluster may differ from the other counts' default build)."""
    shape = {k: kw[k] for k in ("heads_q", "heads_kv", "page_size") if k in kw}
    g = geometry_for(batch, kv_len, head_dim=head_dim, **shape)
    pick = plan_for_device(g, **{k: v for k, v in kw.items() if k in OVERRIDES}).splits
    rows = []
    for s in sorted(set(sweep_counts(g)) | {pick}):
        row = bench_point(batch, kv_len, head_dim, splits=None if s == pick else s, **kw)
        row["heuristic"] = s == pick
        rows.append(row)
    return rows


def tail_candidates(g: DecodeGeometry, plan, sms: int) -> list[tuple[int, int]]:
    """(tail_units, tail_splits) to time beside a plan: for one split, the units past the call's last whole wave of
    CTA slots, those plus one wave, and a quarter of the units; for more, a quarter and a half of the units
    (one wave of CTAs already); in 2 and 4 times the plan's splits (at most 16 and one per page)."""
    units = g.batch * g.heads_kv * plan.kernel.row_blocks(g)
    slots = sms * plan.ctas_per_sm
    if plan.splits == 1:
        last = units % slots or slots
        counts = sorted({min(units, last), min(units, last + slots), max(1, units // 4)})
    else:
        counts = sorted({max(1, units // 4), max(1, units // 2)})
    top = min(TAIL_MAX_SPLITS, g.max_pages)
    own = (plan.tail_units, plan.kernel.tail_splits)  # a tail the plan splits itself is the plan's row
    pairs = [(u, f * plan.splits) for u in counts for f in (2, 4) if f * plan.splits <= top]
    return [p for p in pairs if p != own]


@dataclass(frozen=True)
class TailSweep:
    """A tail sweep's rows (as ``bench_point``'s; ``heuristic`` marks the plan) and, when asked for, the per-CTA
    timelines of one cold call of the plan and of the fastest variant (``labkit.sched.Timeline``: ``active_ctas``,
    ``sm_drain_ns`` show how the last wave drained)."""

    rows: list[dict]
    timelines: dict  # "plan" / the fastest variant's name ("tail 68/4") -> Timeline


def tail_sweep(batch: int, kv_len: int, head_dim: int = 128, *, heads_q: int = 32, heads_kv: int = 8,
               page_size: int = 64, iterations: int = 20, candidates: list[tuple[int, int]] | None = None,
               timelines: bool = False, mode: str = "cold") -> TailSweep:
    """The plan (its build without persistent CTAs, which take whole units) against the same call with its last units
    in more splits (``tail_candidates``), on the same data,
    one cold sample of each per round in a shuffled order (``mode``: ``cold`` or ``cold_clean``, ``labkit.timing``).
    Before timing, every variant's output is checked
    against the plan's: the units before the tail bit for bit, the tail's within the split-reduction tolerance
    (2^-7 of the largest output). ``timelines``: then also record a cold call of the plan and of the fastest
    variant with the instrumented build."""
    from ...device import describe
    from ...errors import ArgumentError

    shape = {"heads_q": heads_q, "heads_kv": heads_kv, "page_size": page_size}
    g = geometry_for(batch, kv_len, head_dim=head_dim, **shape)
    plan = plan_for_device(g, persistent=False)  # tails split units; persistent CTAs take whole ones
    if plan.kernel.cluster_splits or plan.kernel.variant != "mma":
        raise ArgumentError(f"tail sweep at batch {batch} x {kv_len} d{head_dim}: the plan runs "
                            f"{kernel_label(plan.kernel)}; tails take tensor-core builds without clusters")
    knobs = {"plan": {"persistent": False}}
    for units, splits in tail_candidates(g, plan, describe().sm_count) if candidates is None else candidates:
        # the plan's own count beside the tail: alone, tail knobs take the count of a caller's build (2 splits at 16 x
        # 4k, where the plan runs 1), and a tail of 2 splits was refused there, which skipped the whole sweep
        knobs[f"tail {units}/{splits}"] = {"splits": plan.splits, "tail_units": units, "tail_splits": splits}
    if len(knobs) == 1:
        raise ArgumentError(f"tail sweep at batch {batch} x {kv_len} d{head_dim}: no tail can take more than the "
                            f"plan's {plan.splits} splits")

    def check(outs: dict) -> None:
        ref = outs["plan"]
        scale = float(np.abs(ref).max())
        for name, kw in knobs.items():
            # units before either call's tail (sequence x heads_kv + KV head): the plan may split a tail of its own
            whole = len(ref) - max(kw.get("tail_units", 0), plan.tail_units)
            if not (np.isfinite(outs[name]).all() and np.array_equal(outs[name][:whole], ref[:whole])
                    and np.abs(outs[name] - ref).max() <= 2.0 ** -7 * scale):
                raise AssertionError(f"tail sweep: {name} does not give the plan's output "
                                     f"(max difference {np.abs(outs[name] - ref).max():.3g})")

    plans, timing, _ = time_builds(batch, kv_len, head_dim, knobs, shape, iterations, check, what="tail sweep",
                                   mode=mode)
    rows = [{**call_row(batch, kv_len, head_dim, heads_q, heads_kv, plans[name], t.stats.p50_s, mode, page_size),
             "heuristic": name == "plan"} for name, t in timing.items()]
    fastest = min(timing, key=lambda n: timing[n].stats.p50_s)
    traces = {}
    if timelines:
        from .run import decode_timeline

        for name in dict.fromkeys(("plan", fastest)):
            traces[name] = decode_timeline(batch, kv_len, head_dim, cold=mode, **shape, **knobs[name])
    return TailSweep(rows, traces)


def time_builds(batch: int, kv_len: int, head_dim: int, knobs: dict, shape: dict, iterations: int, check, *,
                what: str, mode: str = "cold") -> tuple[dict, dict, dict]:
    """``(plans, timings, outputs)`` of the call built with each of ``knobs`` (name -> ``plan_call`` knobs), the GPU
    half of the tail sweep and of ``compare.compare_builds``: every output poisoned, written once and given to
    ``check`` (which raises on a wrong one) before anything is timed, then one cold (``mode``) sample of each per
    round in a shuffled order, on the same data; the outputs are read again afterwards, and a build whose timed
    calls wrote anything else raises."""
    from contextlib import ExitStack

    from ...timing import interleave
    from .inputs import bf16_to_f32

    cp = cupy()
    group = shape["heads_q"] // shape["heads_kv"]
    with ExitStack() as stack:
        runners, plans, outs = {}, {}, {}
        for name, kw in knobs.items():
            runner, plans[name], _ = stack.enter_context(shape_runner(batch, kv_len, head_dim, **shape, **kw))
            runner.buffers["out"].fill(0xFFFF)  # poison: every row must be written
            runner.run_once()
            outs[name] = bf16_to_f32(cp.asnumpy(runner.buffers["out"])).reshape(-1, group, head_dim)
            runners[name] = runner
        check(outs)
        # split units' counters and persistent CTAs' claims reset themselves: the calls repeat with no zeroing
        timing = interleave({n: (lambda r=r: r.launch_call(0)) for n, r in runners.items()},
                            iterations=iterations, warmup=1, mode=mode, order="shuffle")
        for name, r in runners.items():
            if not np.array_equal(bf16_to_f32(cp.asnumpy(r.buffers["out"])).reshape(outs[name].shape), outs[name]):
                raise AssertionError(f"{what}: the timed calls of {name} wrote a different output")
        runners.clear()
        del runner, r  # the pools go back as each shape_runner closes
    return plans, timing, outs


def parse_point(spec: str) -> tuple[int, int]:
    """``"64x1024"`` as (batch, kv_len), each a positive integer; kv_len may be written in thousands of 1024 as the
    tables print it (``64x8k``).

    Raises:
        ArgumentError: one line naming the spec and what was expected.
    """
    from ...errors import ArgumentError
    from ...values import parse_int, parse_kilo_int

    batch, x, kv_len = spec.strip().partition("x")
    if not x:
        raise ArgumentError(f"point {spec!r}: expected BATCHxKV_LEN, e.g. 64x1024 or 64x8k")
    kv = parse_kilo_int(kv_len, what=f"point {spec!r}: kv_len", hi=(1 << 31) - 1)
    return parse_int(batch, what=f"point {spec!r}: batch", lo=1, hi=(1 << 31) - 1), kv


def check_points(points: list[tuple[int, int]], head_dim: int, *, heads_q: int = 32, heads_kv: int = 8,
                 page_size: int = 64) -> list[tuple[int, int, int]]:
    """The (batch, kv_len, head_dim) calls a bench asked for by name, each checked as its launch will be (the
    geometry the kernel takes, at most ``MAX_KV_BYTES`` of K/V), with nothing run.

    Raises:
        ArgumentError: the first call that cannot run, named.
    """
    from ...errors import ArgumentError

    checked = []
    for batch, kv_len in points:
        g = geometry_for(batch, kv_len, head_dim=head_dim, heads_q=heads_q, heads_kv=heads_kv, page_size=page_size)
        if kv_bytes_read(g) > MAX_KV_BYTES:
            raise ArgumentError(f"point {batch}x{kv_len} d{head_dim}: {kv_bytes_read(g) / 1e9:.1f} GB of K/V per call; "
                                f"the bench takes at most {MAX_KV_BYTES / 1e9:.0f} GB")
        if (batch, kv_len, head_dim) in checked:
            raise ArgumentError(f"point {batch}x{kv_len} given twice: each call is timed once")
        checked.append((batch, kv_len, head_dim))
    return checked


def check_once() -> float:
    """One small call against the exact reference before anything is timed; returns the max error.

    Raises:
        AssertionError: the kernel is wrong here; nothing should be timed.
    """
    from .geometry import DecodeGeometry
    from .inputs import make_inputs
    from .reference import reference_and_bound
    from .run import run_decode

    g = DecodeGeometry(2, 32, 8, 128, 64, 16, 40)
    x = make_inputs(g, seq_lens=[1000, 77], seed=1)
    ref, bound = reference_and_bound(x)
    err = np.abs(run_decode(x).out - ref)
    if not (err <= bound).all():
        raise AssertionError(f"decode check failed before timing: max error {np.nanmax(err):.3g}")
    return float(err.max())


ROUNDS_95 = "x_best_95%"  # render's column for x_best_peer's interval


def render(rows: list[dict], title: str, extra: tuple[str, ...] = ()) -> str:
    """The rows as a text table under ``title``: the call's columns, the peers' where any row has them, then
    ``extra`` (shown whole, as the kernel label)."""
    from .peers import interval_label

    cols = ["batch", "kv_len", "head_dim", "heads", "splits", "kernel", "mode", "kv_MB", "p50_us", "TBps"]
    shown = ("heuristic", "labkit_beside_peers", "sdpa_cudnn", "sdpa_flash", "fa3", "flex_paged", "x_best_peer",
             "x_best_peer_low")
    more = [ROUNDS_95 if c == "x_best_peer_low" else c for c in shown if any(c in r for r in rows)]
    more += [c for c in extra if c not in cols]
    whole = {"kernel", *extra}

    def cell(r, c):
        if c == ROUNDS_95:  # the interval of x_best_peer's median, round by round (peers.x_best_peer_interval)
            return interval_label(r["x_best_peer_low"], r["x_best_peer_high"]) if "x_best_peer_low" in r else "-"
        if c == "x_best_peer" and isinstance(r.get(c), float):  # 0.996 is behind: two decimals showed 1.00
            return f"{r[c]:.3f}"
        if isinstance(r.get(c), float):
            return f"{r[c]:.2f}"
        # a peer's error stays short, and on one line: a report keeps its whole message, newlines and all
        return str(r.get(c, "-")) if c in whole else " ".join(str(r.get(c, "-")).split())[:12]

    width = {c: max([9] + [len(cell(r, c)) for r in rows]) for c in cols + more}
    lines = [title, "  ".join(f"{c:>{width[c]}}" for c in cols + more)]
    lines += ["  ".join(f"{cell(r, c):>{width[c]}}" for c in cols + more) for r in rows]
    return "\n".join(lines)
