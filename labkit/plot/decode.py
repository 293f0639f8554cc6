"""Decode figures: rate against K/V bytes beside the peers, a split sweep, the peer map over batch x kv_len, and one
call's rate across runs."""

import math

from . import _axes, _outside_legend

# The sweep batches take the first colours whether or not a figure shows them, so a figure of part of the
# sweep (notebook 03 with -p batch 64,8) draws each batch in the colour the whole sweep's figure gives it.
ANCHOR_BATCHES = (1, 8, 64, 256)


def batch_colour(batch: int, batches) -> str:
    """The colour of ``batch``'s line among ``batches``: its place among them and ANCHOR_BATCHES, sorted."""
    return f"C{sorted({*ANCHOR_BATCHES, *batches}).index(batch) % 10}"


_PEER_STYLE = {"sdpa_cudnn": ("s", "0.25", "torch SDPA cuDNN"), "sdpa_flash": ("^", "0.5", "torch SDPA flash"),
               "fa3": ("D", "0.7", "FlashAttention-3"), "flex_paged": ("v", "0.35", "FlexAttention, paged")}


def _one_line_set(rows) -> list[dict]:
    """``rows`` as dicts (a DataFrame such as a decode report's ``to_frame()`` too), refused where they mix head_dims,
    heads or timing modes: lines by batch alone would join d128 and d256 points, and draw the seed's graph call as a
    batch of its own (an API walk)."""
    from ..errors import ArgumentError

    rows = rows.to_dict("records") if hasattr(rows, "to_dict") else list(rows)
    for key in ("head_dim", "heads", "mode"):
        if len(values := sorted({r[key] for r in rows if key in r}, key=str)) > 1:
            raise ArgumentError(f"decode_bandwidth: rows of {key} {', '.join(map(str, values))}: pass one (e.g. "
                                f"frame[frame['{key}'] == {values[0]!r}])")
    return rows


def decode_bandwidth(rows: list[dict], copy_TBps: float, *, title: str = "paged decode", fit=None, ax=None):
    """K+V TB/s against KV bytes read (log axis): labkit's kernel as one line per batch size (points
    along it are the kv lengths), the peers (labkit's K/V gathered contiguous) as grey hollow markers,
    labkit's call timed in the peers' rounds (``labkit_beside_peers``) as small black dots, and the
    measured device-to-device copy rate as a reference line. A peer whose column holds no number at any point is
    named in the legend as not run. ``fit``: (fixed_us, TBps) of ``cost_fit.fit_line``, drawn as the rate such calls
    reach, bytes / (fixed + bytes / rate), over the bytes it was fitted on (100 MB and up); its label gives the fit."""
    rows = _one_line_set(rows)
    fig, ax = _axes(ax, figsize=(8, 4.4))
    if not rows:  # every point of the sweep skipped: the axes, the copy line and why nothing else is drawn
        ax.text(0.5, 0.5, "no call of the sweep was measured (skipped: the lines below say why)", ha="center",
                va="center", transform=ax.transAxes)
        ax.set_xlim(10, 10_000)
    batches = sorted({r["batch"] for r in rows})
    for b in batches:
        pts = sorted((r["kv_MB"], r["TBps"]) for r in rows if r["batch"] == b)
        ax.plot(*zip(*pts), "o-", color=batch_colour(b, batches), label=f"labkit, batch {b}", zorder=3)
    def measured(v) -> bool:  # a peer's TB/s, not the text or NaN of a peer that did not run
        return isinstance(v, float) and math.isfinite(v)

    beside = [(r["kv_MB"], r["labkit_beside_peers"]) for r in rows if measured(r.get("labkit_beside_peers"))]
    if beside:
        ax.plot(*zip(*beside), ".", color="k", markersize=5, zorder=4, label="labkit, in the peers' rounds")
    absent = []
    for key, (marker, grey, label) in _PEER_STYLE.items():
        pts = [(r["kv_MB"], r[key]) for r in rows if measured(r.get(key))]
        if pts:
            ax.plot(*zip(*pts), marker, color=grey, markerfacecolor="none", label=label)
        elif any(key in r for r in rows):  # a peer the sweep asked for that ran nowhere: the legend says so
            absent.append(label)
    if absent:
        ax.plot([], [], " ", label=f"not run: {', '.join(absent)} (why: printed below)")
    if fit is not None and rows:
        from ..workloads.decode.cost_fit import MIN_FIT_MB

        fixed, rate = fit
        top = max(r["kv_MB"] for r in rows)
        mb = [MIN_FIT_MB * (top / MIN_FIT_MB) ** (i / 63) for i in range(64)] if top > MIN_FIT_MB else []
        ax.plot(mb, [m / (fixed + m / rate) for m in mb], "-", color="k", linewidth=0.8, alpha=0.6,
                label=f"fit from {MIN_FIT_MB:g} MB: {fixed:.1f} us + bytes / {rate:.2f} TB/s")
    ax.axhline(copy_TBps, color="0.4", linestyle="--", linewidth=1,
               label=f"1 GiB copy, read + write: {copy_TBps:.2f} TB/s")
    ax.set_xscale("log")
    ax.set_xlabel("K + V bytes read per call [MB] (log scale; along a line: longer sequences)")
    ax.set_ylabel("K + V read rate [TB/s]")
    ax.set_ylim(0, max([copy_TBps, *(r["TBps"] for r in rows)]) * 1.12)
    ax.set_title(title)
    _outside_legend(fig, *ax.get_legend_handles_labels(), ncols=4, fontsize=7.5)
    return fig


