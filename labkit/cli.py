"""``labkit`` command line: each subcommand is a thin shell over one library call.

Errors labkit raises on purpose print one line (``labkit: error: labkit <command>: ...``) and exit 2 for bad input, 1
where the input passed but the machine lacks a GPU, an ncu that can profile or a package (``errors.MachineError``).
"""

import argparse
import json
import os
import sys

from ._cliargs import Parser, build_label, check_figure, device_model, figure_path, int_in, output_path, typed
from ._env import check_switches
from ._text import one_line, shell_word
from ._write import dumps
from .errors import LabkitError, NoGPU, end_now_if_asked


def _device(args) -> int:
    from .cuda import gpu_status

    ok, reason = gpu_status()
    if not ok:  # exit 1: not a usage error, the machine has no GPU
        print(json.dumps({"gpu": False, "reason": reason}) if args.json else f"no usable CUDA GPU: {reason}")
        return 1
    from .device import describe

    info = describe(args.index).to_dict()
    print(json.dumps(info, indent=2) if args.json else "\n".join(f"{k:28s} {v}" for k, v in info.items()))
    return 0


def _report_show(args) -> int:
    from . import report
    from .workloads.decode import report as decode_report

    if decode_report.is_decode_report(args.file):
        print(decode_report.show_table(decode_report.load(args.file)))
        return 0
    r = report.load(args.file)
    print(f"{args.file}: {report.summary(r)}")
    print(report.phase_table(r))
    return 0


def _report_map(args) -> int:
    from . import plot
    from .workloads.decode.peer_map import figure_names, load_maps, map_table

    maps = load_maps(args.files, newest=args.newest)  # every file read and checked before anything is printed or drawn
    paths = [check_figure(p).path for p in figure_names(maps, args.out.path)] if args.out is not None else []
    print("\n\n".join(map_table(m) for m in maps))  # after every figure's name is checked
    for m, path in zip(maps, paths):
        print(f"figure: {plot.save(plot.peer_map(m), path)}")
    return 0


def _report_heads(text: str) -> str:
    """``--heads`` as decode reports write it, checked as their reader checks it (a typo is not 'no row')."""
    from .errors import ArgumentError
    from .workloads.decode.report import heads_problem

    if (problem := heads_problem(text)) is not None:
        raise ArgumentError(f"--heads {text!r}: {problem}")
    if text.endswith(" page 64"):  # the reports leave the default page size unsaid
        return text.removesuffix(" page 64")
    return text


def _report_spread(args) -> int:
    from . import plot
    from .workloads.decode.spread import call_spread, spread_table

    batch, kv_len = args.point
    s = call_spread(args.paths, batch, kv_len, args.head_dim, heads=args.heads, mode=args.mode, kernel=args.kernel,
                    device=args.device)
    print(spread_table(s))
    if args.out is not None:
        print(f"figure: {plot.save(plot.call_spread(s), args.out.path)}")
    return 0


def _report_diff(args) -> int:
    from . import report
    from .workloads.decode import report as decode_report

    kinds = [decode_report.is_decode_report(f) for f in (args.a, args.b)]
    if kinds[0] != kinds[1]:
        kind = ("decode", "Sage2")
        raise LabkitError(f"A ({args.a}) is a {kind[not kinds[0]]} report and B ({args.b}) a {kind[not kinds[1]]} "
                          "one: nothing to compare")
    if kinds[0]:  # both read before anything is printed: a bad file is the only line
        a, b = decode_report.load(args.a), decode_report.load(args.b)
        table = decode_report.diff_table(a, b)
    else:
        table = report.diff_table(report.load(args.a), report.load(args.b))
    print(f"A = {args.a}\nB = {args.b}\n{table}")
    if kinds[0] and not decode_report.calls_in_both(a, b):  # a script's diff must not pass for a comparison
        raise LabkitError(decode_report.NOTHING_COMPARED)
    return 0


def _nb_list(args) -> int:
    from . import notebooks

    for name in notebooks.list_notebooks():
        print(name)
    return 0


def _nb_params(args) -> int:
    from . import notebooks

    for k, p in notebooks.parameters(args.name).items():  # the kind can be long (a file's format): default below
        print(f"{k:22s} {p.type.describe()}\n{'':22s} default {notebooks.shown_default(p.default)}: {p.help}")
        if getattr(p.type, "sweep_axis", False):
            print(f"{'':22s} a sweep's axis: recorded mode shows any subset of a recorded run's values")
    return 0


