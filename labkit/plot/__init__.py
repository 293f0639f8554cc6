"""Figures for notebooks: each takes data (and an optional ``ax``) and returns the Figure."""

import math
from pathlib import Path

from .. import _deps
from .._text import break_text, counted, sig3

STYLE = Path(__file__).with_name("perf.mplstyle")


def _plt():
    _deps.require("matplotlib")
    import matplotlib.pyplot as plt

    plt.style.use(str(STYLE))
    return plt


def _fit_titles(fig) -> None:
    """Break every title (the axes' and the figure's) that would run past the figure's edge, between its phrases
    where they fit and between words where they must, into lines of about equal length (``_text.break_line``; titles
    that name the geometry and the device run long; a title centred over axes that sit right of long tick labels is
    cut at the right edge first)."""
    fig.canvas.draw()  # the layout places the axes, and so where a title sits, at draw time
    renderer = fig.canvas.get_renderer()
    right = fig.bbox.width
    titles = [ax.title for ax in fig.axes] + ([fig._suptitle] if getattr(fig, "_suptitle", None) else [])
    for t in titles:
        text = t.get_text()
        if not text:
            continue
        box = t.get_window_extent(renderer)
        room = 0.97 * 2 * min((box.x0 + box.x1) / 2, right - (box.x0 + box.x1) / 2)  # centred where it is
        if box.width > room > 0:
            lines = text.split("\n")
            fit = max(20, math.floor(max(map(len, lines)) * room / box.width))  # characters the room holds
            t.set_text("\n".join(part for line in lines for part in (break_text(line, fit) if len(line) > fit
                                                                      else [line])))


_OTHER_IMAGE_SUFFIXES = (".pdf", ".eps", ".ps", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".gif", ".svgz")


def figure_paths(path: Path | str) -> tuple[Path, Path]:
    """The PNG and SVG ``save`` writes for ``path``: ``.png`` and ``.svg`` added to its name (``run.2026-12-05`` ->
    ``run.2026-12-05.png``, not ``run.png``), or put in place of a ``.png`` / ``.svg`` it ends in."""
    p = Path(path)
    if p.suffix.lower() in _OTHER_IMAGE_SUFFIXES:  # 'f.pdf' had written f.pdf.png and f.pdf.svg
        from ..errors import ArgumentError

        raise ArgumentError(f"{str(path)!r}: a figure is written as a PNG and an SVG, not a {p.suffix[1:].upper()}; "
                            f"give {str(p.with_suffix(''))!r} for both")
    base = p.with_suffix("") if p.suffix.lower() in (".png", ".svg") else p
    return base.with_name(base.name + ".png"), base.with_name(base.name + ".svg")


def save(fig, path: Path | str) -> Path:
    """Write ``figure_paths(path)`` (byte-stable metadata, titles that fit), then close the figure; returns the PNG."""
    if (saved := getattr(fig, "_labkit_saved", None)) is not None:  # closed: a second save had failed in matplotlib
        from ..errors import ArgumentError

        raise ArgumentError(f"this figure was saved to {saved} and closed: draw it again to save it elsewhere")
    plt = _plt()
    _fit_titles(fig)
    png, svg = figure_paths(path)
    png.parent.mkdir(parents=True, exist_ok=True)
    from ..output_kinds import PNG_SOFTWARE

    # a Software text without Matplotlib's version (byte-stable) that marks the PNG as a figure labkit may redraw
    fig.savefig(png, metadata={"Software": PNG_SOFTWARE})
    fig.savefig(svg, metadata={"Date": None})
    plt.close(fig)
    fig._labkit_saved = png
    return png


def _axes(ax, figsize=None):
    plt = _plt()
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize)
        return fig, ax
    return ax.figure, ax


def _outside_legend(fig, handles, labels, *, ncols: int, **kw):
    """A legend below the axes in at most ``ncols`` columns, fewer where its rows would run past the figure's edges
    (found live on an H100: with FA3 absent, its "not run" entry pushed the bandwidth figure's legend off both sides,
    cutting labels at the edges)."""
    for n in range(ncols, 0, -1):
        legend = fig.legend(handles, labels, loc="outside lower center", ncols=n, **kw)
        fig.canvas.draw()
        if n == 1 or legend.get_window_extent(fig.canvas.get_renderer()).width <= 0.98 * fig.bbox.width:
            return legend
        legend.remove()


