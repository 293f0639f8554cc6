"""Session.sweep live and recorded (demo.sleep), and notebook 04 end to end on a faked GPU: run live into
a tmp run directory, then rendered in recorded mode from a synthetic recorded run in a tmp data root
(nothing is written to data/runs)."""

import json
import re
import shutil

import pandas as pd
import pytest

from labkit import notebooks
from labkit.errors import LabkitError
from labkit.session import Session
from labkit.workloads.decode.plan import plan_call
from labkit.workloads.decode.run import geometry_for

from ..conftest import ROOT, execute_notebook_source
from .test_sched_points import FakePlan, _fake_device, uniform_timeline

NB = ROOT / "notebooks" / "04_cta_scheduling.py"


def _recorded_run(root, name, data_dir, params):
    run = root / "runs" / f"20260101T000000Z-{name}"
    shutil.copytree(data_dir, run / "data")
    (run / "run.json").write_text(json.dumps({
        "run_json_version": 2, "notebook": name, "parameters": params, "ok": True, "error": None,
        "session": {"mode": "live"}, "provenance": {"device": {"name": "NVIDIA H200"},
                                                    "created_utc": "2026-01-01T00:00:00Z", "git_sha": "0" * 40}}))
    return run


def test_session_sweep_live_then_recorded_and_damage_named(tmp_path, monkeypatch, capsys):
    live = Session("nbx", "live", tmp_path / "live", None, "test")
    df = live.sweep("demo", "demo.sleep", {"ms": [1, 2, 3]}, tag="a")
    out = capsys.readouterr().out
    assert "[3/3 done, 0 failed, eta" in out and "3 ok, 0 failed" in out
    assert list(df["ms"]) == [1, 2, 3] and set(df["tag"]) == {"a"}
    sweep_dir = tmp_path / "live" / "data" / "sweeps" / "demo"
    assert len(list((sweep_dir / "points").glob("*.json"))) == 3
    run = _recorded_run(tmp_path, "nbx", tmp_path / "live" / "data", {"n": 1})
    rec = Session.start("nbx", source="recorded", out_dir=tmp_path / "rec", parameters={"n": 1},
                        runs_root=tmp_path / "runs")
    again = rec.sweep("demo", "demo.sleep", {"ms": [1, 2, 3]}, tag="a")
    pd.testing.assert_frame_equal(again, df)
    assert (tmp_path / "rec" / "data" / "sweeps" / "demo" / "sweep.json").is_file()
    assert list(rec.sweep("demo", "demo.sleep", {"ms": [2]}, tag="a")["ms"]) == [2]  # a part of it: its points
    with pytest.raises(LabkitError, match="sweep.json: a sweep of demo.sleep over"):
        rec.sweep("demo", "demo.sleep", {"ms": [1, 4]}, tag="a")
    points = sorted((run / "data" / "sweeps" / "demo" / "points").glob("*.json"))
    points[1].write_text(points[1].read_text()[:40])
    with pytest.raises(LabkitError) as err:
        rec.sweep("demo", "demo.sleep", {"ms": [1, 2, 3]}, tag="a")
    assert str(points[1]) in str(err.value) and "\n" not in str(err.value)
    points[1].unlink()
    with pytest.raises(LabkitError, match=r"\.json: missing; point \{'ms': \d, 'tag': 'a'\}"):
        rec.sweep("demo", "demo.sleep", {"ms": [1, 2, 3]}, tag="a")
    with pytest.raises(LabkitError, match="holds no sweep other"):
        rec.sweep("other", "demo.sleep", {"ms": [1]})


def test_a_failed_point_stops_the_notebook_naming_its_file(tmp_path):
    live = Session("nbx", "live", tmp_path, None, "test")
    with pytest.raises(LabkitError, match=r"points/[0-9a-f]{16}\.json: point .* failed: RuntimeError: demo.sleep"):
        live.sweep("demo", "demo.sleep", {"ms": [1]}, fail="yes")


def test_default_tail_points_are_the_seeds():
    seed = json.loads((ROOT / "data" / "sage2_report_seed.json").read_text())["tail_study"]
    p = notebooks.parameters("04")
    assert p["q_lens"].default == [t["q_len"] for t in seed if t["sweep"].startswith("q_")]
    assert p["kv_lens"].default == [t["kv_len"] for t in seed if not t["sweep"].startswith("q_")]
    assert len(p["q_lens"].default) + len(p["kv_lens"].default) == 6


def _execute(params: dict) -> dict:
    return execute_notebook_source(NB, params)


