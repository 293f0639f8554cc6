"""CTA-scheduling figures: efficiency and waves against a swept length, split count or batch, the
model (labkit.sched.model, a DataFrame of ``LaunchModel`` rows over a dense sweep) as lines and the
measured points (``sage2.timeline`` / ``decode.timeline`` sweep rows) on top."""

from . import _axes, _plt


def _wave_boundaries(ax, model, x: str) -> None:
    """A dotted line where the model's launch starts another wave."""
    d = model.sort_values(x)
    steps = d[d["full_waves"].diff() > 0]
    for i, v in enumerate(steps[x]):
        ax.axvline(v, color="0.6", linestyle=":", linewidth=0.8, label="model: one more wave" if i == 0 else None)


SAGE2_FACTORS = ("q_tile_efficiency", "kv_tile_efficiency")  # the q rows and kv keys of the tiles that are used
DECODE_FACTORS = ("kv_tile_efficiency", "split_efficiency")  # the padded last KV stage; the splits' balance


NEAR_SHARE = 0.005  # measured points closer than this share of the x axis are named by their length


def efficiency_vs(model, measured, *, x: str, xlabel: str, title: str = "", log2: bool = False, ax=None,
                  factors: tuple[str, ...] = SAGE2_FACTORS):
    """Model efficiency (``wave_efficiency`` x ``factors``, and ``wave_efficiency`` alone) as lines over
    ``model[x]``; the measured slot efficiency (from the timeline) and it times the same factors as points at
    ``measured[x]``. ``factors``: the columns the model multiplies the waves' efficiency by, named in the legend as
    the tables name them (Sage2's q and kv tiles; decode's padded last stage and its splits' balance)."""
    fig, ax = _axes(ax, figsize=(6, 3.8))
    d = model.sort_values(x)
    times = "".join(f" x {f}" for f in factors)
    ax.plot(d[x], d["wave_efficiency"], "--", color="C0", linewidth=1, label="model: wave_efficiency")
    ax.plot(d[x], d["efficiency"], "-", color="C0", label=f"model: wave_efficiency{times}")
    _wave_boundaries(ax, model, x)
    if measured is not None and len(measured):
        m = measured.sort_values(x)
        ax.plot(m[x], m["measured_slot_efficiency"], "o", color="C1", markerfacecolor="none",
                label="measured: measured_slot_efficiency (timeline)")
        ax.plot(m[x], m["measured_efficiency"], "o", color="C1", label=f"measured: measured_slot_efficiency{times}",
                zorder=3)
        if not log2:  # lengths a token apart (37760, 37761) share a dot's place: those are named, on either side
            xs, span = list(m[x]), float(d[x].max() - d[x].min()) or 1.0
            near = [i for i, at in enumerate(xs) if any(j != i and abs(at - o) <= NEAR_SHARE * span
                                                          for j, o in enumerate(xs))]
            for k, i in enumerate(near):
                left = k % 2 == 0
                ax.annotate(f"{xs[i]:g}", (xs[i], m["measured_efficiency"].iloc[i]), xytext=(-5 if left else 5, -2),
                            textcoords="offset points", ha="right" if left else "left", va="top", fontsize=7.5,
                            color="C1")
    if log2:
        ax.set_xscale("log", base=2)
    else:
        ax.ticklabel_format(axis="x", useOffset=False, style="plain")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("efficiency [1]")
    shown = [d["efficiency"], d["wave_efficiency"]] + ([m["measured_slot_efficiency"], m["measured_efficiency"]]
                                                       if measured is not None and len(measured) else [])
    low = min(float(v.min()) for v in shown)
    margin = max(0.005, 0.15 * (1.0 - low))  # zoomed to the data: 0.98 against 0.99 must show
    ax.set_ylim(max(0.0, low - margin), 1.0 + margin / 2)
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6, loc="best")  # the measured points may sit anywhere
    return fig


def waves_vs(model, measured, *, x: str, xlabel: str, title: str = "", log2: bool = False, ax=None):
    """The model's waves (fractional, and the whole waves the launch takes) over ``model[x]``; the waves
    recovered from the measured timeline as points."""
    fig, ax = _axes(ax, figsize=(6, 3.8))
    d = model.sort_values(x)
    ax.plot(d[x], d["waves"], "-", color="C0", linewidth=1, label="model: ctas / slots")
    ax.plot(d[x], d["full_waves"], "-", color="C2", drawstyle="steps-post", label="model: waves taken")
    if measured is not None and len(measured):
        m = measured.sort_values(x)
        ax.plot(m[x], m["measured_waves"], "o", color="C1", label="measured: waves (timeline)", zorder=3)
    if log2:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("waves")
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6, loc="upper left")
    return fig


def _shared_legend(fig, axes) -> None:
    """One legend under the panels (each label once) in place of one per panel: the lines fill every corner of
    these panels, and a panel's own legend sat on the model's line. As many columns (up to 4) as fit the figure's
    width: labels that name the tables' columns run to 76 characters."""
    handles: dict = {}
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, h)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    renderer = fig.canvas.get_renderer()
    for columns in range(min(4, len(handles)), 0, -1):
        legend = fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncol=columns,
                            fontsize=8, frameon=False)
        if columns == 1 or legend.get_window_extent(renderer).width <= fig.bbox.width:
            return
        legend.remove()


def sage2_sched(q_model, q_measured, kv_model, kv_measured, *, fixed: dict, title: str):
    """Two panels, one above the other: efficiency against q_len (kv fixed) and against kv_len (q fixed); 8 in wide,
    as side by side (11 in) JupyterLab's pane had shown its 7 pt legend at under 6."""
    plt = _plt()
    fig, axes = plt.subplots(2, 1, figsize=(8, 7.6), layout="constrained")
    efficiency_vs(q_model, q_measured, x="q_len", xlabel="q_len [tokens]", ax=axes[0],
                  title=f"along q (kv_len {fixed['kv_len']}): CTAs change with ceil(q_len / cta_q)")
    efficiency_vs(kv_model, kv_measured, x="kv_len", xlabel="kv_len [tokens]", ax=axes[1],
                  title=f"along kv (q_len {fixed['q_len']}): CTAs fixed, k tiles change")
    _shared_legend(fig, axes)
    fig.suptitle(title, fontsize=10)
    return fig


def decode_sched(split_model, split_measured, batch_model, batch_measured, *, title: str):
    """Four panels: waves (top) and efficiency (bottom) against the split count and against the batch; 9 in wide, the
    width of JupyterLab's pane (at 11 in the pane had shown the legend's 7 pt at under 6)."""
    plt = _plt()
    fig, axes = plt.subplots(2, 2, figsize=(9, 7.4), layout="constrained", sharex="col")
    for col, (model, measured, x, label) in enumerate(((split_model, split_measured, "splits", "KV splits per "
                                                        "(sequence, KV head)"),
                                                       (batch_model, batch_measured, "batch",
                                                        "batch [sequences] (heuristic splits)"))):
        waves_vs(model, measured, x=x, xlabel="", log2=True, ax=axes[0][col])
        efficiency_vs(model, measured, x=x, xlabel=label, log2=True, ax=axes[1][col], factors=DECODE_FACTORS)
    _shared_legend(fig, axes.ravel())
    fig.suptitle(title, fontsize=10)
    return fig
