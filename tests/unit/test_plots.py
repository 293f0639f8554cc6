"""What the figures say: positions that mean something, numeric axes, units, titles."""

import math
import re
from pathlib import Path

import matplotlib
import pytest

from labkit import plot, report

matplotlib.use("Agg")


@pytest.fixture
def seed(seed_report_path):
    return report.load(seed_report_path)


def test_phase_dots_are_points_on_a_log_axis_not_bars(seed):
    fig = plot.phase_dots({"seed": seed}, title="Sage2 phases, shape X: seed")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and not ax.patches  # no bars whose length a log axis would distort
    xs = sorted(ax.collections[0].get_offsets()[:, 0])
    assert xs[-1] == pytest.approx(seed.phase_timings["fused_mainloop"].p50_s * 1e3)
    assert "[ms]" in ax.get_xlabel() and ax.get_title() == "Sage2 phases, shape X: seed"


def test_phase_dots_star_the_phases_work_moved_between_beside_another_implementation(seed):
    """A review: 0.004 ms against the seed's 5.53 ms for v_scale_fp8_quantization read as a 1000x win, starred in the
    table under the figure but not in the figure."""
    from ..conftest import ROOT

    ours = report.load(sorted((ROOT / "data" / "runs").glob("*-02_sage2_phases/data/report.json"))[-1])
    ax = plot.phase_dots({"seed": seed, "labkit": ours}).axes[0]
    starred = [t.get_text() for t in ax.get_yticklabels() if t.get_text().endswith(" *")]
    assert starred == ["k_mean_and_smoothing_preparation *", "(v_transpose_pad_permute) *",
                       "(v_scale_fp8_quantization) *"]
    assert "* work moved between these phases" in ax.get_xlabel()
    alone = plot.phase_dots({"seed": seed}).axes[0]  # one implementation: nothing moved
    assert not [t for t in alone.get_yticklabels() if "*" in t.get_text()] and "moved" not in alone.get_xlabel()


def test_tail_study_spaces_the_lengths_evenly_labels_them_and_autoscales_efficiency(seed):
    """Found by a notebook review: on a numeric axis 37760 and 37761 sat on top of each other beside 37810, and the
    efficiency square hid the p50 dot; the lengths are now evenly spaced and labelled, the squares set beside."""
    fig = plot.tail_study(seed, title="Sage2 tail study, shape X: seed")
    q_ax, kv_ax = [a for a in fig.axes if a.get_ylabel() == "mainloop time [ms]"]
    q_eff, kv_eff = [a for a in fig.axes if a.get_ylabel().endswith("[1]")]
    x = q_ax.lines[0].get_xdata() if q_ax.lines else q_ax.containers[0][0].get_xdata()
    assert list(x) == [0, 1, 2] and [t.get_text() for t in q_ax.get_xticklabels()] == ["37760", "37761", "37810"]
    assert all(e > p for e, p in zip(q_eff.lines[0].get_xdata(), x))  # beside its dot, not on it
    assert q_ax.get_xlabel().startswith("q_len [tokens]") and kv_ax.get_xlabel().startswith("kv_len [tokens]")
    assert "not to scale" in q_ax.get_xlabel()
    assert "kv tokens" in kv_eff.get_ylabel()
    kv_values = sorted(kv_eff.lines[0].get_ydata())
    assert kv_values[0] == pytest.approx(37761 / (591 * 64))  # the kv panel shows kv tile efficiency
    lo, hi = q_eff.get_ylim()
    assert lo < 0.9967 and hi > 0.9999 and hi - lo < 0.01  # autoscaled around the data
    # one time scale: the full shape, in both panels, had read 239.78 against 240.38 ms at two heights (a review)
    assert q_ax.get_ylim() == kv_ax.get_ylim()
    fig.canvas.draw()  # the right panel's time label had no numbers beside it (sharey hides them): both show them
    assert all(any(t.get_visible() and t.get_text() for t in a.get_yticklabels()) for a in (q_ax, kv_ax))
    assert fig._suptitle.get_text() == "Sage2 tail study, shape X: seed"


def test_decode_bandwidth_shows_labkit_in_the_peers_rounds_beside_them():
    """Each peer's hollow markers sit at the call's bytes; labkit's rate in the same rounds as black dots there."""
    import csv

    from ..conftest import ROOT

    recorded = sorted((ROOT / "data" / "runs").glob("*-03_decode/data/bandwidth.csv"))[-1]
    rows = []
    for r in csv.DictReader(recorded.open()):
        row = {k: float(v) for k, v in r.items() if k in ("batch", "kv_MB", "TBps")}
        row.update({k: float(r[k]) for k in ("labkit_beside_peers", "sdpa_cudnn") if r.get(k)})
        rows.append(row)
    fig = plot.decode_bandwidth(rows, 4.2, title="t")
    ax = fig.axes[0]
    by_label = {line.get_label(): line for line in ax.lines}
    dots = by_label["labkit, in the peers' rounds"]
    assert sorted(dots.get_xdata()) == sorted(r["kv_MB"] for r in rows if "labkit_beside_peers" in r)
    assert len(dots.get_xdata()) >= 10
    cudnn = sorted(r["sdpa_cudnn"] for r in rows if "sdpa_cudnn" in r)
    assert sorted(by_label["torch SDPA cuDNN"].get_ydata()) == cudnn
    assert not [label for label in by_label if label.startswith("not run")]  # no peer column without a number
    # a peer the sweep ran for and that has no number anywhere (FA3 without its wheel) is named, not left out
    for r in rows:
        r["fa3"] = math.nan
    labels = [line.get_label() for line in plot.decode_bandwidth(rows, 4.2, title="t").axes[0].lines]
    assert "not run: FlashAttention-3 (why: printed below)" in labels and "FlashAttention-3" not in labels


