"""`labkit report map`: labkit against its best peer over batch x kv_len, from decode reports timed with --peers."""

import json

import matplotlib
import numpy as np
import pytest
from matplotlib.image import imread

from labkit import cli, plot
from labkit.errors import ArgumentError, FormatError
from labkit.workloads.decode import report
from labkit.workloads.decode.peer_map import load_maps, map_table, peer_maps
from labkit.workloads.decode.peers import best_peer

from ..conftest import ROOT

matplotlib.use("Agg")
GRID = sorted((ROOT / "data" / "runs" / "20261203T142900Z-decode_grid_bench" / "grid").glob("kv*.json"))
COMPARE = ROOT / "data" / "runs" / "20261203T144000Z-decode_mid_units" / "confirm" / "cmp_13x8192_p64_h32-8.json"
# calls of the grid timed again beside the peers after two plan rules (batch 9-14; batch 2-7 at 1k-4k), on other H200s
RETIMED = [ROOT / "data" / "runs" / "20261203T162200Z-decode_mid_clusters" / "rule_peers" / "rule_peers.json",
           ROOT / "data" / "runs" / "20261203T162200Z-decode_mid_clusters" / "confirm" / "mid_peers.json"]


def test_the_recorded_grid_maps_86_calls_with_batch_12_furthest_behind():
    """The H200 grid of a784899 (six reports, one per kv_len): every cold call beside the peers, its best peer named;
    the table a user reads has the batch-12 row and the count behind."""
    (m,) = load_maps(GRID)
    assert (m.head_dim, m.heads, len(m.cells)) == (128, "32/8", 86)
    assert m.batches == (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256)
    assert m.kv_labels == ("1k", "2k", "4k", "8k", "16k", "32k")
    (b, n), worst = m.behind()[0]
    assert (b, n, worst.best_peer, worst.kernel, worst.splits) == (12, 4096, "sdpa_cudnn", "mma w4s3", 2)
    assert worst.x_best_peer == pytest.approx(0.904, abs=5e-4)
    assert m.runs == (("NVIDIA H200 (GPU-3495a0bd)", "a784899ffce4"),)
    assert m.where == "NVIDIA H200 (GPU-3495a0bd), git a784899ffce4"
    table = map_table(m)
    assert "12     0.93  0.96  0.90  0.92  0.94  0.94" in table
    assert "256    0.99  0.99  1.00  1.01     -     -" in table  # 256 x 16k and x 32k: over the bench's 9 GB
    assert "behind at 39 of 86 calls; furthest: 12 x 4k x 0.904 (sdpa_cudnn)" in table
    frame = m.to_frame()
    assert len(frame) == 86 and frame["x_best_peer"].min() == pytest.approx(worst.x_best_peer)


def _report(tmp_path, name, rows, created=None, device=None):
    prov = json.loads(GRID[0].read_text())["provenance"]
    if created is not None:
        prov["created_utc"] = created
    if device is not None:
        prov["device"]["name"] = device
    return report.write(rows, {}, 4200.0, prov, tmp_path / name)


def _row(batch, kv_len, x, *, mode="cold", peers=True):
    row = {"batch": batch, "kv_len": kv_len, "head_dim": 128, "heads": "32/8", "splits": 1, "kernel": "mma w4s3",
           "mode": mode, "kv_MB": 4 * batch * kv_len * 8 * 128 / 1e6, "p50_us": 2 * batch * kv_len * 8 * 128 / 1e6,
           "TBps": 2.0}
    if peers:
        row.update(sdpa_cudnn=2.0 / x, sdpa_flash=1.0, fa3="not available: fa3-fwd is not installed",
                   labkit_beside_peers=2.0, x_best_peer=x)
    return row


