"""``labkit sage2 schedule|profile|precision``: thin shells over labkit.workloads.sage2.

Every argument is a validated value (``labkit.values``, ``Schedule.parse``), checked before any
GPU work, so a bad value is refused the same way with or without a GPU.
"""

import json

from ..._cliargs import int_in, output_dir, output_path, typed
from ..._write import dumps
from ...errors import ArgumentError
from ...values import Shape, first_repeat
from .schedule import Schedule

PV_TERMS_HELP = "1: Sage2's e4m3 P and V (default); 2: each as two e4m3 terms (more precise, slower)"
SHAPE = typed(Shape.parse, "shape")
TILE_RULES = ("cta_q a multiple of warp_q, warp_q a multiple of 16 (above 64, of 64), cta_k 64, 128 or 256, at most 8 "
              "warps per CTA")
SCHEDULE_HELP = "the mainloop build: seed (mma.sync, the seed's tiles) or sm90 (wgmma + TMA, sm_90a, 192 x 128)"


def _schedule(args) -> int:
    from .plan import mainloop_occupancy
    from .schedule import scheduler, tail_fields

    shape: Shape = args.shape
    ql, kl = shape.length(args.q_len, "--q-len"), shape.length(args.kv_len, "--kv-len")
    tiles = {"cta_q": args.cta_q, "cta_k": args.cta_k, "warp_q": args.warp_q, "pv_terms": args.pv_terms}
    given = {k: v for k, v in tiles.items() if v is not None}  # given at all, even at the seed's value
    if args.schedule.mainloop == "seed" and args.schedule != Schedule():  # a CTA_Q/CTA_K/WARP_Q/PV_TERMS form
        if given:
            raise ArgumentError(f"--schedule {args.schedule.text()} gives the tiles already: drop "
                                f"{', '.join('--' + k.replace('_', '-') for k in given)}")
        given = {k: getattr(args.schedule, k) for k in tiles}
    if args.schedule.mainloop == "sm90":
        s = Schedule.sm90()
        if given.get("pv_terms") == 1:  # sm90's own one term, given: as sage2 profile, no reason to refuse it
            given.pop("pv_terms")
        if given.get("pv_terms") is not None:
            raise ArgumentError(f"--schedule sm90 builds one P V term: drop --pv-terms {given['pv_terms']}")
        if given:
            raise ArgumentError(f"--schedule sm90 has fixed tiles ({s.cta_q} q x {s.cta_k} keys per CTA, {s.warp_q} q "
                                f"rows per warp): drop {', '.join('--' + k.replace('_', '-') for k in given)}")
    else:
        s = Schedule(**given)
    sched = scheduler(shape.batch, ql, kl, shape.heads, 128 if s.mainloop == "sm90" else shape.kernel_head_dim, s)
    doc = {"shape": list(shape), "q_len": ql, "kv_len": kl, "scheduler": sched.__dict__, "tail": tail_fields(ql, kl, s),
           "mainloop_on_sm_90": mainloop_occupancy(s, shape.kernel_head_dim)}
    print(json.dumps(doc, indent=2) if args.json else schedule_text(doc))
    return 0


def schedule_text(doc: dict) -> str:
    """``sage2 schedule``'s document as aligned text: a section per part, each field once (the tail's own fields
    beside the scheduler's), the row efficiency to 1e-4; ``--json`` prints the document itself."""
    sched = doc["scheduler"]
    sections = {"scheduler (a report's fields)": sched,
                "tail": {k: v for k, v in doc["tail"].items() if k not in sched},
                "mainloop on sm_90 (NVRTC's cubin)": doc["mainloop_on_sm_90"]}
    shown = lambda v: (f"{v:.4f}" if isinstance(v, float) else  # noqa: E731
                       ", ".join(f"{k} {x}" for k, x in v.items()) if isinstance(v, dict) else str(v))
    width = max(len(k) for part in sections.values() for k in part)
    lines = [f"q = k = v {doc['shape']}, q_len {doc['q_len']}, kv_len {doc['kv_len']}"]
    for title, part in sections.items():
        lines += [f"{title}:", *(f"  {k:<{width}}  {shown(v)}" for k, v in part.items())]
    return "\n".join(lines)


def _profile(args) -> int:
    from ...report import phase_table, save
    from .profile import profile

    shape: Shape = args.shape
    q_tails, kv_tails = shape.lengths(args.q_tail, "--q-tail"), shape.lengths(args.kv_tail, "--kv-tail")
    if args.schedule == "sm90" and args.pv_terms != 1:
        raise ArgumentError("--schedule sm90 builds one P V term (its tiles are fixed): drop --pv-terms, or profile "
                            "the seed schedule with --pv-terms 2")
    r = profile(shape, layout=args.layout, dtype=args.dtype, warmup=args.warmup, iterations=args.iterations,
                q_tails=q_tails, kv_tails=kv_tails, tail_iterations=args.tail_iterations, seed=args.seed,
                schedule=Schedule.sm90() if args.schedule == "sm90" else Schedule(pv_terms=args.pv_terms),
                tail_dir=args.tail_dir.path if args.tail_dir else None)
    save(r, args.out.path)
    print(phase_table(r))
    print(f"report: {args.out}")
    return 0


def _bias(text: str, option: str) -> float:
    """``--k-bias`` / ``--v-bias``, checked as the study checks it, under the option's name."""
    from ...values import parse_float
    from .precision import check_bias

    return check_bias(parse_float(text, what=option), option, shown=text.strip())