def test_the_first_seven_line_colours_stand_out_from_the_white_axes():
    """A live H100 run drew notebook 03's batch 256 in the style's yellow, the cycle's fourth colour, which barely
    shows on white (WCAG contrast 1.3): the first seven colours have at least 1.5 against white."""
    import matplotlib.colors as mcolors
    import matplotlib.pyplot as plt

    plot._plt()

    def luminance(c):
        rgb = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in mcolors.to_rgb(c)]
        return 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]

    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    faint = {c: round(1.05 / (luminance(c) + 0.05), 2) for c in colours[:7] if 1.05 / (luminance(c) + 0.05) < 1.5}
    assert not faint, faint


def test_decode_bandwidth_keeps_each_batchs_colour_in_part_of_the_sweep():
    """Notebook 03 with -p batch 64,8 drew batch 8 in the colour batch 1 has in the whole sweep's figure (a review):
    a batch's colour follows its value, so part of the sweep reads against the whole one."""
    def colours(batches):
        rows = [{"batch": b, "kv_MB": 10.0 * b * k, "TBps": 1.0 + k} for b in batches for k in (1, 2)]
        lines = plot.decode_bandwidth(rows, 4.2).axes[0].lines
        return {ln.get_label(): ln.get_color() for ln in lines if ln.get_label().startswith("labkit, batch")}

    whole = colours([1, 8, 64, 256])
    assert len(set(whole.values())) == 4
    for part in ([64, 8], [256], [1, 256], [8, 64, 256]):
        assert colours(part) == {k: whole[k] for k in (f"labkit, batch {b}" for b in part)}, part
    other = colours([1, 8, 16, 64])  # a batch outside the sweep takes a colour no other line of its figure has
    assert len(set(other.values())) == 4


def test_split_sweep_names_the_plans_build_where_it_differs():
    """8 x 8k d128: the plan's 2 splits run 8 warps in a cluster, the other counts the 4-warp build; the line keeps
    its own 2-split point and the plan's is a star beside it; the legend names both builds, and nothing extra where
    every count ran one build."""
    rows = [{"splits": s, "TBps": t, "kernel": k, "heuristic": h} for s, t, k, h in
            [(1, 2.6, "mma w4s3", False), (2, 3.43, "mma w4s3", False), (2, 3.45, "mma w8s2 cl2", True),
             (4, 3.41, "mma w4s3", False)]]
    ax = plot.split_sweep(rows).axes[0]
    assert ax.get_legend_handles_labels()[1] == ["measured (mma w4s3)", "heuristic's choice (mma w8s2 cl2)"]
    assert list(ax.lines[0].get_xdata()) == [1, 2, 4] and list(ax.lines[0].get_ydata()) == [2.6, 3.43, 3.41]
    assert list(ax.lines[1].get_xdata()) == [2] and list(ax.lines[1].get_ydata()) == [3.45]
    same = plot.split_sweep([{**r, "kernel": "mma w4s3"} for r in rows]).axes[0]
    assert same.get_legend_handles_labels()[1] == ["measured", "heuristic's choice"]
    assert list(same.lines[0].get_xdata()) == [1, 2, 4]


def test_scheduling_charts_zoom_to_their_data():
    """Found by a notebook review: an efficiency axis from 0.5 to 1 drew measured 0.985-0.993 against a model of
    0.99 as one dot, and per-SM durations of 61-65 us on an axis from 0 as a flat line."""
    import numpy as np
    import pandas as pd

    from labkit.plot.sched import efficiency_vs
    from labkit.sched import Timeline

    model = pd.DataFrame({"q_len": [37700, 37760, 37810], "efficiency": [0.986, 0.994, 0.992],
                          "wave_efficiency": [0.99, 0.997, 0.997], "full_waves": [63, 63, 63]})
    measured = pd.DataFrame({"q_len": [37760, 37810], "measured_slot_efficiency": [0.992, 0.991],
                             "measured_efficiency": [0.989, 0.985]})
    lo, hi = efficiency_vs(model, measured, x="q_len", xlabel="q_len").axes[0].get_ylim()
    assert 0.97 < lo < 0.985 and 1.0 < hi < 1.01
    # lengths a token apart share a dot's place (a review could not tell 37760's from 37761's): those two are named,
    # on either side; 37810, apart from them, is read off the axis
    model = pd.DataFrame({"q_len": [35700, 37761, 37810], "efficiency": [0.986, 0.994, 0.992],
                          "wave_efficiency": [0.99, 0.997, 0.997], "full_waves": [63, 63, 63]})
    measured = pd.DataFrame({"q_len": [37810, 37761, 37760], "measured_slot_efficiency": [0.992, 0.991, 0.99],
                             "measured_efficiency": [0.99, 0.988, 0.9916]})
    ax = efficiency_vs(model, measured, x="q_len", xlabel="q_len").axes[0]
    assert [(t.get_text(), t.xy, t.get_ha()) for t in ax.texts] == [("37760", (37760, 0.9916), "right"),
                                                                    ("37761", (37761, 0.988), "left")]
    assert not efficiency_vs(model, measured, x="q_len", xlabel="q_len", log2=True).axes[0].texts
    rng = np.random.default_rng(0)
    us = rng.uniform(61, 65, size=128)
    recs = [(i, i, 0, int(u * 1e3), 0, int(u * 1.98e3)) for i, u in enumerate(us)]
    ax = plot.sm_speed(Timeline(recs, sms=132, ctas_per_sm=1)).axes[0]
    lo, hi = ax.get_ylim()
    assert 50 < lo < 61 and 65 < hi < 75