def test_only_cold_calls_timed_beside_a_peer_are_mapped_and_a_call_in_two_reports_is_refused(tmp_path):
    rows = [_row(4, 8192, 0.97), _row(4, 8192, 1.2, mode="graph"), _row(8, 1024, 1.0, peers=False)]
    a = _report(tmp_path, "a.json", rows)
    (m,) = load_maps([a])
    assert list(m.cells) == [(4, 8192)] and m.cells[4, 8192].best_peer == "sdpa_cudnn"  # fa3's reason is not a rate
    b = _report(tmp_path, "b.json", [_row(4, 8192, 1.01)])
    with pytest.raises(ArgumentError, match=r"batch 4 x 8192, d128, 32/8, cold: in both .*a\.json and .*b\.json"):
        load_maps([a, b])
    none = _report(tmp_path, "none.json", [_row(8, 1024, 1.0, peers=False)])
    with pytest.raises(ArgumentError, match="no cold call timed beside the peers"):
        peer_maps([("none.json", report.load(none))])


def test_calls_timed_with_l2_left_clean_make_a_map_of_their_own(tmp_path, capsys):
    # the same call timed with L2 left dirty by the flush and left clean is two results, not one call twice: each
    # mode has its own map, and the clean one says so in its table and its figure
    dirty = _report(tmp_path, "dirty.json", [_row(4, 8192, 0.97), _row(8, 8192, 1.05)])
    clean = _report(tmp_path, "clean.json", [_row(4, 8192, 1.02, mode="cold_clean")])
    maps = load_maps([clean, dirty])
    assert [(m.mode, sorted(m.cells)) for m in maps] == [("cold", [(4, 8192), (8, 8192)]),
                                                          ("cold_clean", [(4, 8192)])]
    assert maps[1].cells[4, 8192].x_best_peer == 1.02 and maps[0].cells[4, 8192].x_best_peer == 0.97
    first, second = (map_table(m).splitlines()[0] for m in maps)
    assert first == "labkit beside the peers / the best peer, d128, 32/8 heads (under 1: behind)"
    assert second == "labkit beside the peers / the best peer, d128, 32/8 heads, L2 left clean (under 1: behind)"
    fig = plot.peer_map(maps[1])
    assert "L2 left clean" in fig.axes[0].get_title()
    assert cli.main(["report", "map", str(clean), str(dirty), "--out", str(tmp_path / "figs" / "map")]) == 0
    figures = [line.split(": ", 1)[1] for line in capsys.readouterr().out.splitlines() if line.startswith("figure: ")]
    assert figures == [str(tmp_path / "figs" / "map_d128_32-8.png"), str(tmp_path / "figs" / "map_d128_32-8_clean.png")]
    assert all(imread(f).shape[0] > 200 for f in figures)  # two pictures: the clean map did not overwrite the other


def test_calls_timed_on_two_gpu_models_make_a_map_each(tmp_path, capsys):
    """The same call on an H100 and an H200 is two results (the peers ran on each), not one timed twice: neither
    replaces the other, and the figures of the two maps are two files."""
    h200 = _report(tmp_path, "h200.json", [_row(4, 8192, 1.02), _row(8, 8192, 1.05)])
    h100 = _report(tmp_path, "h100.json", [_row(4, 8192, 0.99)], device="NVIDIA H100 80GB HBM3")
    maps = load_maps([h200, h100])
    assert [(m.device, sorted(m.cells)) for m in maps] == [("NVIDIA H100 80GB HBM3", [(4, 8192)]),
                                                           ("NVIDIA H200", [(4, 8192), (8, 8192)])]
    assert maps[0].where.startswith("NVIDIA H100 80GB HBM3 (") and maps[1].where.startswith("NVIDIA H200 (")
    assert cli.main(["report", "map", str(h200), str(h100), "--out", str(tmp_path / "map")]) == 0
    figures = [line.split(": ", 1)[1] for line in capsys.readouterr().out.splitlines() if line.startswith("figure: ")]
    assert figures == [str(tmp_path / "map_H100_80GB_HBM3_d128_32-8.png"), str(tmp_path / "map_H200_d128_32-8.png")]


