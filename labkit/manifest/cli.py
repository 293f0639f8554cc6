"""``labkit manifest check|pack|run``: thin shells over labkit.manifest.

Arguments are validated values; the manifest is parsed and checked (without a device) before
anything needs a GPU, so bad input is refused the same way on every machine.
"""


from .._cliargs import existing_dir, int_in, output_path, typed
from .._write import dumps
from ..errors import ArgumentError, at
from ..values import parse_int
from .issues import ManifestError


def parse_var(text: str) -> tuple[str, int]:
    """``NAME=N`` with N a positive ASCII integer (the manifest bounds it further by the var's max)."""
    name, sep, value = text.partition("=")
    if not sep or not name.isidentifier() or not name.isascii():
        raise ArgumentError(f"--var {text!r}: expected NAME=INTEGER")
    return name, parse_int(value, what=f"--var {name}", lo=1)  # the manifest bounds it by the var's max


def _vars(items) -> dict[str, int]:
    out = {}
    for name, value in items if items is not None else ():
        if name in out:
            raise ArgumentError(f"--var {name} given twice ({out[name]} and {value})")
        out[name] = value
    return out


def _device():
    from ..cuda import gpu_status

    ok, reason = gpu_status()
    if not ok:
        return None, reason
    from ..device import describe

    return describe(), ""


def _checked(args, device=None):
    """Parse and check the manifest (no device unless given); raise on errors."""
    from . import load
    from .validate import check

    m = load(args.file)
    res = check(m, program=args.program, vars=_vars(args.var), device=device, cubin_dirs=tuple(args.cubin_dir))
    return m, res


def _check(args) -> int:
    from .report import render_check, render_other_programs
    from .validate import check

    device, reason = (None, "--no-device") if args.no_device else _device()
    m, res = _checked(args, device)
    print(render_check(res, device, reason))
    # without --program every program is checked: a broken second one had passed unseen
    others = {} if args.program is not None or not res.program else {
        p: check(m, program=p, vars=_vars(args.var), device=device, cubin_dirs=tuple(args.cubin_dir))
        for p in m.programs if p != res.program}
    if others:
        print("\n" + render_other_programs(others, res))
    for name, r in {res.program: res, **others}.items():  # the report above lists them; stderr gets the one line
        if not r.ok:  # every refusal gets, naming the first
            more = f" (and {len(r.errors) - 1} more: the report above lists them)" if len(r.errors) > 1 else ""
            first = r.errors[0]
            what = f"program {name} of {args.file}" if name != res.program else args.file  # the first: the file's
            raise ManifestError(f"{len(r.errors)} error(s): {what} cannot run: {at(first.path, first.message)}{more}")
    return 0


def _blob_paths(out, calls: int) -> list:
    """OUT for a program of one call; OUT.0.bin, OUT.1.bin, ... for several."""
    return [out] if calls == 1 else [out.with_name(f"{out.stem}.{i}{out.suffix}") for i in range(calls)]


def _pack(args) -> int:
    m, res = _checked(args)
    res.raise_if_errors("nothing written")  # before a GPU is touched: a broken manifest fails the same way everywhere
    # each call's blob, before any is written: an existing file only where it is a block of that size (the manifest
    # itself among them is a text file; a NumPy array or a user's data of another size is refused)
    for path, plan in zip(_blob_paths(args.out.path, len(res.plans)), res.plans):
        type(args.out).parse(path, "--out", writes=f"binary:{len(plan.offline_blob)}")
    device, reason = _device()
    if device is not None:
        from .runner import Runner

        r = Runner(m, program=args.program, vars=_vars(args.var), cubin_dirs=tuple(args.cubin_dir), load=False)
        blobs = [(p, b) for p, b, _ in r.packed]
        note = f"tensor maps encoded and pointers taken from buffers allocated on {device.name}"
    else:
        blobs = [(plan, plan.offline_blob) for plan in res.plans]
        note = f"no CUDA driver ({reason}): tensor maps and pointers are zero-filled"
    for path, (plan, blob) in zip(_blob_paths(args.out.path, len(blobs)), blobs):
        type(args.out)(path).write_bytes(blob)
        print(f"{path}: {len(blob)} B for call {plan.call!r} ({plan.entry})")
    print(note)
    return 0


def _run(args) -> int:
    from .report import render_timings
    from .runner import Runner

    m, res = _checked(args)  # --json over the manifest was refused with the args, as another labkit document
    res.raise_if_errors()  # checked without a device first; the Runner checks again against the GPU
    r = Runner(m, program=args.program, vars=_vars(args.var), cubin_dirs=tuple(args.cubin_dir), seed=args.seed)
    print(r.input_note)
    r.run_once()
    timings = r.time(iterations=args.iters, mode=args.mode)
    print(render_timings(timings))
    if args.json is not None:
        args.json.write_text(dumps({k: t.to_dict() for k, t in timings.items()}, indent=2) + "\n")
        print(f"timings: {args.json}")
    return 0


def register(sub) -> None:
    from ..timing import MODES

    mp = sub.add_parser("manifest", help="schema_version 4 launch manifests").add_subparsers(dest="sub", required=True)

    def common(p, program_default: str):
        p.add_argument("file", help="a schema_version 4 launch manifest (JSON)")
        p.add_argument("--program", default=None, help=f"which of its programs (default: {program_default})")
        p.add_argument("--var", action="append", metavar="NAME=N", type=typed(parse_var, "var"),
                       help="value of a manifest var (default: its max)")
        p.add_argument("--cubin-dir", action="append", default=[], type=existing_dir("--cubin-dir"),
                       help="another directory to search for cubins (data/cubins/ and the manifest's own directory "
                            "are searched too)")

    p = mp.add_parser("check", help="validation report and launch plan; exit 0 if it can run, 2 if not")
    common(p, "the first, shown whole, and the others by their verdicts")
    p.add_argument("--no-device", action="store_true", help="do not check against the local GPU")
    p.set_defaults(fn=_check)
    p = mp.add_parser("pack", help="write the exact parameter bytes")
    common(p, "the first")
    p.add_argument("--out", required=True, type=output_path("--out", writes="binary"),
                   help="the parameter block's file (a program of several calls: OUT.0.bin, OUT.1.bin, ...)")
    p.set_defaults(fn=_pack)
    p = mp.add_parser("run", help="run the program and print per-call statistics")
    common(p, "the first")
    p.add_argument("--iters", type=int_in(1, 10**6, what="--iters"), default=None,
                   help="samples per call (default: adaptive)")
    p.add_argument("--mode", choices=MODES, default="cold",
                   help="cold: L2 flushed by a memset before each sample (left dirty, as NVBench's flush); "
                        "cold_clean: that flush, then a read of other data, so L2 is clean; hot: warm L2; graph: a "
                        "CUDA graph of the call replayed, per call")
    p.add_argument("--seed", type=int_in(0, 2**63 - 1, what="--seed"), default=0,
                   help="seed of the random fill of buffers the manifest's model does not provide (default 0)")
    p.add_argument("--json", default=None, type=output_path("--json", writes="json:a manifest run's timings"),
                   help="also write the timings here")
    p.set_defaults(fn=_run)
