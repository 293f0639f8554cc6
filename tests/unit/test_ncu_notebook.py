"""Notebook 05 without a GPU: its case plan, the summary read from the shared fixture report, the tables and the
recorded path rendered from a synthetic summary in a temporary runs root (nothing is written to data/runs)."""

import base64
import dataclasses
import json
import math
import re
import statistics
from pathlib import Path

import pytest

from labkit import notebooks
from labkit.errors import ArgumentError, FormatError, LabkitError, NcuError
from labkit.ncu import study, tables
from labkit.ncu.cases import CasePlan, decode_cases, sage2_cases
from labkit.ncu.summary import NcuSummary, attribution_of, counter_rows, rule_rows

from ..conftest import ROOT, SHARED, as_read

FIXTURE = SHARED / "fixtures" / "ncu"
needs_fixture = pytest.mark.skipif(not (FIXTURE / "rep_main.ncu-rep").is_file(), reason="no shared ncu fixture")
NAMES = ["fused_line", "fused_plain", "fused_cubin", "saxpy"]
FIGS = ("event_vs_ncu", "time_vs_counters", "phases_fused_line", "stalls_fused_line")


def test_case_plan_is_checked_without_a_gpu(tmp_path):
    s = sage2_cases([1, 37810, 56, 128], [37760, 37810], [37761])
    assert [c.name for c in s] == ["sage2_seed", "sage2_q37760", "sage2_kv37761"]  # N itself is the seed case
    assert (s[2].q_len, s[2].kv_len) == (37810, 37761)
    with pytest.raises(ArgumentError, match="q_tail"):
        sage2_cases([1, 1000, 4, 128], [1001])
    d = decode_cases([1, 256], [1024, 32768])
    assert [c.name for c in d] == ["decode_b1_kv1024", "decode_b1_kv32768", "decode_b256_kv1024"]  # 17 GB left out
    assert d[0].source == "paged_decode_mma.cu"
    p = CasePlan(s, d, repeat=2)
    assert CasePlan.load(p.save(tmp_path / "c.json")) == p
    assert p.only(["sage2_seed", "decode_b1_kv1024"]).names == ["sage2_seed", "decode_b1_kv1024"]


@pytest.mark.parametrize("change, message", [
    (lambda d: d["sage2"][0].update(name=1), r"sage2\[0\]\.name = 1: expected a string"),
    (lambda d: d["sage2"][0].update(shape=[1, 2]), r"sage2\[0\]\.shape = \[1, 2\]: expected a list of 4"),
    (lambda d: d["sage2"][0].update(shape=[1, 37810, 56, 100]), r"sage2\[0\]\.shape: .*head_dim"),
    (lambda d: d["sage2"][1].update(q_len=37811), r"sage2\[1\]\.q_len = 37811: expected an integer in \[1, 37810\]"),
    (lambda d: d["sage2"][1].update(shape=[1, 37810, 8, 128]), r"sage2: .*share one prepared shape"),
    (lambda d: d["decode"][0].update(head_dim=100), r"decode\[0\]: .*head_dim 100"),
    (lambda d: d["decode"][0].update(batch="x"), r"decode\[0\]\.batch = 'x': expected an integer"),
    (lambda d: d["decode"][1].update(name="sage2_seed"), r"case names repeat \(sage2_seed\)"),
    (lambda d: d.update(repeat=0), r"repeat = 0: expected an integer in \[1, 1000\]"),
    (lambda d: d.update(extra=1), r"extra: unknown key"),
    # found by a CLI review: a name that is no NVTX path component passed until the GPU run
    (lambda d: d["sage2"][0].update(name=""), r"sage2\[0\]\.name = '': expected a case name of letters"),
    (lambda d: d["decode"][0].update(name="a/b c"), r"decode\[0\]\.name = 'a/b c': expected a case name"),
])
def test_a_bad_case_plan_is_one_line_naming_its_place(change, message, tmp_path):
    """Found by a CLI review: a shape of two entries was a ValueError traceback, and a decode head_dim of 100 or a
    repeat of 0 reached the GPU check; each is now refused where the plan is read."""
    d = CasePlan(sage2_cases([1, 37810, 56, 128], [37760]), decode_cases([1], [1024, 8192])).to_dict()
    change(d)
    (tmp_path / "bad.json").write_text(json.dumps(d))
    with pytest.raises(FormatError, match=message):
        CasePlan.load(tmp_path / "bad.json")


@pytest.fixture(scope="module")
def fixture_summary(tmp_path_factory):
    """The fixture's launches as if they were notebook 05's cases (its outer NVTX range is 'bench'), with
    event timings made up in the test: fused_line 2 % below ncu, the others 0.3 % above."""
    from labkit import ncu

    rep = ncu.load(FIXTURE / "rep_main.ncu-rep")
    counters = counter_rows(rep, NAMES, outer="bench")
    ncu_ns = {c: statistics.median(r["duration_ns"] for r in counters if r["case"] == c) for c in NAMES}
    p50 = {c: v / (1.02 if c == "fused_line" else 0.997) for c, v in ncu_ns.items()}
    timings = {c: {"p50_ns": t, "min_ns": t * 0.99, "max_ns": t * 1.01, "count": 10, "clock_dropped": False}
               for c, t in p50.items()}
    att = attribution_of("fused_line", FIXTURE / "fused_kernel.cu", [rep, rep], outer="bench")
    att = type(att)(att.case, att.source, att.markers, (att.runs[0], _second_launch(rep)), None)
    plain = tmp_path_factory.mktemp("src") / "plain_kernel.cu"
    plain.write_text('extern "C" __global__ void k(float* x) { x[0] = 1.f; }\n')
    skipped = attribution_of("saxpy", plain, [], outer="bench")
    sage2 = [{"name": n, "group": g, "shape": [1, 1024, 8, 128], "q_len": q, "kv_len": 1024}
             for n, g, q in zip(NAMES[:3], ("seed", "q_tail", "q_tail"), (1024, 1000, 1001))]
    decode = [{"name": "saxpy", "batch": 1, "kv_len": 1024, "head_dim": 128, "heads_q": 32, "heads_kv": 8,
               "page_size": 64}]
    cases = {"sage2": sage2, "decode": decode, "repeat": 1}  # as a case plan holds them (the summary reads it so)
    return NcuSummary("NVIDIA H200 (fixture)", "ncu 2025.3.1 (fixture)", cases, timings, tuple(counters),
                      tuple(rule_rows(rep, NAMES, outer="bench")), (att, skipped),
                      {"fixture": {"bytes": 1735776, "elapsed_s": 0.0, "command": "ncu ..."}})


def _second_launch(rep):
    from labkit.ncu.summary import phase_run

    return phase_run(rep, "fused_line", "fused_kernel.cu", outer="bench", launch=1)