def split_sweep(rows: list[dict], *, title: str = "split sweep", ax=None):
    """K+V TB/s against the split count (log2 axis): a line through the counts' own points, the heuristic's choice a
    star at its count (a separate measurement, beside the line's point where both exist); where the rows say which
    build ran (``kernel``) and the plan's differs from the line's, the legend names both."""
    fig, ax = _axes(ax, figsize=(6, 3.6))
    picked = [r for r in rows if r.get("heuristic")]
    line = [r for r in rows if not r.get("heuristic")]
    others = sorted({str(r["kernel"]) for r in line if r.get("kernel")})
    own = [str(r["kernel"]) for r in picked if r.get("kernel") and [str(r["kernel"])] != others]
    ax.plot([r["splits"] for r in line], [r["TBps"] for r in line], "o-", color="C0",
            label="measured" + (f" ({', '.join(others)})" if own and others else ""))
    if picked:
        ax.plot([r["splits"] for r in picked], [r["TBps"] for r in picked], "*", color="C5", markersize=14,
                label="heuristic's choice" + (f" ({own[0]})" if own else ""), zorder=3)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("KV splits per (sequence, KV head)")
    ax.set_ylabel("K + V read rate [TB/s]")
    ax.set_title(title)
    ax.legend(fontsize=7)
    return fig


