"""Notebook 05's live measurement: time the cases with CUDA events (no profiler), profile the same launches
under ncu in subprocesses (``labkit ncu cases SPEC``), read the reports into an ``NcuSummary``.

ncu runs, each filtered to ``labkit@ncu/`` and one kernel name, clocks left alone (``--clock-control none``):
``counters_sage2`` and ``counters_decode`` (the chosen sections and metrics), then two ``source`` runs of the
seed-shape mainloop (SourceCounters: per-phase samples), and two of one decode call when its kernel source
has ``// PHASE:`` markers (skipped, with the reason kept, when it has none).
"""

import sys
from pathlib import Path

from .. import _env
from ..errors import NcuError
from .cases import DECODE_KERNEL, RANGE, SAGE2_KERNEL, CasePlan, decode_cases, launch, sage2_cases, time_cases
from .command import NcuOptions
from .report import load
from .runner import available, profile, require_ncu
from .summary import Attribution, NcuSummary, attribution_of, counter_rows, rule_rows, timing_entry

REPORT_LIMIT = 5 * 2**20  # bytes per report file (kept small enough to record)
COUNTER_METRICS = ("gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
                   "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "lts__t_sector_hit_rate.pct")


def _kernel_dir(workload: str) -> Path:
    from .._env import repo_root

    return repo_root() / "labkit" / "workloads" / workload / "kernels"


def plan(shape, q_tail, kv_tail, batches, kv_lens, *, head_dim: int = 128, heads=(32, 8), page_size: int = 64,
         repeat: int = 1) -> CasePlan:
    """The cases, every value checked (no GPU)."""
    return CasePlan(sage2_cases(shape, q_tail, kv_tail),
                    decode_cases(batches, kv_lens, head_dim=head_dim, heads_q=heads[0], heads_kv=heads[1],
                                 page_size=page_size), repeat)


def choose_source(source: str) -> tuple[str, str | None]:
    """Notebook 05's ``source`` once ncu is asked, and the line that says why, when ncu changed it.

    ``auto`` on a GPU whose ncu cannot profile becomes ``recorded``, and the line gives ncu's fix. Without a GPU the
    run is recorded anyway and nothing is profiled, so ncu's fix would mislead: no line (the session's banner says
    there is no GPU). ``live`` stays live: ``measure`` refuses a missing ncu with the same fix.
    """
    from ..cuda import gpu_available

    if source != "auto" or not gpu_available():
        return source, None
    ok, ncu_line = available()
    return ("auto", None) if ok else ("recorded", f"ncu cannot profile here ({ncu_line}); showing the recorded run "
                                                  "instead")


def _cases_target(p: CasePlan, spec: Path) -> list[str]:
    return [sys.executable, "-m", "labkit", "ncu", "cases", str(p.save(spec))]


def measure(cases: CasePlan, *, out_dir, iterations: int = 10, sections=(), metrics=(), progress=_env.STDERR,
            timeout_s: float = 900.0) -> NcuSummary:
    """Time and profile ``cases``; reports go to ``out_dir/ncu/``.

    Raises:
        NcuError: ncu missing, too old or not allowed to read counters (before any GPU work), or a failed run.
    """
    progress = _env.stream(progress)
    ncu_line = require_ncu()
    from .. import _deps

    if _deps.optional("nvtx") is None:
        raise NcuError("the Python package nvtx is not installed: labkit's NVTX ranges are no-ops without it, so the "
                       "filter labkit@ncu/ would profile nothing (pip install nvtx)")
    from ..device import describe

    out = Path(out_dir) / "ncu"
    out.mkdir(parents=True, exist_ok=True)
    print(f"[ncu study] {ncu_line}; timing {len(cases.names)} cases (CUDA events, cold L2)", file=progress,
          flush=True)
    timings = {k: timing_entry(v) for k, v in time_cases(cases, iterations=iterations, progress=progress).items()}
    runs, counters, found_rules = {}, [], []

    def run(name: str, part: CasePlan, kernel: str, **opts) -> object:
        o = NcuOptions(output=out / name, nvtx_ranges=(RANGE,), kernel_name=f"regex:{kernel}", **opts)
        r = profile(_cases_target(part, out / f"{name}.cases.json"), o, progress=progress, timeout_s=timeout_s)
        if r.report_bytes > REPORT_LIMIT:
            print(f"[ncu study] {r.report.name}: {r.report_bytes / 2**20:.1f} MiB, over the "
                  f"{REPORT_LIMIT / 2**20:.0f} MiB limit: choose fewer sections", file=progress, flush=True)
        runs[name] = {"bytes": r.report_bytes, "elapsed_s": round(r.elapsed_s, 1), "command": " ".join(r.command)}
        return load(r.report)

    for name, part, kernel in (("counters_sage2", cases.only(c.name for c in cases.sage2), SAGE2_KERNEL),
                               ("counters_decode", cases.only(c.name for c in cases.decode), DECODE_KERNEL)):
        if part.names:
            rep = run(name, part, kernel, preset=None, sections=tuple(sections),
                      metrics=tuple(dict.fromkeys((*COUNTER_METRICS, *metrics))))
            counters += counter_rows(rep, part.names, {m: m for m in metrics})  # the notebook's metrics too
            found_rules += rule_rows(rep, part.names)
    atts = []
    targets = [(c.name, _kernel_dir("sage2") / "attn_fwd.cu", SAGE2_KERNEL) for c in cases.sage2[:1]]
    targets += [(c.name, _kernel_dir("decode") / c.source, DECODE_KERNEL) for c in cases.decode[-1:]]
    for case, source, kernel in targets:
        first = attribution_of(case, source, [])
        if first.skipped:
            print(f"[ncu study] {case}: {first.skipped}", file=progress, flush=True)
            atts.append(first)
            continue
        reps = [run(f"source_{case}_{i}", cases.only([case]), kernel, preset="source") for i in (1, 2)]
        atts.append(attribution_of(case, source, reps))
    return NcuSummary(describe().name, ncu_line, cases.to_dict(), timings, tuple(counters), tuple(found_rules),
                      tuple(atts), runs)


def launch_spec(spec: Path | str, progress=_env.STDERR) -> None:
    """``labkit ncu cases SPEC``: each case of a saved plan once, in its NVTX range (run under ncu)."""
    from .._json import show_path
    from ..errors import ArgumentError

    plan = CasePlan.load(spec)
    if not plan.names:  # launch() refuses it too, but cannot name the file
        raise ArgumentError(f"{show_path(spec)}: the case plan holds no cases (its sage2 and decode lists are empty): "
                            "nothing to launch")
    launch(plan, progress=_env.stream(progress))


__all__ = ["Attribution", "REPORT_LIMIT", "choose_source", "launch_spec", "measure", "plan"]
