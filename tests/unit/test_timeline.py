"""Timeline math on synthetic launches with known answers (cta-timeline.md: the 274-CTA spin case)."""

import json
import re

import numpy as np
import pytest

from labkit import plot
from labkit.errors import ArgumentError
from labkit.sched import Timeline, waves


def _spin(n: int, sms: int = 132, t: int = 20_000, jitter: int = 37):
    """n equal CTAs dispatched in order onto one slot per SM, wave after wave."""
    rec = []
    for i in range(n):
        w, sm = divmod(i, sms)
        start = w * (t + jitter) + (i % 7)
        rec.append((i, sm, start, start + t, 1000 * i, 1000 * i + 39_600))
    return np.array(rec)


def test_the_274_cta_spin_launch():
    tl = Timeline(_spin(274), sms=132, ctas_per_sm=1)
    s = tl.stats()
    assert s.waves == 3 and s.ctas_per_wave == (132, 132, 10)
    assert s.slot_efficiency == pytest.approx(274 * 20_000 / (132 * s.makespan_ns))
    assert s.slot_efficiency == pytest.approx(waves(274, 132, 1).efficiency, abs=0.01)  # 0.692 model vs measured
    assert s.sm_efficiency == pytest.approx(s.slot_efficiency)  # one slot per SM: the same thing
    assert s.sm_imbalance == pytest.approx(60_000 / (274 * 20_000 / 132))
    assert s.last_wave_idle_slot_ns == pytest.approx(122 * (s.makespan_ns - 2 * 20_037 - 0), rel=0.01)


def test_two_slots_per_sm_and_uneven_ctas():
    rec = np.array([(0, 0, 0, 100, 0, 0), (1, 0, 10, 50, 0, 0), (2, 0, 50, 150, 0, 0), (3, 1, 0, 200, 0, 0)])
    tl = Timeline(rec, sms=2, ctas_per_sm=2)
    df = tl.frame()
    assert list(df["slot"]) == [0, 1, 1, 0] and list(df["wave"]) == [0, 0, 1, 0]
    s = tl.stats()
    assert s.makespan_ns == 200 and s.busy_ns == 100 + 40 + 100 + 200
    assert s.slot_efficiency == pytest.approx(440 / (4 * 200))
    assert s.sm_efficiency == pytest.approx((150 + 200) / (2 * 200))
    with pytest.raises(ArgumentError, match="ctas_per_sm is too small"):
        Timeline(rec, sms=2, ctas_per_sm=1)
    with pytest.raises(ArgumentError, match="end before they start"):
        Timeline(np.array([(0, 0, 10, 5, 0, 0)]), sms=1, ctas_per_sm=1)
    # found by a CLI review: a stamp past int64 was numpy's traceback, and an unwritten (zero) record among real
    # %globaltimer stamps made a launch of 57 years
    with pytest.raises(ArgumentError, match=r"stamps outside \[0, 2\*\*62\)"):
        Timeline([[0, 0, 2**70, 2**70 + 5, 0, 0]], sms=1, ctas_per_sm=1)
    real = [(i, i, 1_796_158_545_689_815_104 + i, 1_796_158_545_689_884_288, 0, 0) for i in range(1, 4)]
    with pytest.raises(ArgumentError, match=r"records\[0\]: starts 1.8e\+09 s from the other CTAs' median start"):
        Timeline([(0, 0, 0, 10, 0, 0), *real], sms=4, ctas_per_sm=1)


