"""Tables from an ``NcuSummary`` (pure pandas): counters, event p50 against ncu's duration, correlations of time
with counters across a sweep, the rules beside labkit's wave model, and the phase shares of two runs."""

import math

from .. import _deps
from ..sched.waves import waves
from .summary import NcuSummary, is_tail_rule

GAP_LIMIT = 0.01  # |ncu / event - 1| above this is flagged ...
GAP_MIN_NS = 100_000  # ... for kernels of at least 100 us (shorter ones carry the launch and replay overheads)
CORRELATED = ("duration_ns", "dram_read_bytes", "dram_write_bytes", "dram_throughput_pct", "sm_throughput_pct",
              "tensor_active_pct", "warps_active_pct", "waves", "l2_hit_pct")


def _pd():
    return _deps.require("pandas")


def counter_table(s: NcuSummary):
    """One row per profiled launch: case, kernel and every counter read."""
    return _pd().DataFrame(list(s.counters))


def group_of(s: NcuSummary) -> dict[str, str]:
    """case -> 'sage2 tail study' or 'decode sweep' (the sweeps the correlations run over)."""
    out = {c["name"]: "sage2 tail study" for c in s.cases.get("sage2", [])}
    out.update({c["name"]: "decode sweep" for c in s.cases.get("decode", [])})
    return out


def event_vs_ncu(s: NcuSummary, *, limit: float = GAP_LIMIT, min_ns: float = GAP_MIN_NS):
    """Per case: event p50, ncu's median ``gpu__time_duration`` over its launches, their gap (relative, and ncu
    minus event in us), and ``flagged`` when the relative gap passes ``limit`` for a kernel of at least ``min_ns``."""
    pd = _pd()
    df = counter_table(s)
    if df.empty:
        return pd.DataFrame(columns=["case", "kernel", "event_p50_us", "ncu_us", "gap", "gap_us", "flagged"])
    ncu = df.groupby("case", sort=False).agg(kernel=("kernel", "first"), ncu_ns=("duration_ns", "median"),
                                             launches=("duration_ns", "size"))
    rows = []
    for case, r in ncu.iterrows():
        t = s.timings.get(case)
        ev = t["p50_ns"] if t else math.nan
        gap = r["ncu_ns"] / ev - 1 if ev == ev and ev else math.nan
        rows.append({"case": case, "group": group_of(s).get(case, ""), "kernel": r["kernel"],
                     "event_p50_us": ev / 1e3, "event_min_us": t["min_ns"] / 1e3 if t else math.nan,
                     "event_max_us": t["max_ns"] / 1e3 if t else math.nan, "ncu_us": r["ncu_ns"] / 1e3,
                     "launches": int(r["launches"]), "gap": gap, "gap_us": (r["ncu_ns"] - ev) / 1e3,
                     "flagged": bool(gap == gap and ev >= min_ns and abs(gap) > limit)})
    return pd.DataFrame(rows)


def gap_lines(gaps) -> list[str]:
    """One line per sweep group of ``event_vs_ncu``'s table: the range of its gaps, whether they share a sign (an
    offset between the two ways of timing, not one case's drift) and in how many cases ncu's duration lies outside
    the events' min..max."""
    lines = []
    if gaps.empty or "group" not in gaps:  # event_vs_ncu's table of no launches has no group column
        return lines
    for group, g in gaps.groupby("group", sort=False):
        g = g[g["gap"].notna()]
        if g.empty:
            continue
        outside = int(((g["ncu_us"] < g["event_min_us"]) | (g["ncu_us"] > g["event_max_us"])).sum())
        gap = g["gap"]
        sign = ("ncu longer in every case" if (gap > 0).all() else "ncu shorter in every case" if (gap < 0).all() else
                "ncu longer or level in every case" if (gap >= 0).all() else
                "ncu shorter or level in every case" if (gap <= 0).all() else
                "ncu longer in some cases, shorter in others")
        lines.append(f"{group or 'other'}: gaps {100 * gap.min():+.2f} to {100 * gap.max():+.2f} % over "
                     f"{len(g)} cases, {sign}; ncu outside the events' min..max in {outside} of {len(g)}")
    return lines


def sweep_table(s: NcuSummary):
    """Event p50 joined to the first launch's counters of each case, with its sweep group."""
    df = counter_table(s)
    if df.empty:
        return df
    first = df[df["launch"] == 0].copy()
    first["group"] = first["case"].map(group_of(s))
    first["event_p50_us"] = first["case"].map(lambda c: s.timings[c]["p50_ns"] / 1e3 if c in s.timings else math.nan)
    return first