def test_a_long_title_breaks_to_fit_the_figure_when_saved(seed, tmp_path):
    """Found by a review: notebook 00's phase chart (axes right of long phase names) and notebook 04's activity chart
    had their titles cut at the figure's right edge; save breaks a title that would not fit at spaces."""
    long = ("Sage2 phases, q=k=v [1, 37810, 56, 128]: seed report (device not recorded), "
            "and more words that run on past the edge")
    fig = plot.phase_dots({"seed": seed}, title=long)
    plot.save(fig, tmp_path / "dots")
    title = fig.axes[0].title
    assert "\n" in title.get_text() and title.get_text().replace("\n", " ") == long
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)  # save closed the figure: draw it again to measure where the title sits
    canvas.draw()
    box = title.get_window_extent(canvas.get_renderer())
    assert 0 <= box.x0 and box.x1 <= fig.bbox.width
    short = plot.phase_dots({"seed": seed}, title="Sage2 phases")
    plot.save(short, tmp_path / "short")
    assert short.axes[0].get_title() == "Sage2 phases"  # one that fits stays one line
    # a shape such as "batch 8 x 8192" is not broken at its x (notebook 04's activity title had been)
    for n in (30, 44, 60, 76):
        shape = plot.phase_dots({"seed": seed}, title="w " * (n // 2) + "batch 8 x 8192 tokens: CTAs resident")
        plot.save(shape, tmp_path / "shape")
        lines = shape.axes[0].get_title().split("\n")
        assert len(lines) > 1 and any("8 x 8192" in line for line in lines), lines  # whole on one line


def test_a_stall_reason_has_one_colour_in_every_chart_and_an_empty_phase_says_so():
    """Found by a review: notebook 05's two stall charts gave "wait" two colours (colours went by column order), and a
    phase without samples was a bare row."""
    import pandas as pd

    sage2 = pd.DataFrame({"wait": [60.0, 0.0], "selected": [40.0, 0.0]}, index=["mainloop", "split_reduction"])
    decode = pd.DataFrame({"long_scoreboard": [70.0], "selected": [20.0], "wait": [10.0]}, index=["stage_loop"])
    colours = []
    for shares in (sage2, decode):
        fig = plot.phase_stalls(shares, title="t")
        ax = fig.axes[0]
        colours.append({c.get_label(): tuple(c.patches[0].get_facecolor()) for c in ax.containers})
        assert [t.get_text() for t in ax.texts] == (["no samples"] if shares is sage2 else [])
    assert colours[0]["wait"] == colours[1]["wait"] and colours[0]["selected"] == colours[1]["selected"]
    assert len({*colours[1].values()}) == 3 and plot.ncu.stall_color("a_new_reason") == plot.ncu.stall_color(
        "a_new_reason")


def test_time_against_counters_shows_bytes_in_mb():
    import pandas as pd

    df = pd.DataFrame({"group": ["decode"] * 3, "dram_read_bytes": [4.2e6, 3.4e7, 2.7e8],
                       "event_p50_us": [9.8, 18.9, 77.0]})
    ax = plot.time_vs_counters(df, ["dram_read_bytes"]).axes[0]
    assert ax.get_xlabel() == "dram_read_bytes [MB]"
    assert sorted(ax.collections[0].get_offsets()[:, 0]) == pytest.approx([4.2, 34.0, 270.0])


def test_cold_l2_copies_reads_its_rows_strictly_and_draws_one_line_per_l2_state(tmp_path):
    from labkit.errors import FormatError
    from labkit.probes import cold_l2_table

    rows = [{"MiB": m, "mode": mode, "p50_s": t * 1e-6, "TBps_read_plus_write": 2 * (m << 20) / (t * 1e-6) / 1e12}
            for m, times in ((16, (5.0, 12.0, 9.0)), (1024, (500.0, 510.0, 505.0)))
            for mode, t in zip(("hot", "cold", "cold_clean"), times)]
    table = cold_l2_table({"rows": rows})
    assert list(table.columns) == ["MiB", "mode", "p50_us", "TBps"] and len(table) == 6
    assert table.set_index(["MiB", "mode"]).loc[(16, "cold"), "p50_us"] == pytest.approx(12.0)
    for bad, where in (({"rows": [{**rows[0], "mode": "warm"}]}, r"rows\[0\].mode"),
                       ({"rows": [{**rows[0], "extra": 1}]}, r"rows\[0\].extra"), ({"rows": []}, "rows")):
        with pytest.raises(FormatError, match=where):
            cold_l2_table(bad)
    fig = plot.cold_l2_copies(table, l2_mib=60, title="copy by L2 state")
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")] == [
        "hot (L2 warm)", "cold (flushed, left dirty)", "cold_clean (flushed, clean)"]
    clean = next(line for line in ax.get_lines() if line.get_label().startswith("cold_clean"))
    assert list(clean.get_xdata()) == [16, 1024] and clean.get_ydata()[0] == pytest.approx(2 * (16 << 20) / 9e-6 / 1e12)
    assert ax.get_xscale() == "log" and [t.get_text() for t in ax.get_xticklabels()] == ["16", "1024"]
    # the notebook's text turns on half the L2 (a copy's source and destination no longer both fit): marked too
    assert [t.get_text() for t in ax.texts] == ["L2/2 30 MiB", "L2 60 MiB"]
    assert plot.save(fig, tmp_path / "cold_l2").exists()


def test_decode_efficiency_names_its_factors_not_sage2_tiles():
    """Found by a notebook review: notebook 04's decode panels said "waves x tiles", Sage2's factors; decode's model
    multiplies the waves by its padded last stage and its splits' balance."""
    import pandas as pd

    from labkit.sched import model as sched_model

    rows = [sched_model.decode_launch(8, 8192, s, heads_kv=8, tokens_per_stage=64, sms=132, ctas_per_sm=2)
            for s in (1, 2, 4)]
    split_model = pd.DataFrame([{**r.to_dict(), "splits": s} for r, s in zip(rows, (1, 2, 4))])
    fig = plot.decode_sched(split_model, None, split_model.rename(columns={"splits": "batch"}), None, title="t")
    labels = {t.get_text() for leg in fig.legends for t in leg.get_texts()} | {
        t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()}
    assert "model: wave_efficiency x kv_tile_efficiency x split_efficiency" in labels
    assert not [label for label in labels if "q_tile" in label or "tiles" in label]


def test_the_efficiency_legends_name_the_tables_columns():
    """Found by a notebook review: notebook 04's decode legend said "waves x stage padding x split balance", terms
    the notebook never explained, where its table says ``split_efficiency``. Each factor the legend names is a column
    of the model's table and of the measured points'."""
    import pandas as pd

    from labkit.sched import model as sched_model

    rows = [sched_model.decode_launch(8, 8192, s, heads_kv=8, tokens_per_stage=64, sms=132, ctas_per_sm=2)
            for s in (1, 2, 4)]
    model = pd.DataFrame([{**r.to_dict(), "splits": s} for r, s in zip(rows, (1, 2, 4))])
    measured = model.assign(measured_slot_efficiency=model["wave_efficiency"], measured_efficiency=model["efficiency"],
                            measured_waves=model["full_waves"])
    fig = plot.decode_sched(model, measured, model.rename(columns={"splits": "batch"}),
                            measured.rename(columns={"splits": "batch"}), title="t")
    labels = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    efficiency = [label for label in labels if "efficiency" in label]
    assert len(efficiency) == 4, labels
    for label in efficiency:
        terms = label.split(": ", 1)[1].removesuffix(" (timeline)").split(" x ")
        assert all(term in measured.columns for term in terms), label
    # the product the solid line draws is the one its label names
    assert model["efficiency"].values == pytest.approx(
        (model["wave_efficiency"] * model["kv_tile_efficiency"] * model["split_efficiency"]).values)


def test_the_shared_legend_takes_as_many_columns_as_fit_the_figure():
    """At 9 in (JupyterLab's pane) the model's four labels fit a row; with the measured points' labels (to 70
    characters) four columns would run past the figure's edges, so it takes fewer, and none past them."""
    import pandas as pd

    from labkit.sched import model as sched_model

    rows = [sched_model.decode_launch(8, 8192, s, heads_kv=8, tokens_per_stage=64, sms=132, ctas_per_sm=2)
            for s in (1, 2, 4)]
    model = pd.DataFrame([{**r.to_dict(), "splits": s} for r, s in zip(rows, (1, 2, 4))])
    measured = model.assign(measured_slot_efficiency=model["wave_efficiency"], measured_efficiency=model["efficiency"],
                            measured_waves=model["full_waves"])
    columns = []
    for m in (None, measured):
        fig = plot.decode_sched(model, m, model.rename(columns={"splits": "batch"}),
                                None if m is None else m.rename(columns={"splits": "batch"}), title="t")
        (legend,) = fig.legends
        fig.canvas.draw()
        assert legend.get_window_extent(fig.canvas.get_renderer()).width <= fig.bbox.width
        columns.append(legend._ncols)
    assert columns[0] == 4 and 1 < columns[1] < 4


def test_phase_dots_of_one_report_sit_on_their_rows_and_two_sit_beside_them_named_in_a_legend(seed):
    """One report's dots on their phase's row and no legend (its one label said nothing); two reports' dots a little
    above and below the row, in the order given, named in a legend; no empty row under the last phase."""
    ax = plot.phase_dots({"seed": seed}).axes[0]
    n = len(ax.get_yticks())
    assert list(ax.collections[0].get_offsets()[:, 1]) == list(range(n)) and not ax.figure.legends
    assert ax.get_ylim() == (n - 0.5, -0.5)
    fig = plot.phase_dots({"before": seed, "after": seed})
    first, second = (c.get_offsets()[:, 1] for c in fig.axes[0].collections)
    assert list(first) == pytest.approx([k - 0.18 for k in range(n)])
    assert list(second) == pytest.approx([k + 0.18 for k in range(n)])
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["before", "after"]


def test_a_title_too_wide_by_a_little_breaks_between_its_phrases_into_lines_of_about_equal_length(seed):
    """Lines of about equal length, as few as fit between phrases: not a column of 20-character lines (since a review
    of notebook 04, a break falls between phrases where they fit, not where the characters ran out)."""
    long = ("Sage2 phases, q=k=v [1, 37810, 56, 128]: seed report (device not recorded), "
            "and more words that run on past the edge")
    fig = plot.phase_dots({"seed": seed}, title=long)
    plot._fit_titles(fig)
    lines = fig.axes[0].get_title().split("\n")
    assert " ".join(lines) == long and all(line[-1] in ",:" for line in lines[:-1]), lines
    assert len(lines) < len(long) / 20 and max(map(len, lines)) - min(map(len, lines)) < 15, lines


def test_value_bars_name_each_value_top_down_in_the_order_given_with_its_number():
    from labkit.probes import LABELS

    values = {"host_enqueue_us": 4.5, "gpu_graph_us": 1.25, "launch_and_sync_us": 12.0}
    fig = plot.value_bars(values, xlabel="per launch [us]", labels=LABELS)
    ax = fig.axes[0]
    fig.canvas.draw()
    top_down = sorted(ax.patches, key=lambda p: -p.get_y())  # inverted y axis: the first key at the top
    assert ax.yaxis_inverted() and [p.get_width() for p in top_down[::-1]] == [4.5, 1.25, 12.0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["host: enqueue", "GPU: in a CUDA graph",
                                                            "host: launch + synchronize"]
    assert [t.get_text() for t in ax.texts] == ["4.50", "1.25", "12.00"]
    assert ax.get_xlabel() == "per launch [us]" and ax.get_title() == ""
    assert plot.value_bars({"a": 1.0}, xlabel="x", title="t").axes[0].get_title() == "t"


def test_cold_l2_copies_mark_half_the_l2_and_the_l2_where_given_and_nothing_where_not():
    import pandas as pd

    table = pd.DataFrame({"MiB": [16, 16, 1024, 1024], "mode": ["hot", "cold"] * 2, "p50_us": [5.0, 12.0, 500, 510],
                          "TBps": [6.7, 2.8, 4.3, 4.2]})
    marked = plot.cold_l2_copies(table, l2_mib=60).axes[0]
    assert [line.get_xdata()[0] for line in marked.get_lines() if line.get_linestyle() == ":"] == [30, 60]
    bare = plot.cold_l2_copies(table).axes[0]  # no L2 size given (no device): no markers, no error
    assert not bare.texts and not [line for line in bare.get_lines() if line.get_linestyle() == ":"]


def test_param_block_names_each_tensor_map_on_its_span_and_ticks_the_bytes_by_the_blocks_size():
    from labkit.manifest.pack import FieldRow

    rows = [FieldRow(0, 0, 128, "tensormap", "param q (tma)", "-"), FieldRow(1, 128, 8, "param", "param n", "5"),
            FieldRow(2, 136, 4, "i32", "i32 k", "1")]
    fig = plot.param_block(rows, 1024)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.texts] == ["fields[0]\npq\n(tma)"]  # the tensor map's field and name on its span
    assert list(ax.get_xticks()) == list(range(0, 1025, 128))
    assert ax.get_title() == "1024 B parameter block: 140 B written by 3 fields"
    small = plot.param_block(rows[1:], 256).axes[0]
    assert list(small.get_xticks()) == list(range(0, 257, 32)) and not small.texts


def test_decode_bandwidth_reaches_12_percent_over_the_fastest_rate_or_the_copy_line():
    rows = [{"batch": 1, "kv_MB": 10.0, "TBps": 3.0}, {"batch": 1, "kv_MB": 100.0, "TBps": 4.5}]
    assert plot.decode_bandwidth(rows, 4.0).axes[0].get_ylim() == pytest.approx((0, 4.5 * 1.12))
    assert plot.decode_bandwidth(rows, 6.0).axes[0].get_ylim() == pytest.approx((0, 6.0 * 1.12))


def test_split_sweep_without_the_heuristic_s_point_has_no_star_in_its_legend():
    ax = plot.split_sweep([{"splits": s, "TBps": t} for s, t in [(1, 2.6), (2, 3.43), (4, 3.41)]]).axes[0]
    assert ax.get_legend_handles_labels()[1] == ["measured"] and len(ax.lines) == 1


def test_scheduling_charts_mark_each_new_wave_and_take_a_log2_axis_only_where_asked():
    """Sage2's lengths on a linear axis, decode's split counts and batches on a log2 one in all four panels; a dotted
    line where the model's launch takes one more wave; an efficiency axis never below 0."""
    import pandas as pd

    from labkit.plot.sched import efficiency_vs
    from labkit.sched import model as sched_model

    model = pd.DataFrame({"q_len": [37810, 37700, 37760, 37900], "efficiency": [0.992, 0.986, 0.994, 0.99],
                          "wave_efficiency": [0.997, 0.99, 0.997, 0.995], "full_waves": [64, 63, 63, 64]})
    ax = efficiency_vs(model, None, x="q_len", xlabel="q_len").axes[0]
    assert ax.get_xscale() == "linear"
    assert [(line.get_label(), list(line.get_xdata())) for line in ax.lines if line.get_linestyle() == ":"] == [
        ("model: one more wave", [37810, 37810])]
    rows = [sched_model.decode_launch(8, 8192, s, heads_kv=8, tokens_per_stage=64, sms=132, ctas_per_sm=2)
            for s in (1, 2, 4)]
    split_model = pd.DataFrame([{**r.to_dict(), "splits": s} for r, s in zip(rows, (1, 2, 4))])
    fig = plot.decode_sched(split_model, None, split_model.rename(columns={"splits": "batch"}), None, title="t")
    assert [(a.get_xscale(), a.xaxis.get_transform().base) for a in fig.axes] == [("log", 2)] * 4
    low = model.assign(efficiency=[0.05, 0.06, 0.07, 0.08])  # a launch that fills a twentieth of the GPU
    assert efficiency_vs(low, None, x="q_len", xlabel="q_len").axes[0].get_ylim()[0] == 0.0


def test_event_vs_ncu_draws_each_gap_in_percent_with_both_times_and_keeps_a_large_gap_on_the_axis():
    """The dots sit at the gap in percent (8 % out, -0.3 % in the band); each is labelled with both times as a reader
    scans them (ms from 10 ms up, us under); the axis reaches past the largest gap, with room for its label."""
    import pandas as pd

    df = pd.DataFrame({"case": ["sage2_seed", "decode_b1", "decode_b64"], "gap": [0.08, -0.003, 0.004],
                       "event_p50_us": [120_100.0, 9.47, 488.0], "ncu_us": [129_708.0, 9.44, 490.0],
                       "flagged": [True, False, False]})
    ax = plot.event_vs_ncu(df).axes[0]
    assert [c.get_offsets()[0, 0] for c in ax.collections] == pytest.approx([8.0, -0.3, 0.4])
    assert [c.get_offsets()[0, 1] for c in ax.collections] == [0, 1, 2]
    assert [t.get_text() for t in ax.texts] == ["event 120.1 ms, ncu 129.7 ms", "event 9.47 us, ncu 9.44 us",
                                                "event 488 us, ncu 490 us"]
    assert ax.get_xlim()[1] == pytest.approx(8.0 + 12)
    # the flagged case a cross of another colour than the held dots: vermillion beside orange dots read as one
    import matplotlib.colors as mcolors

    flagged, held = ax.collections[0], ax.collections[2]
    assert flagged.get_paths()[0].vertices.shape != held.get_paths()[0].vertices.shape  # a cross, not a dot
    hue = lambda c: mcolors.rgb_to_hsv(c.get_facecolor()[0][:3])[0]  # noqa: E731
    assert abs(hue(flagged) - hue(held)) > 0.25


def test_time_against_counters_takes_a_log_x_only_for_a_counter_that_spans_ten_times_and_labels_each_panel():
    """Times 12 x apart: log y on each panel; the bytes, 64 x apart, on a log axis; a percentage 2 x apart stays
    linear. Each panel says its time axis: a column is a group, and two groups' times differ by 1000 x."""
    import pandas as pd

    df = pd.DataFrame({"group": ["decode"] * 3, "dram_read_bytes": [4.2e6, 3.4e7, 2.7e8], "sm_pct": [40.0, 55.0, 80.0],
                       "event_p50_us": [9.8, 18.9, 120.0]})
    fig = plot.time_vs_counters(df, ["dram_read_bytes", "sm_pct"])
    assert [(a.get_xscale(), a.get_yscale(), a.get_ylabel()) for a in fig.axes] == [  # a row per counter
        ("log", "log", "event p50 [us]"), ("linear", "log", "event p50 [us]")]


def test_time_against_counters_puts_a_group_in_each_column_of_9_in_and_a_counter_in_each_row():
    """Found by a JupyterLab walkthrough: a row per group of a panel per counter (4) was 10.4 in wide, and the pane
    showed its 6 pt ticks at 5; two groups now fill the pane's 9 in, a group down each column."""
    import pandas as pd

    df = pd.DataFrame({"group": ["sage2 tail"] * 2 + ["decode"] * 2, "dram_read_bytes": [8.5e8, 8.6e8, 4e6, 3e7],
                       "waves": [62.6, 62.8, 0.5, 1.0], "event_p50_us": [120100.0, 120400.0, 9.8, 18.9]})
    fig = plot.time_vs_counters(df, ["dram_read_bytes", "waves"])
    assert fig.get_size_inches()[0] == pytest.approx(9.0)
    at = {(ax.get_subplotspec().rowspan.start, ax.get_subplotspec().colspan.start): ax for ax in fig.axes}
    assert sorted(at) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert [at[row, 0].get_xlabel() for row in (0, 1)] == ["dram_read_bytes [MB]", "waves"]  # a counter a row
    assert all(at[row, 0].get_title().startswith("sage2 tail\n") and at[row, 1].get_title().startswith("decode\n")
               for row in (0, 1))
    assert all(ax.get_ylabel() == "event p50 [us]" for ax in fig.axes)  # each column its own time scale


def test_stall_bars_stack_each_reason_after_the_last_and_phase_shares_straddle_their_phase():
    import pandas as pd

    shares = pd.DataFrame({"long_scoreboard": [70.0, 50.0], "selected": [20.0, 30.0], "wait": [10.0, 20.0]},
                          index=["stage_loop", "epilogue"])
    ax = plot.phase_stalls(shares).axes[0]
    assert [[(p.get_x(), p.get_width()) for p in c.patches] for c in ax.containers] == [
        [(0, 70), (0, 50)], [(70, 20), (50, 30)], [(90, 10), (80, 20)]]  # each phase's reasons end at 100 %
    table = pd.DataFrame({"share_run1_pct": [25.0, 74.996, 0.26], "share_run2_pct": [30.0, 69.997, 0.256],
                          "diff_points": [5.0, -4.999, -0.004]}, index=["load", "mma", "epilogue"])
    ax = plot.phase_shares(table).axes[0]
    centres = [[p.get_x() + p.get_width() / 2 for p in c.patches] for c in ax.containers]
    assert centres == [pytest.approx([-0.2, 0.8, 1.8]), pytest.approx([0.2, 1.2, 2.2])]  # run 1 left, run 2 right
    # a review: notebook 05's table printed -0.00 where the figure said +0.00; both say 0.00 now
    assert [t.get_text() for t in ax.texts] == ["+5.00 pt", "-5.00 pt", "0.00 pt"]
    from labkit.ncu import tables

    printed = tables.shown_phases(table).to_string(float_format=lambda v: f"{v:.2f}")
    assert printed.splitlines()[-1].split() == ["epilogue", "0.26", "0.26", "0.00"]


def test_param_block_names_a_tensor_map_by_the_manifest_field_and_member_the_check_names_it_by():
    """Found by a notebook review: notebook 01's check named "pack.fields[1]", its figure only "p2 (kv+262144)"."""
    from labkit.manifest import check, load
    from labkit.manifest.families import K

    from ..conftest import ROOT

    plan = check(load(ROOT / "data" / "trtllm_gen_decode_manifest_v4.json"), vars={"tokens": 2}).plans[0]
    k_map = next(r for r in plan.rows if r.at == K["tmaK"])
    labels = [t.get_text().splitlines() for t in plot.param_block(plan.rows, plan.pack_size).axes[0].texts]
    assert [f"fields[{k_map.field}]", "tmaK"] in [lines[:2] for lines in labels]


def test_the_decode_activity_title_breaks_between_phrases_not_inside_batch_8_x_8192():
    """Found by a notebook review: notebook 04's decode_activity title read "...page 64, batch / 8 x 8192 tokens: CTAs
    resident...", the batch size cut off from the word "batch"."""
    from labkit.sched import Timeline

    recs = [(i, i % 132, 0, 1000 + i, 0, 0) for i in range(128)]
    first = "paged decode d128, 32/8 heads, page 64, batch 8 x 8192 tokens: CTAs resident, SMs going idle"
    title = f"{first}\nthe plan's call: 2 splits, mma w8s2 cl2 pp\nNVIDIA H200, recorded 2026-12-05"
    fig = plot.cta_activity(Timeline(recs, sms=132, ctas_per_sm=1), title=title)
    plot._fit_titles(fig)
    lines = fig.axes[0].get_title().replace("\u00a0", " ").split("\n")
    broken = lines[:-2]  # the first line as it was broken; the two lines after it fit as they were
    assert len(broken) > 1 and " ".join(broken) == first and lines[-2:] == title.split("\n")[1:], lines
    assert all(line[-1] in ",:" for line in broken[:-1]), broken
    assert any("batch 8 x 8192 tokens" in line for line in broken), broken


# JupyterLab's notebook pane, as measured in chromium at 1400 x 1000 with the file browser open: an image wider than
# this is scaled down to it, and its text with it
PANE_PX = 950


def _shown_px(fig, points: float) -> float:
    """How tall text of ``points`` shows in the pane: the notebook shows the PNG saved at savefig.dpi, one pixel to
    one CSS pixel, scaled down to the pane's width."""
    dpi = matplotlib.rcParams["savefig.dpi"]
    return points * dpi / 72 * min(1.0, PANE_PX / (fig.get_figwidth() * dpi))


def test_the_gantt_charts_row_labels_are_readable_in_jupyterlab_and_do_not_overlap():
    """Found by opening notebook 04 in JupyterLab: the 64 'SM n slot k' labels of a launch's Gantt chart were 5 pt
    on a 9 in figure, about 7 px tall in the pane."""
    import numpy as np

    from labkit.sched import Timeline

    # 280 CTAs on 132 SMs x 2 slots, as the recorded Sage2 launch: 64 of 264 rows drawn
    rec = [(i, i % 132, (i // 264) * 2000 + i % 5, (i // 264) * 2000 + 1900 + i % 5, 0, 0) for i in range(280)]
    fig = plot.cta_gantt(Timeline(np.array(rec), sms=132, ctas_per_sm=2))
    ax = fig.axes[0]
    labels = ax.get_yticklabels()
    assert len(labels) == 64
    assert min(_shown_px(fig, t.get_fontsize()) for t in labels) >= 10
    fig.canvas.draw()
    boxes = sorted((t.get_window_extent().y0, t.get_window_extent().y1) for t in labels)
    assert all(low[1] <= high[0] for low, high in zip(boxes, boxes[1:])), "row labels overlap"


def test_a_title_of_one_word_wider_than_the_figure_is_broken_inside_the_figure():
    """Found reading the session's figures: narrowed to 9 in for JupyterLab's pane, notebook 01's parameter block cut
    the seed's 100-character kernel name (one word, no space to break at) at both edges."""
    name = "fmhaSm100fKernel_QkvBfloat16OBfloat16H256PagedKvCausalP64MultiCtasKvVarSeqQ8Kv128StaticSwapsAbForGen"
    fig = plot.param_block([], 1280, title=f"{name}\nparameter block: 1280 B (from the manifest, no GPU)")
    plot._fit_titles(fig)  # what plot.save does before it writes the files (and closes the figure)
    renderer = fig.canvas.get_renderer()
    box, title = fig.axes[0].title.get_window_extent(renderer), fig.axes[0].title.get_text()
    assert 0 <= box.x0 and box.x1 <= fig.bbox.width, title
    assert title.replace("\n", "").startswith(name) and len(title.splitlines()) == 3


def test_the_bandwidth_legend_stays_inside_the_figure_when_a_peer_did_not_run():
    """Found live on an H100 without FA3: its "not run" entry made the legend's four columns wider than the figure,
    cutting "labkit, batch 8" and the fit's label at the edges. Fewer columns then; four where they fit."""
    nan = float("nan")
    rows = [dict(batch=b, kv_len=n, kv_MB=mb, TBps=t, labkit_beside_peers=t, sdpa_cudnn=t, sdpa_flash=t * 0.9, fa3=nan,
                 flex_paged=t * 0.95) for b, n, mb, t in ((8, 1024, 33.5, 1.6), (8, 8192, 268.4, 2.6),
                                                          (64, 8192, 2147.5, 3.1))]
    for peers, columns in ((rows, 3), ([{**r, "fa3": 3.0} for r in rows], 4)):
        fig = plot.decode_bandwidth(peers, 3.02, fit=(18.2, 3.19), title="t")
        fig.canvas.draw()
        legend = fig.legends[0]
        box = legend.get_window_extent(fig.canvas.get_renderer())
        assert 0 <= box.x0 and box.x1 <= fig.bbox.width and legend._ncols == columns


def test_the_bandwidth_figure_takes_a_decode_reports_frame_of_one_geometry_and_a_figure_saves_once(tmp_path):
    """An API walk: the figure took only a list of dicts (a report's frame failed in pandas' truth test), every row of
    a report drew d128 and d256 as one line per batch and the seed's graph call as a batch of its own, and a second
    save of a saved (closed) figure failed inside matplotlib."""
    from pathlib import Path

    from labkit.errors import ArgumentError
    from labkit.workloads.decode import report as decode_report

    root = Path(__file__).resolve().parents[2]
    frame = decode_report.load(root / "data/runs/20261204T185600Z-decode_bench_targets/sweep.json").to_frame()
    with pytest.raises(ArgumentError, match=r"rows of head_dim 128, 256: pass one \(e\.g\. frame\[frame\['head_dim'\] "
                                            r"== 128\]\)"):
        plot.decode_bandwidth(frame, 4.2)
    one = frame[(frame["head_dim"] == 128) & (frame["mode"] == "cold")]
    fig = plot.decode_bandwidth(one, 4.2)
    lines = [ln.get_label() for ln in fig.axes[0].get_lines()]
    assert [f"labkit, batch {b}" for b in sorted(set(one["batch"]))] == [x for x in lines if x.startswith("labkit, b")]
    assert "torch SDPA cuDNN" in lines  # the peers' columns read from the frame's rows
    png = plot.save(fig, tmp_path / "bw")
    with pytest.raises(ArgumentError, match=f"this figure was saved to {png} and closed: draw it again"):
        plot.save(fig, tmp_path / "again")
    assert not (tmp_path / "again.png").exists()


def test_save_refuses_a_name_of_another_image_format_before_it_writes(tmp_path, capsys):
    """An API walk: plot.save(fig, 'f.pdf') wrote f.pdf.png and f.pdf.svg, and no PDF."""
    import matplotlib.pyplot as plt

    from labkit.errors import ArgumentError

    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    for name in ("f.pdf", "f.JPG"):
        with pytest.raises(ArgumentError, match=re.escape(f"'{tmp_path / name}': a figure is written as a PNG and an "
                                                          f"SVG, not a {name[2:].upper()}; give '{tmp_path / 'f'}' "
                                                          "for both")):
            plot.save(fig, tmp_path / name)
    assert list(tmp_path.iterdir()) == []
    # a review: a CLI figure named so was refused only after the command had printed its tables
    from labkit import cli

    runs = str(Path(__file__).resolve().parents[2] / "data" / "runs")
    assert cli.main(["report", "spread", runs, "--point", "64x8k", "--out", str(tmp_path / "s.pdf")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "s.pdf': a figure is written as a PNG and an SVG, not a PDF" in err
    assert plot.save(fig, tmp_path / "f.png") == tmp_path / "f.png" and (tmp_path / "f.svg").exists()
