"""`labkit report spread`: one decode call across runs and GPUs, and where the runs split into two groups."""

import json
import os

import matplotlib
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.image import imread

from labkit import cli, plot
from labkit.errors import ArgumentError, FormatError
from labkit.workloads.decode import report
from labkit.workloads.decode.recorded_calls import read_reports
from labkit.workloads.decode.spread import MIN_FOR_GROUPS, call_spread, spread_table, standings

from ..conftest import ROOT, as_read

matplotlib.use("Agg")
RUNS = ROOT / "data" / "runs"
# `labkit decode bench` sweeps at the plan's 64 x 8k d128 build (mma w4s1c1) on twelve H200s, six of each state
BENCHES = [RUNS / f for f in (
    "20261202T095400Z-gpu_suite_bench/bench.json", "20261202T175400Z-decode_bench_nb/bench.json",
    "20261202T211900Z-decode_bench_nb/bench.json", "20261204T165000Z-decode_persisting_l2/sweep/sweep.json",
    "20261204T185600Z-decode_bench_targets/sweep.json", "20261204T184500Z-make_bench/sweep.json",
    "20261202T060800Z-gpu_suite_bench/bench.json", "20261202T084400Z-gpu_suite_bench/bench.json",
    "20261202T161000Z-gpu_suite_bench/bench.json", "20261202T230200Z-decode_bench_nb/bench.json",
    "20261203T091700Z-gpu_suite_bench/bench.json", "20261203T142900Z-decode_grid_bench/bench.json")]


def test_twelve_recorded_benches_fall_into_two_groups_that_the_peers_and_the_copy_probe_follow():
    """64 x 8k d128 on twelve H200s: labkit 4.29-4.375 TB/s on six and 4.45-4.475 on the other six, cuDNN beside it
    4.34-4.38 and 4.43-4.45, the copy probe of the same runs reading the other way round (faster on the slower six)."""
    s = call_spread(BENCHES, 64, 8192, 128)
    assert (s.call, len(s.runs), s.gpus, s.reports, s.skipped) == ("64 x 8k d128, 32/8 heads, cold", 12, 12, 12, 0)
    assert [r.TBps for r in s.runs] == sorted(r.TBps for r in s.runs) and {r.kernel for r in s.runs} == {"mma w4s1c1"}
    low, high = s.step()
    assert (low.runs, high.runs) == (6, 6)
    assert low.high < 4.4 < high.low
    assert low.best_peer_TBps < 4.4 < high.best_peer_TBps and low.copy_TBps > high.copy_TBps
    slowest = s.runs[0]
    assert (slowest.gpu, slowest.git, slowest.best_peer) == ("GPU-8622691e", "8747e32", "sdpa_cudnn")
    assert slowest.source == str(BENCHES[5])
    table = spread_table(s).splitlines()
    assert table[0] == "64 x 8k d128, 32/8 heads, cold: the plan's call in 12 runs on 12 GPUs"
    assert table[-4:] == [
        "labkit 4.288-4.475 TB/s (median 4.413, +4.4% from slowest to fastest); the best peer 4.339-4.454 in 12 runs "
        "with peers",
        "two groups: the largest step with 3 or more runs on each side, 4.375 -> 4.452 TB/s (+1.8%), is more than "
        "either side's interquartile spread; medians each side:",
        "  6 runs on 6 GPUs at 4.288-4.375: labkit 4.360, best peer 4.346 (6 runs), copy 4.250 TB/s",
        "  6 runs on 6 GPUs at 4.452-4.475: labkit 4.466, best peer 4.440 (6 runs), copy 4.223 TB/s"]
    frame = s.to_frame()
    assert len(frame) == 12 and frame["TBps"].is_monotonic_increasing


def _report(path, rows, *, sweeps=None, copy=4250.0, uuid=None, sha="a" * 40, vbios=None, board=None, device=None):
    """A decode report at ``path``, on an H200 of its own unless ``uuid`` names one (``device``: another model)."""
    import zlib

    prov = json.loads(BENCHES[0].read_text())["provenance"]
    prov["device"]["uuid"] = uuid or f"GPU-{zlib.crc32(str(path).encode()):08x}-test"
    if vbios is not None:
        prov["device"]["vbios_version"] = vbios
    if board is not None:
        prov["device"]["board_part_number"] = board
    if device is not None:
        prov["device"]["name"] = device
    prov["git_sha"] = sha
    path.parent.mkdir(parents=True, exist_ok=True)
    return report.write(rows, sweeps or {}, copy, prov, path)


def _row(tbps, *, batch=64, kv_len=8192, mode="cold", build=None, kernel="mma w4s1c1", peer=None):
    mb = 2 * batch * kv_len * 8 * 128 * 2 / 1e6
    row = {"batch": batch, "kv_len": kv_len, "head_dim": 128, "heads": "32/8", "splits": 1, "kernel": kernel,
           "mode": mode, "kv_MB": mb, "p50_us": mb / tbps, "TBps": tbps}
    if build is not None:
        row["build"] = build
    if peer is not None:
        row.update(sdpa_cudnn=peer, sdpa_flash="not available: flash refused", labkit_beside_peers=tbps,
                   x_best_peer=tbps / peer)
    return row


def test_only_the_plan_s_row_of_the_call_in_the_mode_asked_for_counts(tmp_path):
    """decode compare's other builds (its sweep), other calls, split sweeps and cold_clean rows stay out; --kernel
    holds the build fixed."""
    sweep = {"64x8192": [_row(7.0), _row(8.0)]}
    a = _report(tmp_path / "a.json", [_row(4.3, peer=4.2), _row(4.0, batch=8), _row(5.0, mode="cold_clean")],
                sweeps=sweep)
    plan = _row(4.4, build="plan", kernel="mma w4s1")
    b = _report(tmp_path / "b.json", [plan], sweeps={"64x8192 d128 compare": [plan, _row(9.9, build="stages=2")]})
    s = call_spread([a, b], 64, 8192, 128)
    assert [(r.TBps, r.kernel, r.best_peer) for r in s.runs] == [(4.3, "mma w4s1c1", "sdpa_cudnn"),
                                                                 (4.4, "mma w4s1", None)]
    assert s.runs[0].x_best_peer == pytest.approx(4.3 / 4.2)
    assert s.step() is None  # under MIN_FOR_GROUPS runs
    assert "(2 builds: --kernel holds one)" in spread_table(s).splitlines()[0]
    assert [r.TBps for r in call_spread([a, b], 64, 8192, 128, kernel="mma w4s1").runs] == [4.4]
    assert [r.TBps for r in call_spread([a, b], 64, 8192, 128, mode="cold_clean").runs] == [5.0]
    with pytest.raises(ArgumentError, match="--mode 'graph': expected one of cold, cold_clean"):
        call_spread([a], 64, 8192, 128, mode="graph")