def test_active_ctas_and_how_the_sms_drain():
    tl = Timeline(_spin(274), sms=132, ctas_per_sm=1)  # two full waves, then 10 CTAs
    active = tl.active_ctas(3)
    assert list(active) == [132, 132, 10]
    drain = tl.sm_drain_ns()
    assert len(drain) == 132 and (drain[:10] < 10).all()  # the 10 SMs of the third wave end last
    assert drain[10:] == pytest.approx(20_040, abs=4)  # the rest idle a whole wave period (20,037 ns, +-jitter)
    uneven = Timeline(np.array([(0, 0, 0, 10, 0, 0), (1, 0, 10, 20, 0, 0), (2, 1, 0, 5, 0, 0)]), sms=3, ctas_per_sm=1)
    assert list(uneven.active_ctas(4)) == [2, 1, 1, 1] and list(uneven.sm_drain_ns()) == [0, 15]
    with pytest.raises(ArgumentError, match="bins 0: expected >= 1"):
        tl.active_ctas(0)
    assert list(uneven.active_ctas(np.int64(4))) == [2, 1, 1, 1]  # a notebook's integer (a review)


def test_per_sm_finds_the_sms_whose_equal_ctas_run_shorter():
    """Four SMs, two equal CTAs each, one after the other; SM 2's take 80 ns where the others' take 100, so it sits
    idle 40 ns before the end: the table and the figure name it."""
    rec = [(2 * sm + i, sm, i * d, (i + 1) * d, 0, 0) for sm, d in enumerate((100, 100, 80, 100)) for i in range(2)]
    tl = Timeline(np.array(rec), sms=4, ctas_per_sm=1)
    per = tl.per_sm()
    assert list(per.index) == [0, 1, 2, 3] and list(per["ctas"]) == [2, 2, 2, 2]
    assert list(per["median_cta_ns"]) == [100, 100, 80, 100] and list(per["busy_ns"]) == [200, 200, 160, 200]
    assert list(per["idle_before_end_ns"]) == [0, 0, 40, 0] and list(per["vs_median"]) == [1, 1, 0.8, 1]
    fig = plot.sm_speed(tl)
    ax = fig.axes[0]
    assert list(ax.lines[1].get_xdata()) == [2] and ax.lines[1].get_ydata()[0] == pytest.approx(0.08)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["3 SMs", "1 SM under 0.95 x the median (median -20%)",
                      "median over SMs: 0.1 us (dotted: 0.95 x)"], labels


def test_chrome_trace_and_gantt(tmp_path):
    tl = Timeline(_spin(274), sms=132, ctas_per_sm=1)
    doc = json.loads(tl.chrome_trace(tmp_path / "trace.json").read_text())
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert len(slices) == 274 and slices[0]["dur"] == pytest.approx(20.0)
    assert {e["args"]["wave"] for e in slices} == {0, 1, 2}
    fig = plot.cta_gantt(tl, max_rows=16)
    ax = fig.axes[0]
    assert len(ax.collections) == 16 and ax.get_xlim()[1] == pytest.approx(tl.stats().makespan_ns / 1e3)
    colours = {tuple(c) for bars in ax.collections for c in bars.get_facecolors()}
    assert len(colours) == 3, "the last wave's 10 CTAs are drawn, not only the first 16 SMs"
    assert "16 of 132: the latest waves, those that ended last and first" in ax.get_ylabel()
    # each bar is its CTA's 20 us, in the axis' us from the first start (not ns, nor from 0 ns)
    spans = [p.get_extents() for bars in ax.collections for p in bars.get_paths()]
    assert {round(e.width, 6) for e in spans} == {20.0} and min(e.x0 for e in spans) == 0.0
    assert {round((e.y0 + e.y1) / 2, 6) for e in spans} == set(range(16))  # each on its labelled row
    fig = plot.cta_activity(tl, bins=3)
    ax = fig.axes[0]
    assert list(ax.lines[0].get_ydata()) == [132, 132, 10] and ax.lines[1].get_ydata()[0] == 132  # CTAs, slots
    assert len(ax.lines[2].get_xdata()) == 132  # a tick per SM
    assert "median 20.0 us before the end" in ax.get_legend().get_texts()[2].get_text()