def correlations(s: NcuSummary, counters=CORRELATED):
    """Pearson r of event p50 with each counter, per sweep group (NaN with fewer than 3 points or a constant)."""
    import numpy as np

    pd = _pd()
    df = sweep_table(s)
    rows = []
    for group, g in (df.groupby("group", sort=False) if not df.empty else ()):
        for c in counters:
            if c not in g:
                continue
            xy = g[["event_p50_us", c]].apply(pd.to_numeric, errors="coerce").dropna()
            ok = len(xy) >= 3 and xy.std().min() > 0
            r = float(np.corrcoef(xy["event_p50_us"], xy[c])[0, 1]) if ok else math.nan
            t = xy["event_p50_us"]
            span = float(100 * (t.max() - t.min()) / t.median()) if len(t) else math.nan
            ratio = float(t.max() / t.min()) if len(t) and t.min() > 0 else math.nan
            rows.append({"group": group, "counter": c, "points": len(xy), "time_span_pct": span,
                         "time_max_over_min": ratio, "pearson_r": r})
    return pd.DataFrame(rows, columns=["group", "counter", "points", "time_span_pct", "time_max_over_min",
                                       "pearson_r"])


def correlation_matrix(corr):
    """``correlations`` as counter x group, each column naming its points and how far its times spread: an r over 5
    times within 1 % (the Sage2 tail study) reads a single point's noise as a correlation."""
    if not len(corr):
        return corr
    groups = list(dict.fromkeys(corr["group"]))  # in the figure's order, not pivot's alphabetical one
    names = {}
    for g in groups:
        part = corr[corr["group"] == g]
        counts = part.loc[part["points"] > 0, "points"]  # a counter ncu gave nowhere has none: not a range's end
        lo, hi = (int(counts.min()), int(counts.max())) if len(counts) else (0, 0)
        widest = part.loc[part["points"].idxmax()]  # the spread of the counter with the most points
        spread = (f"times {widest.time_max_over_min:.0f}x apart" if widest.time_max_over_min >= 2
                  else f"times within {widest.time_span_pct:.1f} %")
        names[g] = f"{g} ({lo if lo == hi else f'{lo}-{hi}'} points, {spread})"
    return corr.pivot(index="counter", columns="group", values="pearson_r")[groups].rename(columns=names)


def measured_on(s: NcuSummary, recorded_run: str | None = None) -> str:
    """The GPU and the ncu that measured ``s``; with ``recorded_run`` (a recorded run's directory), said to be that
    run's: after "ncu cannot profile here", a bare "ncu 2025.3.1 at /usr/local/cuda/bin/ncu" read as this machine's."""
    if recorded_run is None:
        return f"{s.device}; {s.ncu}"
    return f"recorded on {s.device} (run {recorded_run}): {s.ncu}"


def report_sizes(s: NcuSummary, limit_bytes: int):
    """Each ncu report's size in MiB (bytes / 2^20, as ``limit_bytes`` is set), whether it is under ``limit_bytes``
    (the column names the limit in MiB; yes / no) and its ncu run's seconds."""
    pd = _pd()
    limit = f"under {limit_bytes / 2**20:g} MiB"
    rows = {name: {"MiB": round(r["bytes"] / 2**20, 2), limit: "yes" if r["bytes"] < limit_bytes else "no",
                   "elapsed_s": r.get("elapsed_s", math.nan)} for name, r in s.reports.items()}
    return pd.DataFrame.from_dict(rows, orient="index", columns=["MiB", limit, "elapsed_s"])