def test_a_directory_gives_its_decode_reports_skips_other_json_and_names_a_damaged_report(tmp_path):
    _report(tmp_path / "run1" / "bench.json", [_row(4.30)])
    _report(tmp_path / "run2" / "deep" / "sweep.json", [_row(4.45)])
    (tmp_path / "run1" / "provenance.json").write_text(json.dumps({"host": "vm"}))
    (tmp_path / "run2" / "notes.json").write_text("[1, 2]")
    s = call_spread([tmp_path], 64, 8192, 128)
    assert [r.source for r in s.runs] == ["run1/bench.json", "run2/deep/sweep.json"]
    assert (s.reports, s.skipped) == (2, 2)
    with pytest.raises(ArgumentError, match=r"32/8 heads, cold: no row of this call in the 2 decode reports \(2 other "
                                            r"JSON files skipped\)"):
        call_spread([tmp_path], 16, 4096, 128)
    os.mkfifo(tmp_path / "run2" / "pipe.json")  # found by a readers review: the damaged-report test waited on it
    assert call_spread([tmp_path], 64, 8192, 128).skipped == 3
    # found by a CLI review: a copied report counted as a second run
    (tmp_path / "run3").mkdir()
    (tmp_path / "run3" / "copy.json").write_bytes((tmp_path / "run1" / "bench.json").read_bytes())
    s = call_spread([tmp_path], 64, 8192, 128)
    assert (len(s.runs), s.copies) == (2, 1)
    assert spread_table(s).splitlines()[0].endswith("; 1 copy of a report already read left out")
    doc = json.loads((tmp_path / "run1" / "bench.json").read_text())
    doc["rows"][0]["TBps"] = "fast"
    (tmp_path / "run1" / "bench.json").write_text(json.dumps(doc))
    # a review: one damaged report among data/runs' stopped every spread; under a directory it is left out, by name
    s = call_spread([tmp_path], 64, 8192, 128)
    assert [r.source for r in s.runs] == ["run3/copy.json", "run2/deep/sweep.json"] and s.copies == 0
    assert s.damaged == ("run1/bench.json: rows[0].TBps = 'fast': expected a number",)
    assert spread_table(s).splitlines()[0].endswith(
        "; 1 damaged decode report left out: run1/bench.json: rows[0].TBps = 'fast': expected a number")
    with pytest.raises(ArgumentError, match=r"no row of this call in the 2 decode reports \(3 other JSON files "
                                            r"skipped\) \(1 damaged decode report left out: run1/bench\.json: "):
        call_spread([tmp_path], 16, 4096, 128)  # the damaged file may hold the call asked for: named here too
    with pytest.raises(FormatError, match=r"bench\.json: rows\[0\]\.TBps = 'fast'"):
        call_spread([tmp_path / "run1" / "bench.json"], 64, 8192, 128)  # given by name: an error


def test_each_group_names_the_vbios_versions_and_boards_its_runs_recorded(tmp_path):
    """Records since the VBIOS (and then the board part number) was kept name them; each group lists those of its
    runs, so a firmware or a board revision that sets the state would show as one value per group. Runs that recorded
    none add nothing."""
    rates = [(4.33, "96.00.AA", "692-000"), (4.34, "96.00.AA", None), (4.35, None, "692-000"),
             (4.45, "96.00.BB", "692-001"), (4.46, "96.00.BB", "692-001"), (4.47, "96.00.CC", None)]
    paths = [_report(tmp_path / f"{i}.json", [_row(t)], vbios=v, board=b) for i, (t, v, b) in enumerate(rates)]
    s = call_spread(paths, 64, 8192, 128)
    low, high = s.step()
    assert (low.vbios, high.vbios) == (("96.00.AA",), ("96.00.BB", "96.00.CC"))
    assert (low.boards, high.boards) == (("692-000",), ("692-001",))
    lines = spread_table(s).splitlines()
    assert lines[-2].endswith("copy 4.250 TB/s; VBIOS 96.00.AA; board 692-000")
    assert lines[-1].endswith("VBIOS 96.00.BB, 96.00.CC; board 692-001")
    frame = s.to_frame()
    assert frame["vbios"].fillna("-").tolist() == [v or "-" for _, v, _ in rates]
    assert frame["board"].fillna("-").tolist() == [b or "-" for _, _, b in rates]


def test_rates_that_spread_evenly_name_no_groups(tmp_path):
    paths = [_report(tmp_path / f"{i}.json", [_row(4.30 + 0.01 * i)]) for i in range(8)]
    s = call_spread(paths, 64, 8192, 128)
    assert s.step() is None
    assert spread_table(s).splitlines()[-1] == ("no step with 3 or more runs on each side stands out from the spread "
                                                "on either side of it, on 2 or more machines each")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(3.0, 5.0), min_size=3, max_size=6), st.lists(st.floats(3.0, 5.0), min_size=3, max_size=6),
       st.floats(0.03, 0.2))
def test_two_clusters_apart_by_more_than_their_spread_are_the_two_groups(low, high, apart):
    """Runs drawn in [x, x * 1.01] and [y, y * 1.01] with y at least 3 % above x * 1.01, each on a GPU of its own:
    the step is between them."""
    from labkit.workloads.decode.spread import CallSpread, RunRate

    x = min(low)
    lows = [x * (1 + 0.01 * (v - 3.0) / 2.0) for v in low]
    y = x * 1.01 * (1 + apart)
    highs = [y * (1 + 0.01 * (v - 3.0) / 2.0) for v in high]
    runs = tuple(RunRate(v, "k", 4.2, None, None, None, f"GPU-{i}", "NVIDIA H200", None, None, "s", "", f"r{i}")
                 for i, v in enumerate(sorted(lows + highs)))
    s = CallSpread("c", runs, len(runs), 0)
    assert len(runs) >= MIN_FOR_GROUPS
    a, b = s.step()
    assert (a.runs, b.runs) == (len(lows), len(highs))
    assert a.high == max(lows) and b.low == min(highs)


def test_the_figure_puts_each_group_beside_its_peers_and_its_copy_rate():
    s = call_spread(BENCHES, 64, 8192, 128)
    fig = plot.call_spread(s)
    left, right = fig.axes
    labels = [t.get_text() for t in left.get_legend().get_texts()]
    assert labels == ["slower group: 6 with peers", "faster group: 6 with peers", "level with it"]
    slower = left.lines[0].get_xydata()
    assert len(slower) == 6 and (slower[:, 1] < 4.4).all() and (slower[:, 0] < 4.4).all()
    assert [t.get_text() for t in right.get_legend().get_texts()] == [
        "labkit, slower group", "best peer, slower group", "labkit, faster group", "best peer, faster group"]
    assert "1 GiB copy" in right.get_xlabel() and fig._suptitle.get_text().endswith("in 12 runs on 12 GPUs")