def test_save_load_and_cli(tmp_path, capsys):
    from labkit import cli

    tl = Timeline(_spin(274), sms=132, ctas_per_sm=1)
    path = tl.save(tmp_path / "tl.json")
    again = Timeline.load(path)
    assert again.stats() == tl.stats()
    assert cli.main(["sched", "timeline", str(path), "--trace", str(tmp_path / "t.json")]) == 0
    out = capsys.readouterr().out
    assert "ctas_per_wave          132, 132, 10" in out and "trace:" in out and (tmp_path / "t.json").is_file()
    assert "per SM: median CTA 20.0 us; 0 of 132 SMs under 0.95 x that; the lowest 1.000 x\n" in out
    rec = [(3 * sm + i, sm, i * d, (i + 1) * d, 0, 0) for sm, d in enumerate((100, 80, 80, 100, 100, 80, 100))
           for i in range(3)]  # SMs 1, 2 and 5 run their equal CTAs 20 % shorter
    Timeline(np.array(rec), sms=7, ctas_per_sm=1).save(tmp_path / "fast.json")
    assert cli.main(["sched", "timeline", str(tmp_path / "fast.json")]) == 0
    out = capsys.readouterr().out
    assert ("per SM: median CTA 0.1 us; 3 of 7 SMs under 0.95 x that (ids 1-2, 5; their median -20%); the lowest "
            "0.800 x") in out
    saved = path.read_bytes()  # a trace over its own timeline is refused, the timeline kept (found by a CLI review)
    assert cli.main(["sched", "timeline", str(path), "--trace", str(path)]) == 2
    assert "exists and is a CTA timeline" in capsys.readouterr().err and path.read_bytes() == saved
    bad = json.loads(path.read_text())
    bad["records"][0] = [0, 0, 10, 5, 0, 0]
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    assert cli.main(["sched", "timeline", str(tmp_path / "bad.json")]) == 2
    err = capsys.readouterr().err  # the file, then the record
    assert f"{tmp_path / 'bad.json'}: records[0]: 1 CTA(s) end before they start" in err
    bad["records"][0] = [0, 999, 5, 10, 0, 0]
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    assert cli.main(["sched", "timeline", str(tmp_path / "bad.json")]) == 2
    # a fresh-user review: "(ids 0..999)" beside "expected 0..131" read as a range of its own
    assert (f"bad.json: records[0]: SM id 999: expected 0..{bad['sms'] - 1} (sms = {bad['sms']}); 1 record out of "
            "range, this the first") in capsys.readouterr().err


def test_the_timer_step_comes_from_the_launch_own_stamps():
    rec = _spin(20)
    assert Timeline(rec, sms=132, ctas_per_sm=1).timer_step_ns == 1  # stamps 1 ns apart somewhere
    coarse = _spin(274)  # three waves: stamps spread over 60 us
    coarse[:, 2:4] = coarse[:, 2:4] // 32 * 32 + 1_000_000_000  # a 32 ns timer, an arbitrary epoch
    tl = Timeline(coarse, sms=132, ctas_per_sm=1)
    assert tl.timer_step_ns == 32 and tl.stats().timer_step_ns == 32
    one = Timeline(np.array([(0, 0, 64, 64, 0, 1)]), sms=1, ctas_per_sm=1)
    assert one.timer_step_ns == 0  # a single stamp: no step to see


def test_recorded_h200_timelines_show_the_32_ns_globaltimer():
    from ..conftest import ROOT

    files = sorted((ROOT / "data" / "runs").glob("*-decode_timelines/timeline_*.json"))
    assert files, "no recorded decode timelines in data/runs"
    assert {Timeline.load(f).timer_step_ns for f in files} == {32}