def phase_dots(reports: dict, *, title: str = "Sage2 phases", ax=None):
    """Each phase's p50 [ms] as a dot per report (label -> Sage2Report) on a log axis, where only
    positions carry meaning (bars on a log axis would not); each dot is labelled with its time and
    its share of that report's pipeline total. Members of a group are in parentheses."""
    import numpy as np

    first = next(iter(reports.values()))
    labels = list(first.phase_timings)
    for rep in reports.values():
        labels += [p for p in rep.phase_timings if p not in labels]
    fig, ax = _axes(ax, figsize=(8, 1.2 + 0.42 * len(labels)))
    y = np.arange(len(labels))
    offsets = np.linspace(-0.18, 0.18, len(reports)) if len(reports) > 1 else [0.0]
    for i, ((label, rep), dy) in enumerate(zip(reports.items(), offsets)):
        df = rep.to_frame()
        rows = [(k, p) for k, p in enumerate(labels) if p in df.index]
        ys = [y[k] + dy for k, _ in rows]
        ms = [df.loc[p, "p50_ms"] for _, p in rows]
        ax.scatter(ms, ys, s=28, color=f"C{i}", label=label, zorder=3)
        for (k, p), yy, v in zip(rows, ys, ms):
            ax.annotate(f"{sig3(v)} ms ({df.loc[p, 'share']:.1%})", (v, yy), xytext=(6, 0), textcoords="offset points",
                        va="center", fontsize=7.5, color=f"C{i}")
    import textwrap

    from ..report.tables import MOVED_NOTE, MOVED_WORK, work_moved

    top = set().union(*(r.top_level_phases() for r in reports.values()))
    moved = work_moved(reports.values())  # a review: 0.004 against 5.53 ms read as a 1000x win, unstarred
    ticks = [(lab if lab in top else f"({lab})") + (" *" if moved and lab in MOVED_WORK else "") for lab in labels]
    ax.set_yticks(y, ticks, fontsize=8)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    ax.set_xscale("log")
    lo, hi = ax.get_xlim()
    ax.set_xlim(lo, hi * 8)  # room for the labels right of the largest dot
    ax.set_xlabel("p50 time per call [ms] (log scale); label: time (share of the pipeline total)"
                  + ("\n" + textwrap.fill(MOVED_NOTE, 70) if moved else ""))
    ax.set_title(title)
    if len(reports) > 1:
        fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=len(reports))
    return fig


