"""Nsight Compute reports read through ``ncu_report`` (the PyPI wheel works without a GPU or ncu).

``load(path)`` opens a ``.ncu-rep``; ``kernels(report)`` is one row per profiled kernel launch
(NVTX path in labkit's domain, launch geometry, duration and the chosen metrics, units in the column
names); ``rules(report)`` the rule results (e.g. the tail effect) with their speedup estimates.
"""

import re
from os import PathLike
from pathlib import Path

from .. import _deps
from ..errors import NcuError

KERNEL_METRICS = {  # column -> metric (values in the metric's base unit, named in the column)
    "duration_ns": "gpu__time_duration.sum",
    "cycles": "gpc__cycles_elapsed.max",
    "clock_hz": "gpc__cycles_elapsed.avg.per_second",
    "grid": "launch__grid_size",
    "block": "launch__block_size",
    "registers": "launch__registers_per_thread",
    "waves": "launch__waves_per_multiprocessor",
    "sm_throughput_pct": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "warps_active_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
}


class Report:
    """An opened report. It keeps every range and action object alive for as long as it lives (the
    wheel's proxies do not keep their parents). Select launches by ``nvtx_path``: the wheel's
    ``IRange.actions_by_nvtx`` segfaults in a process where CUDA failed to start (a CPU machine)."""

    def __init__(self, ctx, path: Path):
        self.ctx, self.path = ctx, path
        self.ranges = [ctx.range_by_idx(i) for i in range(ctx.num_ranges())]
        self.actions = [(r, a, rng.action_by_idx(a)) for r, rng in enumerate(self.ranges)
                        for a in range(rng.num_actions())]


def load(path: Path | str) -> Report:
    """Open a report.

    Raises:
        NcuError: not a readable Nsight Compute report (one line naming the file).
    """
    import stat

    p = Path(path)
    try:
        mode = p.stat().st_mode
    except OSError as exc:
        raise NcuError(f"{p}: cannot read the report ({exc.strerror})") from None
    if not stat.S_ISREG(mode):  # a directory, or a FIFO the reader would wait on
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise NcuError(f"{p}: is {kind}; expected an .ncu-rep report file")
    ncu_report = _deps.require("ncu_report")  # after the path: a missing file is bad input, the reader the machine's
    try:
        ctx = ncu_report.load_report(str(p))
    except Exception as exc:  # noqa: BLE001 - the wheel raises plain exceptions for bad files
        raise NcuError(f"{p}: not a readable Nsight Compute report ({type(exc).__name__}: {exc})") from None
    if ctx.num_ranges() == 0:
        raise NcuError(f"{p}: no profiled range in it (not a Nsight Compute report, or an empty one)")
    return Report(ctx, p)


def actions(report: Report):
    """(range index, action index, action) of every profiled workload, in report order."""
    return list(report.actions)


def nvtx_path(action, domain: str = "labkit") -> str:
    """The push/pop ranges open in ``domain`` at launch, bottom to top, joined by '/' ('' if none)."""
    state = action.nvtx_state()
    if state is None:
        return ""
    for i in state.domains():
        d = state.domain_by_id(i)
        if d.name() == domain:
            return "/".join(d.push_pop_ranges())
    return ""


def metric(action, name: str):
    """A kernel-level metric's value in its base unit, or None when the report lacks it."""
    m = action.metric_by_name(name)
    return None if m is None else m.value()


def kernels(report: Report, metrics: dict[str, str] | None = None):
    """One row per profiled kernel: range, action, kernel name, NVTX path, then the metrics. ``report``: a loaded
    Report, or the ``.ncu-rep`` file's path (loaded here)."""
    pd = _deps.require("pandas")
    if isinstance(report, (str, PathLike)):  # a path had failed with "'str' object has no attribute" (an API walk)
        report = load(report)
    cols = {**KERNEL_METRICS, **(metrics or {})}
    rows = []
    for r, a, act in report.actions:
        row = {"range": r, "action": a, "kernel": act.name(), "nvtx": nvtx_path(act)}
        row.update({col: metric(act, m) for col, m in cols.items()})
        rows.append(row)
    return pd.DataFrame(rows)


RULE_MESSAGE_SHOWN = 160  # characters of a rule's message's first line, cut at a word


def _plain(message: str) -> str:
    """A rule message's first line as it reads: ncu's links ``@section:ID:Text@`` and ``@url:text:https://...@``
    as their text (they had printed as markup), cut at a word to ``RULE_MESSAGE_SHOWN``."""
    from .._text import cut_at_word

    line = message.splitlines()[0] if message else ""
    line = re.sub(r"@url:([^:@]*):[^@]*@", r"\1", line)
    line = re.sub(r"@\w+:(?:[^:@]*:)?([^@]*)@", r"\1", line)
    return cut_at_word(line, RULE_MESSAGE_SHOWN)


def rules(report: Report):
    """Every rule result with something to say: kernel, rule, title, the message's first line (``_plain``),
    estimated speedup (if any)."""
    pd = _deps.require("pandas")
    rows = []
    for r, a, act in report.actions:
        for res in act.rule_results_as_dicts():
            msg = res.get("rule_message") or {}
            est = res.get("speedup_estimation") or {}
            title, text = msg.get("title") or "", _plain(str(msg.get("message") or ""))
            if not title and not text:  # a rule's result with neither (an empty row, a review found)
                continue
            rows.append({"range": r, "action": a, "kernel": act.name(), "rule": res.get("rule_identifier"),
                         "section": res.get("section_identifier"), "title": title, "message": text,
                         "speedup_pct": est.get("speedup")})
    return pd.DataFrame(rows)


def join_timings(table, timings: dict[str, float]):
    """``kernels(...)`` joined to labkit's event timings: ``timings`` maps an NVTX range name (the innermost
    one, e.g. a Sage2 phase or a time_gpu name) to its event p50 [s]; launches of one range are numbered in
    report order. Adds ``event_p50_ns`` and ``ncu_over_event`` (ncu's duration / the event p50)."""
    df = table.copy()
    df["range_name"] = df["nvtx"].str.split("/").str[-1]
    df["launch"] = df.groupby("range_name").cumcount()
    df["event_p50_ns"] = df["range_name"].map(lambda n: timings[n] * 1e9 if n in timings else float("nan"))
    df["ncu_over_event"] = df["duration_ns"] / df["event_p50_ns"]
    return df