def peer_map(m, *, title: str | None = None, ax=None):
    """One geometry's x_best_peer (a ``PeerMap``) as a grid of batch (rows) by kv_len (columns), each cell labelled:
    red where labkit is behind the fastest peer, blue where ahead, white at par (a scale centred on 1 whose red end is
    the furthest call behind and blue end the furthest ahead, each at least 2 % off: one reach for both had left the
    calls behind by 1-3 % near white beside others 30 % ahead); calls not timed stay blank, and a call behind by less
    than its rounds can tell is marked ``*`` (``MapCell.label``). The title names the geometry and where it ran unless
    given."""
    import numpy as np
    from matplotlib.colors import TwoSlopeNorm
    from matplotlib.ticker import MaxNLocator

    # at least the room for its two-line title: a map of a call or two had cut the title off (or collapsed the axes)
    fig, ax = _axes(ax, figsize=(max(5.5, 2.2 + 0.85 * len(m.kv_lens)), max(3.0, 1.4 + 0.34 * len(m.batches))))
    grid = np.array([[m.cells[b, n].x_best_peer if (b, n) in m.cells else np.nan for n in m.kv_lens]
                     for b in m.batches])
    norm = TwoSlopeNorm(1.0, min(0.98, float(np.nanmin(grid))), max(1.02, float(np.nanmax(grid))))
    image = ax.imshow(grid, cmap="RdBu", norm=norm, aspect="auto")
    labels = [[m.cells[b, n].label if (b, n) in m.cells else "" for n in m.kv_lens] for b in m.batches]
    for i, j in zip(*np.nonzero(np.isfinite(grid))):
        v = grid[i, j]
        ax.text(j, i, labels[i][j], ha="center", va="center", fontsize=7,
                color="white" if abs(float(norm(v)) - 0.5) > 0.3 else "black")
    ax.set_xticks(range(len(m.kv_lens)), m.kv_labels)
    ax.set_yticks(range(len(m.batches)), [str(b) for b in m.batches])
    ax.grid(False)
    ax.set_xlabel("\n".join(x for x in ("KV tokens per sequence", m.noise_note) if x))
    ax.set_ylabel("batch [sequences]")
    bar = fig.colorbar(image, ax=ax, label="x best peer (under 1: behind)")
    # round ticks on each side of 1, as the halves span unequal ranges and evenly spaced ticks read 1.028, 1.056;
    # up to 4 steps a side, so that a short half (0.962-1) is ticked near its end too
    def round_ticks(lo, hi):
        return [round(float(t), 4) for t in MaxNLocator(4, steps=[1, 2, 2.5, 5, 10]).tick_values(lo, hi)]
    ticks = {*round_ticks(norm.vmin, 1.0), *round_ticks(1.0, norm.vmax)}
    bar.set_ticks(sorted(t for t in ticks if norm.vmin <= t <= norm.vmax))  # one rounded past an end blanks the bar
    ax.set_title(title or f"labkit beside the peers / the best peer, {m.what}\n{m.where}")
    return fig


OFF_NAMED = 3  # rates off a spread's axes named under it


def _run_name(r) -> str:
    """A run's directory (``20261201T051846Z-decode_bench``), or its file where it lies in none."""
    import re
    from pathlib import Path

    path = Path(r.source)
    return next((p for p in path.parts if re.match(r"\d{8}T\d{6}Z(\.\d{3})?-", p)), path.name)


