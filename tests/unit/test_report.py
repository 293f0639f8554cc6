import dataclasses
import json
import math
import re
import subprocess
import sys

import pytest

from labkit import report
from labkit.errors import FormatError
from labkit.provenance import collect

from ..conftest import ROOT, SHARED


def test_seed_round_trips_byte_for_byte(seed_report_path):
    text = seed_report_path.read_text()
    assert report.dumps(report.load(seed_report_path)) == text


def test_data_copy_is_the_users_file(seed_report_path):
    original = SHARED / "seeds" / "001_a7d5760a8f7ea9fe.txt"
    if not original.exists():
        pytest.skip("shared/seeds not beside this checkout")
    assert seed_report_path.read_bytes() == original.read_bytes()


def test_seed_model(seed_report_path):
    r = report.load(seed_report_path)
    assert r.report_version == 0 and r.provenance is None
    assert r.q_shape == (1, 37810, 56, 128)
    assert r.scheduler.grid_ctas == 16576 and r.scheduler.k_iterations_per_cta == 591
    assert r.phase_timings["fused_mainloop"].p50_s == 0.23708939361572268
    assert len(r.tail_study) == 6 and r.tail_study[1].q_tail_rows == 1
    assert r.top_level_phases() == ["k_mean_and_smoothing_preparation", "qk_int8_quantization",
                                    "v_fp8_transpose_scale_quantization", "fused_mainloop"]
    df = r.to_frame()
    assert df.loc[r.top_level_phases(), "share"].sum() == pytest.approx(1.0)
    # a group's members one level below it, times in ms (found by a mutation audit: neither was checked)
    assert list(df["level"]) == [0 if p in r.top_level_phases() else 1 for p in df.index] and set(df["level"]) == {0, 1}
    assert list(df["p50_ms"]) == pytest.approx([r.phase_timings[p].p50_s * 1e3 for p in df.index])
    assert list(df["p90_ms"]) == pytest.approx([r.phase_timings[p].p90_s * 1e3 for p in df.index])


def _mutate(seed_report_path, fn):
    d = json.loads(seed_report_path.read_text())
    fn(d)
    return json.dumps(d)