@needs_fixture
def test_tables_from_the_fixture(fixture_summary):
    s = NcuSummary.from_dict(json.loads(json.dumps(fixture_summary.to_dict())))
    assert s == fixture_summary
    assert len(tables.counter_table(s)) == 8
    gaps = tables.event_vs_ncu(s).set_index("case")
    assert gaps.loc["fused_line", "gap"] == pytest.approx(0.02) and gaps.loc["fused_line", "flagged"]
    assert gaps.loc["saxpy", "gap"] == pytest.approx(-0.003) and not gaps.loc["saxpy", "flagged"]
    row = gaps.loc["fused_line"]
    assert row["gap_us"] == pytest.approx(row["ncu_us"] - row["event_p50_us"]) and row["gap_us"] > 0
    assert gaps.loc["fused_line", "launches"] == 2
    eff = tables.efficiency_table(s).set_index("case")
    assert eff.loc["fused_line", "labkit_waves"] == pytest.approx(eff.loc["fused_line", "ncu_waves"])  # 1056 / 2112
    assert eff.loc["saxpy", "labkit_waves"] == pytest.approx(eff.loc["saxpy", "ncu_waves"], abs=0.01)  # 248.24
    assert eff.loc["fused_line", "tail_rule"] == "none fired"
    corr = tables.correlations(s)
    assert set(corr["group"]) == {"sage2 tail study", "decode sweep"}
    assert corr[corr["group"] == "decode sweep"]["pearson_r"].isna().all()  # one point: no correlation
    sweep = tables.sweep_table(s)
    for group, part in sweep.groupby("group"):  # each column of the shown matrix names its points and time spread
        t = part["event_p50_us"].astype(float)
        span = 100 * (t.max() - t.min()) / t.median()
        assert corr[corr["group"] == group]["time_span_pct"].iloc[0] == pytest.approx(span)
        apart = t.max() / t.min()
        words = f"times {apart:.0f}x apart" if apart >= 2 else f"times within {span:.1f} %"
        assert f"{group} ({len(part)} points, {words})" in tables.correlation_matrix(corr).columns
    assert [c.split(" (")[0] for c in tables.correlation_matrix(corr).columns] == list(dict.fromkeys(corr["group"]))
    fewer = corr.copy()
    fewer.loc[(fewer["group"] == "sage2 tail study") & (fewer["counter"] == "waves"), "points"] = 2
    (header,) = [c for c in tables.correlation_matrix(fewer).columns if c.startswith("sage2 tail study")]
    assert header.startswith("sage2 tail study (2-"), header  # a counter with fewer points: the range is said
    shares = tables.phase_table(s, "fused_line")
    assert list(shares.index) == ["<unmapped>", "qk_imma", "softmax", "pv_hmma", "epilogue"]
    assert shares.loc["softmax", "share_run1_pct"] == pytest.approx(45.07, abs=1e-2)
    assert (shares["diff_points"].abs() < 0.1).all()  # the fixture's two launches agree within 0.1 point
    stalls = tables.stall_shares(s.attributions[0].runs[0])
    assert stalls.loc["qk_imma", "wait"] == pytest.approx(63.1, abs=0.05)
    assert tables.phase_table(s, "saxpy") is None and "has no // PHASE: markers" in s.attributions[1].skipped
    bad = {**fixture_summary.to_dict(), "version": 0}
    with pytest.raises(NcuError, match="summary version 0"):
        NcuSummary.from_dict(bad)


def _recorded(root, summary):
    """A recorded run of notebook 05 with the notebook's default parameters and the given summary."""
    run = root / "20260101T000000Z-05_ncu_correlation"
    (run / "data").mkdir(parents=True)
    params = {k: p.default for k, p in notebooks.parameters("05").items() if k != "recorded_root"}
    (run / "run.json").write_text(json.dumps({
        "run_json_version": 2, "notebook": "05_ncu_correlation", "parameters": params, "ok": True, "error": None,
        "session": {"mode": "live"},
        "provenance": {"device": {"name": summary.device}, "created_utc": "2026-01-01T00:00:00Z",
                       "git_sha": "0" * 40}}))
    (run / "data" / "ncu_summary.json").write_text(json.dumps(summary.to_dict()))
    return run


@needs_fixture
def test_recorded_path_renders_every_figure(fixture_summary, tmp_path):
    recorded = tmp_path / "recorded"
    run = _recorded(recorded, fixture_summary)
    res = notebooks.run("05", {"source": "recorded", "recorded_root": str(recorded)}, out_root=tmp_path / "out",
                        timeout_s=600)
    assert res.ok, res.error
    assert res.mode == "recorded" and res.recorded_from == str(run)
    nb = json.loads(res.notebook.read_text())
    outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o["output_type"] == "error"]
    text = "".join("".join(o.get("text", "")) for o in outputs)
    assert "RECORDED mode" in text and "FLAGGED fused_line" in text and "FLAGGED saxpy" not in text
    # the recorded run's GPU and ncu, said to be that run's (not this machine's, whose ncu the cell above looked for)
    said = f"recorded on {fixture_summary.device} (run {run}): {fixture_summary.ncu}"  # a tmp path longer than a
    assert "".join(said.split()) in "".join(text.split())  # line is broken after one of its slashes
    shown = "".join("".join(o.get("data", {}).get("text/plain", "")) for o in outputs)
    assert "under 5 MiB" in shown and "under 5 MB" not in shown
    assert "tail_rule_speedup_pct" not in shown  # no tail rule fired: the column of NaN is not shown ...
    assert "tail_rule_speedup_pct" in (res.run_dir / "data" / "efficiency.csv").read_text()  # ... but kept
    assert "saxpy: phase attribution skipped: plain_kernel.cu has no // PHASE: markers" in text
    embedded = [base64.b64decode(o["data"]["image/png"]) for o in outputs if "image/png" in o.get("data", {})]
    assert len(embedded) == len(FIGS)
    for fig in FIGS:
        assert (res.run_dir / "figs" / f"{fig}.png").read_bytes() in embedded
    for d in ("ncu_summary.json", "counters.csv", "event_vs_ncu.csv", "correlations.csv", "efficiency.csv",
              "phases_fused_line.csv"):
        assert (res.run_dir / "data" / d).is_file()


def test_live_needs_ncu_and_says_why_in_one_line(tmp_path, monkeypatch):
    from labkit import ncu
    from labkit.errors import NcuUnavailable

    monkeypatch.delenv("LABKIT_NCU", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    if ncu.available()[0]:
        pytest.skip("an ncu that can profile is installed here")
    with pytest.raises(NcuUnavailable, match=r"ncu\) not found|Nsight Compute 20|RmProfilingAdminOnly"):
        study.measure(study.plan([1, 1024, 4, 128], [], [], [1], [1024]), out_dir=tmp_path)
    assert not (tmp_path / "ncu").exists()  # refused before anything was written or launched


@needs_fixture
def test_a_relative_recorded_root_is_from_the_repo_root_wherever_the_run_starts(fixture_summary, tmp_path,
                                                                               monkeypatch):
    """A review: the kernel runs in the run's folder, so a relative recorded_root checked from the caller's folder
    failed in cell 3; the runner passes it on resolved. A later review: resolved from the caller's folder, where the
    parameter says (nb params, JupyterLab) "relative: from the repo root"; now from the repo root everywhere."""
    import os

    from labkit import _env

    run = _recorded(tmp_path / "recorded", fixture_summary)
    relative = os.path.relpath(tmp_path / "recorded", _env.repo_root())  # ../../tmp/.../recorded
    (tmp_path / "a" / "b").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "a" / "b")  # where the same text names another folder
    assert not Path(relative).resolve().is_dir()
    res = notebooks.run("05", {"source": "recorded", "recorded_root": relative}, out_root=tmp_path / "out",
                        timeout_s=600)
    assert res.ok, res.error
    assert res.recorded_from == str(run)


