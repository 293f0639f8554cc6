"""``labkit decode bench`` as library calls: ``bench_calls`` checks what to time before any GPU work, ``run_bench``
times it (the calls, the peers beside each, split and tail sweeps), saves the report after every stage into
FILE.partial and at the end into FILE, and says each step through ``say``."""

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ...errors import ArgumentError
from ...values import first_repeat
from .report import DecodeReport

SEED_CALL = (2, 704, 256, 24, 4)  # batch, kv_len, head_dim, heads_q, heads_kv: the seed manifest's geometry
SOME_SPLIT_SWEEPS = {"1x8192": (1, 8192, 128, 32, 8), "8x8192": (8, 8192, 128, 32, 8), "1x1024": (1, 1024, 128, 32, 8)}


@dataclass(frozen=True)
class BenchCalls:
    """What one bench times, checked: its calls at one geometry, the kernels, the extra sweeps and where it saves."""

    points: tuple[tuple[int, int, int], ...]  # (batch, kv_len, head_dim)
    heads_q: int
    heads_kv: int
    page_size: int
    named: bool  # --point: the user's calls (no seed-sized call; split sweeps at these calls)
    variants: tuple[str | None, ...] = (None,)
    iterations: int = 20
    mode: str = "cold"
    peers: bool = False
    sweep_splits: str | None = None  # None, "some" or "all"
    sweep_tails: bool = False
    out: Path | None = None

    @property
    def shape(self) -> dict:
        return {"heads_q": self.heads_q, "heads_kv": self.heads_kv, "page_size": self.page_size}


def bench_calls(*, point=None, quick: bool = False, head_dim=None, heads_q=None, heads_kv=None, page_size=None,
                variants=None, **options) -> BenchCalls:
    """The calls a bench times: ``point``'s (a list of (batch, kv_len)) at the geometry given, or the issue's sweep at
    its own (32/8 heads, page 64); every call and option checked before the GPU.

    Raises:
        ArgumentError: one line naming the option.
    """
    from .bench import MAX_KV_BYTES, SWEEP, check_points
    from .geometry import kv_bytes_read
    from .run import geometry_for

    if (twice := first_repeat(variants or ())) is not None:  # one row per call, and a report keeps each once
        raise ArgumentError(f"--variant {twice} given twice: each kernel variant is timed once")
    given = [f"--{o.replace('_', '-')}" for o, v in (("head_dim", head_dim), ("heads_q", heads_q),
                                                     ("heads_kv", heads_kv), ("page_size", page_size)) if v is not None]
    if point and quick:
        raise ArgumentError("--point and --quick: --point names the calls, --quick takes three of the sweep's")
    if options.get("sweep_tails") and options.get("out") is None:  # its timelines go beside the report, or are lost
        raise ArgumentError("--sweep-tails records per-CTA timelines saved beside --out FILE: give --out")
    if given and not point:
        raise ArgumentError(f"{', '.join(given)}: {'it applies' if len(given) == 1 else 'they apply'} to the --point "
                            "calls; without --point the bench runs its default sweep at its own geometry (32/8 heads, "
                            "page 64, head_dim 128 and 256)")
    shape = {"heads_q": heads_q or 32, "heads_kv": heads_kv or 8, "page_size": page_size or 64}
    if point:
        points = check_points(point, head_dim or 128, **shape)
    else:
        points = [(1, 8192, 128), (8, 8192, 128), (64, 8192, 128)] if quick else SWEEP
        points = [(b, n, d) for b, n, d in points
                  if kv_bytes_read(geometry_for(b, n, head_dim=d, **shape)) <= MAX_KV_BYTES]
    return BenchCalls(tuple(points), **shape, named=bool(point), variants=tuple(variants or (None,)), **options)


def run_bench(calls: BenchCalls, say: Callable[[str], None] = lambda line: print(line, flush=True)) -> DecodeReport:
    """Time ``calls``: a check against exact attention first, the copy ceiling, then each call (and the peers, the
    sweeps); the report is written after every stage to ``out``.partial (an interrupted or failing bench keeps what it
    measured, and an earlier report at ``out`` stays whole) and at the end to ``out``."""
    from ..._text import counted
    from ...probes import copy_ceiling_GBps
    from ...provenance import collect
    from . import bench
    from .report import from_rows, write

    say(f"check against the exact reference: max |error| {bench.check_once():.2e}")
    copy = copy_ceiling_GBps(calls.mode)  # the ceiling, timed as the calls
    say(f"copy 1 GiB device to device: {copy / 1e3:.2f} TB/s read+write")
    provenance = collect(timing_mode=calls.mode)
    rows: list[dict] = []
    sweeps: dict[str, list[dict]] = {}
    out = calls.out
    partial = None if out is None else out.with_name(out.name + ".partial")

    def save(final: bool = False) -> None:
        if out is not None:
            write(rows, sweeps, copy, provenance, out if final else partial)
            if final:
                partial.unlink(missing_ok=True)

    def timed(row: dict) -> None:
        say(f"  [{len(rows) + 1}] batch {row['batch']} x {row['kv_len']}, d{row['head_dim']}, {row['heads']}, "
            f"{counted(row['splits'], 'split')}, {row['mode']}: {row['p50_us']:.2f} us, {row['TBps']:.2f} TB/s")
        rows.append(row)
        save()

    for b, n, d in calls.points:
        for v in calls.variants:  # every point takes either kernel
            timed(bench.bench_point(b, n, d, iterations=calls.iterations, mode=calls.mode, variant=v, **calls.shape))
    if calls.peers:
        _peers(calls, rows, save, say)
    if not calls.named:  # the sweep's own last call: the seed-sized one, and its launch-bound replay in a CUDA graph
        b, n, d, hq, hk = SEED_CALL
        for v in calls.variants:
            for mode in (calls.mode, "graph"):
                timed({**bench.bench_point(b, n, d, heads_q=hq, heads_kv=hk, iterations=calls.iterations, mode=mode,
                                           variant=v), "heads": "24/4 seed"})
    say(bench.render(rows, f"paged decode, page {calls.page_size}, {bench.COLD_L2[calls.mode]} (TBps = K+V bytes read "
                           "/ p50)"))
    if calls.sweep_splits:
        _split_sweeps(calls, sweeps, save, say)
    if calls.sweep_tails:
        _tail_sweeps(calls, sweeps, save, say)
    if out is not None:
        save(final=True)
    return from_rows(rows, sweeps, copy, provenance)