def tail_study(report, *, title: str = "Sage2 tail study", ax=None):
    """Mainloop p50 [ms] (min..max bars) at each swept length, one panel per sweep; the right axis shows the tile
    efficiency along the swept dimension (q rows / scheduled q rows, or kv tokens / (k iterations x cta_k)). The
    lengths sit evenly spaced, labelled, not to scale: a tail study measures lengths one token apart beside one 50
    away, which a numeric axis drew on top of each other. The efficiency marker sits a little right of its time's,
    so neither hides the other. Points are not joined: neither quantity is linear between the lengths. The panels
    share their time axis."""
    from ..report.tables import tail_table

    plt = _plt()
    df = tail_table(report)
    sweeps = list(dict.fromkeys(df["sweep"]))
    # one time axis for both panels: the full shape sits in each, and two scales had shown it at two heights; 4.5 in a
    # panel, so that two fit the 9 in of JupyterLab's pane (9.2 in had shown the 7 pt legend there at 6.8)
    fig, axes = plt.subplots(1, len(sweeps), figsize=(4.5 * len(sweeps), 3.8), squeeze=False, layout="constrained",
                             sharey=True)
    for ax_, sweep in zip(axes[0], sweeps):
        d = df[df["sweep"] == sweep].sort_values("q_len" if sweep.startswith("q_") else "kv_len")
        along_q = sweep.startswith("q_")
        lengths = d["q_len"] if along_q else d["kv_len"]
        x = list(range(len(d)))
        err = [d["mainloop_p50_ms"] - d["mainloop_min_ms"], d["mainloop_max_ms"] - d["mainloop_p50_ms"]]
        ax_.errorbar(x, d["mainloop_p50_ms"], yerr=err, fmt="o", capsize=4, color="C0",
                     label="mainloop p50 (min..max)")
        ax_.set_xticks(x, [str(v) for v in lengths])
        ax_.set_xlim(-0.5, len(x) - 0.5)
        ax_.set_xlabel(("q_len" if along_q else "kv_len") + " [tokens] (evenly spaced, not to scale)")
        ax_.set_ylabel("mainloop time [ms]")
        ax_.tick_params(axis="y", labelleft=True)  # sharey hides a right panel's numbers, its label stayed alone
        fixed = f"kv_len {d['kv_len'].iloc[0]}" if along_q else f"q_len {d['q_len'].iloc[0]}"
        ax_.set_title(f"{'q' if along_q else 'kv'} tail, {fixed}", fontsize=9)
        eff = d["q_row_efficiency"] if along_q else d["kv_tile_efficiency"]
        ax2 = ax_.twinx()
        ax2.plot([v + 0.18 for v in x], eff, "s", color="C1", markerfacecolor="none",
                 label=("q-row" if along_q else "kv-tile") + " efficiency")
        ax2.set_ylabel(("q rows / scheduled rows" if along_q else "kv tokens / (k iters x cta_k)") + " [1]")
        span = max(float(eff.max() - eff.min()), 1e-4)
        ax2.set_ylim(float(eff.min()) - 0.25 * span, min(1.0, float(eff.max())) + 0.25 * span)
        ax2.ticklabel_format(axis="y", useOffset=False)
        ax2.grid(False)
        handles = ax_.get_legend_handles_labels()[0] + ax2.get_legend_handles_labels()[0]
        ax_.legend(handles, [h.get_label() for h in handles], loc="lower center", bbox_to_anchor=(0.5, 1.1),
                   fontsize=8, ncols=2)
    fig.suptitle(title, fontsize=10)
    return fig


def value_bars(values: dict[str, float], *, xlabel: str, title: str = "", labels: dict[str, str] | None = None,
               ax=None):
    """Labelled horizontal bars of named values (e.g. launch overheads in us); ``labels`` puts words on the keys."""
    fig, ax = _axes(ax, figsize=(7, 0.6 + 0.4 * len(values)))
    bars = ax.barh([(labels or {}).get(k, k) for k in values], list(values.values()))
    ax.bar_label(bars, fmt="%.2f", padding=2, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title)
    return fig


_KIND_COLORS = {"tensormap": "C4", "param": "C1", "scratch": "C5", "i32": "C2"}


def cold_l2_copies(table, *, l2_mib: float | None = None, title: str = "copy by L2 state", ax=None):
    """The cold-L2 copy probe (``labkit.probes.cold_l2_table``): TB/s read + written against the copy's size, one line
    per L2 state (warm, flushed and left dirty, flushed and left clean); dotted lines at half the L2 (from there a
    copy's source and destination no longer both fit) and at its size."""
    fig, ax = _axes(ax, figsize=(6.4, 3.8))
    labels = {"hot": "hot (L2 warm)", "cold": "cold (flushed, left dirty)", "cold_clean": "cold_clean (flushed, clean)"}
    for mode, rows in table.groupby("mode", sort=False):
        rows = rows.sort_values("MiB")
        ax.plot(rows["MiB"], rows["TBps"], marker="o", label=labels.get(mode, mode))
    if l2_mib:
        for at, label in ((l2_mib / 2, f"L2/2 {l2_mib / 2:g} MiB"), (l2_mib, f"L2 {l2_mib:g} MiB")):
            ax.axvline(at, color="0.5", linestyle=":", linewidth=1)
            ax.annotate(label, (at, ax.get_ylim()[0]), xytext=(3, 3), textcoords="offset points", fontsize=7,
                        color="0.4")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(table["MiB"].unique()), [str(m) for m in sorted(table["MiB"].unique())])
    ax.set_xlabel("copy size [MiB] (log scale)")
    ax.set_ylabel("read + written [TB/s]")
    ax.set_title(title)
    ax.legend(fontsize=7)
    return fig


