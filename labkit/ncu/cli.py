"""``labkit ncu run|show|phases``: thin shells over labkit.ncu."""

import sys
from pathlib import Path

from .._cliargs import existing_dir, int_in, output_path
from .._text import shown_table


def _show(args) -> int:
    from ..errors import ArgumentError, NcuError
    from . import kernels, load, rules

    names = [m.strip() for m in args.metrics.split(",")] if args.metrics else []
    if any(not m for m in names):  # before the report is read: ',,' had been looked up as a metric named ''
        raise ArgumentError(f"--metrics {args.metrics!r}: an empty name; expected full metric names, comma-separated")
    ctx = load(args.report)
    extra = {m: m for m in names}
    for m in extra:  # a typo would print a column of None
        if all(act.metric_by_name(m) is None for _, _, act in ctx.actions):
            raise NcuError(f"--metrics {m}: no profiled kernel in {args.report} has it (ncu --query-metrics lists "
                           "the names; the report holds those its sections collected)")
    from .tables import shown_counters

    print(shown_table(shown_counters(kernels(ctx, extra))))  # us, GHz, MB, %; "-": a metric ncu did not collect
    if args.rules:
        from .tables import rules_text

        found = rules(ctx)
        print("\n" + rules_text(found) if len(found) else "\nno rule results")
    return 0


def _phases(args) -> int:
    from pathlib import PurePath

    from ..errors import NcuError
    from . import actions, load, phases
    from .source import phase_names, phases_text

    ctx = load(args.report)
    chosen = [(r, a, act) for r, a, act in actions(ctx) if args.action is None or a == args.action]
    if not chosen:
        raise NcuError(f"--action {args.action}: {args.report} holds actions "
                       f"{', '.join(str(a) for _, a, _ in actions(ctx))}")
    texts = {PurePath(f).name: t for _, _, act in chosen for f, t in act.source_files().items()}  # read once
    files = sorted(texts)
    if PurePath(args.source).name not in files:  # every sample would count as unmapped
        have = f"it has {', '.join(files)}" if files else "it has none (profile with --import-source yes)"
        raise NcuError(f"--source {args.source}: no source of that name in {args.report}'s "
                       f"{'action ' + str(args.action) if args.action is not None else 'kernels'}; {have}")
    if not phase_names(texts.get(PurePath(args.source).name) or ""):  # the phases shown would be other files'
        marked = sorted(name for name, t in texts.items() if t and phase_names(t))
        raise NcuError(f"--source {args.source}: the report's copy of it has no // PHASE: markers"
                       + (f"; these of its sources have them: {', '.join(marked)}" if marked else ""))
    from .source import UNMAPPED, unmapped_reason

    tables = []
    for r, a, act in chosen:
        table = phases(act, args.source)
        why = f"\n  all unmapped: {unmapped_reason(act, args.source)}" if list(table.index) == [UNMAPPED] else ""
        tables.append((f"range {r} action {a}: {act.name()}", phases_text(table) + why))
    print("\n".join(f"{head}\n{table}" for head, table in tables))  # all read first: a refusal is the only line
    return 0


def _run(args) -> int:
    from ..errors import NcuError
    from . import NcuOptions, kernels, load
    from .runner import notebook_script_path, notebook_target, profile

    target = args.target[1:] if args.target[:1] == ["--"] else args.target
    if args.notebook and target:
        raise NcuError("labkit ncu run: give either --notebook NAME or a command after --, not both")
    if args.param and not args.notebook:
        raise NcuError("labkit ncu run: -p KEY VALUE sets a notebook parameter; it needs --notebook NAME")
    if not target and not args.notebook:
        raise NcuError("labkit ncu run: give the command to profile after --, e.g. -- labkit sage2 profile ..., "
                       "or --notebook NAME")
    opts = NcuOptions(output=args.out.path, nvtx_ranges=tuple(args.range or ()), preset=args.preset,
                      clock_control=args.clock_control, source_folders=tuple(Path(s) for s in args.source_folder or ()),
                      kernel_name=args.kernel_name, launch_count=args.launch_count)
    if args.notebook:  # its script is written last of the checks: a refused option leaves no file behind
        from ..notebooks import parameter_pairs

        target = notebook_target(args.notebook, parameter_pairs(args.notebook, args.param),
                                 script=notebook_script_path(args.out.path))
    done = profile(target, opts, progress=sys.stderr, timeout_s=args.timeout)
    print(shown_table(kernels(load(done.report))))
    print(f"report: {done.report} ({done.report_bytes / 2**20:.1f} MB, {done.elapsed_s:.0f} s)")
    return 0