@pytest.mark.parametrize("mutation, path, expected", [
    (lambda d: d["phase_timings"]["fused_mainloop"].__setitem__("p50_s", "fast"),
     "phase_timings.fused_mainloop.p50_s", "expected a number"),
    (lambda d: d["scheduler"].pop("cta_q"), "scheduler", "missing key 'cta_q'"),
    (lambda d: d["tail_study"][2].__setitem__("sweep", "sideways"), "tail_study[2].sweep", "expected one of"),
    (lambda d: d.__setitem__("q_shape", [1, 2, 3]), "q_shape", "a list of 4 entries"),
    (lambda d: d.__setitem__("bogus", 1), "bogus", "unknown key"),
    (lambda d: d["tail_study"][0]["mainloop"].__setitem__("count", 1.5), "tail_study[0].mainloop.count",
     "an integer"),
    (lambda d: d["phase_timings"]["fused_mainloop"].__setitem__("min_s", 1.0), "phase_timings.fused_mainloop",
     "min_s <= p50_s"),
    (lambda d: d.__setitem__("report_version", 7), "report_version", "expected 0"),
    (lambda d: d["phase_timings"].pop("fused_mainloop"), "phase_timings", "missing key 'fused_mainloop'"),
    (lambda d: d.__setitem__("phase_timings", {}), "phase_timings", "expected"),
    # found by a readers review: each was accepted
    (lambda d: d["scheduler"].__setitem__("cta_q", 0), "scheduler.cta_q", "expected an integer in [1, "),
    (lambda d: d["scheduler"].__setitem__("grid_ctas", 100), "scheduler.grid_ctas",
     "expected q_ctas_per_head x heads x batch = 296 x 56 x 1"),
    (lambda d: d.__setitem__("k_shape", [1, 37810, 56, 100]), "k_shape",
     "expected q_shape's and v_shape's batch and head_dim (1, 128) first and last"),
    (lambda d: d["tail_study"][0].__setitem__("kv_len", 40000), "tail_study[0].kv_len",
     "= 40000: expected at most the shapes' 37810 / 37810 (q / kv, NHD)"),
    # found by a CLI review: the field derived from the bad value was blamed, not the value
    (lambda d: d["tail_study"][0].__setitem__("q_len", 99999), "tail_study[0].q_len",
     "= 99999: expected at most the shapes' 37810 / 37810 (q / kv, NHD)"),
    (lambda d: d["q_shape"].__setitem__(3, 100), "q_shape",
     "expected k_shape's and v_shape's batch and head_dim (1, 128) first and last"),
    (lambda d: d["v_shape"].__setitem__(0, 2), "v_shape",
     "expected q_shape's and k_shape's batch and head_dim (1, 128) first and last"),
    (lambda d: [d.__setitem__("k_shape", [2, 37810, 56, 128]), d.__setitem__("v_shape", [3, 37810, 56, 128])],
     "k_shape", "expected q_shape's batch and head_dim (1, 128) first and last"),
    (lambda d: d["tail_study"].append(d["tail_study"][0]), "tail_study[6]", "again: expected each point once"),
    (lambda d: d["manual_decomposition_vs_public_sage2"].__setitem__("max_abs", 3.0),
     "manual_decomposition_vs_public_sage2", "expected both 0 for outputs that are bitwise equal"),
    # found by a CLI review: each was shown as it stood
    (lambda d: d["scheduler"].update(heads=7, grid_ctas=296 * 7), "scheduler.heads", "expected q_shape's heads = 56"),
    (lambda d: d["scheduler"].update(q_ctas_per_head=1, grid_ctas=56), "scheduler.q_ctas_per_head",
     "expected ceil(N 37810 / cta_q 128) = 296"),
    (lambda d: d["scheduler"].update(threads_per_cta=5), "scheduler.threads_per_cta",
     "expected 32 x warps_per_cta 4 = 128"),
    (lambda d: d["tail_study"][0].update(k_iterations_per_cta=3), "tail_study[0].k_iterations_per_cta",
     "expected ceil(kv_len "),
    (lambda d: d["tail_study"][0].update(q_ctas_per_head=3), "tail_study[0].q_ctas_per_head", "expected ceil(q_len "),
    (lambda d: d["scheduler"].update(k_iterations_per_cta=3), "scheduler.k_iterations_per_cta",
     "expected ceil(kv N 37810 / cta_k 64) = 591"),
    (lambda d: [d[k].__setitem__(3, 100) for k in ("q_shape", "k_shape", "v_shape")], "q_shape",
     "expected a head_dim the Sage2 kernels take"),
    (lambda d: d.__setitem__("iterations", 3), "phase_timings.", "expected the report's iterations, 3"),
])
def test_malformed_reports_name_the_path(seed_report_path, mutation, path, expected):
    with pytest.raises(FormatError) as err:
        report.loads(_mutate(seed_report_path, mutation), source="r.json")
    msg = str(err.value)
    assert msg.startswith(f"r.json: {path}"), msg
    assert expected in msg and "\n" not in msg


def test_version1_adds_provenance_and_round_trips(seed_report_path, tmp_path):
    seed = report.load(seed_report_path)
    v1 = dataclasses.replace(seed, report_version=1, provenance=collect(timing_mode="cold"),
                             accuracy={"cos": 0.9993, "reference": "fp32"}, checksum_definition="sum of output in fp32")
    path = report.save(v1, tmp_path / "r.json")
    back = report.load(path)
    assert back == v1
    assert json.loads(path.read_text())["provenance"]["versions"]["labkit"] == "0.1.0"


def test_the_scheduler_labkit_writes_reads_back_at_every_batch():
    """Found by a review: the grid check left out the batch (grid.z), so every report of batch 2 or more, which sage2
    profile writes and then reads back, was refused after all its GPU work."""
    from dataclasses import asdict

    from labkit._json import Node
    from labkit.report.model import _scheduler
    from labkit.workloads.sage2.schedule import Schedule, scheduler

    for schedule in (Schedule(), Schedule.sm90()):
        for batch in (1, 2, 5):
            for q_len, kv_len in ((333, 333), (37810, 37761), (1, 64)):
                s = scheduler(batch, q_len, kv_len, 4, 96, schedule)
                assert _scheduler(Node(asdict(s)), batch, q_len, kv_len, 4) == s


