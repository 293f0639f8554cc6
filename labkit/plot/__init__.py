"""Figures for notebooks: each takes data (and an optional ``ax``) and returns the Figure."""

from pathlib import Path

from .. import _deps

STYLE = Path(__file__).with_name("perf.mplstyle")


def _plt():
    _deps.require("matplotlib")
    import matplotlib.pyplot as plt

    plt.style.use(str(STYLE))
    return plt


def save(fig, path: Path | str) -> Path:
    """Write ``path``.png and .svg (byte-stable metadata), then close the figure."""
    plt = _plt()
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p.with_suffix(".png"), metadata={"Software": None})
    fig.savefig(p.with_suffix(".svg"), metadata={"Date": None})
    plt.close(fig)
    return p.with_suffix(".png")


def _axes(ax, figsize=None):
    plt = _plt()
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize)
        return fig, ax
    return ax.figure, ax


def phase_bars(reports: dict, ax=None):
    """Horizontal bars of each phase's p50 [ms] for one or more reports (label -> Sage2Report),
    members of a group drawn lighter; the share of the pipeline total is written at each bar."""
    import numpy as np

    rows = max(len(r.phase_timings) for r in reports.values())
    fig, ax = _axes(ax, figsize=(8, 0.5 + 0.45 * rows * len(reports) ** 0.5))
    labels = list(next(iter(reports.values())).phase_timings)
    y = np.arange(len(labels))
    h = 0.8 / len(reports)
    for i, (label, rep) in enumerate(reports.items()):
        df = rep.to_frame()
        vals = [df.loc[p, "p50_ms"] if p in df.index else np.nan for p in labels]
        bars = ax.barh(y + i * h, vals, height=h, label=label, color=f"C{i}")
        for bar, p in zip(bars, labels):
            if p not in rep.top_level_phases():
                bar.set_alpha(0.5)  # members of a group: already inside their group's bar
        shares = [f"{df.loc[p, 'share']:.1%}" if p in df.index else "" for p in labels]
        ax.bar_label(bars, labels=shares, padding=2, fontsize=7)
    top = next(iter(reports.values())).top_level_phases()
    ax.set_yticks(y + h * (len(reports) - 1) / 2, [lab if lab in top else f"({lab})" for lab in labels], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("p50 time [ms] (log scale); labels: share of pipeline total")
    ax.set_title("Sage2 phases")
    if len(reports) > 1:
        fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=len(reports))
    return fig


def tail_study(report, ax=None):
    """Mainloop p50 (min-max bars) per tail-study point, one panel per sweep, with q-row efficiency."""
    plt = _plt()
    df = report.tail_frame()
    sweeps = list(dict.fromkeys(df["sweep"]))
    fig, axes = plt.subplots(1, len(sweeps), figsize=(4 * len(sweeps), 3.6), squeeze=False)
    for ax_, sweep in zip(axes[0], sweeps):
        d = df[df["sweep"] == sweep]
        x = d["q_len"] if sweep.startswith("q_") else d["kv_len"]
        xs = [str(v) for v in x]
        p50 = d["mainloop_p50_s"] * 1e3
        err = [p50 - d["mainloop_min_s"] * 1e3, d["mainloop_max_s"] * 1e3 - p50]
        ax_.errorbar(xs, p50, yerr=err, fmt="o", capsize=4, label="mainloop p50 (min..max)")
        ax_.set_xlabel("q_len" if sweep.startswith("q_") else "kv_len")
        ax_.set_ylabel("mainloop [ms]")
        ax_.set_title(sweep)
        ax2 = ax_.twinx()
        ax2.plot(xs, d["q_row_efficiency"], "s--", color="C5", label="q-row efficiency")
        ax2.set_ylabel("q-row efficiency")
        ax2.set_ylim(0.99, 1.001)
        ax2.grid(False)
        ax_.legend(loc="upper left", fontsize=7)
        ax2.legend(loc="lower right", fontsize=7)
    return fig


def value_bars(values: dict[str, float], *, xlabel: str, title: str = "", ax=None):
    """Labelled horizontal bars of named values (e.g. launch overheads in us)."""
    fig, ax = _axes(ax, figsize=(7, 0.6 + 0.4 * len(values)))
    bars = ax.barh(list(values), list(values.values()))
    ax.bar_label(bars, fmt="%.2f", padding=2, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title)
    return fig


_KIND_COLORS = {"tensormap": "C4", "param": "C1", "scratch": "C5", "i32": "C2"}


def param_block(rows, size: int, *, title: str = "", ax=None):
    """The parameter block drawn along its bytes: one coloured span per field, zero bytes grey."""
    from matplotlib.patches import Patch

    fig, ax = _axes(ax, figsize=(10, 2.8))
    ax.broken_barh([(0, size)], (0, 1), facecolors="0.92")
    for r in rows:
        ax.broken_barh([(r.at, r.size)], (0, 1), facecolors=_KIND_COLORS.get(r.kind, "C7"), edgecolor="white",
                       linewidth=0.5)
        if r.kind == "tensormap":
            ax.text(r.at + r.size / 2, 0.5, r.source.replace("param ", "p").replace(" (", "\n("), ha="center",
                    va="center", fontsize=7, color="white")
    ax.set_xlim(0, size)
    ax.set_ylim(0, 1)
    ax.set_yticks([])
    ax.set_xticks(range(0, size + 1, 128 if size > 512 else 32))
    ax.tick_params(axis="x", labelsize=7)
    ax.set_xlabel("byte offset in the parameter block")
    ax.grid(False)
    handles = [Patch(color=c, label=k) for k, c in _KIND_COLORS.items()] + [Patch(color="0.92", label="zero")]
    fig.legend(handles=handles, ncols=5, loc="outside lower center", fontsize=8)
    written = sum(r.size for r in rows)
    ax.set_title(title or f"{size} B parameter block: {written} B written by {len(rows)} fields")
    return fig