def test_ctas_shorter_than_the_timer_step_and_a_cta_recorded_twice(tmp_path, capsys):
    """Found by a review: a timeline whose CTAs all start and end in the same timer step (the reader takes them: a
    coarse %globaltimer can do that) ended `labkit sched timeline` in a traceback; and a CTA recorded twice was taken
    as two CTAs."""
    from labkit import cli

    rec = _spin(10)
    rec[:, 3] = rec[:, 2]
    s = Timeline(rec, sms=132, ctas_per_sm=1).stats()
    assert (s.ctas, s.sms_used, s.busy_ns, s.sm_imbalance) == (10, 10, 0.0, 1.0)
    Timeline(rec, sms=132, ctas_per_sm=1).save(tmp_path / "zero.json")
    assert cli.main(["sched", "timeline", str(tmp_path / "zero.json")]) == 0
    assert "ctas                   10" in capsys.readouterr().out
    twice = _spin(10)
    twice[4, 0] = 3
    with pytest.raises(ArgumentError, match=r"records\[4\]: CTA 3 again \(records\[3\]; 1 CTA id\(s\) recorded more "):
        Timeline(twice, sms=132, ctas_per_sm=1)
    half = _spin(10)
    half[:5, 3] = half[:5, 2]  # half the SMs' CTAs shorter than a timer step: the imbalance counts those SMs too
    s = Timeline(half, sms=132, ctas_per_sm=1).stats()
    assert s.sms_used == 10 and s.sm_imbalance == pytest.approx(2.0)
    doc = json.loads((tmp_path / "zero.json").read_text())
    doc["records"][4][0] = 3
    (tmp_path / "twice.json").write_text(json.dumps(doc))
    assert cli.main(["sched", "timeline", str(tmp_path / "twice.json")]) == 2
    assert "twice.json: records[4]: CTA 3 again (records[3];" in capsys.readouterr().err


def test_a_one_wave_gantt_shows_the_slots_that_ended_first_and_last():
    """Found by a review: a one-wave call of 128 CTAs drew SMs 0-63 by id and hid the fast SMs the next chart
    points at; the rows kept are the half that ended last and the half that ended first."""
    fast = {88, 89, 102, 103, 114, 115}
    rec = [(sm, sm, 0, (95 if sm in fast else 100) * 1000 + sm, 0, 0) for sm in range(128)]
    fig = plot.cta_gantt(Timeline(np.array(rec), sms=132, ctas_per_sm=1), max_rows=16)
    shown = {int(t.get_text().split()[1].split(".")[0]) for t in fig.axes[0].get_yticklabels()}
    assert fast <= shown and set(range(120, 128)) <= shown and len(shown) == 16
    assert "16 of 128: the latest waves, those that ended last and first" in fig.axes[0].get_ylabel()


def test_a_launch_of_fewer_ctas_than_slots_counts_the_empty_slots_as_idle():
    """10 CTAs on 132 SMs: the 122 slots that never ran a CTA are idle for the whole launch, and the 10 used ones from
    their CTA's end (a test audit: a stats that left the empty slots out passed every test)."""
    rec = [(i, i, i % 7, i % 7 + 20_000 + 13 * i, 0, 0) for i in range(10)]
    s = Timeline(np.array(rec), sms=132, ctas_per_sm=1).stats()
    end = max(r[3] for r in rec)
    assert s.makespan_ns == end - 0
    assert s.last_wave_idle_slot_ns == 122 * s.makespan_ns + sum(end - r[3] for r in rec)


def test_the_same_launch_read_from_another_epoch_is_the_same_launch(tmp_path):
    """%globaltimer counts from an arbitrary epoch (a test audit: every launch here started at 0, so a makespan of
    t1 + t0 and a trace's slices placed from 0 passed). Three SMs of one slot: SM 0 runs CTAs 0 (0-1500 ns) and 1
    (1500-2750), SM 1 a CTA shorter than a timer step at 250, SM 2 one at 0."""
    rec = np.array([(0, 0, 0, 1500, 0, 0), (1, 0, 1500, 2750, 0, 0), (2, 1, 250, 250, 0, 0), (3, 2, 0, 0, 0, 0)])
    later = rec.copy()
    later[:, 2:4] += 1_796_158_545_000_000_000
    for r in (rec, later):
        tl = Timeline(r, sms=3, ctas_per_sm=1)
        s = tl.stats()
        # busy 1500 + 1250 = 2750 ns of 3 slots x 2750
        assert (s.makespan_ns, s.busy_ns, s.slot_efficiency, s.waves) == (2750, 2750, 1 / 3, 2)
        assert list(tl.active_ctas(1)) == [1]  # at 1375 ns only CTA 0 runs
        assert list(tl.sm_drain_ns()) == [0, 2500, 2750]  # SM 0 ends last; SM 1 at 250, SM 2 at 0
        doc = json.loads(tl.chrome_trace(tmp_path / "trace.json").read_text())
        slices = sorted((e["args"]["cta"], e["ts"], e["dur"]) for e in doc["traceEvents"] if e["ph"] == "X")
        assert slices == [(0, 0.0, 1.5), (1, 1.5, 1.25), (2, 0.25, 0.0), (3, 0.0, 0.0)]  # us from the first start