def test_recorded_mode_without_a_recording_is_refused(tmp_path):
    """The notebook's own recorded_root is where the runner looks before anything runs."""
    with pytest.raises(LabkitError, match=f"no valid recorded run of 05_ncu_correlation under {tmp_path}"):
        notebooks.run("05", {"source": "recorded", "recorded_root": str(tmp_path)}, out_root=tmp_path / "o")
    assert not (tmp_path / "o").exists()


@needs_fixture
def test_closing_note_from_a_summary_file(fixture_summary, tmp_path, capsys):
    from labkit import cli

    f = tmp_path / "ncu_summary.json"
    f.write_text(json.dumps(fixture_summary.to_dict()))
    assert cli.main(["ncu", "summary", str(f)]) == 0
    out = capsys.readouterr().out
    assert "fused_line" in out and "share_run1_pct" in out and "diff_points" in out and "45.07" in out
    assert "saxpy: phase attribution skipped" in out and f"fixture {1735776 / 2**20:.2f} MiB" in out
    # a CLI review: the flagged column printed Python's True and False, and a share difference -0.00
    assert " True" not in out and " False" not in out and "-0.00" not in out
    assert re.search(r"^\s+fused_line .* (FLAGGED|-)$", out, re.M)
    f.write_text(json.dumps({**fixture_summary.to_dict(), "counters": [{"kernel": "x"}]}))
    assert cli.main(["ncu", "summary", str(f)]) == 2
    assert "summary counters[0].case: expected a string" in capsys.readouterr().err


@needs_fixture
def test_stall_reasons_ordered_by_samples_over_the_kernel(fixture_summary):
    stalls = tables.stall_shares(fixture_summary.attributions[0].runs[0])
    assert list(stalls.columns[:2]) == ["wait", "short_scoreboard"]  # not the 30-sample <unmapped> row's reasons
    assert list(stalls.columns).index("math_pipe_throttle") < list(stalls.columns).index("imc_miss")