def test_the_best_peer_is_the_fastest_peer_with_a_rate_never_labkit_itself():
    """One rule for the bench's x_best_peer and the map's named peer: a reason is not a rate, labkit beside the peers
    is not a peer."""
    rates = {"sdpa_cudnn": 1.0, "sdpa_flash": 1.2, "fa3": "not available", "labkit_beside_peers": 9.9}
    assert best_peer(rates) == ("sdpa_flash", 1.2)
    assert best_peer({"fa3": "not available", "labkit_beside_peers": 1.0}) is None


def test_newest_takes_the_later_report_of_a_call_and_refuses_two_of_the_same_time(tmp_path):
    a = _report(tmp_path, "a.json", [_row(4, 8192, 0.97), _row(2, 1024, 0.95)], created="2026-12-03T10:00:00+00:00")
    b = _report(tmp_path, "b.json", [_row(4, 8192, 1.01), _row(8, 1024, 1.1)], created="2026-12-03T11:00:00+00:00")
    for order in ([a, b], [b, a]):  # by the reports' times, not the order given
        (m,) = load_maps(order, newest=True)
        assert {k: (c.x_best_peer, c.source) for k, c in m.cells.items()} == {
            (4, 8192): (1.01, str(b)), (2, 1024): (0.95, str(a)), (8, 1024): (1.1, str(b))}
        assert m.replaced == 1 and "1 call in two reports: the later one's" in map_table(m)
    same = _report(tmp_path, "same.json", [_row(4, 8192, 1.0)], created="2026-12-03T11:00:00+00:00")
    with pytest.raises(ArgumentError, match=r"in both .*b\.json and .*same\.json, created at the same time "
                                            r"\(2026-12-03T11:00:00\+00:00\)"):
        load_maps([b, same], newest=True)
    with pytest.raises(ArgumentError, match="give one report per call, or --newest to show the later one's"):
        load_maps([a, b])
    naive = _report(tmp_path, "naive.json", [_row(4, 8192, 1.02)], created="2026-12-03T12:00:00")  # no zone: UTC
    (m,) = load_maps([a, b, naive], newest=True)
    assert (m.cells[4, 8192].source, m.replaced) == (str(naive), 2)
    doc = json.loads(a.read_text())  # a report's reader refuses it now (the writer too), not --newest alone
    doc["provenance"]["created_utc"] = "yesterday"
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(FormatError, match=r"bad\.json: provenance\.created_utc = 'yesterday': expected an ISO 8601"):
        load_maps([a, tmp_path / "bad.json"], newest=True)


def test_newest_over_the_recorded_grid_shows_the_calls_timed_again_after_the_plan_rules():
    """The grid of a784899 with batch 9-14 (the 67-118 unit rule) and batch 2-7 at 1k-4k (the 16-56 unit clusters)
    timed again: 98 calls, 18 of them from the later reports, three runs named."""
    (m,) = load_maps([*GRID, *RETIMED], newest=True)
    assert (len(m.cells), m.replaced, len(m.runs)) == (98, 18, 3)
    two = m.cells[2, 1024]
    assert (two.kernel, two.splits, round(two.x_best_peer, 2)) == ("mma w8s2ef cl4 pp", 4, 1.07)
    assert two.source.endswith("mid_peers.json") and m.cells[12, 4096].source.endswith("rule_peers.json")
    assert m.cells[16, 4096].source.endswith("kv4096.json")  # not timed again: the grid's
    table = map_table(m)
    assert "18 calls in two reports: the later one's" in table
    assert "12     1.00  1.02  0.96  0.98  1.00  1.01" in table and "5      1.13  1.13  1.11     -" in table
    (again,) = load_maps([*RETIMED, *GRID], newest=True)
    assert again.cells == m.cells