def test_a_timelines_records_are_checked_at_their_edges():
    # a launch's CTAs start within 100 s (MAX_SPAN_NS) of their median start; stamps are under 2**62
    base = [(0, 0, 0, 10, 0, 0), (1, 1, 0, 10, 0, 0)]  # the median start is 0
    Timeline([*base, (2, 0, 100_000_000_000, 100_000_000_010, 0, 0)], sms=2, ctas_per_sm=1)
    with pytest.raises(ArgumentError, match=r"records\[2\]: starts 100 s from the other CTAs' median start"):
        Timeline([*base, (2, 0, 100_000_000_001, 100_000_000_010, 0, 0)], sms=2, ctas_per_sm=1)
    Timeline([[0, 0, 2**62 - 10, 2**62 - 1, 0, 0]], sms=1, ctas_per_sm=1)
    with pytest.raises(ArgumentError, match=r"stamps outside \[0, 2\*\*62\)"):
        Timeline([[0, 0, 2**62 - 10, 2**62, 0, 0]], sms=1, ctas_per_sm=1)
    # the first record whose SM is out of range is named, not the first record on SM 0
    with pytest.raises(ArgumentError, match=r"records\[2\]: SM id 5: expected 0..1 \(sms = 2\); 1 record out of range"):
        Timeline([*base, (2, 5, 20, 30, 0, 0)], sms=2, ctas_per_sm=1)
    # a docs review: a dict per CTA (as the README's braces read) was numpy's TypeError, a traceback
    with pytest.raises(ArgumentError, match=r"timeline records \[\{'clk0': 0, .*\}\]: expected rows of six integers "
                                            r"\(cta, sm, start_ns, end_ns, clk0, clk1\)"):
        Timeline([dict(cta=0, sm=0, start_ns=0, end_ns=10, clk0=0, clk1=0)], sms=1, ctas_per_sm=1)
    # a review: floats had been cut (10.7 -> 10) and strings of digits parsed
    for bad in ("x", "10", 10.7):
        with pytest.raises(ArgumentError, match=re.escape(f"timeline records [(0, 0, 0, {bad!r}, 0, 0)]: expected "
                                                          "rows of six")):
            Timeline([(0, 0, 0, bad, 0, 0)], sms=1, ctas_per_sm=1)
    assert Timeline((row for row in base), sms=2, ctas_per_sm=1).records.shape == (2, 6)  # a generator's rows