SMALL = {"shape": [1, 4352, 10, 128], "q_lens": [4224, 4225, 4352], "kv_lens": [4288, 4289, 4352],
         "gantt_q_len": 640, "decode_kv_lens": [8192], "decode_batches": [1, 8, 64], "decode_splits": [1, 3, 5],
         "decode_splits_batch": 8, "launches": 1, "workload": "both"}


def test_notebook_04_live_on_a_faked_gpu_then_recorded(tmp_path, monkeypatch):
    import matplotlib

    import labkit._env
    import labkit.session
    from labkit.sched import measure as sched
    from labkit.workloads.decode import run as decode_run

    matplotlib.use("Agg")
    _fake_device(monkeypatch)
    monkeypatch.setattr(sched, "_sage2_plan", lambda shape: FakePlan(shape))
    # uniform CTAs at the CTAs per SM of the build the plan takes for each call (1 at batch 8, 4 at 64)
    # (as the real one: splits None is the plan's own call, a count the build plan_call gives that count)
    def fake_decode_timeline(b, kv, d, *, heads_q, heads_kv, page_size, splits):
        plan = plan_call(geometry_for(b, kv, heads_q=heads_q, heads_kv=heads_kv, head_dim=d, page_size=page_size),
                         splits=splits)
        return uniform_timeline(plan.splits * heads_kv * b, ctas_per_sm=plan.ctas_per_sm)

    monkeypatch.setattr(decode_run, "decode_timeline", fake_decode_timeline, raising=False)
    monkeypatch.setattr(labkit.session, "gpu_status", lambda: (True, "a faked GPU (test)"))
    live = _execute({**SMALL, "source": "live", "out_dir": str(tmp_path / "live")})
    assert live["session"].live
    figs = {p.stem for p in (tmp_path / "live" / "figs").glob("*.png")}
    assert figs == {"sage2_gantt", "sage2_efficiency", "decode_gantt", "decode_activity", "decode_sm_speed",
                    "decode_sched_8192"}
    pts = pd.read_csv(tmp_path / "live" / "data" / "sage2_points.csv")
    assert list(pts["q_len"]) == [4224, 4225, 4352, 4352, 4352, 4352]
    assert pts["measured_minus_model"].abs().max() < 1e-12  # uniform CTAs: the timeline is the wave model
    # the decode build at batch 8 x 8k (one 8-warp CTA per SM) is bound by both
    assert {lim.strip() for row in live["occ"]["limiter"] for lim in row.split(",")} >= {"registers", "shared_memory"}
    dec = pd.read_csv(tmp_path / "live" / "data" / "decode_points.csv")
    assert dec["measured_minus_model"].abs().max() < 1e-12  # each point modelled with its own build's slots
    # batch 1: 8 splits in clusters of 8, 64 CTAs of the 120 the H200 holds in such clusters
    assert list(dec[dec["sweep"] == "batch"]["waves"]) == pytest.approx([64 / 120, 128 / 132, 512 / 528])
    # the split sweep's counts run the build plan_call gives each (2 splits asked for: the 4-warp build, 2 per SM)
    assert list(dec[dec["sweep"] == "splits"]["slots"]) == [264, 264, 264]
    # the Gantt's call is the plan's own: its CTAs per SM are the occupancy table's decode row's
    gantt_json = (tmp_path / "live" / "data" / "decode_timeline.json").read_text()
    gantt = labkit.sched.Timeline.from_dict(json.loads(gantt_json))
    assert gantt.ctas_per_sm == int(live["occ"]["ctas_per_sm"].iloc[-1]) == 1
    # and the charts of that call name it; the table names each point's build
    assert live["decode_call"] == "2 splits, mma w8s2 cl2 pp"
    assert list(dec["kernel"]) == ["mma w4s3"] * 3 + ["mma w8s3ef cl8 pp", "mma w8s2 cl2 pp", "mma w4s1c1"]

    monkeypatch.setattr(labkit.session, "gpu_status", lambda: (False, "no GPU (test)"))
    monkeypatch.setattr(sched, "_sage2_plan", lambda shape: pytest.fail("recorded mode must not launch"))
    params = {**{k: p.default for k, p in notebooks.parameters("04").items()}, **SMALL, "source": "auto"}
    params.pop("out_dir", None)
    _recorded_run(tmp_path, "04_cta_scheduling", tmp_path / "live" / "data", params)
    monkeypatch.setattr(labkit._env, "data_dir", lambda: tmp_path)
    rec = _execute({**SMALL, "source": "recorded", "out_dir": str(tmp_path / "rec")})
    assert not rec["session"].live
    for table in ("sage2_points", "decode_points", "occupancy"):
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "rec" / "data" / f"{table}.csv"),
                                      pd.read_csv(tmp_path / "live" / "data" / f"{table}.csv"))
    assert {p.stem for p in (tmp_path / "rec" / "figs").glob("*.png")} == figs
    with pytest.raises(LabkitError, match="no recorded run of 04_cta_scheduling was measured with launches=2"):
        _execute({**SMALL, "launches": 2, "source": "recorded", "out_dir": str(tmp_path / "rec2")})
    # the run of both workloads answers one of them: its Sage2 half, without the decode kernel's occupancy row
    only = _execute({**SMALL, "workload": "sage2", "source": "recorded", "out_dir": str(tmp_path / "rec3")})
    assert only["session"].recorded.covering == {"workload": "both"}
    assert "except workload='both', which covers the workload asked for" in only["session"].banner()
    assert {p.stem for p in (tmp_path / "rec3" / "figs").glob("*.png")} == {"sage2_gantt", "sage2_efficiency"}
    assert list(pd.read_csv(tmp_path / "rec3" / "data" / "occupancy.csv")["kernel"]) == [
        "sage2 mainloop", "sage2 mainloop, -DLABKIT_TIMELINE"]


