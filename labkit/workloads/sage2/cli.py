"""``labkit sage2 schedule|profile``: thin shells over labkit.workloads.sage2."""

import json

from ...errors import LabkitError

PV_TERMS_HELP = "1: Sage2's e4m3 P and V (default); 2: each as two e4m3 terms (more precise, slower)"


def parse_shape(text: str) -> tuple[int, int, int, int]:
    try:
        b, n, h, d = (int(x) for x in text.split(","))
    except ValueError:
        raise LabkitError(f"--shape {text!r}: expected B,N,H,D (four integers)") from None
    if min(b, n, h, d) < 1:
        raise LabkitError(f"--shape {text!r}: every entry must be >= 1")
    return b, n, h, d


def _schedule(args) -> int:
    from .schedule import Schedule, scheduler, tail_fields

    b, n, h, d = parse_shape(args.shape)
    ql, kl = args.q_len or n, args.kv_len or n
    hd = 64 if d == 64 else 128
    try:
        s = Schedule(cta_q=args.cta_q, cta_k=args.cta_k, warp_q=args.warp_q, pv_terms=args.pv_terms)
        sched = scheduler(b, ql, kl, h, hd, s)
    except ValueError as exc:
        raise LabkitError(str(exc)) from None
    print(json.dumps({"shape": [b, n, h, d], "q_len": ql, "kv_len": kl, "scheduler": sched.__dict__,
                      "tail": tail_fields(ql, kl, s)}, indent=2))
    return 0


def register(sub) -> None:
    sp = sub.add_parser("sage2", help="the Sage2 workload").add_subparsers(dest="sub", required=True)
    p = sp.add_parser("schedule", help="scheduler fields of the fused mainloop as JSON (no GPU)")
    p.add_argument("--shape", required=True, help="B,N,H,D of q = k = v")
    p.add_argument("--q-len", type=int, default=None)
    p.add_argument("--kv-len", type=int, default=None)
    p.add_argument("--cta-q", type=int, default=128)
    p.add_argument("--cta-k", type=int, default=64)
    p.add_argument("--warp-q", type=int, default=32)
    p.add_argument("--pv-terms", type=int, choices=(1, 2), default=1, help=PV_TERMS_HELP)
    p.set_defaults(fn=_schedule)
    from .precision import register_precision  # imports no GPU code until run
    from .profile import register_profile

    register_profile(sp)
    register_precision(sp)