def test_the_figure_colours_each_call_by_how_far_from_the_best_peer_and_leaves_untimed_calls_blank():
    (m,) = load_maps(GRID)
    fig = plot.peer_map(m, title="t")
    ax = fig.axes[0]
    grid = ax.images[0].get_array()
    assert grid.shape == (15, 6) and np.isnan(np.ma.filled(grid.astype(float), np.nan)).sum() == 4
    labels = [t.get_text() for t in ax.texts]
    assert len(labels) == 86 and "0.90" in labels and "1.18" in labels
    norm = ax.images[0].norm
    values = np.ma.filled(grid.astype(float), np.nan)
    assert (norm.vcenter, norm.vmin, norm.vmax) == (1.0, np.nanmin(values), np.nanmax(values))  # par white; each end
    # the furthest call its side (a fresh-user review: one reach for both sides, the furthest call ahead's, left calls
    # behind by 1-3 % near white), so the one furthest behind is full red
    behind = ax.images[0].cmap(norm(np.nanmin(values)))
    ticks = fig.axes[1].get_yticks()  # both halves ticked, inside the ends (a tick rounded past one blanked the bar)
    assert ticks.min() >= norm.vmin and ticks.max() <= norm.vmax and (ticks < 1).sum() >= 1 and (ticks > 1).sum() >= 3
    assert np.allclose(ticks * 200, np.round(ticks * 200)), ticks  # round: steps of 0.005 at the finest, not 1.044
    assert behind[0] > 0.35 and behind[2] < 0.2, behind  # RdBu's red end, not its pale middle
    assert [t.get_text() for t in ax.get_xticklabels()] == list(m.kv_labels)
    assert "under 1: behind" in fig.axes[1].get_ylabel()
    default = plot.peer_map(m).axes[0].get_title()
    assert default.endswith("d128, 32/8 heads\nNVIDIA H200 (GPU-3495a0bd), git a784899ffce4")


def test_report_map_prints_the_table_and_writes_the_figure(tmp_path, capsys):
    assert cli.main(["report", "map", *map(str, GRID), "--out", str(tmp_path / "figs" / "map")]) == 0
    out = capsys.readouterr().out
    assert "d128, 32/8 heads" in out and "behind at 39 of 86 calls" in out
    png = tmp_path / "figs" / "map.png"
    assert png.exists() and (tmp_path / "figs" / "map.svg").exists() and f"figure: {png}" in out
    assert imread(png).shape[0] > 400  # a real picture, not an empty canvas
    assert cli.main(["report", "map", *map(str, GRID), *map(str, RETIMED), "--newest"]) == 0
    assert "18 calls in two reports: the later one's" in capsys.readouterr().out


