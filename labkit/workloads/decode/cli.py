"""``labkit decode build|from-manifest|bench|compare``: thin shells over labkit.workloads.decode."""

import sys

from ..._cliargs import int_in, output_dir, output_path, typed
from ..._text import counted
from .build import MAX_SPLITS

SPLITS_HELP = ("default: the plan's own count and build; a count given takes the default build for it (at 8 x 8k "
               "d128 the plan runs 2 splits of 8 warps in a cluster, --splits 2 the 4-warp build)")


def _build(args) -> int:
    from .build import build_plan
    from .geometry import DecodeGeometry
    from .plan import describe_plan, plan_call

    pages = -(-args.kv_len // args.page_size)
    g = DecodeGeometry(args.batch, args.heads_q, args.heads_kv, args.head_dim, args.page_size, pages,
                       args.batch * pages if args.pool_pages is None else args.pool_pages, args.max_q_len, args.layout)
    plan = plan_call(g, splits=args.splits)
    path = build_plan(g, plan, args.out.path)
    print(f"{path}\n  {describe_plan(plan)}; check it with: labkit manifest check {path}")
    return 0


def _from_manifest(args) -> int:
    from ...manifest import load
    from .from_manifest import from_manifest

    path, notes = from_manifest(load(args.file), args.out.path, splits=args.splits)
    print("\n".join(f"- {n}" for n in notes))
    print(f"{path}\n  check it with: labkit manifest check {path}")
    return 0


def _bench(args) -> int:
    from ...errors import ArgumentError
    from ...probes import copy_bandwidth
    from ...provenance import collect
    from .bench import (
        COLD_L2,
        MAX_KV_BYTES,
        SWEEP,
        bench_point,
        check_once,
        check_points,
        render,
        split_sweep,
        tail_sweep,
    )

    twice = next((v for i, v in enumerate(args.variant or ()) if v in args.variant[:i]), None)
    if twice is not None:  # before the GPU: one row per call, and a report keeps each once
        raise ArgumentError(f"--variant {twice} given twice: each kernel variant is timed once")
    # the calls: --point's at one geometry, or the sweep (and the seed-sized call), checked before the GPU
    given = [f"--{o.replace('_', '-')}" for o in ("head_dim", "heads_q", "heads_kv", "page_size")
             if getattr(args, o) is not None]
    if args.point and args.quick:
        raise ArgumentError("--point and --quick: --point names the calls, --quick takes three of the sweep's")
    if given and not args.point:
        raise ArgumentError(f"{', '.join(given)}: {'it applies' if len(given) == 1 else 'they apply'} to the --point "
                            "calls; without --point the bench runs the issue's sweep at its own geometry (32/8 heads, "
                            "page 64, head_dim 128 and 256)")
    shape = {"heads_q": args.heads_q or 32, "heads_kv": args.heads_kv or 8, "page_size": args.page_size or 64}
    if args.point:
        points = check_points(args.point, args.head_dim or 128, **shape)
    else:
        points = [(1, 8192, 128), (8, 8192, 128), (64, 8192, 128)] if args.quick else SWEEP
        points = [(b, n, d) for b, n, d in points if 2 * b * n * 8 * d * 2 <= MAX_KV_BYTES]
    print(f"check against the exact reference: max |error| {check_once():.2e}", flush=True)
    copy = copy_bandwidth(1 << 30, mode=args.mode)["memcpy"]["GBps_read_plus_write"]  # the ceiling, timed as the calls
    print(f"copy 1 GiB device to device: {copy / 1e3:.2f} TB/s read+write", flush=True)
    provenance = collect(timing_mode=args.mode)
    rows, sweeps = [], {}

    partial = None if args.out is None else args.out.path.with_name(args.out.path.name + ".partial")

    def save(final: bool = False) -> None:
        """After every stage into FILE.partial (an interrupted or failing bench keeps what it measured, and an
        earlier report at FILE stays whole); at the end into FILE."""
        if args.out is not None:
            from .report import write

            write(rows, sweeps, copy, provenance, args.out.path if final else partial)
            if final:
                partial.unlink(missing_ok=True)

    def timed(row: dict) -> dict:
        print(f"  [{len(rows) + 1}] batch {row['batch']} x {row['kv_len']}, d{row['head_dim']}, {row['heads']}, "
              f"{counted(row['splits'], 'split')}, {row['mode']}: {row['p50_us']:.2f} us, "
              f"{row['TBps']:.2f} TB/s", flush=True)
        rows.append(row)
        save()
        return row

    variants = []  # the build knob of each row, for the peers' rounds
    for b, n, d in points:
        for v in args.variant or (None,):  # every point takes either kernel (the mma one was d128 only at first)
            timed(bench_point(b, n, d, iterations=args.iterations, mode=args.mode, variant=v, **shape))
            variants.append({} if v is None else {"variant": v})
    if args.peers:
        from .peers import PEERS, best_peer, peer_rates

        for row, knobs in zip(rows, variants, strict=True):
            rates = peer_rates(row["batch"], row["kv_len"], row["head_dim"], iterations=args.iterations,
                               mode=args.mode, **shape, **knobs)
            row.update(rates)
            ours = rates.get("labkit_beside_peers")
            best = best_peer(rates)
            row["x_best_peer"] = ours / best[1] if best and best[1] and isinstance(ours, float) else "-"  # same rounds
            save()
        reasons: dict[tuple[str, str], list[str]] = {}  # (peer, why it has no rate) -> the points it says so at
        for r in rows:
            for p in PEERS:
                if p in r and not isinstance(r[p], float):
                    reasons.setdefault((p, r[p]), []).append(f"{r['batch']} x {r['kv_len']} d{r['head_dim']}")
        for (p, why), at in reasons.items():
            print(f"peer {p}{'' if len(at) == len(rows) else ' at ' + ', '.join(at)}: {why}")
    for v in () if args.point else args.variant or (None,):  # the sweep's own last call
        for mode in (args.mode, "graph"):  # the seed-sized call, and its launch-bound replay in a CUDA graph
            timed({**bench_point(2, 704, 256, heads_q=24, heads_kv=4, iterations=args.iterations, mode=mode,
                                 variant=v), "heads": "24/4 seed"})
    print(render(rows, f"paged decode, page {shape['page_size']}, {COLD_L2[args.mode]} (TBps = K+V bytes read / p50)"),
          flush=True)
    if args.sweep_splits:
        at = {"1x8192": (1, 8192, 128, 32, 8), "8x8192": (8, 8192, 128, 32, 8), "1x1024": (1, 1024, 128, 32, 8)}
        if args.sweep_splits == "all" or args.point:  # --point: its own calls
            at = {f"{b}x{n} d{d}": (b, n, d, shape["heads_q"], shape["heads_kv"]) for b, n, d in points}
        if not args.point:
            at["2x704 seed"] = (2, 704, 256, 24, 4)
        worst = []
        for key, (b, n, d, hq, hk) in at.items():
            sweeps[key] = split_sweep(b, n, d, heads_q=hq, heads_kv=hk, page_size=shape["page_size"],
                                      iterations=args.iterations, mode=args.mode)
            save()
            best = min(r["p50_us"] for r in sweeps[key])
            pick = next(r for r in sweeps[key] if r["heuristic"])
            worst.append((pick["p50_us"] / best - 1, key))
            print(render(sweeps[key], f"split sweep, batch {b} x {n}, d{d}, {hq}/{hk} heads: the heuristic's "
                                      f"{pick['splits']} splits at {pick['p50_us'] / best - 1:+.1%} of the best"),
                  flush=True)
        off, key = max(worst)
        print(f"split heuristic: at most {off:+.1%} of the best split count over {len(worst)} sweeps ({key})",
              flush=True)
    if args.sweep_tails:
        import numpy as np

        from ...errors import ArgumentError

        for b, n, d in points:
            try:
                sweep = tail_sweep(b, n, d, iterations=args.iterations, mode=args.mode, timelines=True, **shape)
            except ArgumentError as exc:  # a cluster plan, or one whose splits are already at the most
                print(f"tail sweep, batch {b} x {n}, d{d}: skipped: {exc}", flush=True)
                continue
            key = f"{b}x{n} d{d} tails"
            sweeps[key] = sweep.rows
            save()
            plan_us = next(r["p50_us"] for r in sweep.rows if r["heuristic"])
            best = min(sweep.rows, key=lambda r: r["p50_us"])
            print(render(sweep.rows, f"tail sweep, batch {b} x {n}, d{d}: the best, {best['kernel']}, at "
                                     f"{best['p50_us'] / plan_us - 1:+.1%} of the plan"), flush=True)
            for name, tl in sweep.timelines.items():
                drain = tl.sm_drain_ns() / 1e3
                print(f"  {name}, one {args.mode} call: {tl.stats().makespan_ns / 1e3:.1f} us; CTAs resident by "
                      f"twentieths {' '.join(map(str, tl.active_ctas(20)))}; SMs idle before the end: median "
                      f"{np.median(drain):.1f} us, 90th percentile {np.percentile(drain, 90):.1f} us", flush=True)
                if args.out is not None:
                    tl.save(args.out.path.with_name(f"{args.out.path.stem}.{key.replace(' ', '_')}."
                                                    f"{name.replace(' ', '').replace('/', 'x')}.timeline.json"))
    from .report import from_rows
    from .targets import format_targets

    run = from_rows(rows, sweeps, copy, provenance)
    print("\n".join(format_targets(run)), flush=True)
    if args.out is not None:
        save(final=True)
        print(f"report: {args.out.path} (labkit report show|diff read it)")
    _print_standings(run, args.among, None if args.out is None else args.out.path)
    return 0


def _print_standings(run, among, own) -> None:
    """Where the run's calls of 2 GB or more stand among the recorded runs (after the report is saved: a damaged
    record there costs this line, not the measurements)."""
    from ..._env import data_dir
    from ...errors import LabkitError
    from .spread import board_label, read_reports, standings

    if among is False:  # --among none
        return
    folder = among if among is not None else data_dir() / "runs"
    if not folder.is_dir():
        return  # an installed labkit without the recorded runs
    try:
        lines = standings(run, read_reports([folder]), exclude=own)  # --out under the folder: not among itself
    except LabkitError as exc:
        print(f"recorded runs under {folder} not read: {exc}", flush=True)
        return
    if lines:
        board = board_label(run.provenance)
        this_gpu = f"this GPU: {board}; " if board else ""
        print(f"where its calls of 2 GB or more stand among the recorded runs ({this_gpu}labkit report spread {folder} "
              "--point BxN --kernel BUILD shows them):", *lines, sep="\n", flush=True)


def _compare(args) -> int:
    from ...probes import copy_bandwidth
    from ...provenance import collect
    from .bench import COLD_L2, check_once, render
    from .compare import compare_builds, plan_builds

    b, n, d = args.batch, args.kv_len, args.head_dim
    shape = {"heads_q": args.heads_q, "heads_kv": args.heads_kv, "page_size": args.page_size}
    planned = plan_builds(b, n, d, tuple(args.build), **shape)  # a call or build that cannot run: refused first
    print(f"check against the exact reference: max |error| {check_once():.2e}", flush=True)
    print(f"batch {b} x {n}, d{d}, {args.heads_q}/{args.heads_kv} heads, page {args.page_size}: the plan and "
          f"{len(args.build)} build(s), outputs checked against the plan's, then {args.iterations} shuffled "
          f"{args.mode} rounds", flush=True)
    try:
        rows = compare_builds(b, n, d, tuple(args.build), **shape, iterations=args.iterations, planned=planned,
                              mode=args.mode)
    except AssertionError as exc:  # a build that computes something else: the finding, in one line; nothing timed
        print(f"labkit: error: {exc}", file=sys.stderr)
        return 1
    shown = [{**{k: v for k, v in r.items() if k != "heuristic"}, "kernel": f"{r['kernel']} ({r['ctas_per_sm']}/SM)",
              "vs_plan": f"{r['vs_plan']:+.2%}", "max_diff": f"{r['max_diff']:.3g}", "bit_equal": str(r["bit_equal"])}
             for r in rows]
    print(render(shown, f"compare, batch {b} x {n}, d{d} ({COLD_L2[args.mode]}, p50; vs_plan: p50 / the plan's - 1)",
                 extra=("build", "vs_plan", "max_diff", "bit_equal")), flush=True)
    if args.out is not None:
        from .report import ROW_KEYS, write

        copy = copy_bandwidth(1 << 30, mode=args.mode)["memcpy"]["GBps_read_plus_write"]
        kept = [{k: r[k] for k in (*ROW_KEYS, "heuristic", "build")} for r in rows]
        # the plan's call is the report's row (what `report diff` pairs across runs); every build is in its sweep
        write(kept[:1], {f"{b}x{n} d{d} compare": kept}, copy, collect(timing_mode=args.mode), args.out.path)
        print(f"report: {args.out.path} (labkit report show|diff read it)")
    return 0


# a call's geometry: (option, default or None when required, help); the geometry checks each value against what the
# kernel takes (head_dim 128/256, pages 16/32/64, ...)
GEOMETRY = (("batch", None, "sequences"), ("kv-len", None, "KV tokens per sequence"), ("heads-q", 32, "query heads"),
            ("heads-kv", 8, "KV heads"), ("head-dim", 128, "128 or 256"),
            ("page-size", 64, "tokens per page: 16, 32 or 64"))


def _call_arguments(p, options) -> None:
    for name, default, what, *top in options:  # top: the option's own bound, where the geometry has one
        p.add_argument(f"--{name}", type=int_in(1, top[0] if top else (1 << 31) - 1, what=f"--{name}"),
                       default=default, required=default is None,
                       help=what + ("" if default is None else f" (default {default})"))


def _among(text: str):
    """``--among``: an existing directory, or ``none`` (False)."""
    from pathlib import Path

    from ...errors import ArgumentError

    if text == "none":
        return False
    p = Path(text)
    if not p.is_dir():
        raise ArgumentError(f"--among {text!r}: {'not a directory' if p.exists() else 'does not exist'} (a directory "
                            "of decode reports, or none)")
    return p


def register(sub) -> None:
    from .bench import COLD_L2, parse_point

    dp = sub.add_parser("decode", help="labkit's paged-KV decode kernel").add_subparsers(dest="sub", required=True)
    p = dp.add_parser("build", help="write the cubin and its schema_version 4 manifest (no GPU needed)")
    _call_arguments(p, GEOMETRY + (("max-q-len", 1, "query tokens per sequence, 1..8 (causal)", 8),))
    p.add_argument("--pool-pages", type=int_in(1, (1 << 31) - 1, what="--pool-pages"), default=None,
                   help="pages in the pool (default: batch x pages per sequence)")
    p.add_argument("--splits", type=int_in(1, MAX_SPLITS, what="--splits"), default=None, help=SPLITS_HELP)
    p.add_argument("--layout", choices=("plain", "interleaved"), default="plain")
    p.add_argument("--out", required=True, type=output_dir("--out", writes=True),
                   help="directory for the cubin and the manifest")
    p.set_defaults(fn=_build)
    p = dp.add_parser("from-manifest", help="labkit's cubin and manifest for a trtllm-gen decode manifest's geometry")
    p.add_argument("file", help="a schema_version 4 trtllm-gen decode manifest (e.g. the seed's)")
    p.add_argument("--splits", type=int_in(1, MAX_SPLITS, what="--splits"), default=None, help=SPLITS_HELP)
    p.add_argument("--out", required=True, type=output_dir("--out", writes=True),
                   help="directory for the cubin and the manifest")
    p.set_defaults(fn=_from_manifest)
    p = dp.add_parser("bench", help="KV TB/s over the sweep or at the calls you name (GPU)")
    p.add_argument("--quick", action="store_true", help="three points instead of the sweep")
    p.add_argument("--point", type=typed(parse_point, "point"), action="append", metavar="BATCHxKV_LEN",
                   help="time this call instead of the sweep (and the seed-sized call), e.g. 64x1024; repeatable; "
                        "its geometry from the four options below")
    for name, what in (("heads-q", "query heads (default 32)"), ("heads-kv", "KV heads (default 8)"),
                       ("head-dim", "head_dim: 128 or 256 (default 128)"),
                       ("page-size", "tokens per page: 16, 32 or 64 (default 64)")):  # None: not given
        p.add_argument(f"--{name}", type=int_in(1, (1 << 31) - 1, what=f"--{name}"), default=None,
                       help=f"the --point calls' {what}")
    p.add_argument("--sweep-splits", nargs="?", const="some", choices=("some", "all"), default=None,
                   help="also time every power-of-two split count against the heuristic's: at four calls "
                        "(some, the default) or at every point of the sweep and the seed call (all); with --point, at "
                        "the --point calls")
    p.add_argument("--sweep-tails", action="store_true",
                   help="also time, at each point whose plan has no cluster, the same call with its last units in 2 "
                        "and 4 times its splits (interleaved, same data; outputs checked against the plan's first), "
                        "and record a cold call's per-CTA timeline of the plan and the fastest (saved beside --out)")
    p.add_argument("--iterations", type=int_in(1, 10000, what="--iterations"), default=20)
    p.add_argument("--mode", choices=tuple(COLD_L2), default="cold",
                   help="how each sample finds L2: cold, flushed by a memset that leaves it dirty (NVBench's and "
                        "triton's flush; the default), or cold_clean, that flush and then a read of other data, so "
                        "no dirty line is written back inside the sample (the seed-sized call's graph replay runs "
                        "warm either way)")
    p.add_argument("--out", type=output_path("--out"), default=None, help="also write the results as JSON")
    p.add_argument("--peers", action="store_true",
                   help="also time torch SDPA (cuDNN, flash) and FA3 on the same K/V gathered contiguous, interleaved "
                        "with labkit's call (and FlexAttention, paged, at five points)")
    p.add_argument("--variant", choices=("mma", "fma"), action="append",
                   help="time this kernel (tensor cores or CUDA cores) instead of the default; repeatable")
    p.add_argument("--among", type=typed(_among, "directory"), default=None, metavar="DIR",
                   help="the recorded runs (decode reports under DIR) to place the run's calls of 2 GB or more "
                        "among, after the targets: H200s run them in two states about 2 %% apart (default: this "
                        "checkout's data/runs; 'none': skip)")
    p.set_defaults(fn=_bench)
    from .compare import BUILD_KNOBS, parse_build

    p = dp.add_parser("compare", help="the plan's call against other builds of it, interleaved on the same data (GPU)")
    _call_arguments(p, GEOMETRY)
    p.add_argument("--build", type=typed(parse_build, "build"), action="append", required=True,
                   metavar="KNOB=VALUE[,...]",
                   help=f"a build to time beside the plan's, e.g. warps=8,stages=2,persistent=1 (knobs: "
                        f"{', '.join(BUILD_KNOBS)}); repeatable. Knobs as plan_call takes them: any build knob but "
                        "wide_boxes, row_boxes and page_prefetch sets aside the plan's own choices (its clustered "
                        "pair, its persistent CTAs), wide_boxes=1 or 0 loads the plan's own build through 5-D or 4-D "
                        "tensor maps (head_dim 256 plans take 5-D), row_boxes=1 through 5-D maps that read each token "
                        "row whole (no plan takes them yet), page_prefetch=1 or 0 loads its refills' page ids a stage "
                        "ahead or not (the 8-warp head_dim 128 plans do), and splits=N alone "
                        "takes that count's default build; the kernel column shows what ran")
    p.add_argument("--iterations", type=int_in(1, 10000, what="--iterations"), default=40)
    p.add_argument("--mode", choices=tuple(COLD_L2), default="cold",
                   help="how each sample finds L2, as for decode bench: cold (flushed, left dirty; the default) or "
                        "cold_clean (flushed, then left clean)")
    p.add_argument("--out", type=output_path("--out"), default=None,
                   help="also write the rows as a decode report (labkit report show|diff)")
    p.set_defaults(fn=_compare)