def param_block(rows, size: int, *, title: str = "", ax=None):
    """The parameter block drawn along its bytes: one coloured span per field, zero bytes grey; a tensor map's span
    names its manifest field, its member (where known) and its param."""
    from matplotlib.patches import Patch

    fig, ax = _axes(ax, figsize=(9, 2.8))  # JupyterLab's pane: 10 in had shown its 7 pt labels at 6
    ax.broken_barh([(0, size)], (0, 1), facecolors="0.92")
    for r in rows:
        ax.broken_barh([(r.at, r.size)], (0, 1), facecolors=_KIND_COLORS.get(r.kind, "C7"), edgecolor="white",
                       linewidth=0.5)
        if r.kind == "tensormap":  # named as the check's messages and the table beside it name it
            label = "\n".join([f"fields[{r.field}]", *([r.member] if r.member else []),
                               r.source.replace("param ", "p").replace(" (", "\n(")])
            ax.text(r.at + r.size / 2, 0.5, label, ha="center", va="center", fontsize=8, color="white")
    ax.set_xlim(0, size)
    ax.set_ylim(0, 1)
    ax.set_yticks([])
    ax.set_xticks(range(0, size + 1, 128 if size > 512 else 32))
    ax.tick_params(axis="x", labelsize=8)
    ax.set_xlabel("byte offset in the parameter block [B]")
    ax.grid(False)
    handles = [Patch(color=c, label=k) for k, c in _KIND_COLORS.items()] + [Patch(color="0.92", label="zero")]
    fig.legend(handles=handles, ncols=5, loc="outside lower center", fontsize=8)
    written = sum(r.size for r in rows)
    ax.set_title(title or f"{size} B parameter block: {written} B written by {len(rows)} fields")
    return fig


