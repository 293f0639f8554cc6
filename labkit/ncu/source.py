"""Time inside one fused kernel, by phase: ncu's per-PC samples summed per source line, lines grouped
by the kernel's ``// PHASE: <name>`` markers. Samples are of resident-warp time, not wall time per
phase: warps are in different phases at once, so shares shift with occupancy and tails.

A line belongs to the last marker above it in the same ``__global__`` function (markers reset at each
``__global__``, so a second kernel in the file is not taken for the first one's last phase); ``// PHASE: end``
closes a phase without opening one. Helpers marked above the kernel, and headers with markers, count too:
ncu gives an inlined helper's instructions the helper's own lines (an unmarked ``mma`` helper put most
of the Sage2 mainloop's samples into ``<unmapped>``). Lines no marker covers, and every PC whose source
text is not in the report, are ``<unmapped>``.
Each per-PC metric is read through its own correlation ids (PC lists differ between metrics).
"""

import re
from collections import defaultdict
from pathlib import PurePath

from .. import _deps
from ..errors import ArgumentError, NcuError

UNMAPPED = "<unmapped>"
END = "end"  # ``// PHASE: end``: the lines below belong to no phase
_PHASE = re.compile(r"//\s*PHASE:\s*([A-Za-z0-9_.\-]+)")
_STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"


def phase_map(text: str) -> dict[int, str]:
    """1-based line -> phase for every line of ``text`` that follows a marker in its kernel."""
    out, phase = {}, None
    for n, line in enumerate(text.splitlines(), start=1):
        if "__global__" in line:
            phase = None
        if m := _PHASE.search(line):
            phase = None if m.group(1) == END else m.group(1)
        elif phase is not None:
            out[n] = phase
    return out


def _per_line(action, name: str) -> dict[tuple[str, int], float]:
    m = action.metric_by_name(name)
    if m is None or not m.has_correlation_ids():
        return {}
    pcs = m.correlation_ids()
    out: dict[tuple[str, int], float] = defaultdict(float)
    for i in range(m.num_instances()):
        info = action.source_info(pcs.as_uint64(i))
        key = (PurePath(info.file_name()).name, info.line()) if info is not None else ("", 0)
        out[key] += m.as_double(i)
    return out


def phase_names(text: str) -> list[str]:
    """The phases ``text`` marks with ``// PHASE:``, in order of first appearance ([] when it has none)."""
    return list(dict.fromkeys(phase_map(text).values()))


def _tally(action, source: str) -> tuple[dict[str, dict[str, float]], list[str]]:
    """Per phase of ``source``: samples, instructions and each stall reason's samples; the phase order."""
    if not hasattr(action, "source_files"):  # a Report or an actions() tuple had failed in ncu_report (an API walk)
        raise ArgumentError(f"expected one profiled kernel: the action, third of each (range, index, action) of "
                            f"labkit.ncu.actions(report); got {type(action).__name__}")
    base = PurePath(source).name
    samples = _per_line(action, "smsp__pcsamp_sample_count")
    if not samples:
        raise NcuError(f"kernel {action.name()}: no per-PC samples in the report; profile with "
                       "--section SourceCounters --import-source yes")
    texts = {PurePath(p).name: t for p, t in action.source_files().items()}
    marked = sorted(name for name, t in texts.items() if t and _PHASE.search(t))
    if base not in texts and marked:  # any name had given the same table, ordered by the marked files' phases;
        # with no marked file (no source imported, only ncu's own) everything is unmapped, as before
        raise ArgumentError(f"source {source!r}: not one of kernel {action.name()}'s source files; those with "
                            f"// PHASE: markers: {', '.join(marked)}")
    maps = {name: phase_map(t) for name, t in texts.items() if t and (name == base or _PHASE.search(t))}
    mapping = maps.get(base, {})
    phase_of = lambda key: maps.get(key[0], {}).get(key[1], UNMAPPED)  # noqa: E731
    stall_names = [n for n in action.metric_names() if n.startswith(_STALL_PREFIX) and not n.endswith("_not_issued")]
    table: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for key, v in samples.items():
        table[phase_of(key)]["samples"] += v
    for key, v in _per_line(action, "inst_executed").items():
        table[phase_of(key)]["inst_executed"] += v
    for name in stall_names:
        for key, v in _per_line(action, name).items():
            table[phase_of(key)][name[len(_STALL_PREFIX):]] += v
    order = [*mapping.values(), *(p for name, m in maps.items() if name != base for p in m.values())]
    return table, [p for p in dict.fromkeys([UNMAPPED, *order]) if p in table]


def unmapped_reason(action, source: str) -> str:
    """Why every sample of ``action`` fell outside ``source``'s phases, in words (a fresh-user review: two kernels of
    one report read "100 % <unmapped>" alike, one not built from the file, the other with no phase around its lines)."""
    base = PurePath(source).name
    names = sorted(PurePath(p).name for p in action.source_files())
    if base not in names:
        return (f"kernel {action.name()} was not built from {base} (its sources in the report: "
                f"{', '.join(names) or 'none'})")
    return f"no // PHASE: section of {base} holds the lines kernel {action.name()}'s samples fell on"


def phases(action, source: str):
    """Per phase of ``source`` (a file name, matched by basename): samples, share of all samples,
    share x duration (an estimate: samples are resident-warp time), instructions executed, and the
    stall reasons in percent of the phase's samples, largest first.

    Raises:
        NcuError: the action has no per-PC samples (profile with --section SourceCounters).
    """
    pd = _deps.require("pandas")
    table, order = _tally(action, source)
    total = sum(t["samples"] for t in table.values())
    duration = action.metric_by_name("gpu__time_duration.sum")
    dur_ns = duration.as_double() if duration is not None else float("nan")
    rows = []
    for p in order:
        t = table[p]
        stalls = sorted(((k, v) for k, v in t.items() if k not in ("samples", "inst_executed") and v > 0),
                        key=lambda kv: -kv[1])
        rows.append({"phase": p, "samples": int(t["samples"]), "share": t["samples"] / total if total else 0.0,
                     "est_time_ns": dur_ns * t["samples"] / total if total else float("nan"),
                     "inst_executed": int(t["inst_executed"]),
                     "top_stalls": ", ".join(f"{k} {100 * v / t['samples']:.1f}%" for k, v in stalls[:3])
                     if t["samples"] else ""})
    return pd.DataFrame(rows).set_index("phase")


def stalls(action, source: str):
    """Stall-reason samples per phase of ``source`` (rows: phases as in ``phases``; columns: reasons, largest
    overall first); divide a row by the phase's samples for its stall mix."""
    pd = _deps.require("pandas")
    table, order = _tally(action, source)
    reasons = {k for t in table.values() for k in t if k not in ("samples", "inst_executed")}
    df = pd.DataFrame([{r: table[p].get(r, 0.0) for r in sorted(reasons)} for p in order], index=order)
    df.index.name = "phase"
    return df[df.sum().sort_values(ascending=False).index] if len(df.columns) else df


def phases_text(table) -> str:
    """``phases`` as ``labkit ncu phases`` prints it: the share in percent and the time estimate in us, each to 0.01
    (it had printed 0.0005816 beside 1 and 1.086e+05 ns)."""
    out = table.reset_index()
    out["share"] = (100 * out["share"]).round(2) + 0.0
    out["est_time_ns"] = (out["est_time_ns"] / 1e3).round(2)
    return out.rename(columns={"share": "share_pct", "est_time_ns": "est_time_us"}).to_string(index=False)