def _nb_run(args) -> int:
    from . import notebooks

    params = notebooks.parse_parameters(args.name, notebooks.parameter_pairs(args.name, args.param))
    res = notebooks.run(args.name, params, record=args.record, progress=sys.stderr)
    notebooks.print_result(res)
    return 0 if res.ok else 1


def _nb_script(args) -> int:
    from . import notebooks
    from .notebook_script import write_script
    from .values import not_an_input

    not_an_input(args.out.path, [notebooks.resolve(args.name)], "--out")
    params = notebooks.parse_parameters(args.name, notebooks.parameter_pairs(args.name, args.param))
    path = write_script(args.name, params, args.out.path, progress=sys.stderr)
    shell = shell_word(path)
    print(f"{path}\n  run it: python {shell}   (under ncu: labkit ncu run --out NAME.ncu-rep -- python {shell})")
    return 0


def _nb_run_all(args) -> int:
    from . import notebooks

    if args.record:  # every notebook would be refused alone: say it once, before any runs
        from .cuda import gpu_status

        usable, reason = gpu_status()
        if not usable:
            raise NoGPU(f"--record keeps real GPU runs only, and no notebook can run live here: {reason}")
    names, failed = notebooks.list_notebooks(), []
    for name in names:
        try:  # one notebook refused or failed: said, and the others still run
            res = notebooks.run(name, record=args.record, progress=sys.stderr)
        except LabkitError as exc:
            print(f"{name}: not run: {one_line(str(exc))}", flush=True)
            failed.append(name)
            continue
        notebooks.print_result(res)
        if not res.ok:
            failed.append(name)
    if failed:
        print(f"{len(failed)} of {len(names)} notebooks failed or did not run: {', '.join(failed)}")
        return 1
    from .rundirs import runs_root

    print(f"all notebooks ok; the newest run is {runs_root() / 'latest'}")
    return 0


def _lab(args) -> int:
    from ._env import repo_root
    from .lab import check_port_free, lab_command, lab_environ, lab_url, pair_notebooks

    check_port_free(args.port)
    notebooks = repo_root() / "notebooks"
    for path in pair_notebooks(notebooks):
        print(f"labkit lab: paired {path.name} with its source")
    argv = lab_command(notebooks, port=args.port, open_browser=not args.no_browser)
    env = lab_environ()
    env.pop("MPLBACKEND", None)  # kernels inherit it: Agg would keep figures out of the notebooks
    print(f"labkit lab: open {lab_url(args.port, env['JUPYTER_TOKEN'])}", flush=True)
    os.execve(argv[0], argv, env)
    return 0  # not reached


def _bench(args) -> int:
    from .cuda import require_gpu
    from .probes import timing_overhead, timing_overhead_table
    from .workloads.sage2.bench import bench, render

    require_gpu("the Sage2 bench")  # named for what the user ran, not for its first step (the overhead probe)
    overhead = timing_overhead()
    print(timing_overhead_table(overhead), flush=True)
    result = bench(args.shape, iterations=args.iterations, schedule=args.schedule)
    result["timing_overhead"] = overhead
    print(render(result))
    if args.out is not None:
        args.out.write_text(dumps(result, indent=2) + "\n")
        print(f"full results: {args.out}")
    return 0


