"""What the figures say: positions that mean something, numeric axes, units, titles."""

import math

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
        assert len(lines) > 1 and any("8\u00a0x\u00a08192" in line for line in lines), lines


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
    assert "model: waves x stage padding x split balance" in labels and "model: waves x tiles" not in labels
