"""``labkit sched occupancy|waves``: thin shells over labkit.sched (no GPU needed)."""

from .._cliargs import int_in, output_dir, output_path, typed
from .._text import cell
from ..values import Shape
from .occupancy import MAX_CTAS_PER_SM

# names printed in place of a field's that misleads: full_waves is ceil(waves), the waves a launch takes (the API and
# the recorded files keep that name), but read as whole waves: 63 for 62.79, 1 for 0.97
SHOWN_AS = {"full_waves": "waves_taken"}


def _print(d: dict) -> None:
    for k, v in d.items():  # nanoseconds to 0.1 (the timer ticks 32 ns), ratios to 4 places
        k = SHOWN_AS.get(k, k)
        v = cell(v)  # "(128,)" had read as Python, not as the CTAs of each wave
        print(f"{k:22s} {v:.{1 if k.endswith('_ns') else 4}f}" if isinstance(v, float) else f"{k:22s} {v}")


def _occupancy(args) -> int:
    from . import cubin_occupancy, waves

    occ = cubin_occupancy(args.cubin, kernel=args.kernel, arch=args.arch, threads_per_cta=args.threads,
                          dynamic_smem_bytes=args.dynamic_smem)
    _print(occ.to_dict())
    if args.dynamic_smem == 0:  # a cubin does not say what its launches ask for
        print("(no dynamic shared memory assumed: give a launch's --dynamic-smem, e.g. a manifest's shared_mem)")
    if args.ctas is not None:
        print()
        _print_waves(waves(args.ctas, args.sms, occ.ctas_per_sm))
    return 0


def _print_waves(w) -> None:
    from .waves import one_wave_note

    _print(w.to_dict())
    if (note := one_wave_note(w)) is not None:
        print(note)


def _waves(args) -> int:
    from . import waves

    _print_waves(waves(args.ctas, args.sms, args.ctas_per_sm))
    return 0


def _timeline(args) -> int:
    from .study import shown_stats
    from .timeline import Timeline

    tl = Timeline.load(args.file)  # --trace over it was refused with the args: a timeline is not a trace
    for name, value in shown_stats(tl.stats())["measured"].items():  # 63.97 us, not makespan_ns 63968.0, as 04 shows
        print(f"{name:22s} {value}")
    print(tl.fast_sms())
    if args.trace:
        print(f"trace: {tl.chrome_trace(args.trace.path)} (open in Perfetto or chrome://tracing)")
    return 0


def _shapes(args):
    from ..errors import ArgumentError
    from ..values import first_repeat
    from .crosscheck import DEFAULT_SHAPES

    if (twice := first_repeat(args.shape or ())) is not None:  # two launches of one NVTX name: refused before the GPU
        raise ArgumentError(f"--shape {','.join(map(str, twice))} given twice; expected each shape once")
    return args.shape or list(DEFAULT_SHAPES)


def _launches(args) -> int:
    from .crosscheck import launches

    for r in launches(_shapes(args), args.out.path):
        _print(r)
    return 0