@pytest.mark.parametrize(("files", "message"), [
    (["data/sage2_report_seed.json"], "a Sage2 report; the map reads decode reports"),
    ([str(COMPARE)], "no cold call timed beside the peers"),
    ([str(GRID[0]), str(RETIMED[1])], "give one report per call, or --newest to show the later one's"),
    (["data/no_such_report.json"], "cannot read the report"),
    # found by a CLI review: one file given twice read as two reports of the same calls ("in both F and F")
    ([str(GRID[0]), str(GRID[0]), "--newest"],
     f"labkit: error: labkit report map: {GRID[0]}: given twice; give each report once"),
    ([str(GRID[0]), str(GRID[0].relative_to(ROOT))],
     f"labkit: error: labkit report map: {GRID[0].relative_to(ROOT)}: given twice (as {GRID[0]} and "
     f"{GRID[0].relative_to(ROOT)}); give each report once"),
])
def test_report_map_refuses_what_it_cannot_map_in_one_line(files, message, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert cli.main(["report", "map", *files]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_the_map_names_its_runs_timed_before_the_persisting_l2_reset(capsys):
    """The recorded grid (a784899) was timed before the cold pads reset persisting L2 lines, the 153-call map of
    a0cd66e after: the map says which of its runs may have peers that read FA3's lines from L2."""
    since = sorted((ROOT / "data" / "runs" / "20261204T165000Z-decode_persisting_l2" / "map").glob("*.json"))
    (old,) = load_maps(GRID)
    (new,) = load_maps(since)
    (mixed,) = load_maps([*GRID, *(p for p in since if p.name.startswith("j_behind_small"))], newest=True)
    assert old.before_reset == old.runs and new.before_reset == ()
    assert mixed.before_reset == (("NVIDIA H200 (GPU-3495a0bd)", "a784899ffce4"),) and len(mixed.runs) == 2
    line = (f"timed before {report.PERSISTING_RESET}, or at a commit this checkout cannot place: "
            f"{report.PERSISTING_NOTE}")
    assert f"  1 of 1 run {line}" in map_table(old).splitlines()
    assert report.PERSISTING_NOTE not in map_table(new)
    assert f"  1 of 2 runs {line}" in map_table(mixed).splitlines()
    assert "behind at 24 of 153 calls; furthest: 16 x 4k x 0.973 (sdpa_cudnn)" in map_table(new)


def test_a_map_of_several_runs_is_titled_by_their_count_and_one_without_a_call_timed_twice_says_none(tmp_path):
    """The title line of a map over runs on several GPUs counts them (one run's would name only the first), and a
    map with no call in two reports neither counts replacements nor prints that line."""
    (m,) = load_maps([*GRID, *RETIMED], newest=True)
    assert m.where == "3 runs on 3 GPUs (NVIDIA H200)"
    (one,) = load_maps([_report(tmp_path, "a.json", [_row(4, 8192, 0.97)])])
    assert one.replaced == 0 and "in two reports" not in map_table(one)


def test_a_call_level_with_its_best_peer_is_not_behind(tmp_path):
    """'under 1: behind': a call at exactly the best peer's rate is level, not counted behind."""
    (m,) = load_maps([_report(tmp_path, "a.json", [_row(4, 8192, 1.0), _row(8, 8192, 0.99)])])
    assert [k for k, _ in m.behind()] == [(8, 8192)]
    assert "behind at 1 of 2 calls; furthest: 8 x 8k x 0.990 (sdpa_cudnn)" in map_table(m)


def test_the_map_says_at_how_many_calls_behind_the_rounds_resolve_the_gap(tmp_path):
    """Reports since the rounds' interval: of the calls behind, those whose 95 % interval lies under 1 are behind beyond
    the rounds' noise; a call from an older report (no interval) is not counted either way."""
    rows = [{**_row(4, 8192, 0.97), "x_best_peer_low": 0.96, "x_best_peer_high": 0.98},
            {**_row(8, 8192, 0.999), "x_best_peer_low": 0.994, "x_best_peer_high": 1.003},
            {**_row(16, 8192, 1.01), "x_best_peer_low": 1.0, "x_best_peer_high": 1.02}]
    (m,) = load_maps([_report(tmp_path, "a.json", rows)])
    assert [c.x_best_peer_high for _, c in m.behind()] == [0.98, 1.003]
    assert ("behind at 2 of 3 calls; behind beyond the rounds' noise (95 % interval under 1) at 1 of 2; furthest: "
            "4 x 8k x 0.970 (sdpa_cudnn), 8 x 8k x 0.999 (sdpa_cudnn)") in map_table(m)
    (mixed,) = load_maps([_report(tmp_path, "b.json", [*rows[:2], _row(32, 8192, 0.99)])])
    assert ("behind at 3 of 3 calls; behind beyond the rounds' noise (95 % interval under 1) at 1 of the 2 with an "
            "interval; furthest") in map_table(mixed)


def test_a_call_behind_inside_its_rounds_noise_is_starred_in_the_table_and_the_figure(tmp_path):
    """A pale 0.99 whose interval holds 1 and a resolved 0.99 had read the same in both: the first is marked, and a
    line under each says what the mark means; a call ahead, or one from a report with no interval, is not marked."""
    rows = [{**_row(4, 8192, 0.99), "x_best_peer_low": 0.985, "x_best_peer_high": 0.995},
            {**_row(8, 8192, 0.99), "x_best_peer_low": 0.98, "x_best_peer_high": 1.001},
            {**_row(16, 8192, 1.01), "x_best_peer_low": 0.999, "x_best_peer_high": 1.02}, _row(32, 8192, 0.99)]
    (m,) = load_maps([_report(tmp_path, "a.json", rows)])
    table = map_table(m).splitlines()
    assert [line.split() for line in table[3:7]] == [["4", "0.99"], ["8", "0.99*"], ["16", "1.01"], ["32", "0.99"]]
    assert table[7] == "*: behind by less than the rounds can tell (its 95 % interval holds 1)"
    ax = plot.peer_map(m, title="t").axes[0]
    assert [t.get_text() for t in ax.texts] == ["0.99", "0.99*", "1.01", "0.99"]
    assert ax.get_xlabel().endswith("\n*: behind by less than the rounds can tell (its 95 % interval holds 1)")
    (plain,) = load_maps([_report(tmp_path, "b.json", [rows[0], rows[2], rows[3]])])
    assert "*" not in map_table(plain) and plot.peer_map(plain, title="t").axes[0].get_xlabel() == (
        "KV tokens per sequence")


def test_newest_refuses_a_report_built_in_memory_without_an_iso_time_naming_it(tmp_path):
    """peer_maps takes reports a notebook holds, not only files the reader checked: --newest cannot order a report
    whose created_utc is not an ISO time, and says which report and what it holds."""
    import dataclasses

    a = report.load(_report(tmp_path, "a.json", [_row(4, 8192, 0.97)], created="2026-12-03T10:00:00+00:00"))
    b = report.load(_report(tmp_path, "b.json", [_row(4, 8192, 1.01)], created="2026-12-03T11:00:00+00:00"))
    bad = dataclasses.replace(b, provenance={**b.provenance, "created_utc": "yesterday"})
    with pytest.raises(ArgumentError, match=r"^b\.json: provenance\.created_utc 'yesterday': expected an ISO time, "
                                            r"which --newest compares$"):
        peer_maps([("a.json", a), ("b.json", bad)], newest=True)


def test_a_map_of_calls_all_at_par_draws_and_a_cells_label_is_white_only_on_a_strong_colour():
    """A grid where every call is level with its best peer still draws (its colour scale reaches 0.02 either side of
    1, not 0); a label is white on a cell far from par (dark red or blue), black on one near it (pale)."""
    from labkit.workloads.decode.peer_map import MapCell, PeerMap

    cells = {(b, n): MapCell(1.0, "fa3", "k", 1, "s") for b in (8, 16) for n in (1024, 8192)}
    ax = plot.peer_map(PeerMap(128, "32/8", cells), title="t").axes[0]
    assert (ax.images[0].norm.vmin, ax.images[0].norm.vmax) == pytest.approx((0.98, 1.02))
    assert [t.get_text() for t in ax.texts] == ["1.00"] * 4
    cells[8, 1024] = MapCell(0.8, "fa3", "k", 1, "s")
    cells[16, 8192] = MapCell(0.95, "fa3", "k", 1, "s")
    ax = plot.peer_map(PeerMap(128, "32/8", cells), title="t").axes[0]
    assert [(t.get_text(), t.get_color()) for t in ax.texts] == [("0.80", "white"), ("1.00", "black"),
                                                                 ("1.00", "black"), ("0.95", "black")]


def test_the_colour_bar_ticks_the_red_half_near_its_end_too():
    """Found on the third H100's map (furthest behind x 0.962, ahead x 1.28): the red half had one tick, 0.98, and its
    dark end none. Each half now has round ticks to within a step of its end."""
    from labkit.workloads.decode.peer_map import MapCell, PeerMap

    cells = {(8, 1024): MapCell(0.962, "fa3", "k", 1, "s"), (16, 8192): MapCell(1.28, "fa3", "k", 1, "s")}
    fig = plot.peer_map(PeerMap(128, "32/8", cells), title="t")
    ticks = fig.axes[1].get_yticks()
    assert list(ticks[ticks < 1]) == pytest.approx([0.97, 0.98, 0.99]), ticks
    assert list(ticks[ticks > 1]) == pytest.approx([1.1, 1.2]), ticks


def test_a_map_of_one_call_keeps_its_whole_title_inside_the_figure(tmp_path):
    """Found when titles began to break between phrases: a map of one call was 3 x 1.7 inches, its four title lines
    ran off the top and matplotlib collapsed the axes ("constrained_layout not applied"). Every title line and the
    axes now lie inside the figure."""
    import warnings

    import labkit.plot

    (m,) = load_maps([_report(tmp_path, "one.json", [_row(4, 8192, 0.99)], device="NVIDIA H100 80GB HBM3")])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = labkit.plot.peer_map(m)
        path = labkit.plot.save(fig, tmp_path / "one")  # where titles are fitted to the figure
        fig.canvas.draw()
    box = fig.bbox
    title = fig.axes[0].title.get_window_extent()
    assert box.y0 <= title.y0 and title.y1 <= box.y1 and box.x0 <= title.x0 and title.x1 <= box.x1, (title, box)
    assert fig.axes[0].get_window_extent().height > 0.3 * box.height and path.exists()


def test_each_maps_figure_is_checked_before_any_table_prints(tmp_path, capsys):
    """Found by a review: report map's per-map figure names were never checked, so a directory in the way of one
    failed after the tables."""
    h200 = _report(tmp_path, "h200.json", [_row(4, 8192, 1.02)])
    h100 = _report(tmp_path, "h100.json", [_row(4, 8192, 0.99)], device="NVIDIA H100 80GB HBM3")
    (tmp_path / "map_H200_d128_32-8.svg").mkdir()
    assert cli.main(["report", "map", str(h200), str(h100), "--out", str(tmp_path / "map")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "map_H200_d128_32-8.svg': is a directory; expected a file name" in err
    assert not (tmp_path / "map_H100_80GB_HBM3_d128_32-8.png").exists()


def test_a_bench_of_two_kernel_variants_is_a_map_each(tmp_path, capsys):
    """Found by a review: decode bench --peers --variant mma --variant fma writes a row of each call per variant, which
    the map took for one call timed twice ("in both F and F"), with --newest too."""
    two = _report(tmp_path, "two.json", [_row(4, 8192, 1.02), {**_row(4, 8192, 0.61), "kernel": "fma r2s3"}])
    maps = load_maps([two])
    assert [(m.variant, m.cells[4, 8192].x_best_peer) for m in maps] == [("fma", 0.61), ("mma", 1.02)]
    assert [map_table(m).splitlines()[0] for m in maps] == [
        f"labkit beside the peers / the best peer, d128, 32/8 heads, {v} kernel (under 1: behind)"
        for v in ("fma", "mma")]
    assert cli.main(["report", "map", str(two), "--out", str(tmp_path / "map")]) == 0
    figures = [line.split(": ", 1)[1] for line in capsys.readouterr().out.splitlines() if line.startswith("figure: ")]
    assert figures == [str(tmp_path / "map_d128_32-8_fma.png"), str(tmp_path / "map_d128_32-8_mma.png")]
    assert load_maps([_report(tmp_path, "one.json", [_row(4, 8192, 1.02)])])[0].variant is None  # one: unsaid


def test_a_call_behind_by_less_than_a_thousandth_is_said_under_one():
    """A fresh-user review: report map said "behind at 1 of 11 calls; furthest: 64 x 1k x 1.000", where report show
    said x 0.9998 of the same call."""
    from labkit.workloads.decode.peer_map import under_one

    assert [under_one(x) for x in (0.973, 0.9998, 0.99996, 0.9994)] == ["0.973", "0.9998", "0.99996", "0.999"]