def _peers(calls: BenchCalls, rows: list[dict], save, say) -> None:
    """torch SDPA, FA3 and FlexAttention beside each row, in the same rounds; then, once, why a peer did not run."""
    from .peers import PEERS, best_peer, peer_rates, shown_reason

    variants = [v for _ in calls.points for v in calls.variants]
    for row, v in zip(rows, variants, strict=True):
        rates = peer_rates(row["batch"], row["kv_len"], row["head_dim"], iterations=calls.iterations, mode=calls.mode,
                           **calls.shape, **({} if v is None else {"variant": v}))
        row.update(rates)
        ours = rates.get("labkit_beside_peers")
        best = best_peer(rates)
        row["x_best_peer"] = ours / best[1] if best and best[1] and isinstance(ours, float) else "-"  # same rounds
        save()
    # (peer, why it has no rate, as printed) -> the points it says so at: whole messages that differ only past what
    # the line shows (a temporary path inside a traceback) are one line
    reasons: dict[tuple[str, str], list[str]] = {}
    saved_in = None if calls.out is None else str(calls.out)
    for r in rows:
        for p in PEERS:
            if p in r and not isinstance(r[p], float):
                at = f"{r['batch']} x {r['kv_len']} d{r['head_dim']}"
                reasons.setdefault((p, shown_reason(p, r[p], saved_in=saved_in)), []).append(at)
    for (p, why), at in reasons.items():
        say(f"peer {p}{'' if len(at) == len(rows) else ' at ' + ', '.join(at)}: {why}")


def _split_sweeps(calls: BenchCalls, sweeps: dict, save, say) -> None:
    """Every split count against the heuristic's, at four calls (``some``), or at every call and the seed's (``all``;
    with named calls, at those), and the heuristic's worst distance from a sweep's best."""
    from . import bench

    at = dict(SOME_SPLIT_SWEEPS)
    if calls.sweep_splits == "all" or calls.named:
        at = {f"{b}x{n} d{d}": (b, n, d, calls.heads_q, calls.heads_kv) for b, n, d in calls.points}
    if not calls.named:
        at["2x704 seed"] = SEED_CALL
    worst = []
    # each kernel variant the calls were timed in gets its own sweeps (--variant fma had swept the default kernel)
    at = {key if v is None else f"{key} {v}": (*call, v) for key, call in at.items() for v in calls.variants}
    for key, (b, n, d, hq, hk, v) in at.items():
        sweeps[key] = bench.split_sweep(b, n, d, heads_q=hq, heads_kv=hk, page_size=calls.page_size,
                                        iterations=calls.iterations, mode=calls.mode,
                                        **({} if v is None else {"variant": v}))
        save()
        best = min(r["p50_us"] for r in sweeps[key])
        pick = next(r for r in sweeps[key] if r["heuristic"])
        worst.append((pick["p50_us"] / best - 1, key))
        say(bench.render(sweeps[key], f"split sweep, batch {b} x {n}, d{d}, {hq}/{hk} heads: the heuristic's "
                                      f"{pick['splits']} splits at {pick['p50_us'] / best - 1:+.1%} of the best"))
    off, key = max(worst)
    say(f"split heuristic: at most {off:+.1%} of the best split count over {len(worst)} sweeps ({key})")


def _tail_sweeps(calls: BenchCalls, sweeps: dict, save, say) -> None:
    """At each call whose plan can take them, its last units in more splits, and a cold call's per-CTA timeline of
    the plan and the fastest (saved beside ``out``)."""
    import numpy as np

    from . import bench

    for b, n, d in calls.points:
        try:
            sweep = bench.tail_sweep(b, n, d, iterations=calls.iterations, mode=calls.mode, timelines=True,
                                     **calls.shape)
        except ArgumentError as exc:  # a cluster plan, or one whose splits are already at the most
            say(f"tail sweep, batch {b} x {n}, d{d}: skipped: {exc}")
            continue
        key = f"{b}x{n} d{d} tails"
        sweeps[key] = sweep.rows
        save()
        plan_us = next(r["p50_us"] for r in sweep.rows if r["heuristic"])
        best = min(sweep.rows, key=lambda r: r["p50_us"])
        say(bench.render(sweep.rows, f"tail sweep, batch {b} x {n}, d{d}: the best, {best['kernel']}, at "
                                     f"{best['p50_us'] / plan_us - 1:+.1%} of the plan"))
        for name, tl in sweep.timelines.items():
            drain = tl.sm_drain_ns() / 1e3
            say(f"  {name}, one {calls.mode} call: {tl.stats().makespan_ns / 1e3:.1f} us; CTAs resident by "
                f"twentieths {' '.join(map(str, tl.active_ctas(20)))}; SMs idle before the end: median "
                f"{np.median(drain):.1f} us, 90th percentile {np.percentile(drain, 90):.1f} us")
            if calls.out is not None:
                tl.save(calls.out.with_name(f"{calls.out.stem}.{key.replace(' ', '_')}."
                                            f"{name.replace(' ', '').replace('/', 'x')}.timeline.json"))
