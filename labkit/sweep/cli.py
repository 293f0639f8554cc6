"""``labkit sweep run|status|collect``: thin shells over labkit.sweep."""

from .._cliargs import int_in, output_dir, typed
from .._text import counted, shown_table


def _run(args) -> int:
    from ..errors import ArgumentError
    from . import run

    grid = dict(args.grid)
    if args.workers > 1 and args.executor == "local":  # it would run one point at a time and say nothing
        raise ArgumentError(f"--workers {args.workers}: the local executor runs one point at a time; use --executor "
                            "processes or dask")
    if len(grid) != len(args.grid):
        twice = sorted({name for name, _ in args.grid if [n for n, _ in args.grid].count(name) > 1})
        raise ArgumentError(f"--grid {', '.join(twice)}: an axis is given twice (give its values in one --grid)")
    counts = run(args.out.path, args.workload, grid, executor=args.executor, workers=args.workers,
                 retry_failed=args.retry_failed)
    kept = (f" ({counts['kept_failed']} of them failed: --retry-failed runs them again)" if counts["kept_failed"]
            else "")
    again = f", {counts['stale']} of them run again (measured by other code)" if counts["stale"] else ""
    print(f"{args.out}: {counts['ok']} ok, {counts['failed']} failed, {counts['skipped']} done before{kept}, "
          f"{counted(counts['total'], 'point')}{again}")
    return 0 if counts["failed"] + counts["kept_failed"] == 0 else 1  # a sweep with a failed point is not a pass


def _status(args) -> int:
    from . import status
    from .workloads import names

    s = status(args.dir)
    # a workload registered at run time (a notebook's own) is no error here, but `sweep run` could not resume it
    foreign = "" if s["workload"] in names() else " (not a workload of labkit's: resume it where it is registered)"
    stale = f"; {s['stale']} measured by other code (a resume runs them again)" if s["stale"] else ""
    print(f"{args.dir}: {s['workload']}{foreign}, {counted(s['points'], 'point')}: {s['ok']} ok, {s['failed']} failed, "
          f"{s['missing']} missing{stale}")
    from .grid import point_label

    for point in s["ended_while_running"]:  # missing, but begun: what crashed the run (or runs now, elsewhere)
        print(f"  started, no record: {point_label(point, {})} (its process ended as it ran, or it runs now)")
    return 0


def _collect(args) -> int:
    from . import collect

    df = collect(args.dir)
    if df.empty and not args.csv:  # pandas' "Empty DataFrame / Columns: []" said nothing
        print(f"{args.dir}: no point has finished yet (labkit sweep status {args.dir})")
        return 0
    print(df.to_csv(index=False) if args.csv else shown_table(df))
    return 0


def register(sub) -> None:
    from .grid import parse_axis
    from .workloads import names, parameters_text

    sp = sub.add_parser("sweep", help="parameter sweeps that resume (local, process pool or Dask)")
    sp = sp.add_subparsers(dest="sub", required=True)
    import argparse
    import textwrap

    listed = "\n".join(textwrap.fill(f"{n}: {parameters_text(n)}", 100, initial_indent="  ", subsequent_indent="    ")
                       for n in names())
    p = sp.add_parser("run", help="run or resume a sweep; each point is written as it finishes",
                      formatter_class=argparse.RawDescriptionHelpFormatter,  # the list below keeps its lines
                      epilog=f"workloads and their parameters (one --grid axis each; one without a default needs "
                             f"one):\n{listed}")
    p.add_argument("--workload", required=True, choices=names(), help="what each point runs")
    p.add_argument("--grid", action="append", required=True, type=typed(parse_axis, "grid"),
                   metavar="NAME=V1,V2", help="one axis (repeatable; the sweep is every combination); 8k is 8192; "
                                              "list values in brackets, e.g. shape=[1,1024,8,128],[1,2048,8,128]")
    p.add_argument("--out", required=True, type=output_dir("--out"), help="the sweep's directory (re-run it to resume)")
    p.add_argument("--executor", choices=("local", "processes", "dask"), default="local",
                   help="local: the points one after another in this process (default); processes: --workers "
                   "processes, GPU i pinned to worker i; dask: a local Dask cluster of --workers")
    p.add_argument("--workers", type=int_in(1, 1024, what="--workers"), default=1,
                   help="workers of the processes or dask executor (default 1)")
    p.add_argument("--retry-failed", action="store_true", help="run the points that failed before again")
    p.set_defaults(fn=_run)
    p = sp.add_parser("status", help="points ok, failed and missing")
    p.add_argument("dir", help="a sweep's directory (sweep run --out)")
    p.set_defaults(fn=_status)
    p = sp.add_parser("collect", help="one row per finished point")
    p.add_argument("dir", help="a sweep's directory (sweep run --out)")
    p.add_argument("--csv", action="store_true", help="print CSV instead of a table")
    p.set_defaults(fn=_collect)