def test_a_labkit_report_without_its_accuracy_check_is_refused_by_name():
    """Found by a readers review: a version 1 report without ``accuracy`` loaded, and notebook 02 then failed with an
    AttributeError naming no file; labkit's profile always writes it and the checksum's definition."""
    recorded = sorted((ROOT / "data" / "runs").glob("*-02_sage2_phases/data/report.json"))[-1]
    doc = json.loads(recorded.read_text())
    for damage, said in ((lambda d: d.pop("accuracy"), "missing key 'accuracy'"),
                         (lambda d: d["accuracy"].__setitem__("cos", "high"), "accuracy.cos = 'high': expected a "
                                                                              "number"),
                         (lambda d: d.pop("checksum_definition"), "missing key 'checksum_definition'"),
                         # found by a mutation audit: each was a KeyError or TypeError naming no file
                         (lambda d: d["accuracy"].pop("reference"), "accuracy: missing key 'reference'"),
                         (lambda d: d.__setitem__("accuracy", [0.99]), "accuracy = [0.99]: expected an object")):
        bad = json.loads(json.dumps(doc))
        damage(bad)
        with pytest.raises(FormatError, match=re.escape(said)):
            report.loads(json.dumps(bad))


def test_version1_requires_provenance(seed_report_path):
    text = _mutate(seed_report_path, lambda d: d.__setitem__("report_version", 1))
    with pytest.raises(FormatError, match="missing key 'provenance'"):
        report.loads(text)


@pytest.mark.parametrize("key, value, said", [
    ("clocks", {"sm_clock_hz": -5, "sm_clock_max_hz": None},
     "provenance.clocks.sm_clock_hz = -5: expected an integer"),
    ("device", "H200", "provenance.device = 'H200': expected an object"),
    ("device", {"name": "H200"}, "provenance.device: missing key 'index'"),
    ("versions", {"torch": 2.11}, "provenance.versions.torch = 2.11: expected a string"),
    ("created_utc", "yesterday", "provenance.created_utc = 'yesterday': expected an ISO 8601 time"),  # CLI review
    ("git_sha", 42, "provenance.git_sha = 42: expected a string"),  # a mutation audit: neither was checked
    ("timing_mode", ["cold"], 'provenance.timing_mode = ["cold"]: expected a string'),
])
def test_provenance_values_are_read_strictly(key, value, said):
    """Found by a review: a negative clock read as 'clocks not recorded', a device given as a string as 'device not
    recorded', and report diff named a difference that was the file's fault."""
    recorded = sorted((ROOT / "data" / "runs").glob("*-02_sage2_phases/data/report.json"))[-1]
    doc = json.loads(recorded.read_text())
    report.loads(json.dumps(doc))
    doc["provenance"][key] = value
    with pytest.raises(FormatError, match=re.escape(said)):
        report.loads(json.dumps(doc))


def test_provenance_without_a_git_sha_or_timing_mode_reads():
    """null: collect() had no timing mode to give, or git none to read; not a damaged file."""
    recorded = sorted((ROOT / "data" / "runs").glob("*-02_sage2_phases/data/report.json"))[-1]
    doc = json.loads(recorded.read_text())
    doc["provenance"].update(git_sha=None, timing_mode=None)
    assert report.loads(json.dumps(doc)).provenance["timing_mode"] is None


