"""The q/kv tail study: mainloop time at lengths around a tile boundary, configurations interleaved.

A round (``tail_round``) prepares every configuration on its own prefix of the same seeded inputs and
times each mainloop once, in an order rotated by the round's number, so slow drift spreads over all
of them. Rounds are labkit.sweep points (workload ``sage2.tail_round``): an interrupted study keeps
the rounds it finished and a re-run resumes. ``tail_points`` folds the rounds into the report's
TailPoints (p50 / min / max over rounds per configuration).
"""

import tempfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ... import _env
from ...errors import LabkitError
from ...report.model import SWEEPS, TailPoint
from ...timing import Stats, interleave
from ...values import Shape, check_int, tile_tails
from .schedule import Schedule, tail_fields

WORKLOAD = "sage2.tail_round"


def tail_configs(shape, q_tails: list[int] | None = None, kv_tails: list[int] | None = None,
                 schedule: Schedule = Schedule()) -> list[tuple[str, int, int]]:
    """(sweep, q_len, kv_len) of every configuration: q lengths at kv = N, then kv lengths at q = N
    (None: the seed's three points around the tile)."""
    shape = Shape.of(shape)
    n = shape.seq_len
    q_tails, kv_tails = shape.lengths(q_tails, "q_tails"), shape.lengths(kv_tails, "kv_tails")
    q_lens = q_tails if q_tails is not None else tile_tails(n, schedule.cta_q)
    kv_lens = kv_tails if kv_tails is not None else tile_tails(n, schedule.cta_k)
    points = [("q_tail_fixed_kv", ql, n) for ql in q_lens]
    points += [("kv_tail_fixed_q", n, kl) for kl in kv_lens]
    return points


def _key(sweep: str, q_len: int, kv_len: int) -> str:
    return f"{sweep}/q{q_len}/kv{kv_len}"


def tail_round(shape, *, round_index: int, layout: str = "NHD", dtype: str = "bf16",
               q_tails: list[int] | None = None, kv_tails: list[int] | None = None, seed: int = 0,
               schedule: Schedule = Schedule()) -> dict:
    """One interleaved round (GPU): fresh N(0, 1) inputs from ``seed``, each configuration prepared on
    its prefix and run once untimed, then one cold-L2 mainloop sample each, the order rotated by
    ``round_index``. Returns a JSON-ready dict: the order, and per configuration its seconds and checksum."""
    from ...cuda import cupy
    from .inputs import check_inputs, random_inputs, to_f32
    from .plan import Sage2Plan
    from .profile import check_options
    from .reference import checksum

    check_int(round_index, what="round_index", lo=0)
    check_options(layout=layout, dtype=dtype, seed=seed)
    configs = tail_configs(shape, q_tails, kv_tails, schedule)  # every length checked before any GPU work
    b, n, h, d = Shape.of(shape)
    cp = cupy()
    q, k, v = random_inputs(b, n, n, h, h, d, layout=layout, dtype=dtype, seed=seed)
    plans = {}
    for sweep, ql, kl in configs:
        sl_q = (slice(None), slice(0, ql)) if layout == "NHD" else (slice(None), slice(None), slice(0, ql))
        sl_k = (slice(None), slice(0, kl)) if layout == "NHD" else (slice(None), slice(None), slice(0, kl))
        p = Sage2Plan(check_inputs(cp.ascontiguousarray(q[sl_q]), cp.ascontiguousarray(k[sl_k]),
                                   cp.ascontiguousarray(v[sl_k]), layout=layout), schedule)
        p.run()  # prepares the quantized operands; doubles as the warm-up
        p.out.view(cp.uint16).fill(0xFFFF)  # a bf16 / fp16 NaN word: the timed mainloop must write every element
        plans[_key(sweep, ql, kl)] = p
    del q, k, v
    order: list[str] = []
    timings = interleave({key: p.mainloop for key, p in plans.items()}, iterations=1, warmup=0, rotate=round_index,
                         on_sample=lambda name, _r, _t: order.append(name))
    sums = {}
    for key, p in plans.items():  # one fp32 copy at a time: 1.1 GB each at the seed's shape
        out = to_f32(p.out, dtype)
        check_written(key, out, round_index)
        sums[key] = checksum(out)
    first = next(iter(timings.values()))
    return {
        "round_index": round_index, "order": order, "flush_bytes": first.flush_bytes,
        "sm_clock_start_hz": first.sm_clock_start_hz, "sm_clock_end_hz": first.sm_clock_end_hz,
        "clock_dropped": first.clock_dropped,
        "configurations": [{"sweep": sweep, "q_len": ql, "kv_len": kl,
                            "seconds": timings[_key(sweep, ql, kl)].samples_s[0],
                            "checksum": sums[_key(sweep, ql, kl)]}
                           for sweep, ql, kl in configs],
    }


def check_written(key: str, out, round_index: int) -> None:
    """Every element of configuration ``key``'s output (fp32, NumPy or CuPy) finite after the timed mainloop, which ran
    on a poisoned output: a round of a kernel (or a GPU) that left elements unwritten or wrote NaN says so, and records
    nothing, rather than a checksum of NaN.

    Raises:
        LabkitError: naming the configuration and how many of its elements.
    """
    bad = int((~np.isfinite(out)).sum())
    if bad:
        raise LabkitError(f"tail study round {round_index}: {key}: {bad} of {out.size} output elements are not finite "
                          "after the timed mainloop (poisoned before it): the kernel left them unwritten or wrote "
                          "NaN/Inf; the round is not recorded")


