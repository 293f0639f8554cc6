"""``labkit ncu run|show|phases``: thin shells over labkit.ncu."""

import subprocess
import sys
from pathlib import Path

from .._cliargs import int_in


def _show(args) -> int:
    from . import kernels, load, rules

    ctx = load(args.report)
    extra = {m: m for m in (args.metrics.split(",") if args.metrics else [])}
    print(kernels(ctx, extra).to_string(index=False))
    if args.rules:
        print()
        print(rules(ctx).to_string(index=False))
    return 0


def _phases(args) -> int:
    from . import actions, load, phases

    ctx = load(args.report)
    for r, a, act in actions(ctx):
        if args.action is not None and a != args.action:
            continue
        print(f"range {r} action {a}: {act.name()}")
        print(phases(act, args.source).to_string(float_format=lambda v: f"{v:.4g}"))
    return 0


def _run(args) -> int:
    from ..errors import NcuError
    from . import NcuOptions, argv, diagnose, find_ncu, kernels, load

    target = args.target[1:] if args.target[:1] == ["--"] else args.target
    if not target:
        raise NcuError("labkit ncu run: give the command to profile after --, e.g. -- labkit sage2 profile ...")
    out = Path(args.out)
    opts = NcuOptions(output=out, nvtx_ranges=tuple(args.range or ()), preset=args.preset,
                      clock_control=args.clock_control, source_folders=tuple(Path(s) for s in args.source_folder or ()))
    cmd = argv(opts, target, ncu=find_ncu())
    print("running: " + " ".join(cmd), file=sys.stderr, flush=True)
    done = subprocess.run(cmd, stdin=subprocess.DEVNULL)
    log = out.with_suffix(".log")
    why = diagnose(log.read_text(errors="replace")) if log.is_file() else None
    if done.returncode != 0 or why:
        raise NcuError(why or f"ncu exited with {done.returncode}; see {log}")
    report = out.with_suffix(".ncu-rep")
    print(kernels(load(report)).to_string(index=False))
    print(f"report: {report}")
    return 0


def register(sub) -> None:
    sp = sub.add_parser("ncu", help="Nsight Compute: run under ncu, read reports, phases of a fused kernel")
    sp = sp.add_subparsers(dest="sub", required=True)
    p = sp.add_parser("show", help="one row per profiled kernel (and the rule results)")
    p.add_argument("report")
    p.add_argument("--metrics", default="", help="more metrics, comma-separated full names")
    p.add_argument("--rules", action="store_true", help="also the rule results (tail effect, imbalance...)")
    p.set_defaults(fn=_show)
    p = sp.add_parser("phases", help="samples, time share and stalls per // PHASE: of a kernel's source")
    p.add_argument("report")
    p.add_argument("--source", required=True, help="the kernel's source file (matched by base name)")
    p.add_argument("--action", type=int_in(0, 1 << 20, what="--action"), default=None, help="one launch only")
    p.set_defaults(fn=_phases)
    p = sp.add_parser("run", help="profile a command under ncu (labkit's NVTX ranges, boost clocks)")
    p.add_argument("--out", required=True, help="report path (the .ncu-rep and a .log beside it)")
    p.add_argument("--range", action="append", help="labkit NVTX range path to profile (repeatable)")
    p.add_argument("--preset", choices=("timing", "sol", "source", "sched"), default="sol")
    p.add_argument("--clock-control", choices=("none", "base"), default="none")
    p.add_argument("--source-folder", action="append", help="where ncu finds kernel sources")
    p.add_argument("target", nargs="*", help="-- then the command to profile")
    p.set_defaults(fn=_run)