@pytest.mark.parametrize("damage, message", [
    (lambda d: [1, 2], "summary $: expected an object"),
    (lambda d: {**d, "counters": {}}, "summary counters: expected a JSON list"),
    (lambda d: (d["counters"][2].pop("kernel"), d)[1], "summary counters[2].kernel: expected a string"),
    (lambda d: (d["counters"][0].update(duration_ns="9"), d)[1], "counters[0].duration_ns: expected a number"),
    (lambda d: (d["counters"][0].update(duration_ns=0), d)[1],
     "counters[0].duration_ns: expected a number above 0, not 0"),
    # a third CLI review: a share of 5 printed as 500.00 %, a negative sample count passed
    (lambda d: (d["attributions"][0]["runs"][0]["share"].__setitem__(0, 5), d)[1],
     "summary attributions[0].runs[0].share: expected fractions 0..1 of the samples, not 5"),
    (lambda d: (d["attributions"][0]["runs"][0]["samples"].__setitem__(0, -100), d)[1],
     "summary attributions[0].runs[0].samples: expected sample counts >= 0, not -100"),
    (lambda d: (d["timings"]["sage2_seed"].update(p50_ns=0), d)[1],
     "summary timings.sage2_seed: expected p50_ns, min_ns and max_ns numbers, 0 < min <= p50 <= max"),
    (lambda d: (d.pop("version"), d)[1], "summary $: missing key 'version'"),
    (lambda d: (d["attributions"][0]["runs"][1]["share"].pop(), d)[1],
     "attributions[0].runs[1]: expected phases, samples and share lists of one length"),
    # found by a CLI review: each had printed NaN rows, an empty table or nothing checked
    (lambda d: {**d, "timings": {}}, "summary timings: expected an entry for sage2_seed, whose counters are here"),
    (lambda d: {**d, "counters": []}, "summary counters: expected at least one profiled launch"),
    (lambda d: (d["counters"][0].update(case="nope"), d)[1],
     "summary counters[0].case: expected one of the summary's cases (sage2_seed, "),
    (lambda d: (d["cases"]["sage2"][0].update(shape=[1, 2]), d)[1], "summary cases.sage2[0].shape"),
    (lambda d: (d["cases"]["sage2"][1].update(q_len=-1), d)[1], "summary cases.sage2[1].q_len"),
    (lambda d: (d["attributions"][0]["runs"][0].update(duration_ns="x"), d)[1],
     "summary attributions[0].runs[0].duration_ns: expected a number"),
    # found by a second CLI review: no runs was an AttributeError after the tables, the rest passed unchecked
    (lambda d: (d["attributions"][0].update(runs=[]), d)[1],
     "summary attributions[0].runs: expected at least one ncu run (or skipped saying why)"),
    (lambda d: (d["attributions"][0].update(case="nope"), d)[1], "summary attributions[0].case: expected one of"),
    (lambda d: {**d, "attributions": d["attributions"] + d["attributions"][:1]},
     "not attributed before, not 'sage2_seed'"),
    (lambda d: (d["counters"][0].update(clock_hz=0), d)[1], "summary counters[0].clock_hz: expected a clock above 0"),
    (lambda d: (d["counters"][0].update(launch=-1), d)[1], "summary counters[0].launch: expected the launch's index"),
    (lambda d: (d["counters"][0].update(dram_read_bytes=-5.0), d)[1],
     "summary counters[0].dram_read_bytes: expected a finite number >= 0 or null, not -5.0"),
    (lambda d: (d["counters"][0].update(kernel=""), d)[1], "summary counters[0].kernel: expected a string"),
    (lambda d: {**d, "version": True}, "summary version True: expected 1"),
    (lambda d: {**d, "device": None}, "summary device: expected a non-empty string, not None"),
    (lambda d: (d["timings"]["sage2_seed"].update(count=0), d)[1], "summary timings.sage2_seed.count: expected the"),
    # a test audit: each of these was read (or failed past the checks, a traceback) with the check it hit left out
    (lambda d: (d.pop("rules"), d)[1], "summary lacks rules"),
    (lambda d: (d["cases"]["sage2"].__setitem__(0, "sage2_seed"), d)[1],
     "summary cases.sage2: expected a list of cases, each with a name"),
    (lambda d: (d["rules"][0].update(rule=3), d)[1],
     "summary rules[0]: expected an object with case, kernel, rule and title"),
    (lambda d: (d["attributions"][0]["runs"][0]["phases"].__setitem__(1, "<unmapped>"), d)[1],
     "summary attributions[0].runs[0].phases: expected distinct phase names"),
    (lambda d: (d["attributions"][0].update(skipped=""), d)[1],
     "summary attributions[0].skipped: expected null or why the attribution was skipped"),
    # found by a CLI review: "no" passed (bool("no") is True), and a Sage2 report was "missing key 'version'" only
    (lambda d: (d["timings"]["sage2_seed"].update(clock_dropped="no"), d)[1],
     "summary timings.sage2_seed.clock_dropped: expected true or false, not 'no'"),
    (lambda d: json.loads((ROOT / "data" / "sage2_report_seed.json").read_text()),
     "summary $: missing key 'version': this is a Sage2 report (labkit report show), not a notebook 05 "
     "ncu_summary.json"),
])
def test_summary_cli_refuses_a_damaged_summary_in_one_line(damage, message, tmp_path, capsys):
    from labkit import cli

    from ..conftest import ROOT

    (recorded,) = sorted((ROOT / "data" / "runs").glob("*-05_ncu_correlation/data/ncu_summary.json"))[-1:]
    bad = tmp_path / "ncu_summary.json"
    bad.write_text(json.dumps(damage(json.loads(recorded.read_text()))))
    assert cli.main(["ncu", "summary", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"labkit: error: labkit ncu summary: {bad}: ") and message in err[0]
    assert cli.main(["ncu", "summary", str(recorded)]) == 0 and "event p50 vs ncu" in capsys.readouterr().out


def test_the_efficiency_table_names_each_imbalance_rule_by_its_title():
    """Found by a review: ncu's SMs, SMSPs, L1 and L2 slice imbalance rules share the id WorkloadImbalance, and the
    table listed that id three or four times per launch; it lists their titles (the recorded live run's summary)."""
    import glob

    f = sorted(glob.glob(str(ROOT / "data" / "runs" / "*-05_ncu_correlation" / "data" / "ncu_summary.json")))[-1]
    eff = tables.efficiency_table(NcuSummary.from_dict(json.loads(Path(f).read_text()))).set_index("case")
    rules = eff.loc["decode_b1_kv8192", "imbalance_rules"]
    assert "SMs Workload Imbalance (" in rules and "SMSPs Workload Imbalance (" in rules, rules
    assert "WorkloadImbalance (" not in rules


def test_the_gap_figure_says_what_its_markers_mean_and_close_times_carry_their_spread():
    """Found by a notebook review: open vs filled (under / over 100 us) and the flagged colour were in no legend, and
    an r of -0.93 over five times 0.3 % apart read as a finding."""
    import glob

    from labkit.plot import ncu as ncu_plots

    from ..conftest import ROOT

    f = sorted(glob.glob(str(ROOT / "data" / "runs" / "*-05_ncu_correlation" / "data" / "ncu_summary.json")))[-1]
    s = NcuSummary.from_dict(json.loads(open(f).read()))
    legend = [t.get_text() for t in ncu_plots.event_vs_ncu(tables.event_vs_ncu(s)).legends[0].get_texts()]
    assert legend == ["+-1 %", "kernel of 100 us or more (held to the band)", "under 100 us (not held)",
                      "flagged: held, outside the band"]
    fig = ncu_plots.time_vs_counters(tables.sweep_table(s), tables.CORRELATED, tables.correlations(s))
    titles = [a.get_title() for a in fig.axes]
    sage2 = tables.sweep_table(s).query("group == 'sage2 tail study'")["event_p50_us"]
    assert (sage2.max() - sage2.min()) / sage2.median() < 0.02
    assert all("times within" in t for t in titles if t.startswith("sage2 tail study"))
    assert not any("times within" in t for t in titles if t.startswith("decode sweep"))  # 9 us .. 490 us apart
    # the decode sweep's times are tens of times apart: log axes (a linear axis had crushed 5 of 6 points near 0);
    # the Sage2 tail's, 0.8 % apart, stay linear
    for ax in fig.axes:
        decode = ax.get_title().startswith("decode sweep")
        assert ax.get_yscale() == ("log" if decode else "linear"), ax.get_title()
        if decode and ax.get_xlabel().startswith("dram_read_bytes"):
            assert ax.get_xscale() == "log"
        if "_pct" in ax.get_xlabel():  # a review: percentages had no unit
            assert ax.get_xlabel().endswith("_pct [%]")


def test_gap_lines_say_per_sweep_whether_ncu_reads_longer_or_shorter_and_outside_the_events_range():
    """Found on the first H100 run: all five Sage2 cases read 1.1-1.7 % longer under ncu, each flagged alone, and the
    notebook's text blamed a clock or board change; one line per sweep now shows the offset the five share."""
    import pandas as pd

    gaps = pd.DataFrame([
        {"case": "s1", "group": "sage2 tail study", "event_p50_us": 100.0, "event_min_us": 99.0, "event_max_us": 101.0,
         "ncu_us": 101.7, "gap": 0.017},
        {"case": "s2", "group": "sage2 tail study", "event_p50_us": 100.0, "event_min_us": 99.0, "event_max_us": 102.0,
         "ncu_us": 101.1, "gap": 0.011},
        {"case": "d1", "group": "decode sweep", "event_p50_us": 20.0, "event_min_us": 19.0, "event_max_us": 21.0,
         "ncu_us": 18.0, "gap": -0.1},
        {"case": "d2", "group": "decode sweep", "event_p50_us": 20.0, "event_min_us": 19.0, "event_max_us": 21.0,
         "ncu_us": 20.2, "gap": 0.01},
        {"case": "d3", "group": "decode sweep", "event_p50_us": float("nan"), "event_min_us": float("nan"),
         "event_max_us": float("nan"), "ncu_us": 20.0, "gap": float("nan")},  # no event timing: left out
    ])
    assert tables.gap_lines(gaps) == [
        "sage2 tail study: gaps +1.10 to +1.70 % over 2 cases, ncu longer in every case; ncu outside the events' "
        "min..max in 1 of 2",
        "decode sweep: gaps -10.00 to +1.00 % over 2 cases, ncu longer in some cases, shorter in others; ncu outside "
        "the events' min..max in 1 of 2"]
    assert tables.gap_lines(gaps[gaps["case"] == "d3"]) == []
    assert tables.gap_lines(pd.DataFrame(columns=["case", "kernel", "event_p50_us", "ncu_us", "gap"])) == []  # none
    # a gap of exactly 0 beside shorter ones: none is longer (a mutation audit: it read "longer in some cases")
    level = gaps[gaps["case"].isin(["d1", "d2"])].assign(gap=[-0.1, 0.0], ncu_us=[18.0, 20.0])
    assert tables.gap_lines(level)[0].startswith("decode sweep: gaps -10.00 to +0.00 % over 2 cases, ncu shorter or "
                                                 "level in every case;")
    assert "ncu longer or level in every case;" in tables.gap_lines(level.assign(gap=[0.0, 0.1]))[0]


def test_summary_values_are_plain_json_and_a_case_is_the_innermost_range_right_under_the_outer_one():
    import numpy as np

    from labkit.ncu.summary import _case, _plain

    # numpy scalars become Python numbers (an np.int64 is no int: it would be written as a string), NaN and inf None
    got = [_plain(v) for v in (np.int64(7), np.float64(2.5), float("nan"), np.float32("inf"), None, "x")]
    assert got == [7, 2.5, None, None, None, "x"] and type(got[0]) is int
    assert [_case(n) for n in ("ncu/fused", "run/ncu/fused", "bench/fused", "fused")] == ["fused", "fused", None, None]
    assert _case("bench/fused", outer="bench") == "fused"


@needs_fixture
def test_phase_run_refuses_a_launch_past_the_last_and_rule_rows_keep_the_wanted_rules_of_the_wanted_cases(monkeypatch):
    import re

    from labkit import ncu
    from labkit.ncu import summary
    from labkit.ncu.summary import phase_run

    rep = ncu.load(FIXTURE / "rep_main.ncu-rep")  # fused_line launched twice under bench/
    with pytest.raises(NcuError, match=r"no launch 2 in NVTX range bench/fused_line \(2 launches\)"):
        phase_run(rep, "fused_line", "fused_kernel.cu", outer="bench", launch=2)
    # the fixture's 66 rule results (CPIStall, UncoalescedGlobalAccess, SOLBottleneck, ...) hold no tail or imbalance
    # rule; were CPIStall one, fused_line's would be its 4 rows (2 launches x 2), and no other kernel's or rule's
    assert rule_rows(rep, NAMES, outer="bench") == []
    monkeypatch.setattr(summary, "WANTED_RULES", re.compile("CPIStall"))
    assert [(r["case"], r["rule"]) for r in rule_rows(rep, ["fused_line"], outer="bench")] == [
        ("fused_line", "CPIStall")] * 4
    assert rule_rows(type("Empty", (), {"actions": []})(), NAMES) == []  # a report without rule results


def test_a_summary_of_one_sample_per_case_reads():
    # one timed sample: its min, p50 and max are one value
    (recorded,) = sorted((ROOT / "data" / "runs").glob("*-05_ncu_correlation/data/ncu_summary.json"))[-1:]
    d = json.loads(recorded.read_text())
    for t in d["timings"].values():
        t.update(min_ns=t["p50_ns"], max_ns=t["p50_ns"], count=1)
    assert NcuSummary.from_dict(d).timings == d["timings"]


def _sweep(p50_us, waves):
    """A decode sweep of one launch per case: event p50 ``p50_us`` and ncu's ``waves`` counter (no l2_hit_pct)."""
    names = [f"d{i}" for i in range(len(p50_us))]
    timings = {n: {"p50_ns": t * 1e3, "min_ns": t * 1e3, "max_ns": t * 1e3, "count": 1} for n, t in zip(names, p50_us)}
    counters = tuple({"case": n, "launch": 0, "kernel": "k", "duration_ns": t * 1e3, "waves": w}
                     for n, t, w in zip(names, p50_us, waves))
    return NcuSummary("dev", "ncu", {"sage2": [], "decode": [{"name": n} for n in names], "repeat": 1}, timings,
                      counters, (), (), {})


def test_correlations_need_three_points_and_skip_a_counter_ncu_did_not_give():
    """Found by mutation testing: the three-point threshold, the NaN below it, a counter absent from the report and the
    '2x apart' wording at exactly 2x were not pinned."""
    corr = tables.correlations(_sweep([100, 150, 200], [1, 2, 4]), counters=("waves", "l2_hit_pct"))
    assert list(corr["counter"]) == ["waves"]  # l2_hit_pct was not collected: no row, no error
    row = corr.iloc[0]
    # by hand: dx = (-50, 0, 50), dy = (-4/3, -1/3, 5/3): r = 150 / sqrt(5000 * 42/9) = 0.98198
    assert row["points"] == 3 and row["pearson_r"] == pytest.approx(150 / math.sqrt(5000 * 42 / 9))
    assert row["time_max_over_min"] == 2.0 and row["time_span_pct"] == pytest.approx(100 * 100 / 150)
    assert list(tables.correlation_matrix(corr).columns) == ["decode sweep (3 points, times 2x apart)"]
    two = tables.correlations(_sweep([100, 150], [1, 2]), counters=("waves",))
    assert two["points"].tolist() == [2] and two["pearson_r"].isna().all()  # two points always fit a line: no r
    none = tables.correlations(_sweep([], []))
    assert none.empty and tables.correlation_matrix(none).empty


def test_a_gap_is_flagged_past_the_limit_for_a_kernel_of_at_least_min_ns():
    s = _sweep([200], [1])
    s = dataclasses.replace(s, counters=({**s.counters[0], "duration_ns": 250_000},))
    # by hand: ncu 250 us over an event p50 of 200 us: gap 250/200 - 1 = 0.25 exactly, ncu minus event 50 us
    row = tables.event_vs_ncu(s, limit=0.25, min_ns=200_000).iloc[0]
    assert (row["gap"], row["gap_us"], row["flagged"]) == (0.25, 50.0, False)  # at the limit: not past it
    assert (row["event_min_us"], row["event_max_us"]) == (200.0, 200.0)
    assert tables.event_vs_ncu(s, limit=0.2499, min_ns=200_000).iloc[0]["flagged"]  # 200 us is at least min_ns
    assert not tables.event_vs_ncu(s, limit=0.2499, min_ns=200_001).iloc[0]["flagged"]


def test_the_efficiency_table_of_a_launch_without_occupancy_limits_or_rule_speedups():
    """A launch whose occupancy section was not collected has no wave model (not an error), and a rule without an
    estimated speedup is named by its title (id where untitled) alone, not '(nan%)'."""
    s = dataclasses.replace(_sweep([100], [1]), rules=(
        {"case": "d0", "rule": "WorkloadImbalance", "title": "SM imbalance", "speedup_pct": None},
        {"case": "d0", "rule": "WorkloadImbalance", "title": "", "speedup_pct": 12.34}))
    row = tables.efficiency_table(s).iloc[0]
    assert row["ctas_per_sm"] is None and math.isnan(row["labkit_waves"]) and math.isnan(row["last_wave_fill"])
    assert row["imbalance_rules"] == "SM imbalance; WorkloadImbalance (12.3%)" and row["tail_rule"] == "none fired"
    # a second case with its occupancy limits (the first's read as NaN beside them): one CTA per SM, by the tightest
    # limit, and 264 CTAs over 132 SMs: by hand 264 / (132 x 1) = 2 full waves
    limits = {"limit_registers": 2, "limit_shared_mem": 1, "limit_warps": 4, "limit_blocks": 32, "grid": 264,
              "sm_count": 132}
    two = _sweep([100, 200], [1, 2])
    two = dataclasses.replace(two, counters=(two.counters[0], {**two.counters[1], **limits}))
    eff = tables.efficiency_table(two).set_index("case")
    assert math.isnan(eff.loc["d0", "labkit_waves"])
    assert (eff.loc["d1", "ctas_per_sm"], eff.loc["d1", "labkit_waves"], eff.loc["d1", "last_wave_fill"]) == (1, 2, 1)


def test_phase_shares_of_a_single_ncu_run_have_no_difference_column():
    from labkit.ncu.summary import Attribution

    one = Attribution("d0", "k.cu", ("load", "mma"), ({"phases": ["load", "mma"], "share": [0.25, 0.75]},))
    df = tables.phase_table(dataclasses.replace(_sweep([100], [1]), attributions=(one,)), "d0")
    assert list(df.columns) == ["share_run1_pct"] and df["share_run1_pct"].to_dict() == {"load": 25.0, "mma": 75.0}


def test_a_case_plan_takes_its_edge_values(tmp_path):
    """Found by mutation testing: the bounds of a case name (128 characters) and of a decode case's sizes (one head,
    which the decode geometry takes) were not pinned."""
    d = CasePlan(sage2_cases([1, 1024, 8, 128], [1], [1]), decode_cases([1], [1024], heads_q=1, heads_kv=1),
                 repeat=1000).to_dict()
    d["decode"][0]["name"] = "n" * 128
    (tmp_path / "edge.json").write_text(json.dumps(d))
    plan = CasePlan.load(tmp_path / "edge.json")
    assert (plan.decode[0].heads_q, plan.decode[0].heads_kv, plan.repeat) == (1, 1, 1000)
    assert [(c.q_len, c.kv_len) for c in plan.sage2] == [(1024, 1024), (1, 1024), (1024, 1)]  # one row, one token
    assert plan.names == ["sage2_seed", "sage2_q1", "sage2_kv1", "n" * 128]
    for i, key in ((1, "q_len"), (2, "kv_len")):
        zero = json.loads(json.dumps(d))
        zero["sage2"][i][key] = 0
        (tmp_path / "zero.json").write_text(json.dumps(zero))
        with pytest.raises(FormatError, match=rf"sage2\[{i}\]\.{key} = 0: expected an integer in \[1, 1024\]"):
            CasePlan.load(tmp_path / "zero.json")
    d["decode"][0]["name"] = "n" * 129
    (tmp_path / "long.json").write_text(json.dumps(d))
    with pytest.raises(FormatError, match=r"decode\[0\]\.name = "):
        CasePlan.load(tmp_path / "long.json")


def test_a_case_without_an_event_timing_has_no_gap_and_a_sweep_shorter_under_ncu_says_so():
    s = _sweep([100, 200], [1, 2])
    s = dataclasses.replace(s, timings={"d1": s.timings["d1"]},  # d0 was profiled but not timed
                            counters=tuple({**c, "duration_ns": c["duration_ns"] * 0.9} for c in s.counters))
    gaps = tables.event_vs_ncu(s).set_index("case")
    assert math.isnan(gaps.loc["d0", "gap"]) and math.isnan(gaps.loc["d0", "event_p50_us"])
    assert not gaps.loc["d0", "flagged"] and gaps.loc["d1", "gap"] == pytest.approx(-0.1)  # by hand: 180 / 200 - 1
    assert math.isnan(tables.sweep_table(s).set_index("case").loc["d0", "event_p50_us"])
    assert tables.gap_lines(gaps.reset_index()) == [
        "decode sweep: gaps -10.00 to -10.00 % over 1 cases, ncu shorter in every case; ncu outside the events' "
        "min..max in 1 of 1"]


def test_decode_cases_keep_the_issues_largest_point_and_leave_out_the_next():
    # by hand: K and V, 8 kv heads x 128 dims x 2 bytes each: 4096 B per token; 64 x 32768 tokens are 8.59 GB, within
    # the bench's 9 GB; 128 x 32768 are 17.2 GB
    assert [c.name for c in decode_cases([64, 128], [32768])] == ["decode_b64_kv32768"]


def test_a_case_without_event_timing_is_said_on_the_gap_figure_not_left_an_empty_row():
    """A case ncu profiled that has no event timing has no gap; its row said nothing (a label at x = NaN is not
    drawn): now its ncu time and 'no event timing' stand at 0, and every other case keeps its dot and label."""
    import glob

    from labkit.plot import ncu as ncu_plots

    from ..conftest import ROOT

    f = sorted(glob.glob(str(ROOT / "data" / "runs" / "*-05_ncu_correlation" / "data" / "ncu_summary.json")))[-1]
    s = NcuSummary.from_dict(json.loads(open(f).read()))
    gaps = tables.event_vs_ncu(s)
    untimed = gaps["case"].iloc[0]
    s = dataclasses.replace(s, timings={c: t for c, t in s.timings.items() if c != untimed})
    gaps = tables.event_vs_ncu(s)
    ax = ncu_plots.event_vs_ncu(gaps).axes[0]
    texts = {round(t.xy[1]): t for t in ax.texts}
    assert len(texts) == len(gaps)
    ncu_us = gaps.set_index("case").loc[untimed, "ncu_us"]
    assert texts[0].get_text() == f"ncu {ncu_plots._time(ncu_us)}, no event timing (no gap)"
    assert texts[0].xy[0] == 0.0
    # each timed case: its label and its dot at its own gap in % (this had compared each label's x with itself)
    dots = {round(y): x for c in ax.collections for x, y in c.get_offsets() if x == x}
    for y, row in enumerate(gaps.itertuples()):
        if y:
            assert texts[y].get_text().startswith("event ") and texts[y].xy[0] == pytest.approx(100 * row.gap), y
            assert dots[y] == pytest.approx(100 * row.gap), y
    assert sorted(dots) == list(range(1, len(gaps)))  # no dot for the untimed case, whose gap is NaN


def test_the_study_plan_s_decode_defaults_are_the_seed_s_and_heads_pass_through():
    """Found by mutation testing: study.plan's head_dim, heads, page_size and repeat defaults were not checked."""
    from labkit.ncu.cases import DecodeCase

    p = study.plan([1, 1024, 4, 128], [], [], [1], [1024])
    assert p.decode == (DecodeCase("decode_b1_kv1024", 1, 1024, 128, 32, 8, 64),) and p.repeat == 1
    assert [c.name for c in p.sage2] == ["sage2_seed"]
    p = study.plan([1, 1024, 4, 128], [], [], [2], [512], heads=(16, 2), page_size=32, repeat=3)
    assert (p.decode[0].heads_q, p.decode[0].heads_kv, p.decode[0].page_size, p.repeat) == (16, 2, 32, 3)


def test_live_without_the_nvtx_package_is_refused_before_any_work(tmp_path, monkeypatch):
    """Found by mutation testing: without nvtx the labkit@ncu/ filter profiles nothing; the refusal was untested."""
    from labkit import _deps

    monkeypatch.setattr(study, "require_ncu", lambda: "ncu 2025.3.1 at /opt/ncu")
    real = _deps.optional
    monkeypatch.setattr(_deps, "optional", lambda name: None if name == "nvtx" else real(name))
    with pytest.raises(NcuError) as exc:
        study.measure(study.plan([1, 1024, 4, 128], [], [], [1], [1024]), out_dir=tmp_path)
    assert str(exc.value) == ("the Python package nvtx is not installed: labkit's NVTX ranges are no-ops without it, "
                              "so the filter labkit@ncu/ would profile nothing (pip install nvtx)")
    assert not (tmp_path / "ncu").exists()

    class Timing(Exception):
        """Where the GPU work would start (timing the cases with CUDA events)."""

    def time_cases(*args, **kwargs):
        raise Timing

    monkeypatch.setattr(_deps, "optional", lambda name: object() if name == "nvtx" else real(name))
    monkeypatch.setattr(study, "time_cases", time_cases)
    with pytest.raises(Timing):  # with ncu and nvtx both there, nothing is refused
        study.measure(study.plan([1, 1024, 4, 128], [], [], [1], [1024]), out_dir=tmp_path, progress=None)
    assert (tmp_path / "ncu").is_dir()


def test_ncu_cases_exits_0_once_its_launches_ran(tmp_path, monkeypatch):
    """Found by mutation testing: the exit status of the command ncu profiles (nonzero reads as a failed run) was
    unpinned; the launches themselves need a GPU (tests/gpu)."""
    from labkit import cli

    ran = []
    monkeypatch.setattr(study, "launch_spec", ran.append)
    assert cli.main(["ncu", "cases", str(tmp_path / "cases.json")]) == 0 and ran == [str(tmp_path / "cases.json")]


def test_the_ncu_line_says_it_is_the_recorded_run_s_and_report_sizes_are_in_mib():
    """Found by a notebook review: in recorded mode, "ncu cannot profile here (... not found: looked at
    /usr/local/cuda/bin/ncu)" was followed by a bare "NVIDIA H200; ncu 2025.3.1 at /usr/local/cuda/bin/ncu", the
    recorded machine's ncu unsaid; and the report sizes, bytes / 2^20 against a limit of 5 x 2^20 bytes, read "MB"."""
    s = dataclasses.replace(_sweep([100], [1]), device="NVIDIA H200", ncu="ncu 2025.3.1 at /usr/local/cuda/bin/ncu",
                            reports={"small": {"bytes": 3 * 2**19, "elapsed_s": 1.5, "command": "ncu ..."},
                                     "large": {"bytes": study.REPORT_LIMIT + 1, "elapsed_s": 2.0, "command": "ncu"}})
    assert tables.measured_on(s) == "NVIDIA H200; ncu 2025.3.1 at /usr/local/cuda/bin/ncu"  # live: this machine's
    assert tables.measured_on(s, "data/runs/20261205T032651Z-05_ncu_correlation") == (
        "recorded on NVIDIA H200 (run data/runs/20261205T032651Z-05_ncu_correlation): ncu 2025.3.1 at "
        "/usr/local/cuda/bin/ncu")
    sizes = tables.report_sizes(s, study.REPORT_LIMIT)
    limit = f"under {study.REPORT_LIMIT / 2**20:g} MiB"
    assert list(sizes.columns) == ["MiB", limit, "elapsed_s"] and limit == "under 5 MiB"
    assert sizes.loc["small", "MiB"] == 1.5 and sizes.loc["small", limit] == "yes" and sizes.loc["large", limit] == "no"
    assert sizes.loc["large", "MiB"] == round((study.REPORT_LIMIT + 1) / 2**20, 2)
    assert " MiB" in tables.closing_note(s) and " MB" not in tables.closing_note(s)


def test_a_tail_speedup_column_of_no_value_is_not_shown_but_kept_in_the_saved_table():
    """Found by a notebook review: ``tail_rule_speedup_pct`` was NaN in every row, beside a ``tail_rule`` column that
    says "none fired"; it is shown where some row has a value, and efficiency_table (the saved CSV) keeps it."""
    none = tables.efficiency_table(_sweep([100, 200], [1, 2]))
    assert (none["tail_rule"] == "none fired").all() and "tail_rule_speedup_pct" in none
    assert "tail_rule_speedup_pct" not in tables.shown_efficiency(none)
    assert list(tables.shown_efficiency(none).columns) == [
        c.replace("imbalance_rules", "imbalance_rules (est. speedup)") for c in none.columns
        if c != "tail_rule_speedup_pct"]
    fired = dataclasses.replace(_sweep([100, 200], [1, 2]), rules=(
        {"case": "d1", "kernel": "k", "rule": "TailEffect", "title": "Tail effect", "speedup_pct": 25.0},))
    shown = tables.shown_efficiency(tables.efficiency_table(fired)).set_index("case")
    # to 0.1 %: a column of whole numbers shows that digit as text (rounded), and no number as pandas shows one
    assert (shown.loc["d1", "tail_rule_speedup_pct"], shown.loc["d0", "tail_rule_speedup_pct"]) == ("25.0", "NaN")


def test_the_efficiency_table_shows_waves_rounded_and_the_imbalance_rules_by_unit():
    """A new-user review: notebook 05 showed ncu_waves 62.787879 and efficiency 0.996633, and ncu's four imbalance
    rule names made the table about 280 characters wide."""
    import pandas as pd

    saved = pd.read_csv(ROOT / "data" / "runs" / "20261206T012444Z-05_ncu_correlation" / "data" / "efficiency.csv")
    shown = tables.shown_efficiency(saved).set_index("case")
    assert shown.loc["sage2_seed", "ncu_waves"] == 62.79 and shown.loc["sage2_seed", "labkit_cta_efficiency"] == 0.9966
    assert shown.loc["sage2_seed", "last_wave_fill"] == 0.7879
    rules = shown["imbalance_rules (est. speedup)"]
    assert rules["decode_b1_kv1024"] == "SMs 18.9%, SMSPs 19.2%, L1 18.9%, L2 6.4%"
    assert rules["sage2_seed"] == "none fired"
    assert max(len(line) for line in shown.to_string().splitlines()) < 200


def test_the_summary_shows_each_cases_event_min_and_max_beside_its_p50(capsys):
    """Found reading the H100's notebook 05 record with `labkit ncu summary`: 8 x 1k decode read 49.28 us by the events
    against ncu's 18.46 (-62.53 %), unflagged as under 100 us, and nothing printed said that its samples ran from
    20.83 to 215.49 us, i.e. that the p50 was disturbed, not the kernel slower."""
    from labkit import cli

    from ..conftest import ROOT

    (recorded,) = (ROOT / "data" / "runs" / "20261205T143900Z-h100_gpu_tests_head").glob("notebooks/*-05_ncu_corr*/"
                                                                                            "data/ncu_summary.json")
    assert cli.main(["ncu", "summary", str(recorded)]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(ln for ln in lines if ln.split()[:1] == ["case"])
    assert header.split() == ["case", "kernel", "event_p50_us", "event_min_us", "event_max_us", "ncu_us", "gap",
                              "flagged"]
    row = next(ln for ln in lines if ln.split()[:1] == ["decode_b8_kv1024"])
    assert row.split() == ["decode_b8_kv1024", "paged_decode", "49.28", "20.83", "215.49", "18.46", "-62.53%", "-"]


def test_recorded_for_want_of_a_gpu_gives_no_ncu_advice(tmp_path, monkeypatch):
    """Found by a UX review: on a machine without a GPU, 05's first line advised installing Nsight Compute (or setting
    LABKIT_NCU), though a recorded run profiles nothing; the banner's reason, no GPU, is the one that holds."""
    from labkit.cuda import gpu_available

    if gpu_available():
        pytest.skip("this machine has a GPU: source='auto' runs live")
    monkeypatch.setenv("LABKIT_NCU", str(tmp_path / "no_ncu"))  # ncu missing too, wherever the test runs
    res = notebooks.run("05", {}, out_root=tmp_path / "out", timeout_s=600)  # the recorded runs of data/runs
    assert res.ok, res.error
    nb = json.loads(res.notebook.read_text())
    text = "".join("".join(o.get("text", "")) for c in nb["cells"] if c["cell_type"] == "code"
                   for o in c.get("outputs", []))
    assert as_read(text).startswith("labkit 05_ncu_correlation: RECORDED mode: no "), text[:300]
    assert "Nsight Compute" not in text and "LABKIT_NCU" not in text and "ncu cannot profile here" not in text


def test_auto_on_a_gpu_whose_ncu_is_missing_says_why_recorded_and_how_to_profile(monkeypatch):
    import labkit.cuda

    advice = "Nsight Compute (ncu) not found: looked at ...; install Nsight Compute or set LABKIT_NCU to its ncu"
    monkeypatch.setattr(study, "available", lambda: (False, advice))
    monkeypatch.setattr(labkit.cuda, "gpu_available", lambda: True)
    assert study.choose_source("auto") == ("recorded", f"ncu cannot profile here ({advice}); showing the recorded "
                                                       "run instead")
    assert study.choose_source("live") == ("live", None)  # measure refuses it with the same advice
    assert study.choose_source("recorded") == ("recorded", None)
    monkeypatch.setattr(study, "available", lambda: (True, "ncu 2025.3.1 at /opt/ncu"))
    assert study.choose_source("auto") == ("auto", None)
    monkeypatch.setattr(labkit.cuda, "gpu_available", lambda: False)
    assert study.choose_source("auto") == ("auto", None)  # the session finds no GPU and says so


def test_the_notebooks_own_metrics_reach_the_summarys_counters(tmp_path, monkeypatch):
    """Found by a review: ``metrics`` were added to ncu's command line but not read back, so notebook 05's ``-p
    metrics`` made ncu collect counters that no table or ncu_summary.json showed."""
    from labkit import _deps, device
    from labkit.ncu import study
    from labkit.ncu.runner import NcuRun

    cases = study.plan([1, 37810, 56, 128], [], [], [1], [1024])
    asked, read = [], []

    def profile(target, opts, **kw):
        asked.append(opts.metrics)
        return NcuRun(opts.output.with_suffix(".ncu-rep"), opts.output.with_suffix(".log"), ("ncu",), 1.0, 10)

    def counter_rows(report, names, metrics=None):
        read.append(dict(metrics or {}))
        return []

    monkeypatch.setattr(study, "require_ncu", lambda: "ncu 2025.3.1 at /fake/ncu")
    monkeypatch.setattr(study, "time_cases", lambda c, **kw: {})
    monkeypatch.setattr(study, "profile", profile)
    monkeypatch.setattr(study, "load", lambda path: None)
    monkeypatch.setattr(study, "counter_rows", counter_rows)
    monkeypatch.setattr(study, "rule_rows", lambda report, names: [])
    monkeypatch.setattr(study, "attribution_of", lambda case, source, reps: study.Attribution(case, "x.cu", (), (),
                                                                                              "skipped here"))
    monkeypatch.setattr(_deps, "optional", lambda name: object())
    monkeypatch.setattr(device, "describe", lambda: type("D", (), {"name": "fake GPU"})())
    study.measure(cases, out_dir=tmp_path, metrics=["smsp__inst_executed.sum"], progress=None)
    assert asked and all("smsp__inst_executed.sum" in m for m in asked)
    assert read == [{"smsp__inst_executed.sum": "smsp__inst_executed.sum"}] * 2  # the Sage2 and the decode report


def test_ncus_tail_effect_is_its_launch_configuration_rules_message_titled_tail_effect(monkeypatch):
    """Found by a review: ncu gives the tail effect as rule LaunchConfiguration, its message titled "Tail Effect";
    labkit matched "tail" in rule ids only, so the summary dropped it and the table always said "none fired"."""
    import pandas as pd

    from labkit.ncu import summary

    found = pd.DataFrame([
        {"range": 0, "action": 0, "kernel": "k", "rule": "LaunchConfiguration", "section": "LaunchStats",
         "title": "Tail Effect", "message": "1 full waves and a partial wave of 496 blocks", "speedup_pct": 50.0},
        {"range": 0, "action": 0, "kernel": "k", "rule": "LaunchConfiguration", "section": "LaunchStats",
         "title": "Small Grid", "message": "fewer blocks than SMs", "speedup_pct": 10.0},
        {"range": 0, "action": 0, "kernel": "k", "rule": "WorkloadImbalance", "section": "WorkloadDistribution",
         "title": "SMs Workload Imbalance", "message": "...", "speedup_pct": 17.4}])
    monkeypatch.setattr(summary, "rules", lambda report: found.copy())
    monkeypatch.setattr(summary, "kernels", lambda report: pd.DataFrame([{"range": 0, "action": 0,
                                                                          "nvtx": "ncu/d0"}]))
    rows = summary.rule_rows(None, ["d0"])
    assert [(r["rule"], r["title"]) for r in rows] == [("LaunchConfiguration", "Tail Effect"),
                                                       ("WorkloadImbalance", "SMs Workload Imbalance")]
    eff = tables.efficiency_table(dataclasses.replace(_sweep([100], [1.5]), rules=tuple(rows))).iloc[0]
    assert (eff["tail_rule"], eff["tail_rule_speedup_pct"]) == ("Tail Effect", 50.0)
    assert eff["imbalance_rules"] == "SMs Workload Imbalance (17.4%)"


def test_notebook_05_shows_counters_and_gaps_in_units_a_row_reads_in():
    """A review: the counters table showed 8.556206e+08 bytes, 1.803312e+09 Hz and limits of 2.0 CTAs, and the gap
    column a bare 0.010489 where the printed lines said +1.05 %. The shown tables convert; the CSVs keep ncu's units."""
    import pandas as pd

    counters = pd.DataFrame({"case": ["a", "b"], "duration_ns": [121005408.0, 7552.0], "clock_hz": [1.803312e9, 1.9e9],
                             "dram_read_bytes": [8.556206e8, 4235520.0], "dram_write_bytes": [598210048.0, 0.0],
                             "sm_throughput_pct": [54.365477, -0.0001], "waves": [62.787879, 0.484848],
                             "limit_registers": [2.0, 1.0], "l2_hit_pct": [99.012747, float("nan")]})
    shown = tables.shown_counters(counters)
    assert list(shown.columns) == ["case", "duration_us", "clock_GHz", "dram_read_MB", "dram_write_MB",
                                   "sm_throughput_pct", "waves", "limit_registers", "l2_hit_pct"]
    assert shown.iloc[0].tolist()[1:8] == [121005.41, 1.803, 855.6, 598.2, 54.4, 62.79, 2]
    assert str(shown["sm_throughput_pct"].iloc[1]) == "0.0" and shown["limit_registers"].dtype == "int64"
    assert counters["duration_ns"].iloc[0] == 121005408.0  # the caller's frame (what is saved) unchanged
    gaps = pd.DataFrame({"case": ["a"], "event_p50_us": [119651.103973], "ncu_us": [120906.112], "gap": [0.010489],
                         "gap_us": [1255.008027], "flagged": [True]})
    shown = tables.shown_gaps(gaps)
    assert list(shown.columns) == ["case", "event_p50_us", "ncu_us", "gap_pct", "gap_us", "flagged"]
    assert shown.iloc[0].tolist() == ["a", 119651.1, 120906.11, 1.05, 1255.01, "yes"]
    matrix = pd.DataFrame({"decode sweep (6 points)": [0.999831, -0.0001]}, index=["dram_read_bytes", "waves"])
    assert tables.shown_correlations(matrix).iloc[:, 0].tolist() == [1.0, 0.0]