@pytest.mark.parametrize("key, value, said", [
    ("dtype", "int3", "metadata.dtype = 'int3': expected one of bf16, fp16"),
    ("layout", "nhd", "metadata.layout = 'nhd': expected one of NHD, HND"),
    ("schedule", {"cta_q": "x"}, "metadata.schedule.cta_q = 'x': expected an integer"),
    ("schedule", {"tiles": 3}, "metadata.schedule.tiles"),
])
def test_the_metadata_labkit_writes_is_read_back_strictly(key, value, said):
    """Found by a review: an int3 dtype was printed as written, and a schedule of strings made report diff say the
    schedules matched. A seed report's metadata stays the user's own."""
    recorded = sorted((ROOT / "data" / "runs").glob("*-02_sage2_phases/data/report.json"))[-1]
    doc = json.loads(recorded.read_text())
    doc["metadata"][key] = value
    with pytest.raises(FormatError, match=re.escape(said)):
        report.loads(json.dumps(doc))


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "labkit", *args], capture_output=True, text=True)


def test_cli_show_prints_the_phase_table(seed_report_path):
    out = _cli("report", "show", str(seed_report_path))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].endswith(", dtype not recorded, layout not recorded, 10 iterations, report_version 0")
    assert lines[1].startswith("device not recorded, clocks not recorded, git not recorded; seed mainloop, cta 128x64")
    assert lines[2].split() == ["phase", "count", "p50", "ms", "p90", "ms", "share"]
    row = next(line for line in lines if line.startswith("fused_mainloop"))
    assert row.split() == ["fused_mainloop", "10", "237.089", "237.755", "92.0%"]
    assert any(line.startswith("  q_int8_quantization") for line in lines)


def test_tables_align_their_columns_under_a_rule_of_dashes():
    """Found by mutation testing: the show test splits lines on blanks, so neither the column widths nor the rule
    under the header were pinned."""
    rows = [["a", "1.5"], ["longer_name", "12.25"]]
    # by hand: column widths max(5, 1, 11) = 11 and max(2, 3, 5) = 5, two blanks apart; text left, numbers right
    assert report.tables.fmt_table(["phase", "ms"], rows).splitlines() == [
        "phase" + " " * 6 + "  " + "   ms",
        "-" * 11 + "  " + "-" * 5,
        "a" + " " * 10 + "  " + "  1.5",
        "longer_name" + "  " + "12.25"]
    assert report.tables.fmt_table(["phase", "ms"], rows, rule=False).splitlines()[1].startswith("a ")


def test_a_report_whose_phases_all_took_zero_time_shows_no_shares(seed_report_path):
    r = report.load(seed_report_path)
    zero = dataclasses.replace(r, phase_timings={k: dataclasses.replace(v, p50_s=0.0)
                                                 for k, v in r.phase_timings.items()})
    lines = report.phase_table(zero).splitlines()
    assert lines[-1].split() == ["total", "(top-level", "p50)", "0.000", "-"]
    assert lines[2:] and all(ln.split()[-1] == "-" for ln in lines[2:])  # every phase: no share of a zero total
    shown = report.phase_table(r).splitlines()
    top = [ln.split() for ln in shown[2:-1] if not ln.startswith(" ")]  # the top-level phases: not indented
    total = shown[-1].split()
    assert total[-1] == "100.0%" and float(total[-2]) == pytest.approx(sum(float(t[2]) for t in top), abs=0.002)
    assert sum(float(t[-1][:-1]) for t in top) == pytest.approx(100, abs=0.05 * len(top))  # shares of that total


def test_short_phases_keep_three_significant_digits_and_their_share(seed_report_path):
    """Found by a review: labkit's v_scale_fp8_quantization (4 us: it only writes scales) showed as 0.004 ms, 0.0%."""
    r = report.load(seed_report_path)
    short = dataclasses.replace(r.phase_timings["v_scale_fp8_quantization"], p50_s=3.97e-6, p90_s=4.06e-6,
                                min_s=3.9e-6, mean_s=4e-6)
    r = dataclasses.replace(r, phase_timings={**r.phase_timings, "v_scale_fp8_quantization": short})
    row = next(ln for ln in report.phase_table(r).splitlines() if "v_scale_fp8" in ln)
    total = sum(r.phase_timings[p].p50_s for p in r.top_level_phases())
    assert row.split() == ["v_scale_fp8_quantization", "10", "0.00397", "0.00406", f"{100 * 3.97e-6 / total:.2g}%"]
    assert report.tables.ms(0.2371) == "237.100" and report.tables.ms(0.0) == "0.000"


