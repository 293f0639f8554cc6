"""``labkit manifest check|pack|run``: thin shells over labkit.manifest."""

import json
from pathlib import Path

from ..errors import LabkitError


def _vars(items) -> dict[str, int]:
    out = {}
    for item in items or []:
        name, _, value = item.partition("=")
        try:
            out[name] = int(value)
        except ValueError:
            raise LabkitError(f"--var {item!r}: expected NAME=INTEGER") from None
    return out


def _device():
    from ..cuda import gpu_status

    ok, reason = gpu_status()
    if not ok:
        return None, reason
    from ..device import describe

    return describe(), ""


def _check(args) -> int:
    from . import load
    from .report import render_check
    from .validate import check

    m = load(args.file)
    device, reason = (None, "--no-device") if args.no_device else _device()
    res = check(m, program=args.program, vars=_vars(args.var), device=device, cubin_dirs=tuple(args.cubin_dir))
    print(render_check(res, device, reason))
    return 0 if res.ok else 2


def _pack(args) -> int:
    from . import load
    from .validate import check

    m = load(args.file)
    device, reason = _device()
    if device is not None:
        from .runner import Runner

        r = Runner(m, program=args.program, vars=_vars(args.var), cubin_dirs=tuple(args.cubin_dir), load=False)
        blobs = [(p, b) for p, b, _ in r.packed]
        note = f"tensor maps encoded and pointers taken from buffers allocated on {device.name}"
    else:
        res = check(m, program=args.program, vars=_vars(args.var), cubin_dirs=tuple(args.cubin_dir))
        res.raise_if_errors()
        blobs = [(plan, plan.offline_blob) for plan in res.plans]
        note = f"no CUDA driver ({reason}): tensor maps and pointers are zero-filled"
    out = Path(args.out)
    for i, (plan, blob) in enumerate(blobs):
        path = out if len(blobs) == 1 else out.with_name(f"{out.stem}.{i}{out.suffix}")
        path.write_bytes(blob)
        print(f"{path}: {len(blob)} B for call {plan.call!r} ({plan.entry})")
    print(note)
    return 0


def _run(args) -> int:
    from . import load
    from .report import render_timings
    from .runner import Runner

    m = load(args.file)
    r = Runner(m, program=args.program, vars=_vars(args.var), cubin_dirs=tuple(args.cubin_dir), seed=args.seed)
    r.run_once()
    timings = r.time(iterations=args.iters, mode=args.mode)
    print(render_timings(timings))
    if args.json:
        Path(args.json).write_text(json.dumps({k: t.to_dict() for k, t in timings.items()}, indent=2) + "\n")
        print(f"timings: {args.json}")
    return 0


def register(sub) -> None:
    mp = sub.add_parser("manifest", help="schema_version 4 launch manifests").add_subparsers(dest="sub", required=True)

    def common(p):
        p.add_argument("file")
        p.add_argument("--program", default=None)
        p.add_argument("--var", action="append", metavar="NAME=N", help="value of a manifest var (default: its max)")
        p.add_argument("--cubin-dir", action="append", default=[], help="another directory to search for cubins")

    p = mp.add_parser("check", help="validation report and launch plan; exit 0 if it can run, 2 if not")
    common(p)
    p.add_argument("--no-device", action="store_true", help="do not check against the local GPU")
    p.set_defaults(fn=_check)
    p = mp.add_parser("pack", help="write the exact parameter bytes")
    common(p)
    p.add_argument("--out", required=True)
    p.set_defaults(fn=_pack)
    p = mp.add_parser("run", help="run the program and print per-call statistics")
    common(p)
    p.add_argument("--iters", type=int, default=None, help="samples per call (default: adaptive)")
    p.add_argument("--mode", choices=("cold", "hot", "graph"), default="cold")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None, help="also write the timings here")
    p.set_defaults(fn=_run)