def test_notebook_04_refuses_a_split_count_past_the_pages_before_anything_is_measured(tmp_path, monkeypatch):
    """Found by a CLI review: decode_splits 2 at 64 tokens (one page) passed the notebook's check, and `sweep run`
    refuses that point; live, the Sage2 part would have run first and the split sweep stopped after it."""
    import labkit.session
    from labkit.errors import ArgumentError
    from labkit.sched import measure as sched

    _fake_device(monkeypatch)
    monkeypatch.setattr(sched, "_sage2_plan", lambda shape: pytest.fail("measured before the check"))
    monkeypatch.setattr(labkit.session, "gpu_status", lambda: (True, "a faked GPU (test)"))
    bad = {**SMALL, "decode_kv_lens": [64], "decode_splits": [1, 2], "source": "live", "out_dir": str(tmp_path)}
    with pytest.raises(ArgumentError, match=r"^decode call batch 8 x 64 tokens, 2 splits: splits 2: expected 0 "
                                            r"\(the plan's\) \.\. 1 \(one per page, at most 256\)$"):
        _execute(bad)
    assert not (tmp_path / "data" / "sweeps").exists()


def test_crosscheck_join_reads_ncus_counters_by_range():
    from labkit.sched.crosscheck import join

    row = {"shape": "1x4352x10x128", "ctas": 340, "model_waves": 340 / 264, "model_wave_efficiency": 340 / 528,
           "slot_efficiency": 0.64, "sm_efficiency": 0.65, "timeline_ctas_per_sm_min": 2,
           "timeline_ctas_per_sm_max": 3}
    table = pd.DataFrame([{"nvtx": "sched/1x4352x10x128", "kernel": k, "sm_cycles_active_avg": 650.0 if main else 9.0,
                           "sm_cycles_active_max": 1000.0, "sm_ctas_launched_min": 2, "sm_ctas_launched_max": 3,
                           "waves": 1.2879} for k, main in (("cupy_fill", False), ("attn_fwd", True))])
    (c,) = join([row], table)
    assert c.ncu_sm_active_ratio == 0.65 and c.sm_efficiency_minus_ncu == pytest.approx(0.0)
    assert (c.ncu_ctas_per_sm_min, c.ncu_ctas_per_sm_max) == (2, 3)
    with pytest.raises(LabkitError, match="0 launches in range sched/1x8448x4x128"):
        join([{**row, "shape": "1x8448x4x128"}], table)
    assert join([row])[0].ncu_sm_active_ratio is None


_ROW = {"shape": "1x4352x10x128", "ctas": 340, "model_waves": 340 / 264, "model_wave_efficiency": 340 / 528,
        "slot_efficiency": 0.64, "sm_efficiency": 0.65, "timeline_ctas_per_sm_min": 2, "timeline_ctas_per_sm_max": 3}