def call_spread(s, *, this_run: float | None = None, this_run_beside: float | None = None, title: str | None = None):
    """One call across runs (a ``CallSpread``): left, labkit timed in the peers' rounds against the best peer of the
    same rounds, beside the line where they are level; right, labkit timed alone and the best peer against the run's
    copy rate. Runs of several GPU models take a colour per model; of one, runs below the step between two groups and
    those above it take two colours, named in the legends (one colour where no step stands out, ``CallSpread.step``):
    a group that sits along the diagonal moved with its peers, as a machine does, not as a kernel would. The axes
    hold the bulk of the rates (a rate further out than 1.5 x the 10-90 % range is named under the figure with the
    panels and axes it is off, not drawn). ``this_run``: labkit's rate of the same call timed alone elsewhere (a
    notebook's), a dashed line on the right; ``this_run_beside``: its rate in that run's peers' rounds, one on the
    left (each panel's line is the rate its y axis holds)."""
    from . import _plt

    # 9 in, the width of JupyterLab's pane, at 8 pt: 10 in had shown the 7 pt legends there at 6
    fig, (left, right) = _plt().subplots(1, 2, figsize=(9, 4.6), layout="constrained")
    if len(s.devices) > 1:  # one colour per GPU model: an H100's and an H200's runs had read as one group
        models = sorted({r.device for r in s.runs}, key=lambda d: (d == "not recorded", d))
        groups = [([r for r in s.runs if r.device == d], f"C{i}", d if d != "not recorded" else "model not recorded")
                  for i, d in enumerate(models)]
    else:
        step = s.step()
        slow = step[0].runs if step else 0
        groups = [(s.runs[:slow], "C1", "slower group"), (s.runs[slow:], "C0", "faster group" if slow else "all runs")]
    for runs, colour, name in groups:
        if not runs:
            continue
        pairs = [(r.best_peer_TBps, r.beside_TBps) for r in runs if r.beside_TBps is not None]
        if pairs:
            left.plot(*zip(*pairs), "o", color=colour, label=f"{name}: {len(pairs)} with peers")
        right.plot([r.copy_TBps for r in runs], [r.TBps for r in runs], "o", color=colour, label=f"labkit, {name}")
        peers = [(r.copy_TBps, r.best_peer_TBps) for r in runs if r.best_peer_TBps is not None]
        if peers:
            right.plot(*zip(*peers), "s", color=colour, markerfacecolor="none", label=f"best peer, {name}")
    for ax, rate, how in ((right, this_run, "labkit alone"), (left, this_run_beside, "in its peers' rounds")):
        if rate is not None:
            ax.axhline(rate, color="0.2", linestyle="--", linewidth=1, label=f"this run, {how}: {rate:.3f} TB/s")
    # each rate with the axes it is drawn on: the best peer is the left panel's x and the right panel's y (a review:
    # the note had said "off the y axes" of a best peer whose left point, off the x axis, was missing)
    mine = ((this_run, "labkit alone", "right panel y"), (this_run_beside, "labkit beside peers", "left panel y"))
    named = sorted([(r.TBps, f"labkit alone, {_run_name(r)}", "right panel y") for r in s.runs]
                   + [(r.best_peer_TBps, f"best peer, {_run_name(r)}",
                       "left panel x, right panel y" if r.beside_TBps is not None else "right panel y")
                      for r in s.runs if r.best_peer_TBps is not None]
                   + [(r.beside_TBps, f"labkit beside peers, {_run_name(r)}", "left panel y")
                      for r in s.runs if r.beside_TBps is not None]
                   + [(v, f"this run, {how}", axes) for v, how, axes in mine if v is not None])
    rates = [v for v, _, _ in named]
    q10, q90 = rates[len(rates) // 10], rates[(9 * len(rates)) // 10]
    lo, hi = max(rates[0], q10 - 1.5 * (q90 - q10)), min(rates[-1], q90 + 1.5 * (q90 - q10))
    pad = 0.05 * (hi - lo or hi)
    off = [f"{v:.3f} ({what}: {axes})" for v, what, axes in named if not lo <= v <= hi]
    if any(r.beside_TBps is not None for r in s.runs):
        left.plot([lo - pad, hi + pad], [lo - pad, hi + pad], ":", color="0.4", linewidth=1, label="level with it")
        left.set_xlim(lo - pad, hi + pad)
        left.legend(fontsize=8)
    else:
        left.text(0.5, 0.5, "no run timed peers", ha="center", va="center", transform=left.transAxes)
    for ax in (left, right):
        ax.set_ylim(lo - pad, hi + pad)
    left.set_xlabel("the best peer in the same rounds [TB/s]")
    left.set_ylabel("labkit in the peers' rounds [TB/s]")
    right.set_xlabel("the run's 1 GiB copy, read + write [TB/s]")
    right.set_ylabel("labkit alone and the best peer [TB/s]")
    right.legend(fontsize=8)
    if off:  # named with the panel and axis each is off, so that every rate shows somewhere
        more = f"; {len(off) - OFF_NAMED} more" if len(off) > OFF_NAMED else ""
        fig.supxlabel(f"not drawn, off the axes [TB/s]: {'; '.join(off[:OFF_NAMED])}{more}", fontsize=8)
    builds = len({r.kernel for r in s.runs})
    fig.suptitle(title or f"{s.call}: the plan's call in {s.where}"
                 + (f" ({builds} builds)" if builds > 1 else ""), fontsize=10)
    return fig