def test_a_timeline_the_kernel_never_wrote_is_refused(tmp_path, capsys):
    """Found by a CLI review: a buffer of zeros ([cta, sm, 0, 0, 0, 0] per CTA) read as a launch of makespan 0 at
    efficiency 1; one zero record among real stamps was refused, every record zero was not."""
    from labkit import cli

    zeros = [[i, i % 132, 0, 0, 0, 0] for i in range(264)]
    with pytest.raises(ArgumentError, match=r"every record's four stamps are 0 \(264 CTAs\): records the kernel "
                                            r"never wrote"):
        Timeline(zeros, sms=132, ctas_per_sm=2)
    good = tmp_path / "good.json"
    Timeline(_spin(264), sms=132, ctas_per_sm=2).save(good)
    doc = {**json.loads(good.read_text()), "records": zeros}
    (tmp_path / "zeros.json").write_text(json.dumps(doc))
    assert cli.main(["sched", "timeline", str(tmp_path / "zeros.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "zeros.json: every record's four stamps are 0 (264 CTAs)" in err, err


def test_the_timer_step_is_the_gcd_of_every_offset_one_step_included():
    # stamps 0, 1, 64 and 128 ns from the first: a 1 ns step (64 ns were the step, the stamp at 1 could not be)
    tl = Timeline(np.array([(0, 0, 0, 64, 0, 0), (1, 1, 1, 128, 0, 0)]), sms=2, ctas_per_sm=1)
    assert tl.timer_step_ns == 1


def test_a_saved_timeline_with_other_fields_is_refused():
    from labkit.errors import FormatError

    doc = Timeline(_spin(3), sms=132, ctas_per_sm=1).to_dict()
    with pytest.raises(FormatError, match=r"t.json: fields = .*: expected the fields \['cta', 'sm', 'start_ns'"):
        Timeline.from_dict({**doc, "fields": ["sm", "cta", *doc["fields"][2:]]}, source="t.json")


def test_an_sm_at_exactly_the_fast_share_is_not_under_it():
    # SM 1's CTAs take 95 ns where the others' take 100: 95 / 100 = 0.95 = FAST_SM, not under it; SM 2's 90 are
    rec = [(2 * sm + i, sm, i * d, (i + 1) * d, 0, 0) for sm, d in enumerate((100, 95, 90, 100, 100)) for i in range(2)]
    line = Timeline(np.array(rec), sms=5, ctas_per_sm=1).fast_sms()
    assert "1 of 5 SMs under 0.95 x that (ids 2; their median -10%); the lowest 0.900 x" in line
    instant = [(sm, sm, 64, 64, 0, 0) for sm in range(5)]  # a review: CTAs under the timer's step read "lowest nan x"
    assert Timeline(np.array(instant), sms=5, ctas_per_sm=1).fast_sms() == (
        "per SM: median CTA 0.0 us, under the timer's step: no SM's CTAs compared")
    # the figure says the same: SM 1 at exactly 0.95 x is drawn with the others, SM 2 marked; the dotted line at
    # 0.95 x the median, and the axis down far enough to show an SM that runs at half the median
    ax = plot.sm_speed(Timeline(np.array(rec), sms=5, ctas_per_sm=1)).axes[0]
    assert list(ax.lines[1].get_xdata()) == [2]
    dotted = next(line for line in ax.lines if line.get_linestyle() == ":")
    assert dotted.get_ydata()[0] == pytest.approx(0.95 * 0.1)
    half = [(2 * sm + i, sm, i * d, (i + 1) * d, 0, 0) for sm, d in enumerate((100, 50, 100, 100)) for i in range(2)]
    lo, hi = plot.sm_speed(Timeline(np.array(half), sms=4, ctas_per_sm=1)).axes[0].get_ylim()
    assert lo < 0.05 < 0.1 < hi


def test_the_gantt_and_activity_charts_of_a_launch_from_another_epoch_are_in_us_from_its_first_start():
    """The 274-CTA spin launch stamped from a later %globaltimer epoch (the charts' other tests start at 0): the gantt's
    bars and the activity's bins sit in us from the first start, the axes end at the makespan, and the legend names
    every wave."""
    rec = _spin(274)
    rec[:, 2:4] += 1_796_158_545_000_000_000
    tl = Timeline(rec, sms=132, ctas_per_sm=1)
    end_us = tl.stats().makespan_ns / 1e3
    ax = plot.cta_gantt(tl, max_rows=16).axes[0]
    spans = [p.get_extents() for bars in ax.collections for p in bars.get_paths()]
    assert min(e.x0 for e in spans) == 0.0 and max(e.x1 for e in spans) == pytest.approx(end_us)
    assert ax.get_xlim() == pytest.approx((0, end_us))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["wave 0", "wave 1", "wave 2"]
    ax = plot.cta_activity(tl, bins=3).axes[0]
    assert ax.get_xlim() == pytest.approx((0, end_us))
    assert list(ax.lines[0].get_xdata()) == pytest.approx([end_us / 6, end_us / 2, 5 * end_us / 6])  # bin centres


def test_the_reader_takes_the_ctas_per_sm_that_sched_waves_takes(tmp_path, capsys):
    """Found by a CLI review: sched timeline read ctas_per_sm 64 (its reader's range was 1..64) while sched waves
    refused 33 ('an SM of sm_80..sm_100 holds at most 32'): one bound, the SM's."""
    from labkit import cli
    from labkit.sched.occupancy import MAX_CTAS_PER_SM

    doc = json.loads(Timeline(_spin(274), sms=132, ctas_per_sm=1).save(tmp_path / "tl.json").read_text())
    for per_sm, rc in ((MAX_CTAS_PER_SM, 0), (MAX_CTAS_PER_SM + 1, 2), (64, 2)):
        path = tmp_path / f"per_sm{per_sm}.json"
        path.write_text(json.dumps({**doc, "ctas_per_sm": per_sm}))
        assert cli.main(["sched", "timeline", str(path)]) == rc
        err = capsys.readouterr().err
        assert rc == 0 or err == (f"labkit: error: labkit sched timeline: {path}: ctas_per_sm = {per_sm}: expected "
                                  f"an integer in "
                                  f"[1, {MAX_CTAS_PER_SM}]\n"), err
        assert cli.main(["sched", "waves", "--ctas", "274", "--ctas-per-sm", str(per_sm)]) == rc
        assert rc == 0 or f"--ctas-per-sm {per_sm}: expected 1..{MAX_CTAS_PER_SM}" in capsys.readouterr().err
    # and a Timeline made in Python: one the reader refuses is not made (it had been saved, then not read back)
    with pytest.raises(ArgumentError, match=f"ctas_per_sm 64: expected 1..{MAX_CTAS_PER_SM}"):
        Timeline(_spin(274), sms=132, ctas_per_sm=64)


def test_a_recorded_launch_counts_the_same_active_ctas_from_its_own_epoch_and_from_zero():
    """Found by a review: the bins' midpoints were floats of ~1.8e18 ns, 256 ns apart, so CTAs ending near one were
    miscounted, 3-4 of 20 bins of every recorded decode timeline (the last, the drain, by 10 CTAs)."""
    from ..conftest import ROOT

    files = sorted((ROOT / "data" / "runs").glob("*-04_cta_scheduling/data/decode_timeline.json"))
    assert len(files) >= 3, "no recorded notebook 04 decode timelines in data/runs"
    for f in files:
        recorded = Timeline.load(f)
        assert recorded.records[:, 2].min() > 2**60  # a real %globaltimer epoch
        rebased = recorded.records.copy()
        rebased[:, 2:4] -= recorded.records[:, 2].min()
        from_zero = Timeline(rebased, sms=recorded.sms, ctas_per_sm=recorded.ctas_per_sm)
        for bins in (7, 20, 333):
            assert list(recorded.active_ctas(bins)) == list(from_zero.active_ctas(bins)), (f.parent.parent.name, bins)


def test_a_cta_shorter_than_a_timer_step_frees_its_slot_for_one_starting_in_that_step():
    """Found by a review: CTAs of an SM were placed by start, then id, so a one-step CTA with the higher id came after
    the CTA starting in its step and found its one slot taken: a valid timeline refused."""
    for short_id, long_id in ((7, 3), (3, 7)):
        rec = np.array([(long_id, 0, 1000, 2000, 0, 0), (short_id, 0, 1000, 1000, 0, 0)])
        s = Timeline(rec, sms=1, ctas_per_sm=1).stats()
        assert (s.waves, s.ctas_per_wave) == (2, (1, 1))