def test_crosscheck_rows_carry_the_timeline_minus_ncu_and_refuse_two_launches_in_a_range():
    """The table's last column is the timeline's SM efficiency minus ncu's active ratio (None without ncu); a range
    holding two mainloop launches is refused, not averaged; the range is matched by its end (ncu adds the domain)."""
    from labkit.sched.crosscheck import DEFAULT_SHAPES, join, label

    assert [label(s) for s in DEFAULT_SHAPES] == ["1x37810x56x128", "1x8448x4x128", "1x4352x10x128"]
    table = pd.DataFrame([{"nvtx": f"labkit@sched/{_ROW['shape']}", "kernel": "attn_fwd(int8*, ...)",
                           "sm_cycles_active_avg": 600.0, "sm_cycles_active_max": 800.0, "sm_ctas_launched_min": 1,
                           "sm_ctas_launched_max": 3, "waves": 1.2879}])
    (c,) = join([_ROW], table)
    d = c.to_dict()
    assert d["ncu_sm_active_ratio"] == 0.75 and d["sm_efficiency_minus_ncu"] == pytest.approx(0.65 - 0.75)
    assert (d["ncu_ctas_per_sm_min"], d["ncu_ctas_per_sm_max"], d["ncu_waves"]) == (1, 3, 1.2879)
    assert {k: d[k] for k in _ROW} == _ROW
    assert join([_ROW])[0].to_dict()["sm_efficiency_minus_ncu"] is None
    with pytest.raises(LabkitError, match=r"ncu report: 2 launches in range sched/1x4352x10x128, expected 1"):
        join([_ROW], pd.concat([table, table]))


def test_overhead_refuses_bad_arguments_before_the_gpu():
    from labkit.cuda import gpu_available
    from labkit.errors import ArgumentError, NoGPU
    from labkit.sched.crosscheck import overhead

    with pytest.raises(ArgumentError, match="iterations 0"):
        overhead((1, 1024, 8, 128), iterations=0)
    with pytest.raises(ArgumentError, match="head_dim 7"):
        overhead((1, 1024, 8, 7))
    if not gpu_available():
        with pytest.raises(NoGPU, match="the timeline overhead A/B needs a CUDA GPU"):
            overhead((1, 1024, 8, 128), iterations=1)


UNIT_NS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def test_notebook_04_shows_timeline_times_in_us_or_ms_and_saves_them_in_ns(tmp_path):
    """Found by a UX review: the timeline statistics showed raw nanosecond floats (``busy_ns 532653152.0``)."""
    from labkit.cuda import gpu_available
    from labkit.sched import Timeline

    if gpu_available():
        pytest.skip("this machine has a GPU: the notebook would run live")
    res = notebooks.run("04", {}, out_root=tmp_path, timeout_s=600)  # the recorded runs of data/runs
    assert res.ok, res.error
    nb = json.loads(res.notebook.read_text())
    shown = [text for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
             if (text := "".join(o.get("data", {}).get("text/plain", ""))).split("\n")[0].strip() == "measured"]
    assert len(shown) == 2 and "busy_ns" not in "".join(shown)
    for table, key in zip(shown, ("sage2_timeline", "decode_timeline")):
        saved = json.loads((ROOT / res.recorded_from / "data" / f"{key}.json").read_text())
        stats = Timeline.from_dict(saved).stats()
        for field in ("makespan_ns", "busy_ns", "last_wave_idle_slot_ns", "timer_step_ns"):
            summed = " summed over slots" if field in ("busy_ns", "last_wave_idle_slot_ns") else ""
            value, unit = re.search(rf"^{field.removesuffix('_ns')} +(\S+) (ns|us|ms|s){summed}$", table, re.M).groups()
            assert 1 <= float(value) < 1000 or getattr(stats, field) == 0, (field, value, unit)  # the fitting unit
            assert float(value) * UNIT_NS[unit] == pytest.approx(getattr(stats, field), rel=5e-4), field
    # the files keep their nanoseconds: a saved table's makespan column is the one other code reads
    assert "makespan_us" in (res.run_dir / "data" / "sage2_points.csv").read_text().splitlines()[0]


def _html_columns(html: str) -> dict[str, list[str]]:
    """A DataFrame's HTML (row-number index) as its column names to the cells shown, row by row."""
    header = [h for h in re.findall(r"<th>([^<]*)</th>", html.split("</thead>")[0]) if h]
    rows = [re.findall(r"<td>([^<]*)</td>", row) for row in html.split("<tbody>")[1].split("</tr>")[:-1]]
    return {name: [row[i] for row in rows] for i, name in enumerate(header)}


