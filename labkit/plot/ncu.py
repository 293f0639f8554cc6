"""Figures of notebook 05 (Nsight Compute against labkit's event timings); each returns its Figure."""

import math

from .._text import sig3
from . import _axes, _plt


def event_vs_ncu(df, *, limit: float = 0.01, min_us: float = 100.0, title: str = "ncu duration vs event p50", ax=None):
    """Per case, ncu's duration relative to the event p50 in percent (``labkit.ncu.tables.event_vs_ncu``);
    filled dots: kernels of at least ``min_us``, where the gap should stay inside the +-``limit`` band."""
    fig, ax = _axes(ax, figsize=(7, 1.2 + 0.32 * max(len(df), 1)))
    y = list(range(len(df)))
    gaps = [100 * g if g == g else math.nan for g in df["gap"]]
    long = [e >= min_us for e in df["event_p50_us"]]
    ax.axvspan(-100 * limit, 100 * limit, color="0.9", zorder=0, label=f"+-{100 * limit:g} %")
    ax.axvline(0, color="0.5", lw=0.8)
    # flagged: a cross of another colour, not a dot of a near one (vermillion beside orange read as one, a review)
    for yy, g, is_long, flagged in zip(y, gaps, long, df["flagged"]):
        ax.scatter([g], [yy], s=60 if flagged else 30, zorder=3, color="C4" if flagged else "C3",
                   marker="X" if flagged else "o", facecolors=None if is_long or flagged else "none")
    for yy, g, ev, nc in zip(y, gaps, df["event_p50_us"], df["ncu_us"]):
        # a case ncu profiled that has no event timing has no gap: said at 0 rather than left an empty row
        text = f"event {_time(ev)}, ncu {_time(nc)}" if g == g else f"ncu {_time(nc)}, no event timing (no gap)"
        ax.annotate(text, (g if g == g else 0.0, yy), xytext=(6, 0), textcoords="offset points", va="center",
                    fontsize=7)
    ax.set_yticks(y, list(df["case"]), fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("ncu gpu__time_duration / event p50 - 1 [%]")
    ax.set_title(title, fontsize=9)
    ax.set_xlim(right=max([1.5 * 100 * limit, *(g for g in gaps if g == g)]) + 12)  # room for the labels
    from matplotlib.lines import Line2D

    dot = {"marker": "o", "linestyle": "none", "markersize": 5}
    handles = [*ax.get_legend_handles_labels()[0],
               Line2D([], [], color="C3", label=f"kernel of {min_us:g} us or more (held to the band)", **dot),
               Line2D([], [], color="C3", markerfacecolor="none", label=f"under {min_us:g} us (not held)", **dot),
               Line2D([], [], color="C4", label="flagged: held, outside the band",
                      **{**dot, "marker": "X", "markersize": 7})]
    fig.legend(handles=handles, loc="outside lower center", fontsize=7, ncols=2)
    return fig


def _time(us: float) -> str:
    """A duration as a reader scans it: 9.47 us, 488 us, 120.1 ms."""
    return f"{us / 1e3:.1f} ms" if us >= 1e4 else f"{sig3(us)} us"


def time_vs_counters(df, counters, correlations=None, *, title: str = "time vs counters"):
    """Event p50 [us] against each counter: one column of panels per sweep group, one row per counter, 4.5 in a column
    (a row per group of 2.6 in panels had made the figure 10.4 in wide, and JupyterLab's pane had shown its 6 pt ticks
    at 5); ``correlations`` (``labkit.ncu.tables.correlations``) puts each panel's Pearson r in its title."""
    plt = _plt()
    groups = list(dict.fromkeys(df["group"])) or [""]
    counters = [c for c in counters if c in df]
    rows = max(len(counters), 1)
    fig, axes = plt.subplots(rows, len(groups), figsize=(4.5 * len(groups), 2.4 * rows + 0.7), squeeze=False)
    r_of = {}
    if correlations is not None and len(correlations):
        r_of = {(g, c): r for g, c, r in zip(correlations["group"], correlations["counter"], correlations["pearson_r"])}
    for i, g in enumerate(groups):
        part = df[df["group"] == g]
        for j, c in enumerate(counters):
            ax = axes[j][i]
            in_mb = c.endswith("_bytes")  # bytes in MB, ns in us: raw counts had put a 1e9 offset on the axis
            in_us = c.endswith("_ns")
            x = part[c].astype(float) / (1e6 if in_mb else 1e3 if in_us else 1.0)
            ax.scatter(x, part["event_p50_us"].astype(float), s=18, color=f"C{i}")
            r = r_of.get((g, c), math.nan)
            times = part["event_p50_us"].astype(float)
            spread = float((times.max() - times.min()) / times.median()) if len(times) else math.nan
            # an r over times that differ by less than their run-to-run noise says nothing: say how close they are
            close = f", times within {100 * spread:.1f} %" if spread == spread and spread < 0.02 else ""
            ax.set_title(f"{g}\nr = {r:.2f}{close}" if r == r else f"{g}\nr: n/a", fontsize=9)
            ax.set_xlabel(f"{c} [MB]" if in_mb else f"{c.removesuffix('_ns')} [us]" if in_us
                          else f"{c} [%]" if c.endswith("_pct") else c, fontsize=8)
            ax.tick_params(labelsize=8)
            ax.ticklabel_format(axis="x", useOffset=False)  # "+1.249e1" beside the axis read as part of a tick
            if len(times) and times.min() > 0 and times.max() > 10 * times.min():  # the decode sweep: 1k to 8k x 1..64
                ax.set_yscale("log")
                if (x > 0).all() and x.max() > 10 * x.min():
                    ax.set_xscale("log")
            ax.set_ylabel("event p50 [us]", fontsize=8)  # each column its own scale: 120 ms, or 10 us to 0.5 ms
    fig.suptitle(title, fontsize=10)
    return fig


# ncu's warp stall reasons (smsp__pcsamp_warps_issue_stalled_*), each always drawn in the same colour (tab20 without
# its greys, which mean "other"): the two kernels' stall charts had given "wait" two colours
STALL_REASONS = ("long_scoreboard", "short_scoreboard", "wait", "selected", "not_selected", "barrier",
                 "math_pipe_throttle", "mio_throttle", "lg_throttle", "dispatch_stall", "branch_resolving",
                 "no_instructions", "imc_miss", "drain", "membar", "misc", "sleeping", "tex_throttle")


def stall_color(reason: str):
    """The colour of a stall reason in every figure; an unknown one takes a fixed colour from its name's CRC."""
    import zlib

    plt = _plt()
    palette = [c for i, c in enumerate(plt.get_cmap("tab20").colors) if i not in (14, 15)]
    if reason == "other":
        return "0.7"
    i = STALL_REASONS.index(reason) if reason in STALL_REASONS else zlib.crc32(reason.encode())
    return palette[i % len(palette)]


def phase_stalls(shares, *, top: int = 7, title: str = "stall reasons per phase", ax=None):
    """Stacked bars: per phase, each stall reason's percent of that phase's samples (``stall_shares``);
    the ``top`` largest reasons overall, the rest as ``other``; a phase without samples says so."""
    fig, ax = _axes(ax, figsize=(8, 1.4 + 0.45 * max(len(shares), 1)))
    keep = list(shares.columns[:top])
    data = shares[keep].copy()
    if len(shares.columns) > top:
        data["other"] = shares[shares.columns[top:]].sum(axis=1)
    left = [0.0] * len(data)
    for c in data.columns:
        vals = list(data[c])
        ax.barh(list(data.index), vals, left=left, color=stall_color(c), label=c, height=0.6)
        left = [a + b for a, b in zip(left, vals)]
    for phase, total in zip(data.index, left):
        if total == 0:
            ax.text(1, phase, "no samples", va="center", fontsize=7.5, color="0.4")
    ax.invert_yaxis()
    ax.set_xlabel("share of the phase's warp samples [%]")
    ax.set_xlim(0, 100)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # 8 in wide: 7 pt read under 8 in the pane
    return fig


def phase_shares(table, *, title: str = "phase shares of two ncu runs", ax=None):
    """Grouped bars of each run's share of samples per phase (``labkit.ncu.tables.phase_table``), labelled
    with the difference run 2 - run 1 in points."""
    import numpy as np

    fig, ax = _axes(ax, figsize=(7, 3.6))
    runs = [c for c in table.columns if c.startswith("share_run")]
    x = np.arange(len(table))
    width = 0.8 / max(len(runs), 1)
    for i, c in enumerate(runs):
        ax.bar(x + (i - (len(runs) - 1) / 2) * width, table[c], width,
               label=c.removeprefix("share_").removesuffix("_pct"), color=f"C{i}")
    if "diff_points" in table:
        for xx, top, d in zip(x, table[runs].max(axis=1), table["diff_points"]):
            d = round(d, 2) + 0.0  # -0.004 reads 0.00, as the notebook's table prints it, not -0.00
            ax.annotate(f"{d:+.2f} pt" if d else "0.00 pt", (xx, top), xytext=(0, 3), textcoords="offset points",
                        ha="center", fontsize=7)
    ax.set_xticks(x, list(table.index), rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("share of warp samples [%]")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    return fig
