"""Issue 11 item 7: the measured timeline against ncu's counters on the same launches, and the
timeline's own cost (GPU; ncu from labkit.ncu).

``launches(shapes, out)`` runs one instrumented Sage2 mainloop launch per shape, each in NVTX range
``sched/<label>`` (a warm-up launch before it, outside the range), and writes each timeline's stats
and per-SM CTA counts to ``out``. ``crosscheck`` runs that under ncu (preset ``sched``: sm__cycles_active
and sm__ctas_launched) and joins the report's rows to it by range: model vs measured vs ncu.
``overhead`` times the plain and the instrumented mainloop interleaved.
"""

import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .._write import dumps, write_text
from ..cuda import require_gpu
from ..errors import LabkitError
from ..values import Shape, check_int
from .measure import SAGE2_KERNEL

# the seed shape (62.79 waves), one exact wave (66 q tiles x 4 heads = 264 CTAs), and a partial last wave
# of 76 CTAs after a full one (34 q tiles x 10 heads = 340 CTAs, kv 4352)
DEFAULT_SHAPES = ((1, 37810, 56, 128), (1, 8448, 4, 128), (1, 4352, 10, 128))
NCU_METRICS = {"sm_cycles_active_avg": "sm__cycles_active.avg", "sm_cycles_active_max": "sm__cycles_active.max",
               "sm_ctas_launched_min": "sm__ctas_launched.min", "sm_ctas_launched_max": "sm__ctas_launched.max"}


def label(shape) -> str:
    return "x".join(map(str, Shape.of(shape)))


@dataclass(frozen=True)
class CrossCheck:
    """One launch: the model, the timeline and ncu (``ncu_*`` None when run without ncu)."""

    shape: str
    ctas: int
    model_waves: float
    model_wave_efficiency: float
    slot_efficiency: float
    sm_efficiency: float
    timeline_ctas_per_sm_min: int
    timeline_ctas_per_sm_max: int
    ncu_sm_active_ratio: float | None  # sm__cycles_active.avg / .max
    ncu_ctas_per_sm_min: int | None
    ncu_ctas_per_sm_max: int | None
    ncu_waves: float | None

    @property
    def sm_efficiency_minus_ncu(self) -> float | None:
        return None if self.ncu_sm_active_ratio is None else self.sm_efficiency - self.ncu_sm_active_ratio

    def to_dict(self) -> dict:
        return {**asdict(self), "sm_efficiency_minus_ncu": self.sm_efficiency_minus_ncu}


def launches(shapes, out: Path | str) -> list[dict]:
    """One instrumented launch per shape (GPU), each in NVTX range ``sched/<label>``; writes ``out`` (JSON)."""
    from ..device import describe
    from ..timing import nvtx_range
    from .measure import _sage2_plan, sage2_occupancy
    from .model import sage2_launch

    shapes = [tuple(Shape.of(s)) for s in shapes]  # every shape checked before the GPU is asked for
    require_gpu("the instrumented Sage2 launch")
    dev = describe()
    rows = []
    for shape in shapes:
        b, n, h, d = shape
        occ = sage2_occupancy(d, arch=dev.arch)
        plan = _sage2_plan(shape)
        plan.mainloop()  # warm-up, outside the profiled range
        with nvtx_range(f"sched/{label(shape)}"):
            plan.mainloop()
        tl = plan.read_timeline()
        s = tl.stats()
        per_sm = np.bincount(tl.records[:, 1], minlength=tl.sms)
        m = sage2_launch(b, h, n, n, sms=dev.sm_count, ctas_per_sm=occ.ctas_per_sm)
        rows.append({"shape": label(shape), "ctas": m.ctas, "model_waves": m.waves,
                     "model_wave_efficiency": m.wave_efficiency, "slot_efficiency": s.slot_efficiency,
                     "sm_efficiency": s.sm_efficiency, "timeline_ctas_per_sm_min": int(per_sm.min()),
                     "timeline_ctas_per_sm_max": int(per_sm.max())})
        _sage2_plan.cache_clear()  # one shape's buffers at a time
    write_text(out, dumps(rows, indent=1, source=str(out)) + "\n")
    return rows