def test_notebook_04_shows_its_model_and_points_tables_rounded_and_saves_every_digit(tmp_path):
    """Found by a UX review: the points tables showed ``makespan_us`` 120281.056 and efficiencies at six decimals.
    The notebook shows them rounded to what they resolve (makespans to 0.1 us: the timer steps 32 ns; the model's
    waves to 0.01, as its text quotes them; ratios to 1e-4); the CSVs, which other code reads, keep every digit."""
    from labkit.cuda import gpu_available

    if gpu_available():
        pytest.skip("this machine has a GPU: the notebook would run live")
    res = notebooks.run("04", {}, out_root=tmp_path, timeout_s=600)  # the recorded runs of data/runs
    assert res.ok, res.error
    nb = json.loads(res.notebook.read_text())
    tables = [html for c in nb["cells"] for o in c.get("outputs", [])
              if "wave_efficiency" in (html := "".join(o.get("data", {}).get("text/html", "")))]
    most_decimals = {"makespan_us": 1, "waves": 2}  # any other float: 4
    saved_digits = 0
    for html, csv in zip(tables, ("sage2_model", "sage2_points", "decode_points"), strict=True):
        shown, saved = _html_columns(html), pd.read_csv(res.run_dir / "data" / f"{csv}.csv")
        assert "waves" in shown and ("makespan_us" in shown or csv == "sage2_model"), (csv, list(shown))
        for name in [n for n in shown if saved[n].dtype.kind == "f"]:
            decimals = max(len(c.partition(".")[2]) for c in shown[name])
            assert decimals <= most_decimals.get(name, 4), (csv, name, shown[name])
            # rounded, not cut or moved: each cell within half its last shown digit of the saved value
            assert [float(c) for c in shown[name]] == pytest.approx(list(saved[name]), abs=0.5 * 10**-decimals + 1e-9)
            saved_digits = max(saved_digits, *(len(repr(v).partition(".")[2]) for v in saved[name]))
    assert saved_digits > 4  # the CSVs keep what the tables round


def test_the_models_reach_the_default_sweeps_whatever_points_are_measured_and_name_their_sweep():
    """Found by a notebook review: notebook 04 drew its decode models over 1..the largest count and batch asked for,
    so `-p decode_batches 1 -p decode_splits 1` drew no model line at all; and the Sage2 model table listed the full
    shape twice with nothing to tell the q sweep's row from the kv sweep's."""
    from labkit.sched import study

    split_model, batch_model = study.decode_models(8, 8192, 1, 1, sms=132, head_dim=128, page_size=64, heads_q=32,
                                                   heads_kv=8)
    assert list(split_model["splits"]) == list(range(1, study.MODEL_SPLITS + 1))
    assert list(batch_model["batch"]) == list(range(1, study.MODEL_BATCHES + 1))
    assert len(study.decode_models(8, 8192, 64, 256, sms=132, head_dim=128, page_size=64, heads_q=32,
                                   heads_kv=8)[1]) == 256  # more where more is asked for
    model = study.sage2_tail_model((1, 37810, 56, 128), [37760, 37810], [37810], sms=132, ctas_per_sm=1)
    assert model[["sweep", "q_len", "kv_len"]].values.tolist() == [["q", 37760, 37810], ["q", 37810, 37810],
                                                                    ["kv", 37810, 37810]]


def test_the_measured_waves_notebook_04_quotes_are_the_newest_h200_records():
    """A review found the text's '5 beside 3.88 at 32 splits' where the table beside it had 3.88 at 16 splits (and 9
    beside 7.76 at 32): each quoted pair is checked against the newest recorded H200 run's split sweep."""
    text = NB.read_text()
    quoted = re.search(r"(\d+) beside ([\d.]+) at (\d+) splits of batch (\d+) at 8k on the H200s, "
                       r"(\d+) beside ([\d.]+) at (\d+)\)", text.replace("\n# ", " "))
    assert quoted, "the sentence that quotes the measured waves"
    newest = sorted((ROOT / "data" / "runs").glob("*-04_cta_scheduling/data/decode_points.csv"))[-1]
    run = json.loads((newest.parents[1] / "run.json").read_text())
    assert run["provenance"]["device"]["name"] == "NVIDIA H200"
    points = pd.read_csv(newest)
    splits = points[(points["sweep"] == "splits") & (points["kv_len"] == 8192)]
    measured, model, count, batch, measured2, model2, count2 = quoted.groups()
    assert (splits["batch"] == int(batch)).all()
    for m, w, n in ((measured, model, count), (measured2, model2, count2)):
        row = splits[splits["splits"] == int(n)].iloc[0]
        assert (int(row["measured_waves"]), f"{row['waves']:.{len(w.split('.')[1])}f}") == (int(m), w), n