def test_report_spread_takes_the_default_page_spelled_out_and_kv_len_in_k(capsys):
    """A CLI review: '--heads "32/8 page 64"' (the default, written out) found no row, and '--point 64x8k' (as the
    tables print it) was refused."""
    args = ["report", "spread", *map(str, BENCHES), "--point", "64x8192"]
    assert cli.main(args) == 0
    plain = capsys.readouterr().out
    assert cli.main([*args[:-1], "64x8k", "--heads", "32/8 page 64"]) == 0
    assert capsys.readouterr().out == plain


def test_report_spread_prints_the_runs_and_writes_the_figure(tmp_path, capsys):
    out_path = tmp_path / "figs" / "spread"
    assert cli.main(["report", "spread", *map(str, BENCHES), "--point", "64x8192", "--out", str(out_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("64 x 8k d128, 32/8 heads, cold: the plan's call in 12 runs on 12 GPUs")
    assert "20261204T184500Z-make_bench/sweep.json" in out and "  6 runs on 6 GPUs at 4.452-4.475" in out
    # each column's unit said under the table (a CLI user: was copy a ceiling, a K/V rate, which size, read or both?)
    assert ("\nTB/s: labkit timed alone, K+V bytes read over p50; copy: the run's 1 GiB device-to-device copy, TB/s "
            "read + write; x peer: labkit / the best peer, both timed in the peers' rounds\n") in out
    png = out_path.with_suffix(".png")
    assert f"figure: {png}" in out and out_path.with_suffix(".svg").exists()
    assert imread(png).shape[0] > 300


@pytest.mark.parametrize(("args", "message"), [
    (["data/sage2_report_seed.json", "--point", "64x8192"], "a Sage2 report; spread reads decode reports"),
    (["data/no_such_report.json", "--point", "64x8192"], "does not exist (a decode report, or a directory of them)"),
    ([str(BENCHES[0]), "--point", "64x8192", "--kernel", "mma w9"],
     "no row of this call in the 1 decode report; its recorded builds: mma w4s1c1 (1 run)"),
    (["README.md", "--point", "64x8192"], "not valid JSON"),
    ([str(BENCHES[0]), "--point", "64x0"], "kv_len 0: expected 1.."),
    ([str(BENCHES[0]), "--point", "64x8192", "--mode", "graph"], "invalid choice: 'graph'"),
    ([str(BENCHES[0]), "--point", "5x5"], "5 x 5 d128, 32/8 heads, cold: no row of this call in the 1 decode report;"),
])
def test_report_spread_refuses_bad_input_in_one_line(args, message, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert cli.main(["report", "spread", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_a_rate_is_placed_among_the_runs_and_their_groups(tmp_path):
    """A notebook's own rate of the call, against the recorded runs: how many it beats and whose range holds it."""
    import pandas as pd

    from labkit.workloads.decode.study import this_run_among

    paths = [_report(tmp_path / f"{i}.json", [_row(t)]) for i, t in enumerate((4.33, 4.34, 4.35, 4.45, 4.46, 4.47))]
    s = call_spread(paths, 64, 8192, 128)
    assert s.place(4.345) == ("4.345 TB/s: faster than 2 of the 6 recorded runs, in the slower group's range "
                              "(4.330-4.350 / 4.450-4.470)")
    assert s.place(4.40).endswith("between the two groups (4.330-4.350 / 4.450-4.470)")
    assert s.place(4.46).split(", ")[1:3] == ["level with 1 at this precision",
                                              "in the faster group's range (4.330-4.350 / 4.450-4.470)"]
    assert s.place(4.60) == ("4.600 TB/s: faster than 6 of the 6 recorded runs, above both groups "
                             "(4.330-4.350 / 4.450-4.470)")
    assert s.place(4.0).split(", ")[1].startswith("below both groups")
    even = call_spread(paths[:3], 64, 8192, 128)
    assert even.place(4.3) == "4.300 TB/s: faster than 0 of the 3 recorded runs"  # too few runs for groups
    table = pd.DataFrame([{"batch": 64, "kv_len": 8192, "TBps": 4.455}, {"batch": 8, "kv_len": 8192, "TBps": 3.5}])
    assert this_run_among(s, table, 64, 8192) == s.place(4.455)
    assert this_run_among(s, table, 64, 1024) == ("batch 64 x 1024 is not in this notebook's bandwidth sweep (its "
                                                  "batch and kv_lens)")


def test_the_figure_marks_a_rate_of_this_run_and_says_when_no_run_timed_peers(tmp_path):
    s = call_spread(BENCHES, 64, 8192, 128)
    left, right = plot.call_spread(s, this_run=4.371, this_run_beside=4.375).axes
    # found by a notebook review: the alone rate was drawn on the panel whose y axis is the rate in the peers' rounds
    assert "this run, in its peers' rounds: 4.375 TB/s" in [t.get_text() for t in left.get_legend().get_texts()]
    assert "this run, labkit alone: 4.371 TB/s" in [t.get_text() for t in right.get_legend().get_texts()]
    assert [ln.get_ydata()[0] for ln in right.lines if ln.get_linestyle() == "--"] == [4.371]
    assert [ln.get_ydata()[0] for ln in left.lines if ln.get_linestyle() == "--"] == [4.375]
    alone = call_spread([_report(tmp_path / f"{i}.json", [_row(4.3 + 0.01 * i)]) for i in range(3)], 64, 8192, 128)
    left, _ = plot.call_spread(alone, this_run=4.3, this_run_beside=4.31).axes
    assert [t.get_text() for t in left.texts] == ["no run timed peers"]
    assert [ln.get_linestyle() for ln in left.lines] == ["--"]  # this run's line, and no diagonal without peers


def test_standings_place_each_call_of_2_gb_or_more_among_its_own_build_s_runs(tmp_path):
    """Calls under 2 GB are left out; a call is placed among the runs of its own build only (other builds' runs
    would place the build, not the machine): with too few of them, or none, the line says so."""
    rates = (4.33, 4.34, 4.35, 4.45, 4.46, 4.47)
    for i, t in enumerate(rates):
        _report(tmp_path / "runs" / f"{i}.json", [_row(t), _row(t + 0.1, batch=256), _row(3.0, batch=8)])
    _report(tmp_path / "runs" / "other.json", [_row(4.5, batch=256, kernel="mma w4s1")])
    this = report.load(_report(tmp_path / "this.json", [
        _row(4.345), _row(4.40, batch=256, kernel="mma w4s1"), _row(3.5, batch=8), _row(4.4, batch=128)]))
    assert standings(this, read_reports([tmp_path / "runs"])) == [
        "  64 x 8k d128 (mma w4s1c1) 4.345 TB/s: faster than 2 of the 6 recorded runs, in the slower group's range "
        "(4.330-4.350 / 4.450-4.470)",
        "  256 x 8k d128 (mma w4s1) 4.400 TB/s: 1 recorded run of this build on NVIDIA H200, too few to place it",
        "  128 x 8k d128 (mma w4s1c1) 4.400 TB/s: 0 recorded runs of this build on NVIDIA H200, too few to place it"]


H100 = "NVIDIA H100 80GB HBM3"


def test_an_h100_run_is_placed_among_h100_runs_only_and_a_spread_over_two_models_seeks_no_step(tmp_path, capsys):
    """Found on the first H100 run: its 3.0 TB/s call read 'faster than 0 of the 44 recorded runs, below both
    groups', as if the machine were an H200 in a slow state; saved among them, it would have made the step between
    the models the two groups."""
    for i, t in enumerate((4.33, 4.34, 4.35, 4.45, 4.46, 4.47)):
        _report(tmp_path / "runs" / f"{i}.json", [_row(t)])
    for i, t in enumerate((3.00, 3.01, 3.02)):
        _report(tmp_path / "runs" / f"h100_{i}.json", [_row(t)], device=H100)
    found = read_reports([tmp_path / "runs"])
    this = report.load(_report(tmp_path / "this.json", [_row(3.015)], device=H100))
    assert standings(this, found) == [
        f"  64 x 8k d128 (mma w4s1c1) 3.015 TB/s: 3 recorded runs of this build on {H100}, too few to place it"]
    both = call_spread(found, 64, 8192, 128)
    assert both.devices == (H100, "NVIDIA H200") and len(both.runs) == 9
    assert both.step() is None  # 3.02 -> 4.33 is the largest step, and three runs a side: the models', not a state
    table = spread_table(both).splitlines()
    assert table[1].split()[:3] == ["run", "model", "GPU"]
    assert table[-1] == (f"runs on 2 GPU models ({H100}, NVIDIA H200): no step sought, as one between models is not "
                         "a state; --device NAME holds one")
    # its figure: a colour per model, named (a fresh-user review: both models' runs had been "all runs", one colour)
    fig = plot.call_spread(both)
    right = fig.axes[1]
    assert [t.get_text() for t in right.get_legend().get_texts()] == [f"labkit, {H100}", "labkit, NVIDIA H200"]
    h100_dots, h200_dots = right.lines[:2]
    assert sorted(h100_dots.get_ydata()) == [3.00, 3.01, 3.02] and len(h200_dots.get_ydata()) == 6
    assert h100_dots.get_color() != h200_dots.get_color()
    h200 = call_spread(found, 64, 8192, 128, device="NVIDIA H200")
    assert (len(h200.runs), h200.call) == (6, "64 x 8k d128, 32/8 heads, cold, on NVIDIA H200")
    assert h200.step() is not None and "model" not in spread_table(h200).splitlines()[1].split()
    with pytest.raises(ArgumentError, match=f"no run of this call on NVIDIA A100 .* it ran on {H100}, NVIDIA H200$"):
        call_spread(found, 64, 8192, 128, device="NVIDIA A100")
    assert cli.main(["report", "spread", str(tmp_path / "runs"), "--point", "64x8192", "--device", " "]) == 2
    assert capsys.readouterr().err.strip().endswith("--device ' ': expected a GPU model as the reports name it, e.g. "
                                                    "'NVIDIA H200'")
    assert cli.main(["report", "spread", str(tmp_path / "runs"), "--point", "64x8192", "--device", H100]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"64 x 8k d128, 32/8 heads, cold, on {H100}: the plan's call in 3 runs on 3 GPUs")


def _fake_bench(monkeypatch, rows):
    from labkit import probes, provenance
    from labkit.workloads.decode import bench

    timed = []

    def fake_point(batch, kv_len, head_dim, **kw):
        timed.append(batch)
        return {**next(r for r in rows if (r["batch"], r["kv_len"], r["head_dim"]) == (batch, kv_len, head_dim))}

    monkeypatch.setattr(bench, "check_once", lambda: 1e-3)
    monkeypatch.setattr(bench, "bench_point", fake_point)
    monkeypatch.setattr(probes, "copy_bandwidth", lambda n, **kw: {"memcpy": {"GBps_read_plus_write": 4250.0}})
    monkeypatch.setattr(provenance, "collect", lambda **kw: json.loads(BENCHES[0].read_text())["provenance"])
    return timed


def test_the_bench_says_where_its_large_calls_stand_among_the_recorded_runs(tmp_path, monkeypatch, capsys):
    """After its targets (and its report) the bench places 64 x 8k d128 among the runs under --among; 'none' skips
    it; a directory that is not there is refused before any call is timed."""
    for i, t in enumerate((4.33, 4.34, 4.35, 4.45, 4.46, 4.47)):
        _report(tmp_path / "runs" / f"{i}.json", [_row(t)])
    rows = [_row(4.36), _row(2.0, batch=8), _row(1.9, batch=1)]
    timed = _fake_bench(monkeypatch, rows)
    out = tmp_path / "bench.json"
    argv = ["decode", "bench", "--point", "1x8192", "--point", "8x8192", "--point", "64x8192", "--out", str(out)]
    assert cli.main([*argv, "--among", str(tmp_path / "runs")]) == 0
    printed = capsys.readouterr().out
    tail = printed[printed.index("decode targets, issue #10"):].splitlines()
    assert tail[-3:] == [
        f"report: {out} (labkit report show|diff read it)",
        f"where its calls of 2 GB or more stand among the recorded runs on NVIDIA H200 (labkit report spread "
        f"{tmp_path / 'runs'} --point BxN --kernel BUILD --device 'NVIDIA H200' shows them):",
        "  64 x 8k d128 (mma w4s1c1) 4.360 TB/s: faster than 3 of the 6 recorded runs, between the two groups "
        "(4.330-4.350 / 4.450-4.470)"]
    assert cli.main([*argv, "--among", "none"]) == 0
    assert "stand among the recorded runs" not in capsys.readouterr().out
    from labkit import provenance

    prov = json.loads(BENCHES[0].read_text())["provenance"]  # a run that recorded its board and VBIOS names them
    prov["device"].update(board_part_number="692-2G520-0282-001", vbios_version="96.00.A5.00.1A")
    monkeypatch.setattr(provenance, "collect", lambda **kw: prov)
    assert cli.main([*argv, "--among", str(tmp_path / "runs")]) == 0
    assert ("stand among the recorded runs on NVIDIA H200 (this GPU: board 692-2G520-0282-001, VBIOS 96.00.A5.00.1A; "
            "labkit report spread") in capsys.readouterr().out
    timed.clear()
    assert cli.main([*argv, "--among", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("nope': does not exist (a directory of decode reports, or none)") and timed == []


def test_overlapping_paths_give_each_report_once_and_a_truncated_report_is_named(tmp_path):
    for i, t in enumerate((4.30, 4.40)):
        _report(tmp_path / f"run{i}" / "bench.json", [_row(t)])
    s = call_spread([tmp_path, tmp_path / "run0", tmp_path / "run0" / "bench.json"], 64, 8192, 128)
    assert [r.TBps for r in s.runs] == [4.30, 4.40] and s.reports == 2
    text = (tmp_path / "run1" / "bench.json").read_text()
    (tmp_path / "run1" / "bench.json").write_text(text[: len(text) // 2])  # a report cut short: not JSON any more
    (tmp_path / "notes.json").write_text("{ not json")  # other broken JSON under the directory is skipped
    s = call_spread([tmp_path], 64, 8192, 128)
    assert [r.TBps for r in s.runs] == [4.30] and s.skipped == 1
    assert len(s.damaged) == 1 and s.damaged[0].startswith("run1/bench.json: not valid JSON")
    with pytest.raises(FormatError, match=r"run1/bench\.json.*not valid JSON"):
        call_spread([tmp_path / "run1" / "bench.json"], 64, 8192, 128)


def test_a_few_runs_of_one_machine_apart_from_the_rest_are_not_a_group(tmp_path):
    """Three slow runs of one GPU below nine of as many GPUs: a machine's outliers, not a state; the same three rates
    on three GPUs are a group. Two runs on a side are never a group."""
    rates = (4.20, 4.21, 4.22, *(4.40 + 0.002 * i for i in range(9)))
    one_gpu = [_report(tmp_path / "a" / f"{i}.json", [_row(t)], uuid="GPU-same" if i < 3 else None)
               for i, t in enumerate(rates)]
    assert call_spread(one_gpu, 64, 8192, 128).step() is None
    # the runs that name no GPU are said apart from the GPUs counted (a render review read 10 of 44 as missing)
    import dataclasses

    spread = call_spread(one_gpu, 64, 8192, 128)
    assert spread.where == "12 runs on 10 GPUs"
    unnamed = dataclasses.replace(spread, runs=tuple(r if r.gpu == "GPU-same" else dataclasses.replace(
        r, gpu="not recorded") for r in spread.runs))
    assert unnamed.where == "12 runs on 1 GPU (9 runs record no GPU id)"
    # a review: one run of no GPU read "1 run on 0 GPUs (1 run names none)"
    none_named = dataclasses.replace(spread, runs=tuple(dataclasses.replace(r, gpu="not recorded")
                                                        for r in spread.runs[:1]))
    assert none_named.where == "1 run naming no GPU"
    low, high = call_spread([_report(tmp_path / "b" / f"{i}.json", [_row(t)]) for i, t in enumerate(rates)],
                            64, 8192, 128).step()
    assert (low.runs, low.machines, high.runs) == (3, 3, 9)
    two = [_report(tmp_path / "c" / f"{i}.json", [_row(t)]) for i, t in enumerate((4.20, 4.21, *rates[3:]))]
    assert call_spread(two, 64, 8192, 128).step() is None


def test_placing_counts_only_strictly_slower_runs_and_closes_each_group_s_range(tmp_path):
    paths = [_report(tmp_path / f"{i}.json", [_row(t)]) for i, t in enumerate((4.33, 4.34, 4.35, 4.45, 4.46, 4.47))]
    s = call_spread(paths, 64, 8192, 128)
    assert s.place(4.33).startswith("4.330 TB/s: faster than 0 of the 6")  # a tie is not faster
    assert s.place(4.35).endswith("in the slower group's range (4.330-4.350 / 4.450-4.470)")
    # found on the first H100 run: its notebook's 3.0078 read 'faster than 1 of the 1' beside a run of 3.0075
    assert s.place(4.3303).startswith("4.330 TB/s: faster than 0 of the 6 recorded runs, level with 1 at this "
                                      "precision, ")
    assert s.place(4.3406).startswith("4.341 TB/s: faster than 2 of the 6 recorded runs, in")
    assert s.place(4.45).split(", ")[2].startswith("in the faster group's range")


def test_standings_take_calls_from_2_gb_leave_out_the_run_itself_and_keep_to_its_cold_mode(tmp_path):
    rates = (4.33, 4.34, 4.35, 4.45, 4.46, 4.47)
    for i, t in enumerate(rates):
        _report(tmp_path / "runs" / f"{i}.json", [_row(t), _row(t - 0.2, mode="cold_clean")])
    own = _report(tmp_path / "runs" / "own.json", [_row(4.36), _row(4.0, mode="cold_clean")])
    lines = standings(report.load(own), read_reports([tmp_path / "runs"]), exclude=own)
    assert lines == [
        "  64 x 8k d128 (mma w4s1c1) 4.360 TB/s: faster than 3 of the 6 recorded runs, between the two groups "
        "(4.330-4.350 / 4.450-4.470)",
        "  64 x 8k d128 (mma w4s1c1) 4.000 TB/s: faster than 0 of the 6 recorded runs, below both groups "
        "(4.130-4.150 / 4.250-4.270)"]
    assert "of the 7 recorded runs" in standings(report.load(own), read_reports([tmp_path / "runs"]))[0]
    # a row's bytes are its call's (the reader checks them), so the bound moves instead: a call at it is taken
    at = report.load(_report(tmp_path / "bound.json", [_row(4.36)]))
    mb = at.points[0].kv_MB
    assert len(standings(at, read_reports([tmp_path / "runs"]), min_kv_MB=mb)) == 1
    assert standings(at, read_reports([tmp_path / "runs"]), min_kv_MB=mb + 1e-3) == []


def test_the_notebook_s_spread_takes_its_own_build_or_says_why_it_shows_every_build(tmp_path, capsys):
    from labkit.workloads.decode.study import recorded_spread

    for i, t in enumerate((4.33, 4.34, 4.35, 4.45, 4.46, 4.47)):
        _report(tmp_path / "runs" / f"{i}.json", [_row(t)])
    _report(tmp_path / "runs" / "old.json", [_row(4.1, kernel="mma/1")])
    assert len(recorded_spread(64, 8192, kernel="mma w4s1c1", runs=tmp_path / "runs").runs) == 6
    assert len(recorded_spread(64, 8192, kernel="mma/1", runs=tmp_path / "runs").runs) == 7
    assert capsys.readouterr().out == ("only 1 recorded run of mma/1 (a run is placed among 6 or more): the runs of "
                                       "every build are shown\n")
    assert len(recorded_spread(64, 8192, kernel="mma w9", runs=tmp_path / "runs").runs) == 7
    assert capsys.readouterr().out == "no recorded run of mma w9: the runs of every build are shown\n"
    assert recorded_spread(8, 8192, runs=tmp_path / "runs") is None
    said = as_read(capsys.readouterr().out)
    assert said.startswith("no recorded run to place this call among: 8 x 8k d128, 32/8 heads")
    # a notebook review: the nearest call was offered as the CLI's --point, not as the notebook's parameter
    assert said.endswith("64 x 8k (7 runs) (-p spread_at 64,8192 for the first)") and "--point" not in said
    _report(tmp_path / "runs" / "h100.json", [_row(3.0)], device=H100)  # the notebook's own GPU model only
    assert len(recorded_spread(64, 8192, kernel="mma w4s1c1", device="NVIDIA H200", runs=tmp_path / "runs").runs) == 6
    assert recorded_spread(64, 8192, kernel="mma w4s1c1", device=H100, runs=tmp_path / "runs").devices == (H100,)
    assert recorded_spread(64, 8192, device="NVIDIA A100", runs=tmp_path / "runs") is None
    assert "no run of this call on NVIDIA A100" in as_read(capsys.readouterr().out)


def test_a_rate_off_the_figure_s_axes_is_named_with_what_it_is_and_its_run():
    """Found by a notebook review: 'off the axes: 3.921 TB/s' sat between the panels and said neither which panel's
    rate it was nor whose."""
    from labkit.workloads.decode.spread import CallSpread, RunRate

    rates = [4.30, 4.31, 4.32, 4.33, 4.34, 4.35, 4.36, 4.37, 4.38, 4.39]
    peer = [3.0, *rates[1:]]  # the first run's peer far under the rest; labkit beside it at its own rate
    runs = tuple(RunRate(v, "k", 4.2, "sdpa_cudnn", p, v / p, f"GPU-{i}", "NVIDIA H200", None, None, "s", "",
                         f"2026120{i}T000000Z-decode_bench/sweep.json") for i, (v, p) in enumerate(zip(rates, peer)))
    fig = plot.call_spread(CallSpread("c", runs, len(runs), 0))
    assert fig._supxlabel.get_text() == ("not drawn, off the axes [TB/s]: 3.000 (best peer, "
                                         "20261200T000000Z-decode_bench: left panel x, right panel y)")
    assert all(ax.get_ylim()[0] > 4.1 for ax in fig.axes)  # the axes hold the bulk; the outlier is named instead
    # and one far above the rest: its run's best peer at 6 TB/s, labkit beside it at its own rate
    peer = [*rates[:-1], 6.0]
    high = tuple(RunRate(v, "k", 4.2, "sdpa_cudnn", p, v / p, f"GPU-{i}", "NVIDIA H200", None, None, "s", "",
                         f"2026120{i}T000000Z-decode_bench/sweep.json") for i, (v, p) in enumerate(zip(rates, peer)))
    fig = plot.call_spread(CallSpread("c", high, len(high), 0))
    assert fig._supxlabel.get_text() == ("not drawn, off the axes [TB/s]: 6.000 (best peer, "
                                         "20261209T000000Z-decode_bench: left panel x, right panel y)")
    assert all(ax.get_ylim()[1] < 4.6 for ax in fig.axes)


def test_a_run_naming_no_gpu_is_its_directorys_machine_and_one_without_a_peer_rate_has_no_rate_beside_it():
    from dataclasses import replace

    from labkit.workloads.decode.spread import RunRate

    r = RunRate(4.3, "k", 4.2, None, None, 1.02, "not recorded", "not recorded", None, None, "s", "",
                "20261202T095400Z-gpu_suite_bench/bench.json")
    assert r.machine == "20261202T095400Z-gpu_suite_bench" and r.beside_TBps is None  # x best peer, but no peer rate
    named = replace(r, gpu="GPU-1", best_peer="fa3", best_peer_TBps=4.0)
    assert named.machine == "GPU-1" and named.beside_TBps == pytest.approx(1.02 * 4.0)


def test_a_step_with_two_machines_on_a_side_names_the_groups_and_a_rate_is_placed_at_the_shown_precision():
    """Three slower runs on GPUs A, A and B, three faster on C, D and E: the step 4.02 -> 4.40 (+9.5 %) is over either
    side's spread, and each side is on 2 or more machines."""
    from labkit.workloads.decode.spread import CallSpread, RunRate

    runs = tuple(RunRate(v, "k", 4.2, None, None, None, gpu, "NVIDIA H200", None, None, "s", "", f"r{i}")
                 for i, (v, gpu) in enumerate(zip((4.0004, 4.01, 4.02, 4.40, 4.41, 4.42), "AABCDE")))
    s = CallSpread("c", runs, len(runs), 0)
    assert s.copies == 0
    low, high = s.step()
    assert (low.runs, low.machines, low.low, high.runs, high.machines, high.low) == (3, 2, 4.0004, 3, 3, 4.40)
    groups = "(4.000-4.020 / 4.400-4.420)"
    # 4.0004 is the slowest run itself: level with it at 0.001 TB/s, beating none, in the slower group's range
    assert s.place(4.0004) == ("4.000 TB/s: faster than 0 of the 6 recorded runs, level with 1 at this precision, in "
                               f"the slower group's range {groups}")
    # 4.0099 beats 4.0004 and reads as 4.010, level with that run
    assert s.place(4.0099) == ("4.010 TB/s: faster than 1 of the 6 recorded runs, level with 1 at this precision, in "
                               f"the slower group's range {groups}")
    assert s.place(4.2) == f"4.200 TB/s: faster than 3 of the 6 recorded runs, between the two groups {groups}"


def test_the_bench_is_placed_among_the_runs_with_or_without_a_report_and_never_among_itself(tmp_path, monkeypatch,
                                                                                              capsys):
    """Without --out the bench places its calls all the same; with --out under the --among folder, the report it just
    wrote is not one of the recorded runs it is placed among (6 runs, not 7)."""
    for i, t in enumerate((4.33, 4.34, 4.35, 4.45, 4.46, 4.47)):
        _report(tmp_path / "runs" / f"{i}.json", [_row(t)])
    _fake_bench(monkeypatch, [_row(4.36), _row(2.0, batch=8), _row(1.9, batch=1)])
    argv = ["decode", "bench", "--point", "1x8192", "--point", "8x8192", "--point", "64x8192", "--among",
            str(tmp_path / "runs")]
    placed = "  64 x 8k d128 (mma w4s1c1) 4.360 TB/s: faster than 3 of the 6 recorded runs, between the two groups"
    assert cli.main(argv) == 0
    assert placed in capsys.readouterr().out
    assert cli.main([*argv, "--out", str(tmp_path / "runs" / "bench.json")]) == 0
    assert placed in capsys.readouterr().out and (tmp_path / "runs" / "bench.json").exists()


def test_the_bench_says_nothing_of_recorded_runs_where_labkit_has_none(tmp_path, monkeypatch, capsys):
    """An installed labkit has no data/runs: the bench ends at its targets, without a line that the runs it was not
    asked about could not be read."""
    import labkit._env

    monkeypatch.setattr(labkit._env, "data_dir", lambda: tmp_path / "data")
    _fake_bench(monkeypatch, [_row(4.36), _row(2.0, batch=8), _row(1.9, batch=1)])
    assert cli.main(["decode", "bench", "--point", "1x8192", "--point", "8x8192", "--point", "64x8192"]) == 0
    out = capsys.readouterr().out
    assert "decode targets, issue #10" in out and "recorded runs" not in out


def test_the_figure_names_three_rates_off_its_axes_then_counts_the_rest_and_its_diagonal_spans_the_panel():
    """Off the axes: three named; a fourth is counted ('; 1 more'), three are not followed by '; 0 more'. The level
    line runs corner to corner of the left panel, and the fastest rate sits inside the axes, not on their edge."""
    from labkit.workloads.decode.spread import CallSpread, RunRate

    rates = [4.30 + 0.01 * i for i in range(20)]
    said = []
    for low in (3, 4):  # the first runs' peers far under the rest
        peer = [3.0 + 0.01 * i for i in range(low)] + rates[low:]
        runs = tuple(RunRate(v, "k", 4.2, "sdpa_cudnn", p, v / p, f"GPU-{i}", "NVIDIA H200", None, None, "s", "",
                             f"202612{i:02d}T000000Z-decode_bench/sweep.json")
                     for i, (v, p) in enumerate(zip(rates, peer)))
        fig = plot.call_spread(CallSpread("c", runs, len(runs), 0))
        said.append(fig._supxlabel.get_text())
        left = fig.axes[0]
        level = next(line for line in left.lines if line.get_label() == "level with it")
        assert tuple(level.get_xdata()) == pytest.approx(left.get_xlim())
        assert tuple(level.get_ydata()) == pytest.approx(left.get_ylim())
        assert all(ax.get_ylim()[1] > max(rates) for ax in fig.axes)
    assert said[0].endswith("3.020 (best peer, 20261202T000000Z-decode_bench: left panel x, right panel y)")
    assert said[1].endswith("3.020 (best peer, 20261202T000000Z-decode_bench: left panel x, right panel y); 1 more")


def test_a_rate_off_the_axes_is_named_with_each_panel_and_axis_it_is_off_and_its_point_is_not_drawn():
    """Found by a notebook review: notebook 03's spread.png said "off the y axes [TB/s]: 3.921 (best peer, ...)",
    but the best peer is the left panel's x: that run's left point was missing, the x axis starting at 4.15, and the
    note did not say so. Each rate off the axes now names the axes it is off, and no point outside them is drawn."""
    from labkit.workloads.decode.spread import CallSpread, RunRate

    rates = [4.30, 4.31, 4.32, 4.33, 4.34, 4.35, 4.36, 4.37, 4.38, 4.39]
    peer = [3.0, *rates[1:]]
    runs = tuple(RunRate(v, "k", 4.2, "sdpa_cudnn", p, v / p, f"GPU-{i}", "NVIDIA H200", None, None, "s", "",
                         f"2026120{i}T000000Z-decode_bench/sweep.json") for i, (v, p) in enumerate(zip(rates, peer)))
    # a run without peers whose labkit rate is far under the rest: off the right panel's y only
    alone = RunRate(2.0, "k", 4.2, None, None, None, "GPU-x", "NVIDIA H200", None, None, "s", "",
                    "20261210T000000Z-decode_bench/sweep.json")
    fig = plot.call_spread(CallSpread("c", (alone, *runs), len(runs) + 1, 0), this_run_beside=5.5)
    note = fig._supxlabel.get_text()
    assert note == ("not drawn, off the axes [TB/s]: 2.000 (labkit alone, 20261210T000000Z-decode_bench: right panel "
                    "y); 3.000 (best peer, 20261200T000000Z-decode_bench: left panel x, right panel y); "
                    "5.500 (this run, labkit beside peers: left panel y)")
    left, right = fig.axes
    (x0, x1), (y0, y1) = left.get_xlim(), left.get_ylim()
    points = [(x, y) for line in left.lines if line.get_linestyle() == "None"
              for x, y in zip(line.get_xdata(), line.get_ydata())]
    inside = [(x, y) for x, y in points if x0 <= x <= x1 and y0 <= y <= y1]
    assert len(points) == len(runs) and len(inside) == len(runs) - 1  # the run of the 3.0 peer: its point falls off
    assert x0 > 3.0 and right.get_ylim()[0] > 2.0 and left.get_ylim()[1] < 5.5  # each where the note says


def test_the_two_groups_count_the_gpus_their_runs_name_and_say_how_many_name_none_as_the_header_does():
    """Found by a notebook review: under "44 runs on 28 GPUs (10 runs name none)", the groups read "21 runs on 17
    machines" and "23 runs on 20 machines": each run naming no GPU had counted as a machine of its own. Slower: GPUs A,
    A, B and two runs naming none; faster: C, D, E, A and one naming none."""
    from labkit.workloads.decode.spread import CallSpread, RunRate

    gpus = ["A", "A", "B", None, None, "C", "D", "E", "A", None]
    rates = [4.00, 4.01, 4.02, 4.015, 4.005, 4.40, 4.41, 4.42, 4.43, 4.415]
    runs = tuple(sorted((RunRate(v, "k", 4.2, None, None, None, g or "not recorded", "NVIDIA H200", None, None, "s", "",
                                 f"2026120{i}T000000Z-decode_bench/bench.json") for i, (v, g) in
                         enumerate(zip(rates, gpus))), key=lambda r: r.TBps))
    s = CallSpread("c", runs, len(runs), 0)
    header, *_, slower, faster = spread_table(s).splitlines()
    assert header == "c: the plan's call in 10 runs on 5 GPUs (3 runs record no GPU id)"
    assert slower.startswith("  5 runs on 2 GPUs (2 runs record no GPU id) at 4.000-4.020: ")
    assert faster.startswith("  5 runs on 4 GPUs (1 run records no GPU id) at 4.400-4.430: ")
    low, high = s.step()
    assert low.unnamed + high.unnamed == 3 and low.machines == 4  # the step still counts a run's directory as a machine


def test_runs_of_two_builds_seek_no_step_as_it_would_be_the_builds(capsys):
    """Found asking the recorded runs about 24 x 8k: its 11 H200 runs split into 'two groups', 3.848-3.945 and
    4.089-4.182 TB/s, named like the H200s' two states with their copy and peer medians, and the groups were the plan's
    old build (mma w4s3, 7 runs) and its new one (mma w4s1, 4 runs)."""
    args = ["report", "spread", str(RUNS), "--point", "24x8192", "--device", "NVIDIA H200"]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert " mma w4s3 " in out and " mma w4s1 " in out and "two groups" not in out
    assert out.splitlines()[-1] == ("runs of 2 builds: no step sought, as one between builds may be the builds', not "
                                    "the machines' state; --kernel holds one")
    s = call_spread(read_reports([RUNS]), 24, 8192, 128, device="NVIDIA H200")
    assert s.builds == ("mma w4s1", "mma w4s3") and s.step() is None
    assert cli.main([*args, "--kernel", "mma w4s3"]) == 0
    assert "runs of 2 builds" not in capsys.readouterr().out


def test_a_call_in_no_record_names_the_nearest_recorded_calls_and_how_to_ask_for_one(tmp_path, capsys):
    """`report spread --point 24x6000` had said only 'no row of this call' over 695 reports: the calls beside it were
    there to be named."""
    _report(tmp_path / "a.json", [_row(4.1, batch=24, kv_len=8192), _row(4.2, batch=64, kv_len=8192),
                                  _row(3.9, batch=16, kv_len=4096)])
    # b times 24 x 8k with both kernel variants: one run of it, not two
    _report(tmp_path / "b.json", [_row(4.0, batch=24, kv_len=8192), _row(2.0, batch=24, kv_len=8192, kernel="fma r4s2"),
                                  _row(3.5, batch=1, kv_len=1024)])
    assert cli.main(["report", "spread", str(tmp_path), "--point", "24x6000"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("labkit: error: labkit report spread: 24 x 6000 d128, 32/8 heads, cold: no row of this call in "
                   "the 2 decode reports; the "
                   "nearest recorded at d128, 32/8 heads, cold: 24 x 8k (2 runs), 16 x 4k (1 run), 64 x 8k (1 run), "
                   "1 x 1k (1 run) (--point 24x8192 for the first)")
    # none at that geometry: the pointer to the reports' calls, as before
    assert cli.main(["report", "spread", str(tmp_path), "--point", "24x6000", "--head-dim", "256"]) == 2
    assert capsys.readouterr().err.strip().endswith("no row of this call in the 2 decode reports; labkit report show "
                                                    "FILE lists a report's calls")


def test_a_figure_name_with_a_dot_keeps_it_and_a_figure_that_cannot_be_written_is_refused_before_the_tables(
        tmp_path, capsys):
    """Found by a review: --out figs/run.2026-12-05 wrote figs/run.png (the suffix replaced, another run's figure
    overwritten), a directory named spread.png failed after the table had printed, and a blank --kernel matched no run
    with a refusal that left it unsaid."""
    argv = ["report", "spread", *map(str, BENCHES), "--point", "64x8192"]
    assert cli.main([*argv, "--out", str(tmp_path / "run.2026-12-05")]) == 0
    assert f"figure: {tmp_path / 'run.2026-12-05.png'}\n" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.2026-12-05.png", "run.2026-12-05.svg"]
    assert cli.main([*argv, "--out", str(tmp_path / "given.png")]) == 0  # a .png given: not given.png.png
    assert (tmp_path / "given.png").is_file() and (tmp_path / "given.svg").is_file()
    capsys.readouterr()
    (tmp_path / "taken.png").mkdir()
    assert cli.main([*argv, "--out", str(tmp_path / "taken")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == (f"labkit: error: labkit report spread: --out "
                                 f"{str(tmp_path / 'taken.png')!r}: is a directory; expected a file name\n")
    assert cli.main([*argv, "--kernel", " "]) == 2
    assert "--kernel ' ': expected a build's label as the tables name it, e.g. 'mma w4s1c1'" in capsys.readouterr().err


def test_a_run_naming_no_gpu_is_its_runs_folder_however_the_reports_are_given(monkeypatch):
    """Found by a review: such a run's machine was the first part of the path as typed, so given as data/runs each was
    its run's folder, given as files or as data all were one machine ('data', 'runs'), and whether two groups stood out
    depended on the command line (8 x 8k mma w4s3 on the H200s: two groups, or none)."""
    from labkit.workloads.decode.spread import call_spread

    files = sorted(str(f) for f in RUNS.glob("*/*.json") if '"decode_report_version"' in f.read_text()[:4000])
    monkeypatch.chdir(ROOT)
    spreads = [call_spread(given, 8, 8192, 128, kernel="mma w4s3", device="NVIDIA H200")
               for given in (["data/runs"], files, ["data"])]
    machines = [sorted(r.machine for r in s.runs) for s in spreads]
    assert machines[0] == machines[1] == machines[2] and len(machines[0]) == 12 and len(set(machines[0])) > 10
    assert all(m.startswith("2026") or m.startswith("GPU-") for m in machines[0])
    assert len({tuple((g.runs, g.machines) for g in s.step()) for s in spreads}) == 1


def test_a_figure_path_that_is_a_link_into_a_missing_directory_is_refused_before_the_tables(tmp_path, capsys):
    """Found by reviewing the link check: a figure's --out may create its missing parents, so a dangling link passed,
    and the write failed after the tables."""
    (tmp_path / "fig.png").symlink_to(tmp_path / "missing" / "x.png")
    assert cli.main(["report", "spread", *map(str, BENCHES), "--point", "64x8192", "--out", str(tmp_path / "fig")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and f"a link to {str(tmp_path / 'missing' / 'x.png')!r}, whose directory does not exist" in err


def test_a_spread_over_no_decode_report_says_so_not_no_row(tmp_path, capsys):
    """Found by a CLI review: an empty directory gave "no row of this call in the 0 decode reports"."""
    assert cli.main(["report", "spread", str(tmp_path), "--point", "64x8k"]) == 2
    assert capsys.readouterr().err == f"labkit: error: labkit report spread: no decode report in {tmp_path}\n"
    (tmp_path / "other.json").write_text('{"a": 1}')
    assert cli.main(["report", "spread", str(tmp_path), "--point", "64x8k"]) == 2
    assert capsys.readouterr().err == (f"labkit: error: labkit report spread: no decode report in {tmp_path} (1 other "
                                       "JSON file skipped)\n")