def join(rows: list[dict], ncu_table=None) -> list[CrossCheck]:
    """The launches' rows beside ncu's (a ``labkit.ncu.kernels`` table with ``NCU_METRICS`` columns), by range."""
    out = []
    for r in rows:
        ncu = {}
        if ncu_table is not None:
            # the range also holds the memset that clears the records before the launch: keep the mainloop
            hit = ncu_table[ncu_table["nvtx"].str.endswith(f"sched/{r['shape']}")
                            & ncu_table["kernel"].str.contains(SAGE2_KERNEL, regex=False)]
            if len(hit) != 1:
                raise LabkitError(f"ncu report: {len(hit)} launches in range sched/{r['shape']}, expected 1")
            h = hit.iloc[0]
            ncu = {"ncu_sm_active_ratio": float(h["sm_cycles_active_avg"] / h["sm_cycles_active_max"]),
                   "ncu_ctas_per_sm_min": int(h["sm_ctas_launched_min"]),
                   "ncu_ctas_per_sm_max": int(h["sm_ctas_launched_max"]), "ncu_waves": float(h["waves"])}
        out.append(CrossCheck(**r, **{k: ncu.get(k) for k in ("ncu_sm_active_ratio", "ncu_ctas_per_sm_min",
                                                             "ncu_ctas_per_sm_max", "ncu_waves")}))
    return out


def crosscheck(shapes, out_dir: Path | str, *, ncu: bool = True) -> list[CrossCheck]:
    """``launches`` under ncu (``--nvtx-include labkit@sched/``, preset ``sched``) in a child process, then
    the join. ``ncu`` False: the launches in this process alone (no counters)."""
    from ..ncu import NcuOptions, kernels, load
    from ..ncu.runner import profile, require_ncu

    require_gpu("sched crosscheck")  # both refusals before the output directory is made (it had been left empty)
    if ncu:
        require_ncu()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows_file = out / "launches.json"
    if not ncu:
        return join(launches(shapes, rows_file))
    opts = NcuOptions(output=out / "sched", nvtx_ranges=("sched",), preset="sched")
    child = [sys.executable, "-m", "labkit", "sched", "launches", "--out", str(rows_file),
             *[a for s in shapes for a in ("--shape", ",".join(map(str, Shape.of(s))))]]
    profile(child, opts, progress=sys.stderr)  # version check, progress, one-line failures, a fresh log
    rows = json.loads(rows_file.read_text())
    return join(rows, kernels(load(out / "sched.ncu-rep"), metrics=NCU_METRICS))


def overhead(shape=DEFAULT_SHAPES[0], *, iterations: int = 10) -> dict:
    """Plain vs instrumented mainloop at ``shape``, interleaved (cold L2): p50 of each and the overhead. The
    instrumented call includes the memset that clears its records (CTAs x 48 B), as every timeline launch does."""
    from ..timing.interleave import interleave
    from ..workloads.sage2.inputs import check_inputs, random_inputs
    from ..workloads.sage2.plan import Sage2Plan

    b, n, h, d = Shape.of(shape)
    check_int(iterations, what="iterations", lo=1)
    require_gpu("the timeline overhead A/B")
    q, k, v = random_inputs(b, n, n, h, h, d, layout="NHD", dtype="bf16", seed=0)
    x = check_inputs(q, k, v, layout="NHD")
    plain, timed = Sage2Plan(x), Sage2Plan(x, timeline=True)
    plain.run()
    timed.run()
    t = interleave({"sched/plain": plain.mainloop, "sched/timeline": timed.mainloop}, iterations=iterations)
    p, i = t["sched/plain"].stats.p50_s, t["sched/timeline"].stats.p50_s
    return {"shape": label(shape), "iterations": iterations, "plain_p50_ms": p * 1e3, "timeline_p50_ms": i * 1e3,
            "overhead": i / p - 1, "target": 0.01}