def efficiency_table(s: NcuSummary):
    """Per case: ncu's waves, labkit's wave model on the same launch (grid, SMs, CTAs per SM from ncu's
    occupancy limits), and the tail-effect / imbalance rules with their estimated speedups."""
    pd = _pd()
    df = sweep_table(s)
    rules = pd.DataFrame(list(s.rules))
    rows = []
    for _, r in df.iterrows():
        limits = [r.get(k) for k in ("limit_registers", "limit_shared_mem", "limit_warps", "limit_blocks")]
        limits = [int(v) for v in limits if v is not None and v == v]
        grid, sms = r.get("grid"), r.get("sm_count")
        model = (waves(int(grid), int(sms), min(limits)) if limits and min(limits) > 0 and grid and sms
                 and grid == grid and sms == sms else None)
        mine = rules[rules["case"] == r["case"]] if not rules.empty else rules
        is_tail = [is_tail_rule(a, b) for a, b in zip(mine.get("rule", ()), mine.get("title", ()))]
        tail = mine[is_tail] if not mine.empty else mine
        other = mine[[not t for t in is_tail]] if not mine.empty else mine
        rows.append({"case": r["case"], "group": r["group"], "grid": grid, "ncu_waves": r.get("waves"),
                     "ctas_per_sm": model.ctas_per_sm if model else None,
                     "labkit_waves": model.waves if model else math.nan,
                     "last_wave_fill": model.last_wave_fill if model else math.nan,
                     "labkit_cta_efficiency": model.efficiency if model else math.nan,
                     "tail_rule_speedup_pct": tail["speedup_pct"].max() if len(tail) else math.nan,
                     # the summary keeps the rules that fired: none, or their sections were not collected
                     "tail_rule": "; ".join(tail["title"].fillna("")) if len(tail) else "none fired",
                     # titles, not rule ids: ncu's three imbalance rules share the id WorkloadImbalance
                     "imbalance_rules": "; ".join(f"{a} ({b:.1f}%)" if b == b and b is not None else str(a)
                                                  for a, b in zip(other["title"].where(other["title"] != "",
                                                                                       other["rule"]),
                                                                  other["speedup_pct"]))
                     if len(other) else "none fired"})
    return pd.DataFrame(rows)


def shown_counters(counters):
    """``counter_table`` as notebook 05 shows it, in units a row reads in: the duration in us, the clock in GHz, DRAM
    bytes in MB, percentages to 0.1, waves to 0.01 and whole counts as integers (it had shown 8.556206e+08 bytes,
    1.803312e+09 Hz and a limit of 2.0 CTAs); the saved CSV keeps ncu's units and every digit."""
    out = counters.copy()
    scaled = {"duration_ns": ("duration_us", 1e-3, 2), "clock_hz": ("clock_GHz", 1e-9, 3),
              "dram_read_bytes": ("dram_read_MB", 1e-6, 1), "dram_write_bytes": ("dram_write_MB", 1e-6, 1)}
    for col, (name, factor, digits) in scaled.items():
        if col in out:
            out[col] = (out[col] * factor).round(digits)
    out = out.rename(columns={col: name for col, (name, _, _) in scaled.items()})
    for col in out.columns:
        if out[col].dtype.kind != "f":
            continue
        if col.endswith("_pct"):
            out[col] = out[col].round(1) + 0.0
        elif col == "waves":
            out[col] = out[col].round(2)
        elif out[col].notna().all() and (out[col] == out[col].round()).all():  # counts and limits: 2, not 2.0
            out[col] = out[col].astype("int64")
    return out


def shown_gaps(gaps):
    """``event_vs_ncu`` as notebook 05 shows it: the gap in percent (``gap_pct``, as the lines above it say it; the
    bare fraction 0.0105 had read as 0.01 %) and times to 0.01 us; the saved CSV keeps the fraction."""
    from ..report.tables import rounded

    out = gaps.copy()
    position = list(out.columns).index("gap")
    out.insert(position, "gap_pct", out.pop("gap") * 100)
    return rounded(out, (("_us", 2), ("_pct", 2)))


def shown_correlations(matrix):
    """``correlation_matrix`` to 0.001 of r: six digits said more than a handful of points resolve."""
    return matrix.round(3) + 0.0


def shown_efficiency(eff):
    """``efficiency_table`` as a notebook shows it: ``tail_rule_speedup_pct`` left out where no row has one (no tail
    rule fired, which ``tail_rule`` says: a column of NaN beside it said nothing more); waves to 0.01, fills and
    efficiencies to 1e-4 (they had shown 62.787879 and 0.996633); the imbalance rules by unit and share (``SMs 18.9%,
    L2 6.4%``, where ncu's four rule names had made the table 280 characters wide). The saved CSV keeps it all."""
    import re

    from ..report.tables import rounded

    if "tail_rule_speedup_pct" in eff and eff["tail_rule_speedup_pct"].isna().all():
        eff = eff.drop(columns=["tail_rule_speedup_pct"])
    out = rounded(eff, (("waves", 2), ("fill", 4), ("efficiency", 4), ("_pct", 1)))
    if "imbalance_rules" in out:  # "SMs Workload Imbalance (18.9%); L2 Slices Workload Imbalance (6.4%)"
        out["imbalance_rules"] = [re.sub(r"(\S+)(?: Slices)? Workload Imbalance \(([^)]*)\)", r"\1 \2", str(v))
                                  .replace(";", ",") for v in out["imbalance_rules"]]
        out = out.rename(columns={"imbalance_rules": "imbalance_rules (est. speedup)"})
    return out