def tail_points(rounds: Iterable[dict], schedule: Schedule = Schedule()) -> list[TailPoint]:
    """The report's tail study from finished rounds (``tail_round``'s dicts, or a sweep's rows).

    Raises:
        LabkitError: no rounds, rounds over different configurations, or a configuration whose
            checksum changed between rounds (the mainloop is deterministic on the same inputs).
    """
    rounds = [_round(r, i) for i, r in enumerate(rounds)]
    if not rounds:
        raise LabkitError("tail study: no finished rounds")
    r0, first = rounds[0]
    keys = [c[:3] for c in first]
    samples: dict[tuple, list[float]] = {k: [] for k in keys}
    for index, confs in rounds:
        if [c[:3] for c in confs] != keys:
            raise LabkitError(f"tail study: round {index} ran other configurations than round {r0}")
        for (sweep, ql, kl, seconds, checksum), c0 in zip(confs, first):
            if checksum != c0[4]:
                raise LabkitError(f"tail study: {_key(sweep, ql, kl)} gave checksum {checksum!r} in round {index} and "
                                  f"{c0[4]!r} in round {r0}")
            samples[(sweep, ql, kl)].append(seconds)
    return [TailPoint(sweep=sweep, q_len=ql, kv_len=kl, **tail_fields(ql, kl, schedule),
                      mainloop=Stats.from_samples(samples[(sweep, ql, kl)]), checksum=checksum)
            for sweep, ql, kl, _, checksum in first]


def _round(r: dict, i: int) -> tuple[object, list[tuple[str, int, int, float, float]]]:
    """One round's (index, configurations), read strictly: a sweep point's result is data from disk (a hand-parsed
    round gave a KeyError for a missing field and took "0.001" or -1 as seconds)."""
    from ..._json import Node

    index = r.get("round_index", i) if isinstance(r, dict) else i
    n = Node(r, "", source=f"tail round {index}").obj(("configurations",), any_keys=True)
    confs = []
    for c in n["configurations"].list(1):
        c.obj(("sweep", "q_len", "kv_len", "seconds", "checksum"))
        confs.append((c["sweep"].str(SWEEPS), c["q_len"].int(1), c["kv_len"].int(1), c["seconds"].positive(),
                      c["checksum"].num()))
    return index, confs


def tail_grid(shape, *, iterations: int, layout: str, dtype: str, q_tails: list[int] | None,
              kv_tails: list[int] | None, seed: int, schedule: Schedule = Schedule()) -> dict[str, list]:
    """The ``sage2.tail_round`` sweep grid: ``iterations`` rounds, every other parameter fixed."""
    check_int(iterations, what="tail_iterations", lo=1)
    return {"round_index": list(range(iterations)), "shape": [list(Shape.of(shape))], "layout": [layout],
            "dtype": [dtype], "q_tails": [q_tails], "kv_tails": [kv_tails], "seed": [seed],
            "schedule": [schedule.to_dict()]}


def check_tail_dir(directory: Path | str, shape, *, iterations: int = 5, layout: str = "NHD", dtype: str = "bf16",
                   q_tails: list[int] | None = None, kv_tails: list[int] | None = None, seed: int = 0,
                   schedule: Schedule = Schedule()) -> None:
    """That ``tail_study`` can keep its rounds in ``directory`` (a new sweep it may create, or this same study to
    resume), checked without writing: ``sage2 profile`` measures for minutes before its tail study starts.

    Raises:
        ArgumentError: a file there, another sweep there, or a place that cannot be written.
    """
    from ...sweep.engine import SweepDir

    grid = tail_grid(shape, iterations=iterations, layout=layout, dtype=dtype, q_tails=q_tails, kv_tails=kv_tails,
                     seed=seed, schedule=schedule)
    SweepDir(directory).check_start(WORKLOAD, grid)


def tail_study(shape, *, iterations: int = 5, layout: str = "NHD", dtype: str = "bf16",
               q_tails: list[int] | None = None, kv_tails: list[int] | None = None, seed: int = 0,
               schedule: Schedule = Schedule(), directory: Path | str | None = None,
               progress=_env.STDERR) -> list[TailPoint]:
    """Run (or resume) the rounds as a labkit.sweep in ``directory`` (a temporary one if None) and fold them."""
    from ...sweep import read_sweep, run

    progress = _env.stream(progress)

    tail_configs(shape, q_tails, kv_tails, schedule)
    grid = tail_grid(shape, iterations=iterations, layout=layout, dtype=dtype, q_tails=q_tails, kv_tails=kv_tails,
                     seed=seed, schedule=schedule)
    with tempfile.TemporaryDirectory(prefix="labkit-tails-") as tmp:
        target = Path(directory) if directory is not None else Path(tmp)
        run(target, WORKLOAD, grid, progress=progress)
        return tail_points(read_sweep(target, WORKLOAD, grid).to_dict("records"), schedule)