class _Version(argparse.Action):
    """``--version``: ``labkit 0.1.0 (git <sha>)``, the sha that names the code a recorded run came from (asked of git
    only when the flag is given)."""

    def __init__(self, option_strings, dest, **kw):
        super().__init__(option_strings, dest, nargs=0, help="print labkit's version and git sha, then exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from . import __version__
        from .provenance import git_sha

        print(f"labkit {__version__} (git {git_sha()})")
        parser.exit()


def build_parser() -> Parser:
    from .timing import COLD_MODES
    from .values import Shape
    from .workloads.decode.bench import parse_point
    from .workloads.decode.geometry import HEAD_DIMS
    from .workloads.sage2.schedule import Schedule

    p = Parser(prog="labkit", description="GPU attention-kernel profiling helpers.")
    p.add_argument("--version", action=_Version)
    sub = p.add_subparsers(dest="cmd", required=True)

    d = sub.add_parser("device", help="describe the GPU (or say there is none)")
    d.add_argument("--index", type=int_in(0, 1023, what="--index"), default=0, help="which GPU (default 0)")
    d.add_argument("--json", action="store_true", help="print the description as JSON")
    d.set_defaults(fn=_device)

    r = sub.add_parser("report", help="Sage2 and decode reports").add_subparsers(dest="sub", required=True)
    s = r.add_parser("show", help="print a report's table (Sage2 phases, or decode points)")
    s.add_argument("file", help="a Sage2 report (the seed's or labkit's: sage2 profile --out) or a decode report "
                                "(decode bench --out, decode compare --out)")
    s.set_defaults(fn=_report_show)
    s = r.add_parser("diff", help="two reports of one kind side by side: what differs, then the ratios B/A")
    s.add_argument("a", help="report A")
    s.add_argument("b", help="report B")
    s.set_defaults(fn=_report_diff)
    s = r.add_parser("map", help="labkit against its best peer over batch x kv_len, from decode reports timed with "
                                 "--peers: a table, and with --out a figure")
    s.add_argument("files", nargs="+", help="decode reports (labkit decode bench --peers [--point ...] --out FILE)")
    s.add_argument("--out", type=figure_path("--out"),
                   help="write the figure as PATH.png and .svg (one geometry and cold mode per file if several: "
                        "PATH_d128_32-8 ..., and PATH_d128_32-8_clean for calls timed with --mode cold_clean)")
    s.add_argument("--newest", action="store_true",
                   help="a call timed in two reports shows the later one (provenance created_utc), e.g. a grid with "
                        "some calls timed again after a plan change; without it such a call is refused")
    s.set_defaults(fn=_report_map)
    s = r.add_parser("spread", help="one decode call across runs and GPUs: the plan's rate in each report, slowest "
                                    "first, beside the run's best peer and copy rate, and where the runs split into a "
                                    "slower and a faster group")
    s.add_argument("paths", nargs="+", help="decode reports, or directories to search for them (e.g. data/runs)")
    s.add_argument("--point", required=True, type=typed(parse_point, "point"), metavar="BATCHxKV_LEN",
                   help="the call, e.g. 64x8192 or 64x8k")
    s.add_argument("--head-dim", type=int, choices=HEAD_DIMS, default=128, help="default 128")
    s.add_argument("--heads", default="32/8", type=typed(_report_heads, "heads"),
                   help="query / KV heads as the reports write them: 32/8 (the default), or '32/8 page 16' for "
                        "pages other than 64")
    s.add_argument("--mode", choices=COLD_MODES, default="cold",
                   help="the calls' cold mode: L2 left dirty by the flush (cold, the default) or clean (cold_clean)")
    s.add_argument("--kernel", type=typed(build_label, "build"),
                   help="only runs of this build (its label in the table, e.g. 'mma w4s1c1'), to hold the kernel "
                        "fixed across commits")
    s.add_argument("--device", type=typed(device_model, "device"),
                   help="only runs on this GPU model, as the reports name it (e.g. 'NVIDIA H200'): the runs' step is "
                        "sought only among one model's")
    s.add_argument("--out", type=figure_path("--out"), help="write the figure as PATH.png and .svg")
    s.set_defaults(fn=_report_spread)

    nb = sub.add_parser("nb", help="parameterized notebooks").add_subparsers(dest="sub", required=True)
    nb.add_parser("list", help="list notebooks").set_defaults(fn=_nb_list)
    s = nb.add_parser("params", help="show a notebook's parameters")
    s.add_argument("name", help="notebook name or unique prefix (e.g. 03)")
    s.set_defaults(fn=_nb_params)
    s = nb.add_parser("run", help="run one notebook through papermill into a new run directory under runs/ (or "
                                  "$LABKIT_OUT)")
    s.add_argument("name", help="notebook name or unique prefix (e.g. 03)")
    s.add_argument("-p", "--param", nargs=2, action="append", metavar=("KEY", "VALUE"),
                   help="set a parameter (repeatable; labkit nb params NAME lists them)")
    s.add_argument("--record", action="store_true", help="keep run.json + data/ in data/runs/ (live runs only)")
    s.set_defaults(fn=_nb_run)
    s = nb.add_parser("script", help="write a notebook as a plain Python script with its parameters injected "
                                     "(papermill --prepare-only, then jupytext): what ncu or a debugger should run")
    s.add_argument("name", help="notebook name or unique prefix (e.g. 03)")
    s.add_argument("-p", "--param", nargs=2, action="append", metavar=("KEY", "VALUE"),
                   help="set a parameter (repeatable; labkit nb params NAME lists them)")
    s.add_argument("--out", required=True, type=output_path("--out", writes=None),  # check_script_path guards it
                   help="the script to write (.py)")
    s.set_defaults(fn=_nb_script)
    s = nb.add_parser("run-all", help="run every notebook with its defaults, each into a new run directory under runs/ "
                                      "(or $LABKIT_OUT)")
    s.add_argument("--record", action="store_true", help="keep each live run in data/runs/ (live runs only)")
    s.set_defaults(fn=_nb_run_all)
    s = sub.add_parser("lab", help="JupyterLab on the notebooks (127.0.0.1, token kept)")
    s.add_argument("--port", type=int_in(1, 65535, what="--port"), default=8888, help="default 8888")
    s.add_argument("--no-browser", action="store_true", help="do not open a browser (e.g. over ssh)")
    s.set_defaults(fn=_lab)
    s = sub.add_parser("bench", help="benchmark tables (GPU): Sage2 phases vs floors, mainloop vs torch SDPA")
    s.add_argument("--shape", default=Shape(1, 37810, 56, 128), type=typed(Shape.parse, "shape"),
                   help="B,N,H,D (default 1,37810,56,128, the seed's)")
    s.add_argument("--iterations", type=int_in(1, 10**6, what="--iterations"), default=10,
                   help="timed calls per row (default 10)")
    s.add_argument("--schedule", default=Schedule(), type=typed(Schedule.parse, "schedule"),
                   help="the mainloop build: seed (mma.sync, the seed's tiles), sm90 (wgmma + TMA, sm_90a), or "
                        "CTA_Q/CTA_K/WARP_Q/PV_TERMS of the seed-style build, e.g. 128/64/32/2 (default seed)")
    s.add_argument("--out", default=None, type=output_path("--out", writes="json:Sage2 bench results"),
                   help="also write the full results as JSON")
    s.set_defaults(fn=_bench)
    _extend(sub)
    return p


def _extend(sub) -> None:
    """Subcommands of the workload packages (manifest, sage2), registered when present."""
    import importlib

    for mod in ("labkit.manifest.cli", "labkit.workloads.sage2.cli", "labkit.workloads.decode.cli",
                "labkit.sched.cli", "labkit.ncu.cli", "labkit.sweep.cli"):
        try:
            m = importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name and mod.startswith(exc.name):
                continue
            raise
        m.register(sub)


def main(argv: list[str] | None = None) -> int:
    from ._text import VisibleStream

    streams = sys.stdout, sys.stderr
    for stream in streams:  # names from files may hold any character: never crash printing
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    # nor act on one: a report's kernel label holding ESC [31m or a right-to-left override is shown as written
    sys.stdout, sys.stderr = VisibleStream(sys.stdout), VisibleStream(sys.stderr)
    try:
        return _command(argv)
    finally:
        sys.stdout, sys.stderr = streams


def _error(prog: str, text: str) -> None:
    """The one error line, naming the command as an argument error does (``labkit decode build: ...``)."""
    named = text if prog == "labkit" or text.startswith(f"{prog}: ") else f"{prog}: {text}"
    print(f"labkit: error: {one_line(named)}", file=sys.stderr)


def _command(argv: list[str] | None) -> int:
    prog = "labkit"  # the command, once the line is parsed
    try:
        from .provenance import given_git_sha

        args = build_parser().parse_args(argv)  # --help and argument errors first
        prog = getattr(args, "_prog", prog)
        given_git_sha()  # before any command runs: a bad one would be found when a record is written, after the work
        check_switches()
        return args.fn(args)
    except LabkitError as exc:
        _error(prog, str(exc))
        end_now_if_asked(exc)  # a lost CUDA context: no teardown (its errors would follow the line)
        return exc.exit_status  # 2, or 1 where the input passed its checks and the machine or the work failed
    except BrokenPipeError:  # the reader went away (| head): stop quietly, as the Python docs recommend
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as exc:  # a path the checks could not foresee (/proc, permissions, a full disk): one line too
        where = f"{exc.filename}: " if exc.filename is not None else ""
        _error(prog, where + (exc.strerror or str(exc)))
        return 2
    except KeyboardInterrupt:
        print("labkit: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