def _summary(args) -> int:
    from .._json import load_document
    from ..errors import NcuError
    from .summary import NcuSummary
    from .tables import closing_note

    try:
        summary = NcuSummary.from_dict(load_document(args.file).value)
    except NcuError as exc:
        raise NcuError(f"{args.file}: {exc}") from None
    print(closing_note(summary))
    return 0


def _cases(args) -> int:
    from .study import launch_spec

    launch_spec(args.spec)
    return 0


def register(sub) -> None:
    sp = sub.add_parser("ncu", help="Nsight Compute: run under ncu, read reports, phases of a fused kernel")
    sp = sp.add_subparsers(dest="sub", required=True)
    p = sp.add_parser("show", help="one row per profiled kernel (and the rule results)")
    p.add_argument("report", help="an .ncu-rep file")
    p.add_argument("--metrics", default="", help="more metrics, comma-separated full names")
    p.add_argument("--rules", action="store_true", help="also the rule results (tail effect, imbalance...)")
    p.set_defaults(fn=_show)
    p = sp.add_parser("phases", help="samples, time share and stalls per // PHASE: of a kernel's source")
    p.add_argument("report", help="an .ncu-rep file profiled with --preset source")
    p.add_argument("--source", required=True, help="the kernel's source file (matched by base name)")
    p.add_argument("--action", type=int_in(0, 1 << 20, what="--action"), default=None, help="one launch only")
    p.set_defaults(fn=_phases)
    p = sp.add_parser("run", help="profile a command under ncu (labkit's NVTX ranges, clocks left as they run)")
    p.add_argument("--out", required=True, type=output_path("--out", writes=None),  # NAME.ncu-rep only: ncu -f
                   help="NAME or NAME.ncu-rep: ncu writes NAME.ncu-rep and its log NAME.log (both replaced)")
    p.add_argument("--range", action="append", help="labkit NVTX range path to profile (repeatable)")
    p.add_argument("--preset", choices=("timing", "sol", "source", "sched"), default="sol",
                   help="what ncu collects (default sol: SpeedOfLight, LaunchStats, Occupancy, WarpStateStats; "
                        "timing: duration, cycles and DRAM bytes only; source: SourceCounters for `ncu phases`; "
                        "sched: CTAs and cycles per SM)")
    p.add_argument("--clock-control", choices=("none", "base"), default="none",
                   help="default none: the GPU's clocks as they run, so ncu's times compare with labkit's events; "
                        "base locks them to base clock, as ncu does unless told")
    p.add_argument("--source-folder", action="append", type=existing_dir("--source-folder"),
                   help="where ncu finds kernel sources")
    p.add_argument("--kernel-name", default=None, help="only kernels of this name (ncu syntax, e.g. regex:attn_fwd)")
    p.add_argument("--launch-count", type=int_in(1, 1 << 31, what="--launch-count"), default=None,
                   help="profile at most N matching launches (a range that loops over a kernel thousands of times)")
    p.add_argument("--notebook", default=None, help="profile a labkit notebook, run as a plain script written beside "
                   "the report (OUT.py; labkit nb script)")
    p.add_argument("-p", "--param", nargs=2, action="append", metavar=("KEY", "VALUE"),
                   help="a parameter of --notebook (checked by its type before ncu starts)")
    p.add_argument("--timeout", type=int_in(1, 86400, what="--timeout"), default=None, help="seconds, then stop")
    p.add_argument("target", nargs="*", help="-- then the command to profile")
    p.set_defaults(fn=_run)
    p = sp.add_parser("summary", help="event p50 vs ncu and phase shares of a notebook 05 ncu_summary.json")
    p.add_argument("file", type=Path, help="a notebook 05 run's data/ncu_summary.json")
    p.set_defaults(fn=_summary)
    p = sp.add_parser("cases", help="launch a saved case plan once per case in NVTX ncu/<case> (run under ncu)")
    p.add_argument("spec", help="a case plan, NAME.cases.json, as notebook 05's ncu study writes it beside its "
                   "reports (labkit.ncu.study)")
    p.set_defaults(fn=_cases)