def _crosscheck(args) -> int:
    import pandas as pd

    from .crosscheck import crosscheck

    rows = crosscheck(_shapes(args), args.out.path, ncu=not args.no_ncu)
    df = pd.DataFrame([r.to_dict() for r in rows])
    print(df.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    df.to_csv(f"{args.out}/crosscheck.csv", index=False)
    print(f"table: {args.out}/crosscheck.csv")
    return 0


def _overhead(args) -> int:
    from .._write import dumps
    from .crosscheck import overhead

    if args.shape and len(args.shape) > 1:
        from ..errors import ArgumentError

        raise ArgumentError(f"--shape: overhead times one shape; {len(args.shape)} given (run it once per shape)")
    r = overhead(_shapes(args)[0], iterations=args.iterations)
    _print(r)
    if args.out is not None:
        args.out.write_text(dumps(r, indent=1) + "\n")
    return 0


def register(sub) -> None:
    sp = sub.add_parser("sched", help="CTA scheduling: occupancy, waves, timelines; GPU: ncu cross-check, overhead")
    sp = sp.add_subparsers(dest="sub", required=True)
    p = sp.add_parser("occupancy", help="CTAs per SM of a cubin's kernel and the limit that binds")
    p.add_argument("cubin", help="a .cubin file (labkit decode build writes one; NVRTC or nvcc -cubin)")
    p.add_argument("--kernel", default=None, help="entry name (needed when the cubin has several)")
    p.add_argument("--arch", default=None, help="the SM whose limits apply: the cubin's own target (the default); "
                   "a cubin runs on no other")
    p.add_argument("--threads", type=int_in(1, 1024, what="--threads"), default=None,
                   help="threads per CTA (default: the kernel's __launch_bounds__)")
    p.add_argument("--dynamic-smem", type=int_in(0, 1 << 20, what="--dynamic-smem"), default=0,
                   help="dynamic shared memory per CTA in bytes, as the launch asks for it (default 0)")
    p.add_argument("--ctas", type=int_in(1, 1 << 40, what="--ctas"), default=None, help="also the waves of a grid")
    p.add_argument("--sms", type=int_in(1, 4096, what="--sms"), default=132, help="SMs of the GPU (default 132, "
                   "the H200's and the H100 SXM's)")
    p.set_defaults(fn=_occupancy)
    p = sp.add_parser("waves", help="waves, last-wave fill and efficiency of a grid")
    p.add_argument("--ctas", type=int_in(1, 1 << 40, what="--ctas"), required=True, help="CTAs in the grid")
    p.add_argument("--sms", type=int_in(1, 4096, what="--sms"), default=132, help="SMs of the GPU (default 132, "
                   "the H200's and the H100 SXM's)")
    p.add_argument("--ctas-per-sm", type=int_in(1, MAX_CTAS_PER_SM, what="--ctas-per-sm"), required=True,
                   help=f"resident CTAs per SM, 1..{MAX_CTAS_PER_SM} (an SM of sm_80..sm_100 holds at most "
                        f"{MAX_CTAS_PER_SM})")
    p.set_defaults(fn=_waves)
    p = sp.add_parser("timeline", help="waves and efficiency of a recorded per-CTA timeline; a Perfetto trace")
    p.add_argument("file", help="a saved per-CTA timeline: notebook 04's data/*_timeline.json, decode bench "
                   "--sweep-tails --out's *.timeline.json, or Timeline.save in Python")
    p.add_argument("--trace", type=output_path("--trace", writes="json:a Chrome trace"), default=None,
                   help="write the Chrome/Perfetto trace here")
    p.set_defaults(fn=_timeline)
    shape = {"action": "append", "type": typed(Shape.parse, "shape"), "metavar": "B,N,H,D"}
    p = sp.add_parser("launches", help="(GPU) one instrumented Sage2 launch per shape in NVTX range sched/<shape>")
    p.add_argument("--shape", **shape, help="repeatable (default: the seed, one whole wave, a partial last wave)")
    p.add_argument("--out", type=output_path("--out", writes="json:instrumented launches"), required=True,
                   help="the launches' stats (JSON)")
    p.set_defaults(fn=_launches)
    p = sp.add_parser("crosscheck", help="(GPU, ncu) model vs timeline vs ncu's sm__cycles_active, sm__ctas_launched")
    p.add_argument("--shape", **shape, help="repeatable (default: the seed, one whole wave, a partial last wave)")
    p.add_argument("--out", required=True, type=output_dir("--out", writes=True),
                   help="directory for the ncu report, the launches and crosscheck.csv")
    p.add_argument("--no-ncu", action="store_true", help="the launches alone, without ncu's counters")
    p.set_defaults(fn=_crosscheck)
    p = sp.add_parser("overhead", help="(GPU) plain vs -DLABKIT_TIMELINE mainloop, interleaved (target <= 1%%)")
    p.add_argument("--shape", **shape, help="one shape (default: the seed shape)")
    p.add_argument("--iterations", type=int_in(1, 1000, what="--iterations"), default=10,
                   help="interleaved rounds, each timing both builds once (default 10)")
    p.add_argument("--out", type=output_path("--out", writes="json:a timeline overhead"), default=None,
                   help="also write the result as JSON")
    p.set_defaults(fn=_overhead)