def cta_gantt(timeline, *, title: str = "CTAs per SM slot", max_rows: int = 64, ax=None):
    """One row per (SM, slot), one bar per CTA coloured by its wave; time in us from the first start, over the
    whole launch. At most ``max_rows`` rows (an H200 launch has up to 132 x k of them): those whose last CTA ran
    in the latest wave first, since the tail is what the chart is for; where that wave has more rows than are left,
    half of them the rows that ended last and half those that ended first (a one-wave call's slow and fast SMs, not
    the lowest SM ids)."""
    df = timeline.frame()
    t0 = df["start_ns"].min()
    by_row = df.groupby(["sm", "slot"]).agg(wave=("wave", "max"), end=("end_ns", "max"))
    every, picked, split = list(by_row.index), [], False
    for _, tier in sorted(by_row.groupby("wave"), key=lambda kv: -kv[0]):
        left = max_rows - len(picked)
        if left <= 0:
            break
        if len(tier) > left:  # the ends of this wave: those that finished last and first
            ordered = list(tier.sort_values(["end"]).index)
            picked += ordered[len(ordered) - (left - left // 2):] + ordered[:left // 2]
            split = True
        else:
            picked += list(tier.index)
    rows = sorted((int(s), int(k)) for s, k in picked)
    at = {r: i for i, r in enumerate(rows)}
    # 8 in wide at 7.5 pt: a 9 in figure's 5 pt row labels had shown about 7 px tall in JupyterLab's pane
    fig, ax = _axes(ax, figsize=(8, 1 + 0.16 * len(rows)))
    for (sm, slot), d in df.groupby(["sm", "slot"]):
        if (sm, slot) not in at:
            continue
        bars = [((s - t0) / 1e3, (e - s) / 1e3) for s, e in zip(d["start_ns"], d["end_ns"])]
        ax.broken_barh(bars, (at[(sm, slot)] - 0.4, 0.8), facecolors=[f"C{w % 8}" for w in d["wave"]],
                       edgecolor="white", linewidth=0.3)
    from matplotlib.patches import Patch

    ax.set_yticks(range(len(rows)), [f"SM {s} slot {k}" for s, k in rows], fontsize=7.5)  # "SM 14.1" read as a number
    ax.invert_yaxis()
    ax.set_xlim(0, (df["end_ns"].max() - t0) / 1e3)
    ax.set_xlabel("time since the first CTA started [us]")
    shown = ("" if len(rows) == len(every) else f" ({len(rows)} of {len(every)}: the latest waves"
             + (", those that ended last and first)" if split else ")"))
    ax.set_ylabel(f"SM and slot{shown}")
    ax.set_title(title)
    n_waves = int(df["wave"].max()) + 1
    ax.legend(handles=[Patch(color=f"C{w % 8}", label=f"wave {w}") for w in range(min(n_waves, 8))], fontsize=7.5,
              loc="upper right")
    return fig


def cta_activity(timeline, *, title: str = "CTAs resident over time", bins: int = 200, ax=None):
    """How many CTAs were resident over the launch (``Timeline.active_ctas``) against the slots the GPU has:
    the fill at the start, the plateau and the drain of the last wave; a tick on the time axis where each SM's
    last CTA ended (``Timeline.sm_drain_ns``), so the SMs that sat idle before the end show as early ticks."""
    import numpy as np

    fig, ax = _axes(ax, figsize=(7, 3.2))
    rec = timeline.records
    span = (rec[:, 3].max() - rec[:, 2].min()) / 1e3
    slots = timeline.sms * timeline.ctas_per_sm
    ax.step((np.arange(bins) + 0.5) * span / bins, timeline.active_ctas(bins), where="mid", color="C0",
            label="CTAs resident")
    ax.axhline(slots, color="0.35", linestyle="--", linewidth=1,
               label=f"slots: {timeline.sms} SMs x {timeline.ctas_per_sm}")
    drain = timeline.sm_drain_ns() / 1e3
    ax.plot(span - drain, np.zeros_like(drain), "|", color="C1", markersize=10, clip_on=False,
            label=f"an SM's last CTA ends (median {np.median(drain):.1f} us before the end)")
    ax.set_xlim(0, span)
    ax.set_ylim(0, 1.12 * slots)
    ax.set_xlabel("time since the first CTA started [us]")
    ax.set_ylabel("CTAs")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="lower center")
    return fig


def sm_speed(timeline, *, title: str = "CTA duration by SM", fast: float | None = None, ax=None):
    """Each SM's median CTA duration (``Timeline.per_sm``) against its id, with the median over SMs: for a launch
    of equal CTAs, SMs whose CTAs run shorter than ``fast`` (default ``FAST_SM``, 0.95) x that median are marked;
    the launch waits for the others."""
    from ..sched.timeline import FAST_SM

    fast = FAST_SM if fast is None else fast
    fig, ax = _axes(ax, figsize=(7, 3.2))
    sm = timeline.per_sm()
    us = sm["median_cta_ns"] / 1e3
    mid = float(us.median())
    quick = sm["vs_median"] < fast

    ax.plot(sm.index[~quick], us[~quick], "o", color="C0", markersize=3.5, label=counted(int((~quick).sum()), "SM"))
    ax.plot(sm.index[quick], us[quick], "o", color="C1", markersize=4.5,
            label=f"{counted(int(quick.sum()), 'SM')} under {fast:g} x the median"
                  + (f" (median {float(us[quick].median()) / mid - 1:+.0%})" if quick.any() else ""))
    ax.axhline(mid, color="0.35", linestyle="--", linewidth=1, label=f"median over SMs: {mid:.1f} us "
                                                                      f"(dotted: {fast:g} x)")
    ax.set_xlim(-1, timeline.sms)
    ax.axhline(fast * mid, color="C1", linestyle=":", linewidth=1)
    ax.set_ylim(0.9 * min(float(us.min()), fast * mid), 1.1 * float(us.max()))  # the spread is the point: zoom in
    ax.set_xlabel("SM id")
    ax.set_ylabel("median CTA duration [us]")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    return fig


from .decode import call_spread, decode_bandwidth, peer_map, split_sweep  # noqa: E402, F401 - uses _axes above
from .ncu import event_vs_ncu, phase_shares, phase_stalls, time_vs_counters  # noqa: E402,F401 - uses _axes above
from .sched import decode_sched, efficiency_vs, sage2_sched, waves_vs  # noqa: E402, F401 - uses _axes, _plt above
