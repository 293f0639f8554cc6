"""``labkit decode build|plans|from-manifest|bench|compare``: thin shells over labkit.workloads.decode."""

import sys

from ..._cliargs import int_in, int_list, kilo_int_in, output_dir, output_path, typed
from ..._text import counted, length_label, shell_word
from .build import MAX_SPLITS
from .inputs import MAX_SEQ_LEN

SPLITS_HELP = ("default: the plan's own count and build; a count given takes the default build for it (at 8 x 8k "
               "d128 the plan runs 2 splits of 8 warps in a cluster, --splits 2 the 4-warp build)")


def _build(args) -> int:
    from .build import build_plan, describe_grid
    from .geometry import DecodeGeometry, kernel_label
    from .plan import describe_plan
    from .run import plan_here, sms_here

    pages = -(-args.kv_len // args.page_size)
    g = DecodeGeometry(args.batch, args.heads_q, args.heads_kv, args.head_dim, args.page_size, pages,
                       args.batch * pages if args.pool_pages is None else args.pool_pages, args.max_q_len, args.layout)
    plan, planned_for = plan_here(g, splits=args.splits)
    path = build_plan(g, plan, args.out.path)
    print(f"{path}\n  {describe_plan(plan)}, {planned_for}; check it with: labkit manifest check {shell_word(path)}")
    print(f"  build {kernel_label(plan.kernel)} (as decode tables name it); {describe_grid(g, plan, sms_here())}")
    if pages * args.page_size != args.kv_len:  # the manifest holds pages; its own run fills each row of the table
        print(f"  --kv-len {args.kv_len}: {counted(pages, 'page')} of {args.page_size} per sequence "
              f"({pages * args.page_size} tokens); a call's seq_lens say how many of them it reads (manifest run "
              "reads them all)")
    return 0


def _plans(args) -> int:
    from .plan_map import plan_map, plan_table

    print(plan_table(plan_map(args.batch, args.kv_len, heads_q=args.heads_q, heads_kv=args.heads_kv,
                              head_dim=args.head_dim, page_size=args.page_size, here=args.gpu)))
    return 0


def _from_manifest(args) -> int:
    from ...manifest import load
    from .from_manifest import from_manifest

    path, notes = from_manifest(load(args.file), args.out.path, splits=args.splits)
    print("\n".join(f"- {n}" for n in notes))
    print(f"{path}\n  check it with: labkit manifest check {shell_word(path)}")
    return 0


def _bench(args) -> int:
    from .bench_run import bench_calls, run_bench
    from .cost_fit import format_fits
    from .targets import format_targets

    calls = bench_calls(point=args.point, quick=args.quick, head_dim=args.head_dim, heads_q=args.heads_q,
                        heads_kv=args.heads_kv, page_size=args.page_size, variants=args.variant,
                        iterations=args.iterations, mode=args.mode, peers=args.peers, sweep_splits=args.sweep_splits,
                        sweep_tails=args.sweep_tails, out=None if args.out is None else args.out.path)
    run = run_bench(calls)
    if fits := format_fits(run):
        print("\n".join(fits), flush=True)
    print("\n".join(format_targets(run)), flush=True)
    if args.out is not None:
        print(f"report: {args.out.path} (labkit report show|diff read it)")
    _print_standings(run, args.among, None if args.out is None else args.out.path)
    return 0


def _print_standings(run, among, own) -> None:
    """Where the run's calls of 2 GB or more stand among the recorded runs (after the report is saved: a damaged
    record there costs this line, not the measurements)."""
    from ..._env import data_dir
    from ...errors import LabkitError
    from ...report.tables import board_label, provenance_traits
    from .recorded_calls import read_reports
    from .spread import standings

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
        model = provenance_traits(run.provenance)["device"]
        this_gpu = f"this GPU: {board}; " if board else ""
        print(f"where its calls of 2 GB or more stand among the recorded runs on {model} ({this_gpu}labkit report "
              f"spread {folder} --point BxN --kernel BUILD --device '{model}' shows them):", *lines, sep="\n",
              flush=True)


def _compare(args) -> int:
    from ...probes import copy_ceiling_GBps
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

        copy = copy_ceiling_GBps(args.mode)
        kept = [{k: r[k] for k in (*ROW_KEYS, "heuristic", "build")} for r in rows]
        # the plan's call is the report's row (what `report diff` pairs across runs); every build is in its sweep
        write(kept[:1], {f"{b}x{n} d{d} compare": kept}, copy, collect(timing_mode=args.mode), args.out.path)
        print(f"report: {args.out.path} (labkit report show|diff read it)")
    return 0


# a call's geometry: (option, default or None when required, help); the geometry checks each value against what the
# kernel takes (head_dim 128/256, pages 16/32/64, ...)
GEOMETRY = (("batch", None, "sequences"), ("kv-len", None, "KV tokens per sequence (8192 or 8k)", MAX_SEQ_LEN),
            ("heads-q", 32, "query heads"),
            ("heads-kv", 8, "KV heads"), ("head-dim", 128, "128 or 256"),
            ("page-size", 64, "tokens per page: 16, 32 or 64"))


def _call_arguments(p, options) -> None:
    for name, default, what, *top in options:  # top: the option's own bound, where the geometry has one
        parse = kilo_int_in if name == "kv-len" else int_in  # lengths as the tables print them, as --point takes
        p.add_argument(f"--{name}", type=parse(1, top[0] if top else (1 << 31) - 1, what=f"--{name}"),
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
    p.add_argument("--layout", choices=("plain", "interleaved"), default="plain",
                   help="the KV pool: plain [pages, kv_heads, page_size, head_dim] (default) or the seed's interleaved "
                        "K/V")
    p.add_argument("--out", required=True, type=output_dir("--out", writes=True),
                   help="directory for the cubin and the manifest")
    p.set_defaults(fn=_build)
    from .plan_map import DEFAULT_BATCHES, DEFAULT_KV_LENS

    p = dp.add_parser("plans", help="the build, splits and CTAs per SM the plan gives each call of a batch x kv_len "
                                    "grid (no GPU needed)")
    p.add_argument("--batch", type=int_list("--batch", hi=(1 << 31) - 1), default=DEFAULT_BATCHES, metavar="B,...",
                   help=f"sequences, the table's rows (default {','.join(map(str, DEFAULT_BATCHES))})")
    p.add_argument("--kv-len", type=int_list("--kv-len", hi=MAX_SEQ_LEN, kilo=True), default=DEFAULT_KV_LENS,
                   metavar="N,...", help="KV tokens per sequence, the table's columns; 8k = 8192 (default "
                                         f"{','.join(map(length_label, DEFAULT_KV_LENS))})")
    _call_arguments(p, GEOMETRY[2:])
    p.add_argument("--gpu", action="store_true",
                   help="plan for this machine's GPU (its SMs, L2 and clusters), as decode build does; without a GPU "
                        "the H200, as by default")
    p.set_defaults(fn=_plans)
    p = dp.add_parser("from-manifest", help="labkit's cubin and manifest for a trtllm-gen decode manifest's geometry")
    p.add_argument("file", help="a schema_version 4 trtllm-gen decode manifest (e.g. the seed's)")
    p.add_argument("--splits", type=int_in(1, MAX_SPLITS, what="--splits"), default=None, help=SPLITS_HELP)
    p.add_argument("--out", required=True, type=output_dir("--out", writes=True),
                   help="directory for the cubin and the manifest")
    p.set_defaults(fn=_from_manifest)
    p = dp.add_parser("bench", help="KV TB/s over the sweep or at the calls you name (GPU)")
    p.add_argument("--quick", action="store_true", help="three points instead of the sweep")
    p.add_argument("--point", type=typed(parse_point, "point"), action="append", metavar="BATCHxKV_LEN",
                   help="time this call instead of the sweep (and the seed-sized call), e.g. 64x1024 or 64x8k; "
                        "repeatable; its geometry from the four options below")
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
    p.add_argument("--iterations", type=int_in(1, 10000, what="--iterations"), default=20,
                   help="timed cold calls per point (default 20)")
    p.add_argument("--mode", choices=tuple(COLD_L2), default="cold",
                   help="how each sample finds L2: cold, flushed by a memset that leaves it dirty (NVBench's and "
                        "triton's flush; the default), or cold_clean, that flush and then a read of other data, so "
                        "no dirty line is written back inside the sample (the seed-sized call's graph replay runs "
                        "warm either way)")
    p.add_argument("--out", type=output_path("--out", writes="json:a decode report"), default=None,
                   help="also write the results as JSON")
    p.add_argument("--peers", action="store_true",
                   help="also time torch SDPA (cuDNN, flash) and FA3 on the same K/V gathered contiguous, interleaved "
                        "with labkit's call (and FlexAttention, paged, at five points)")
    p.add_argument("--variant", choices=("mma", "fma"), action="append",
                   help="time this kernel (tensor cores or CUDA cores) instead of the default; repeatable")
    p.add_argument("--among", type=typed(_among, "directory"), default=None, metavar="DIR",
                   help="the recorded runs (decode reports under DIR) to place the run's calls of 2 GB or more "
                        "among, those of the same GPU model only, after the targets: H200s run them in two states "
                        "about 2 %% apart (default: this checkout's data/runs; 'none': skip)")
    p.set_defaults(fn=_bench)
    from .compare import BUILD_KNOBS, parse_build

    p = dp.add_parser("compare", help="the plan's call against other builds of it, interleaved on the same data (GPU)")
    _call_arguments(p, GEOMETRY)
    p.add_argument("--build", type=typed(parse_build, "build"), action="append", required=True,
                   metavar="KNOB=VALUE[,...]",
                   help=f"a build to time beside the plan's, e.g. warps=8,stages=2,persistent=1 (knobs: "
                        f"{', '.join(BUILD_KNOBS)}); repeatable. Knobs as plan_call takes them: any build knob but "
                        "wide_boxes, row_boxes, page_prefetch and padded_rows sets aside the plan's own choices "
                        "(its clustered pair, its persistent CTAs), wide_boxes=1 or 0 loads the plan's own build "
                        "through 5-D or 4-D tensor maps (head_dim 256 plans take 5-D), row_boxes=1 through 5-D maps "
                        "that read each token row whole (no plan takes them yet), page_prefetch=1 or 0 loads its "
                        "refills' page ids a stage ahead or not (the 8-warp head_dim 128 plans do), padded_rows=1 "
                        "(head_dim 128) lands each page slice by one unswizzled 4-D box in rows padded to 136 dims "
                        "(no plan takes them yet), and splits=N alone takes that count's default build; the kernel "
                        "column shows what ran")
    p.add_argument("--iterations", type=int_in(1, 10000, what="--iterations"), default=40,
                   help="shuffled rounds, each timing the plan and every build once (default 40)")
    p.add_argument("--mode", choices=tuple(COLD_L2), default="cold",
                   help="how each sample finds L2, as for decode bench: cold (flushed, left dirty; the default) or "
                        "cold_clean (flushed, then left clean)")
    p.add_argument("--out", type=output_path("--out", writes="json:a decode report"), default=None,
                   help="also write the rows as a decode report (labkit report show|diff)")
    p.set_defaults(fn=_compare)