def rules_text(found) -> str:
    """``report.rules`` as text a terminal shows whole: a heading per kernel launch, a line per rule (its section,
    rule and title, ncu's estimated speedup where it gives one) and ncu's message under it, wrapped. One row per rule
    with the message beside it had been about 275 characters wide."""
    from .._text import wrapped

    lines, launch = [], None
    for r in found.to_dict("records"):
        if (r["range"], r["action"]) != launch:
            launch = r["range"], r["action"]
            lines.append(f"range {r['range']}, action {r['action']}: {r['kernel']}")
        speedup = r.get("speedup_pct")
        est = f" (est. speedup {speedup:.1f}%)" if isinstance(speedup, float) and speedup == speedup else ""
        title = f": {r['title']}" if r["title"] else ""
        lines.append(f"  {r['section']} / {r['rule']}{title}{est}")
        if r["message"]:
            lines.append(wrapped(f"    {r['message']}"))
    return "\n".join(lines)


def phase_table(s: NcuSummary, case: str):
    """Phase shares of each ncu run of ``case`` side by side in percent of the kernel's warp samples
    (``share_run1_pct``...), and their difference in percentage points (``diff_points``, run 2 - run 1; one unit
    for both, where fractions had stood beside points); None when the attribution was skipped."""
    pd = _pd()
    att = next((a for a in s.attributions if a.case == case), None)
    if att is None or att.skipped or not att.runs:
        return None
    cols = {f"share_run{i + 1}_pct": {p: 100 * v for p, v in zip(run["phases"], run["share"])}
            for i, run in enumerate(att.runs)}
    df = pd.DataFrame(cols).fillna(0.0)
    if len(att.runs) >= 2:
        df["diff_points"] = df["share_run2_pct"] - df["share_run1_pct"]
    df.index.name = "phase"
    return df


def shown_phases(table):
    """``phase_table`` as notebook 05 prints it: to 0.01 of a percent, a difference that rounds to zero as 0.00 (it
    had printed -0.00 beside the figure's +0.00)."""
    from ..report.tables import rounded

    return rounded(table, (), default=2)


def stall_shares(run: dict):
    """One ``phase_run``'s stall reasons per phase in percent of the phase's samples (phases x reasons; reasons
    ordered by their samples over the whole kernel)."""
    pd = _pd()
    df = pd.DataFrame({p: run["stalls"].get(p, {}) for p in run["phases"]}).T.fillna(0.0)
    totals = pd.Series(dict(zip(run["phases"], run["samples"])), dtype=float)
    order = df.sum().sort_values(ascending=False).index  # by samples over all phases, not by percent
    df = df.div(totals.replace(0, math.nan), axis=0).fillna(0.0) * 100
    return df[order] if len(df.columns) else df


def closing_note(s: NcuSummary) -> str:
    """The numbers an issue's closing note needs: event p50 vs ncu per kernel, each attribution's phase shares in
    both runs (or why it was skipped), and the report sizes."""
    out = [measured_on(s), "", "event p50 vs ncu gpu__time_duration (flagged: >= 100 us and > 1 % apart), beside the "
           "events' min and max (a p50 far above the min: samples were disturbed):"]
    # min and max: a gap that only a few us of launch and dirty L2 should open (H100 record: 8 x 1k decode -62 %, its
    # samples 20.8..215.5 us) is the events' own scatter, which the p50 alone hid
    gaps = event_vs_ncu(s)[["case", "kernel", "event_p50_us", "event_min_us", "event_max_us", "ncu_us", "gap",
                            "flagged"]]
    us = "{:.2f}".format
    out.append(gaps.to_string(index=False, formatters={"event_p50_us": us, "event_min_us": us, "event_max_us": us,
                                                        "ncu_us": us, "gap": "{:+.2%}".format,
                                                        "flagged": lambda v: "FLAGGED" if v else "-"}))
    for att in s.attributions:
        out.append("")
        if att.skipped:
            out.append(f"{att.case}: phase attribution skipped: {att.skipped}")
            continue
        out.append(f"{att.case} ({att.source}): phase shares of {len(att.runs)} ncu runs")
        out.append(shown_phases(phase_table(s, att.case)).to_string(float_format=lambda v: f"{v:.2f}"))  # no -0.00
    out += ["", "reports: " + ", ".join(f"{k} {v['bytes'] / 2**20:.2f} MiB" for k, v in s.reports.items())]
    return "\n".join(out)