def _precision(args) -> int:
    from .precision import precision_frame, precision_study

    if (twice := first_repeat(args.schedules)) is not None:
        raise ArgumentError(f"--schedules: {twice.text()} given twice; expected each schedule once")
    points = precision_study(args.shape, layout=args.layout, dtype=args.dtype, iterations=args.iterations,
                             seed=args.seed, k_bias=args.k_bias, v_bias=args.v_bias, schedules=args.schedules)
    print(precision_frame(points).to_string(float_format=lambda v: f"{v:.4g}"))
    if args.out is not None:
        args.out.write_text(dumps([pt.to_dict() for pt in points], indent=2) + "\n")
        print(f"results: {args.out}")
    return 0


def register(sub) -> None:
    sp = sub.add_parser("sage2", help="the Sage2 workload").add_subparsers(dest="sub", required=True)
    p = sp.add_parser("schedule", help="scheduler fields of the fused mainloop and its registers and CTAs per SM "
                                       "on sm_90 (no GPU: NVRTC compiles the cubin)")
    p.add_argument("--json", action="store_true", help="print the fields as one JSON document")
    p.add_argument("--shape", required=True, type=SHAPE, help="B,N,H,D of q = k = v")
    p.add_argument("--q-len", type=int_in(1, what="--q-len"), default=None, help="1..N (default N)")
    p.add_argument("--kv-len", type=int_in(1, what="--kv-len"), default=None, help="1..N (default N)")
    seed, tiles = Schedule(), p.add_argument_group("tiles of the seed mainloop", f"rules: {TILE_RULES}")
    tiles.add_argument("--cta-q", type=int_in(1, what="--cta-q"), default=None, help=f"default {seed.cta_q}")
    tiles.add_argument("--cta-k", type=int_in(1, what="--cta-k"), default=None, help=f"default {seed.cta_k}")
    tiles.add_argument("--warp-q", type=int_in(1, what="--warp-q"), default=None, help=f"default {seed.warp_q}")
    p.add_argument("--pv-terms", type=int, choices=(1, 2), default=None, help=PV_TERMS_HELP)
    # the forms labkit bench --schedule and sage2 precision --schedules take (a fresh-user review: seed|sm90 only)
    p.add_argument("--schedule", default=Schedule(), type=typed(Schedule.parse, "schedule"),
                   help=SCHEDULE_HELP + ", or CTA_Q/CTA_K/WARP_Q/PV_TERMS of the seed build, e.g. 128/64/32/2 (the "
                   "tile options' values in one; default seed)")
    p.set_defaults(fn=_schedule)

    p = sp.add_parser("profile", help="measure a Sage2 report (seed format + provenance) on this GPU")
    p.add_argument("--shape", default=Shape(1, 37810, 56, 128), type=SHAPE,
                   help="B,N,H,D of q = k = v (default 1,37810,56,128, the seed's)")
    p.add_argument("--out", required=True, type=output_path("--out", writes="json:a Sage2 report"),
                   help="the report's JSON file (labkit report show|diff read it)")
    _common(p)
    p.add_argument("--warmup", type=int_in(0, 10**6, what="--warmup"), default=3,
                   help="untimed calls before each phase's timing (default 3)")
    p.add_argument("--iterations", type=int_in(1, 10**6, what="--iterations"), default=10,
                   help="timed calls per phase, cold L2 (default 10)")
    p.add_argument("--tail-iterations", type=int_in(1, 10**6, what="--tail-iterations"), default=5,
                   help="timed mainloop calls per tail point and round (default 5)")
    p.add_argument("--q-tail", default=None, help="q lengths 1..N, comma separated (default: the seed's kind)")
    p.add_argument("--kv-tail", default=None, help="kv lengths 1..N, comma separated")
    p.add_argument("--tail-dir", default=None, metavar="DIR", type=output_dir("--tail-dir"),
                   help="keep the tail study's rounds there as a labkit sweep: a re-run resumes (default: temporary)")
    p.add_argument("--pv-terms", type=int, choices=(1, 2), default=1, help=PV_TERMS_HELP)
    p.add_argument("--schedule", choices=("seed", "sm90"), default="seed", help=SCHEDULE_HELP)
    p.set_defaults(fn=_profile)

    p = sp.add_parser("precision", help="accuracy vs exact fp32 and mainloop time of several mainloop builds")
    p.add_argument("--shape", default=Shape(1, 37810, 56, 128), type=SHAPE,
                   help="B,N,H,D of q = k = v (default 1,37810,56,128, the seed's)")
    p.add_argument("--schedules", default=[Schedule(), Schedule(pv_terms=2)],
                   type=typed(Schedule.parse_list, "schedules"),
                   help=Schedule.parse_list.__doc__.rstrip(".") + "; default seed,128/64/32/2")
    _common(p)
    p.add_argument("--iterations", type=int_in(1, 10**6, what="--iterations"), default=5,
                   help="timed mainloop calls per build (default 5)")
    from .precision import MAX_BIAS

    for qkv in ("k", "v"):  # the range checked here too, so that the message names the option
        p.add_argument(f"--{qkv}-bias", type=typed(lambda t, o=f"--{qkv}-bias": _bias(t, o), "bias"), default=0.0,
                       help=f"per-channel bias scale added to {qkv.upper()}, -{MAX_BIAS:g}..{MAX_BIAS:g} (default 0)")
    p.add_argument("--out", default=None, type=output_path("--out", writes="json:Sage2 precision points"),
                   help="write the points as JSON")
    p.set_defaults(fn=_precision)


def _common(p) -> None:
    p.add_argument("--layout", choices=("NHD", "HND"), default="NHD",
                   help="q, k, v as [B, N, H, D] (NHD, default) or [B, H, N, D]")
    p.add_argument("--dtype", choices=("bf16", "fp16"), default="bf16", help="q, k, v and output (default bf16)")
    p.add_argument("--seed", type=int_in(0, 2**63 - 1, what="--seed"), default=0,
                   help="random inputs' seed (default 0)")