def test_the_phase_table_notes_a_member_longer_than_its_group_and_a_phase_it_does_not_know(seed_report_path):
    """Found by a review: a sub-phase timed longer than the region around it, and a phase outside Sage2's (a misspelt
    one, counted in the total), were shown with no word. They are noted under the table, not refused: the report
    stays the user's measurement. A member whose group the report does not time counts in the total."""
    r = report.load(seed_report_path)
    timings = dict(r.phase_timings)
    timings["q_int8_quantization"] = timings["fused_mainloop"]
    timings["q_int8_quantisation"] = timings["v_scale_fp8_quantization"]
    lines = report.phase_table(dataclasses.replace(r, phase_timings=timings)).splitlines()
    assert lines[-2] == ("note: q_int8_quantization (237.089 ms) is longer than qk_int8_quantization (7.671 ms), the "
                         "region timed around it: one of the two was not timed as the seed times them")
    assert lines[-1].startswith("note: q_int8_quantisation: not a phase of Sage2's pipeline as the seed names them "
                                "(k_mean_and_smoothing_preparation, qk_int8_quantization, ")
    assert lines[-1].endswith("fused_mainloop); counted in the total as top-level")
    assert not report.tables.phase_notes(r)  # the seed's own report: nothing to note
    del timings["qk_int8_quantization"], timings["q_int8_quantisation"]
    r = dataclasses.replace(r, phase_timings=timings)
    assert "q_int8_quantization" in r.top_level_phases() and "k_int8_subtract_mean_quantization" in r.top_level_phases()
    assert "v_scale_fp8_quantization" not in r.top_level_phases()  # its group is timed


def test_cli_diff_prints_ratios(seed_report_path, tmp_path):
    d = json.loads(seed_report_path.read_text())
    for st in d["phase_timings"].values():
        for k in ("mean_s", "p50_s", "p90_s", "p95_s", "p99_s", "min_s", "max_s"):
            st[k] *= 0.5
    b = tmp_path / "b.json"
    b.write_text(json.dumps(d))
    out = _cli("report", "diff", str(seed_report_path), str(b))
    assert out.returncode == 0, out.stderr
    row = next(line for line in out.stdout.splitlines() if line.startswith("fused_mainloop"))
    assert row.split() == ["fused_mainloop", "237.089", "118.545", "0.500x"]


def test_cli_bad_file_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"metadata": {}}')
    out = _cli("report", "show", str(bad))
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0
    assert "missing key 'q_shape'" in out.stderr and "Traceback" not in out.stderr


def test_import_does_no_gpu_work():
    code = ("import sys, labkit, labkit.report, labkit.timing, labkit.manifest, labkit.workloads.sage2.plan, "
            "labkit.workloads.sage2.profile, labkit.cli; print('cupy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr
    # every package as an attribute of ``import labkit`` (an API walk: labkit.sweep, the README's, had raised
    # AttributeError), still with no GPU work
    code = ("import sys, labkit; [getattr(labkit, n) for n in labkit.__all__]; labkit.sweep.run; labkit.manifest.load; "
            "labkit.workloads.decode.DecodeGeometry; labkit.workloads.sage2; print('cupy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def test_a_report_holding_nan_is_refused_by_its_writer_naming_the_field(seed_report_path, tmp_path):
    """A measurement gone NaN is refused as the report is written, naming its JSON path; no file is left behind
    (the strict reader would refuse it later, after the run that measured it is gone)."""
    seed = report.load(seed_report_path)
    nan = dataclasses.replace(seed.phase_timings["fused_mainloop"], p50_s=float("nan"))
    bad = dataclasses.replace(seed, phase_timings={**seed.phase_timings, "fused_mainloop": nan})
    with pytest.raises(FormatError, match=r"phase_timings\.fused_mainloop\.p50_s = nan: not a finite number"):
        report.save(bad, tmp_path / "r.json")
    assert not (tmp_path / "r.json").exists()


def test_notebook_02s_checks_and_scheduler_tables(seed_report_path):
    """The checks a labkit report carries, one row each, and the scheduler fields of two reports side by side."""
    recorded = sorted((ROOT / "data" / "runs").glob("*-02_sage2_phases/data/report.json"))[-1]
    ours, seed = report.load(recorded), report.load(seed_report_path)
    checks = report.checks_frame(ours)
    assert list(checks.columns) == ["value"] and checks.loc["one-shot == phase-by-phase (bitwise)", "value"] in (
        True, False) and checks.loc["checksum, phase-by-phase (manual)", "value"] == ours.manual_checksum
    # the seed's names for the two outputs' checksums, which a review read as the fp32 reference's
    assert checks.loc["checksum, one-shot (reference)", "value"] == ours.reference_checksum
    # the NaN count named as a count: "accuracy nan 0" read as a missing value (a review)
    assert [i for i in checks.index if i.startswith("accuracy ")] == [
        f"accuracy {'NaN elements' if k == 'nan' else k}" for k in ours.accuracy]
    assert "accuracy NaN elements" in checks.index
    # a new-user review: the 190-character checksum definition pushed every value of the column that far right, and
    # the bitwise check read True; long texts go under the table, the rest reads as values
    shown, below = report.shown_checks(checks)
    assert "checksum definition" not in shown.index and "accuracy reference" not in shown.index
    assert below == [f"accuracy reference: {ours.accuracy['reference']}",
                     f"checksum definition: {ours.checksum_definition}"]
    assert shown.loc["one-shot == phase-by-phase (bitwise)", "value"] == ("yes" if ours.decomposition.equal else "no")
    assert shown.loc["accuracy elements", "value"] == f"{ours.accuracy['elements']:,}"
    assert shown.loc["checksum, one-shot (reference)", "value"] == f"{ours.reference_checksum:.6f}"
    assert max(len(line) for line in shown.to_string().splitlines()) < 60
    seeds = report.checks_frame(seed)  # the seed records no accuracy and no checksum definition (an API walk)
    assert list(seeds.index) == ["one-shot == phase-by-phase (bitwise)", "max |one-shot - phases|",
                                 "checksum, phase-by-phase (manual)", "checksum, one-shot (reference)"]
    sched = report.scheduler_frame(labkit=ours, seed=seed)
    assert list(sched.columns) == ["labkit", "seed"] and sched.index.name == "field"
    assert sched.loc["grid_ctas", "seed"] == 16576 and sched.loc["grid_ctas", "labkit"] == ours.scheduler.grid_ctas


def test_an_hnd_reports_tail_lengths_are_read_against_its_sequence_axis(seed_report_path):
    """[B, H, N, D]: a tail q_len past H (56) but within N (37810) is valid, one past N is refused naming the layout
    (a test audit: reading the head axis as N refused every HND report with a tail study, and no test saw it)."""
    def hnd(d):
        d["metadata"]["layout"] = "HND"
        for k in ("q_shape", "k_shape", "v_shape"):
            d[k] = [1, 56, 37810, 128]

    r = report.loads(_mutate(seed_report_path, hnd))
    assert max(t.q_len for t in r.tail_study) == 37810 > 56

    def past_n(d):
        hnd(d)
        d["tail_study"][0]["kv_len"] = 37811

    with pytest.raises(FormatError, match=r"tail_study\[0\]\.kv_len = 37811: expected at most the shapes' "
                                          r"37810 / 37810 \(q / kv, HND\)"):
        report.loads(_mutate(seed_report_path, past_n))


def test_save_makes_the_missing_directories_of_its_path(seed_report_path, tmp_path):
    """A report saved under a run directory not made yet lands there, byte for byte what dumps gives plus a newline
    (found by a mutation audit: a save that made no parents passed every test)."""
    seed = report.load(seed_report_path)
    path = report.save(seed, tmp_path / "runs" / "new" / "r.json")
    assert path.read_text() == report.dumps(seed) + "\n" and report.load(path) == seed


def test_the_tail_note_is_read_off_the_report_and_names_the_points_beyond_noise(seed_report_path):
    """Found by a notebook review: notebook 00 said "run-to-run drift in the seed (237.1, 239.8 and 240.4 ms) is larger
    than the tail effect" above a table that flags kv_tail_fixed_q 37760 beyond noise (-0.23 %); the note now comes from
    the report: the full shape's times, their drift against the largest tail difference, and the flagged points."""
    r = report.load(seed_report_path)
    df = report.tail_table(r)
    n = r.q_shape[1]
    full = df[(df["q_len"] == n) & (df["kv_len"] == n)]
    times = [r.phase_timings["fused_mainloop"].p50_s * 1e3, *full["mainloop_p50_ms"]]
    tails = df[~((df["q_len"] == n) & (df["kv_len"] == n))]
    largest = tails["vs_full_pct"].abs().max()
    note = report.tail_note(r)
    assert f"timed {len(times)} times: {times[0]:.4g} ms (phase timing), " in note  # 237.1 ms, as before
    assert f"{100 * (max(times) / min(times) - 1):.2f} % apart: run-to-run drift larger than" in note
    assert f"(at most {largest:.2f} %)" in note
    flagged = tails[tails["beyond_noise"]]
    assert len(flagged) >= 1  # the seed's kv_tail_fixed_q 37760, which the fixed sentence had left unsaid
    assert f"This report: within its sweep, {len(flagged)} of {len(tails)} tail point" in note  # no build recorded
    for row in flagged.itertuples():
        at = row.q_len if row.q_len != n else row.kv_len
        assert f"\n  {row.sweep} {at}: {row.vs_full_pct:+.2f} % against" in note
    # the full shape timed alike in the phase timing: the drift left is the two sweeps', under the largest tail one
    same = dataclasses.replace(r.phase_timings["fused_mainloop"], p50_s=full["mainloop_p50_ms"].iloc[0] / 1e3)
    calm = dataclasses.replace(r, phase_timings={**r.phase_timings, "fused_mainloop": same})
    drift = 100 * (full["mainloop_p50_ms"].max() / full["mainloop_p50_ms"].min() - 1)
    assert drift <= largest and "run-to-run drift no larger than" in report.tail_note(calm)
    # found in notebook 02 (drift 0.05 %, a tail point 0.045 % off): a drift larger than some tail points' differences
    # had been called "no larger than any"; the note compares it with the largest only
    assert (tails["vs_full_pct"].abs() < drift).any()
    assert (f"{drift:.2f} % apart: run-to-run drift no larger than the largest tail point's difference from its own "
            f"sweep's full shape ({largest:.2f} %).\n") in report.tail_note(calm)
    assert "than any" not in report.tail_note(calm)
    assert "compare within their sweep only" in report.tail_note(r)  # said only where the drift is the larger
    assert "compare within their sweep only" not in report.tail_note(calm)


def test_rounded_takes_the_first_rule_whose_suffix_ends_a_float_column_and_leaves_the_rest():
    import pandas as pd

    from labkit.report.tables import rounded

    frame = pd.DataFrame({"p50_us": [12.34567], "q_row_efficiency": [0.987654321], "TBps": [4.123456],
                          "ctas": [16576], "label": ["x"]})
    out = rounded(frame, (("_us", 1), ("efficiency", 4)), default=2)
    assert out.iloc[0].tolist() == [12.3, 0.9877, 4.12, 16576, "x"]
    assert rounded(frame, (("_us", 1),))["TBps"].iloc[0] == 4.123456  # no default: as it was
    assert frame["p50_us"].iloc[0] == 12.34567  # a copy: the table saved beside it keeps every digit
    # a review: -0.001 showed as -0.00 in notebook 02's vs_full_pct
    zero = rounded(pd.DataFrame({"vs_full_pct": [-0.001, 0.5]}), (), default=2)["vs_full_pct"].iloc[0]
    assert f"{zero:.2f}" == "0.00"
    # a review: notebook 04's kv_tile_efficiency, every value 1, showed as 1.0 beside 0.9697 in the next column;
    # a column of whole numbers is text with its rule's digits (a NaN among them shown as pandas shows one)
    ones = rounded(pd.DataFrame({"kv_tile_efficiency": [1.0, 0.99999, math.nan], "split_efficiency": [1.0, 0.9697, 1.0],
                                 "waves": [2.0, 3.0, 1.0]}), (("efficiency", 4),), default=0)
    assert ones["kv_tile_efficiency"].tolist() == ["1.0000", "1.0000", "NaN"]
    assert ones["split_efficiency"].tolist() == [1.0, 0.9697, 1.0]  # numbers: pandas shows them as 1.0000
    assert ones["waves"].tolist() == [2.0, 3.0, 1.0]  # no digits to show: left as numbers
    assert ones.to_string().splitlines()[2].split()[1:3] == ["1.0000", "0.9697"]


def test_each_report_reader_names_another_labkit_document_it_is_given(seed_report_path):
    """An API walk: a decode report given to the Sage2 reader read as 13 missing keys, and the seed's Sage2 report
    given to the decode reader as missing decode keys; each now says which document it is."""
    from labkit.workloads.decode import report as decode_report

    decode = next(iter(sorted((ROOT / "data" / "runs").glob("*decode_bench*/sweep.json"))))
    with pytest.raises(FormatError, match=r"missing key 'metadata': this is a decode report \(labkit report show\), "
                                          r"not a Sage2 report"):
        report.load(decode)
    with pytest.raises(FormatError, match=r"missing key 'decode_report_version': this is a Sage2 report \(labkit "
                                          r"report show\), not a decode report"):
        decode_report.load(seed_report_path)


def test_a_run_directory_given_for_a_report_names_the_json_files_in_it(capsys):
    """A fresh-user review: `labkit report show data/runs/<stamp>-02_sage2_phases` said only "is a directory"."""
    from labkit import cli

    from ..conftest import ROOT

    run = ROOT / "data" / "runs" / "20261206T103429Z-02_sage2_phases"
    assert cli.main(["report", "show", str(run)]) == 2
    assert capsys.readouterr().err.rstrip().endswith("is a directory; expected the report as a regular file (the JSON "
                                                     "files in it: data/precision.json, data/report.json)")


def test_save_refuses_what_its_reader_would_and_diff_leaves_out_the_clock_read_before_a_run(seed_report_path,
                                                                                              tmp_path):
    """Found by a mutation audit: a save that skipped reading back its own text, and a diff that listed the NVML
    clock read before each run (the idle boost clock, not the one either ran at), both passed every test."""
    from labkit.report.tables import differences

    seed = report.load(seed_report_path)
    off = dataclasses.replace(seed.tail_study[1], q_row_efficiency=seed.tail_study[1].q_row_efficiency + 1e-4)
    bad = dataclasses.replace(seed, tail_study=(seed.tail_study[0], off, *seed.tail_study[2:]))
    with pytest.raises(FormatError, match=r"tail_study\[1\]\.q_row_efficiency = .*: expected q_len / scheduled_q_rows"):
        report.save(bad, tmp_path / "bad.json")
    assert not (tmp_path / "bad.json").exists()

    a = dataclasses.replace(seed, report_version=1, provenance=collect(timing_mode="cold"),
                            accuracy={"cos": 0.9993, "reference": "fp32"}, checksum_definition="sum of output in fp32")
    prov = json.loads(json.dumps(a.provenance))
    prov["clocks"] = {"sm_clock_hz": 1_755_000_000, "sm_clock_max_hz": 1_980_000_000}
    b = dataclasses.replace(a, provenance=prov)
    prov_a = json.loads(json.dumps(a.provenance))
    prov_a["clocks"] = {"sm_clock_hz": 1_980_000_000, "sm_clock_max_hz": 1_980_000_000}
    a = dataclasses.replace(a, provenance=prov_a)
    assert differences(a, b) == []
    c = dataclasses.replace(b, provenance={**prov, "git_sha": "f" * 40})
    assert [line.split(":")[0] for line in differences(a, c)] == ["git"]
