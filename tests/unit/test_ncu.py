"""Nsight Compute on CPU: the shared fixture report (its README lists the expected values), command lines,
and the one-line failures."""

import math
import sys
from pathlib import Path

import pytest

from labkit import cli, ncu
from labkit.errors import NcuError, NcuUnavailable

from ..conftest import SHARED

FIXTURE = SHARED / "fixtures" / "ncu" / "rep_main.ncu-rep"
pytestmark = pytest.mark.skipif(not FIXTURE.is_file(), reason="shared/fixtures/ncu not beside this checkout")


@pytest.fixture(scope="module")
def ctx():
    return ncu.load(FIXTURE)


def test_one_row_per_launch_with_nvtx_and_geometry(ctx):
    df = ncu.kernels(ctx)
    assert list(df["kernel"]) == ["fused_line", "fused_plain", "fused_cubin", "saxpy_probe"] * 2
    assert list(df["duration_ns"]) == [443488, 442944, 499424, 233792, 443392, 442720, 499264, 234784]
    assert ncu.kernels(str(FIXTURE)).equals(df)  # the report's path, loaded there (an API walk: an AttributeError)
    row = df.iloc[0]
    assert row["nvtx"] == "bench/fused_line" and df.iloc[3]["nvtx"] == "bench/saxpy"
    assert (row["grid"], row["block"], row["registers"], row["waves"]) == (1056, 128, 30, 0.5)
    assert row["cycles"] == 807972 and row["clock_hz"] == pytest.approx(1.8206e9, rel=1e-3)
    assert row["sm_throughput_pct"] == pytest.approx(50.59, abs=0.01)
    assert df.iloc[3]["waves"] == pytest.approx(248.24, abs=0.01)


def test_nvtx_paths_select_launches_and_rules(ctx):
    # (the wheel's own IRange.actions_by_nvtx crashes once CUDA failed to start in the process, as the
    # test session's GPU probe does on a CPU machine: labkit filters on its own NVTX paths instead)
    assert [a for _, a, act in ctx.actions if ncu.nvtx_path(act) == "bench/fused_line"] == [0, 4]
    r = ncu.rules(ctx)
    first = r[r["action"] == 0]
    assert len(first) == 8 and "SOLBottleneck" in set(first["rule"])  # a ninth said nothing: no title, no message


def test_phases_of_the_fused_kernel_match_the_fixture(ctx):
    t = ncu.phases(ctx.actions[0][2], "fused_kernel.cu")
    assert list(t.index) == ["<unmapped>", "qk_imma", "softmax", "pv_hmma", "epilogue"]
    assert list(t["samples"]) == [30, 12629, 23245, 15650, 24] and t["samples"].sum() == 51578
    assert list(t["inst_executed"]) == [21120, 38087808, 134150016, 43355136, 33792]
    assert t.loc["softmax", "share"] == pytest.approx(0.4507, abs=1e-4)
    assert t.loc["qk_imma", "top_stalls"].startswith("wait 63.1%, math_pipe_throttle 20.1%")
    again = ncu.phases(ctx.actions[4][2], "fused_kernel.cu")  # the second launch
    assert (abs(t["share"] - again["share"]) < 0.001).all()


def test_phases_refuse_a_source_the_kernel_was_not_built_from_and_what_is_not_an_action(ctx):
    """An API walk: phases(action, 'nope.cu') gave fused_kernel.cu's table, and the Report or a whole actions() tuple
    failed inside ncu_report."""
    from labkit.errors import ArgumentError

    with pytest.raises(ArgumentError, match=r"source 'nope.cu': not one of kernel .*'s source files; those with "
                                            r"// PHASE: markers: fused_kernel\.cu"):
        ncu.phases(ctx.actions[0][2], "nope.cu")
    for wrong in (ctx, ctx.actions[0]):
        with pytest.raises(ArgumentError, match=r"expected one profiled kernel: the action, third of each"):
            ncu.phases(wrong, "fused_kernel.cu")


def test_phases_without_source_or_of_another_kernel_are_unmapped(ctx):
    plain = ncu.phases(ctx.actions[1][2], "fused_kernel.cu")  # source not imported
    assert list(plain.index) == ["<unmapped>"] and plain["samples"].iloc[0] == 51583
    saxpy = ncu.phases(ctx.actions[3][2], "fused_kernel.cu")  # below the last marker
    assert list(saxpy.index) == ["<unmapped>"] and saxpy["samples"].iloc[0] == 29468


def test_ncu_phases_says_why_a_kernel_is_all_unmapped(capsys):
    """A fresh-user review: fused_plain (not built from the file) and saxpy_probe (no phase around its lines) both
    read "100 % <unmapped>", alike, as if line info were missing."""
    assert cli.main(["ncu", "phases", str(FIXTURE), "--source", "fused_kernel.cu"]) == 0
    out = capsys.readouterr().out
    assert ("all unmapped: kernel fused_plain was not built from fused_kernel.cu (its sources in the report: "
            "96ffe19f25638158c01c7c3406b996974e9ca284.cubin.cu)") in out
    assert "all unmapped: no // PHASE: section of fused_kernel.cu holds the lines kernel saxpy_probe's samples" in out
    assert out.count("all unmapped:") == 4  # the two kernels, in both ranges; fused_line and fused_cubin have phases


def test_phase_markers_reset_at_each_kernel():
    text = "__global__ void a() {\n  x();\n  // PHASE: one\n  y();\n}\n__global__ void b() {\n  z();\n}\n"
    assert ncu.phase_map(text) == {4: "one", 5: "one"}


def test_helpers_above_the_kernel_carry_phases_and_end_closes_one():
    text = ("// PHASE: load\nvoid cp() {}\n// PHASE: end\nvoid shared() {}\n"
            "__global__ void k() {\n  a();\n  // PHASE: mma\n  b();\n}\n")
    assert ncu.phase_map(text) == {2: "load", 8: "mma", 9: "mma"}
    assert ncu.phase_names(text) == ["load", "mma"]


def test_command_line_from_labkit_names(tmp_path):
    opts = ncu.NcuOptions(output=tmp_path / "rep.ncu-rep", nvtx_ranges=("sage2/fused_mainloop",), preset="source",
                          source_folders=(Path("/src"),))
    cmd = ncu.argv(opts, ["python3", "x.py"], ncu="ncu")
    assert cmd[:5] == ["ncu", "--target-processes", "all", "--clock-control", "none"]
    assert cmd[cmd.index("--nvtx-include") + 1] == "labkit@sage2/fused_mainloop/" and "--nvtx" in cmd
    assert cmd[cmd.index("-o") + 1] == str(tmp_path / "rep") and "SourceCounters" in cmd
    assert cmd[cmd.index("--import-source") + 1] == "yes" and cmd[-2:] == ["python3", "x.py"]
    with pytest.raises(NcuError, match="labkit range path"):
        ncu.NcuOptions(output=tmp_path / "r", nvtx_ranges=("labkit@bench/",))
    with pytest.raises(NcuError, match="preset 'fast'"):
        ncu.NcuOptions(output=tmp_path / "r", preset="fast")


def test_command_line_of_a_preset_without_ranges_is_exactly_its_flags(tmp_path):
    """Found by mutation testing: the --metrics list, --kernel-name, --launch-count, the clock and replay settings
    and the absence of --nvtx without ranges were not pinned by any test."""
    opts = ncu.NcuOptions(output=tmp_path / "rep.ncu-rep", preset="timing", clock_control="base",
                          replay_mode="application", metrics=("gpu__time_duration.sum", "sm__x.sum"),
                          kernel_name="attn_fwd", launch_count=3, extra=("--print-summary", "none"))
    # by hand: the timing preset's five metrics then the new one, the repeated gpu__time_duration.sum once; no ranges
    # so no --nvtx, no sections so no --section, no source so no --import-source
    assert ncu.argv(opts, ["python3", "x.py"], ncu="/opt/ncu") == [
        "/opt/ncu", "--target-processes", "all", "--clock-control", "base", "--replay-mode", "application",
        "-f", "-o", str(tmp_path / "rep"), "--log-file", str(tmp_path / "rep.log"),
        "--metrics", "gpu__time_duration.sum,gpc__cycles_elapsed.max,gpc__cycles_elapsed.avg.per_second,"
                     "dram__bytes_read.sum,dram__bytes_write.sum,sm__x.sum",
        "--kernel-name", "attn_fwd", "--launch-count", "3", "--print-summary", "none", "python3", "x.py"]


def test_the_source_preset_imports_source_without_folders_and_sol_does_not(tmp_path):
    def cmd(preset):
        return ncu.argv(ncu.NcuOptions(output=tmp_path / "r.ncu-rep", preset=preset, nvtx_ranges=("bench/",)), ["t"])

    src = cmd("source")
    assert src[src.index("--import-source") + 1] == "yes" and "--source-folders" not in src
    assert src.count("--section") == 3 and src[src.index("--nvtx-include") + 1] == "labkit@bench/"  # '/' not doubled
    # the source preset names no metrics, and no kernel or launch count was asked for: none of those flags
    assert not {"--metrics", "--kernel-name", "--launch-count"} & set(src) and src[-1] == "t"
    sol = cmd("sol")
    assert "--import-source" not in sol
    assert sol[sol.index("--metrics") + 1] == ("lts__t_sector_hit_rate.pct,"
                                               "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active")


@pytest.mark.parametrize("field, value, said", [
    ("clock_control", "boost", "clock_control 'boost': expected none or base"),
    ("replay_mode", "pass", "replay_mode 'pass': expected kernel, application, range or app-range"),
    ("nvtx_ranges", ("",), "NVTX range '': expected a labkit range path"),
    ("nvtx_ranges", ("/bench",), "NVTX range '/bench': expected a labkit range path")])
def test_options_ncu_would_reject_or_misread_are_refused_naming_the_value(field, value, said, tmp_path):
    with pytest.raises(NcuError) as exc:
        ncu.NcuOptions(output=tmp_path / "r", **{field: value})
    assert str(exc.value).startswith(said)


@pytest.mark.skipif(Path("/usr/local/cuda/bin/ncu").is_file(), reason="an ncu is installed where labkit looks last")
def test_find_ncu_searches_path_and_otherwise_says_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.delenv("LABKIT_NCU", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(NcuUnavailable) as exc:
        ncu.find_ncu()
    assert str(exc.value) == ("Nsight Compute (ncu) not found: looked at $LABKIT_NCU, PATH and "
                              "/usr/local/cuda/bin/ncu; install Nsight Compute or set LABKIT_NCU to its ncu")
    # a docs review: the CLI said this as bad input (exit 2); the machine lacks a tool, as it may lack a GPU (exit 1)
    assert cli.main(["ncu", "run", "--out", str(tmp_path / "r"), "--", sys.executable, "-c", "pass"]) == 1
    # a review: with no ncu, a command that is no program had exited 1 too, as if it had passed its checks
    assert cli.main(["ncu", "run", "--out", str(tmp_path / "r"), "--", "nosuchprogram_zz"]) == 2
    exe = tmp_path / "ncu"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    assert ncu.find_ncu() == str(exe)


def test_known_failures_read_from_the_log():
    assert "ERR_NVGPUCTRPERM" in ncu.diagnose("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission")
    assert "LibraryNotLoaded" in ncu.diagnose("Failed to initialize the profiler: LibraryNotLoaded")
    assert "profiled no kernel" in ncu.diagnose("==WARNING== No kernels were profiled.")
    # found by a review: a program that died before its first launch logs both; its failure is what to say
    crashed = "==ERROR== The application returned an error code (1).\n==WARNING== No kernels were profiled."
    assert ncu.diagnose(crashed).startswith("the profiled program failed (exit code 1) before or while ncu profiled")
    assert ncu.diagnose("all fine") is None


def test_a_missing_report_is_bad_input_on_a_machine_without_the_reader_too(tmp_path, capsys, monkeypatch):
    """A review: with ncu_report absent, a report path that does not exist exited 1 ('not installed', the machine's
    fault) where a machine with the reader exits 2; an existing report there is the machine's (1)."""
    monkeypatch.setitem(sys.modules, "ncu_report", None)  # an import of it raises ImportError
    assert cli.main(["ncu", "show", str(tmp_path / "nope.ncu-rep")]) == 2
    assert "nope.ncu-rep: cannot read the report" in capsys.readouterr().err
    report = tmp_path / "r.ncu-rep"
    report.write_bytes(b"x")
    assert cli.main(["ncu", "show", str(report)]) == 1
    assert "ncu_report is not installed" in capsys.readouterr().err


def test_cli(tmp_path, capsys, monkeypatch):
    assert cli.main(["ncu", "phases", str(FIXTURE), "--source", "fused_kernel.cu", "--action", "0"]) == 0
    out = capsys.readouterr().out
    assert "range 0 action 0: fused_line" in out and "softmax" in out and "23245" in out
    # a review: share and time in units a row reads in, not 0.0005816 beside 1 and 1.086e+05 ns
    lines = out.splitlines()
    assert lines[1].split()[:5] == ["phase", "samples", "share_pct", "est_time_us", "inst_executed"]
    assert next(ln for ln in lines if ln.split()[0] == "softmax").split()[1:4] == ["23245", "45.07", "199.87"]
    assert cli.main(["ncu", "show", str(FIXTURE), "--rules"]) == 0
    out = capsys.readouterr().out
    assert "bench/fused_line" in out
    # a CLI review: 1.820621e+09 Hz and 443488.0 ns, NaN speedups, ncu's @section:...@ markup, an empty row
    header = out.splitlines()[0].split()
    assert {"duration_us", "clock_GHz"} <= set(header) and not {"duration_ns", "clock_hz"} & set(header)
    assert "e+0" not in out and "NaN" not in out and "@section:" not in out and "@url:" not in out
    assert "Check the Warp Stall Sampling (All Samples) table for the top stall locations" in out
    rules = out.split("\n\n", 1)[1].splitlines()
    assert not [ln for ln in rules if ln.startswith("  ") and not ln.startswith("    ") and ln.endswith(": ")]
    assert cli.main(["ncu", "show", str(FIXTURE), "--metrics", ",,"]) == 2  # had looked up a metric named ''
    assert "--metrics ',,': an empty name; expected full metric names" in capsys.readouterr().err
    bogus = tmp_path / "x.ncu-rep"
    bogus.write_text("not a report")
    assert cli.main(["ncu", "show", str(bogus)]) == 2
    assert capsys.readouterr().err.startswith("labkit: error: ")
    monkeypatch.setenv("LABKIT_NCU", str(tmp_path / "missing-ncu"))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert cli.main(["ncu", "run", "--out", str(tmp_path / "r"), "--", sys.executable, "-c", "pass"]) == 2
    # found by a CLI review: the path given was not named, and another ncu on PATH would have run instead
    assert f"ncu) not found: LABKIT_NCU={tmp_path / 'missing-ncu'} is no file" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["phases", "--source", "nope.cu"], "--source nope.cu: no source of that name in "),
    (["phases", "--source", "fused_kernel.cu", "--action", "1"], "action 1; it has "),  # its source not imported
    (["phases", "--source", "fused_kernel.cu", "--action", "99"], "--action 99: "),
    # a CLI review: a source of no markers had printed fused_kernel.cu's phases, exit 0
    (["phases", "--source", "sm_30_intrinsics.hpp", "--action", "2"], "--source sm_30_intrinsics.hpp: the report's "
     "copy of it has no // PHASE: markers; these of its sources have them: fused_kernel.cu"),
    (["show", "--metrics", "gpu__time_duration.sum,bogus__metric"], "--metrics bogus__metric: no profiled kernel")])
def test_cli_refuses_options_that_would_print_nothing_useful(argv, message, capsys):
    """A typo in --source, --action or --metrics printed every sample as unmapped, nothing, or a column of None."""
    assert cli.main(["ncu", argv[0], str(FIXTURE), *argv[1:]]) == 2
    err = capsys.readouterr().err
    assert err.startswith("labkit: error: ") and err.count("\n") == 1 and message in err, err


def test_join_to_event_timings(ctx):
    df = ncu.join_timings(ncu.kernels(ctx), {"fused_line": 451.0e-6, "saxpy": 240.0e-6})
    line = df[df["range_name"] == "fused_line"]
    assert list(line["launch"]) == [0, 1] and list(line["event_p50_ns"]) == [451000.0, 451000.0]
    assert line["ncu_over_event"].iloc[0] == pytest.approx(443488 / 451000)
    assert df[df["range_name"] == "fused_plain"]["event_p50_ns"].isna().all()  # no event timing given


def test_phase_estimates_the_third_stall_and_the_stall_table(ctx):
    """Found by mutation testing: est_time_ns, the third of top_stalls and ncu.stalls (never called) were unpinned."""
    act = ctx.actions[0][2]
    t = ncu.phases(act, "fused_kernel.cu")
    # share x duration: 443,488 ns x 23,245 / 51,578 samples (README)
    assert t.loc["softmax", "est_time_ns"] == pytest.approx(443488 * 23245 / 51578)
    assert t.loc["qk_imma", "top_stalls"] == "wait 63.1%, math_pipe_throttle 20.1%, not_selected 7.5%"
    s = ncu.stalls(act, "fused_kernel.cu")
    assert list(s.index) == ["<unmapped>", "qk_imma", "softmax", "pv_hmma", "epilogue"]
    assert list(s.columns[:4]) == ["wait", "short_scoreboard", "selected", "math_pipe_throttle"]  # largest first
    assert not {"samples", "inst_executed"} & set(s.columns)
    assert list(s.sum(axis=1)) == [30, 12629, 23245, 15650, 24]  # README: a PC's stalls sum to its samples
    assert s.loc["qk_imma", "wait"] == 7975


class _Metric:
    """A per-PC metric as the ncu_report wheel hands it out: PC -> value, read through its correlation ids."""

    def __init__(self, per_pc=None, value=None):
        self.per_pc, self.value = per_pc, value

    def has_correlation_ids(self):
        return self.per_pc is not None

    def correlation_ids(self):
        return self

    def as_uint64(self, i):
        return list(self.per_pc)[i]

    def num_instances(self):
        return len(self.per_pc)

    def as_double(self, i=None):
        return self.value if i is None else list(self.per_pc.values())[i]


class _Action:
    """A profiled launch: its metrics, each PC's (file, line) and the imported source texts."""

    def __init__(self, metrics, lines, files):
        self.metrics, self.lines, self.files = metrics, lines, files

    def name(self):
        return "k"

    def metric_by_name(self, name):
        return self.metrics.get(name)

    def metric_names(self):
        return list(self.metrics)

    def source_info(self, pc):
        if self.lines[pc] is None:  # a PC without line information
            return None
        file, line = self.lines[pc]
        return type("Info", (), {"file_name": lambda _: file, "line": lambda _: line})()

    def source_files(self):
        return self.files


def test_a_header_s_phases_count_and_a_missing_instruction_metric_reads_zero():
    """Found by mutation testing: a marked helper header's phase was never checked to get its own row, nor a report
    without per-PC inst_executed (it would have crashed), nor est_time_ns against the duration."""
    kernel = "__global__ void k() {\n  // PHASE: main\n  a();\n}\n"
    header = "// PHASE: load\nvoid cp() {}\n"
    act = _Action({"smsp__pcsamp_sample_count": _Metric({1: 30.0, 2: 10.0}),
                   "gpu__time_duration.sum": _Metric(value=400.0)},
                  {1: ("/x/kernel.cu", 3), 2: ("/y/helper.cuh", 2)},
                  {"/x/kernel.cu": kernel, "/y/helper.cuh": header})
    t = ncu.phases(act, "kernel.cu")
    assert list(t.index) == ["main", "load"] and list(t["samples"]) == [30, 10]
    assert list(t["est_time_ns"]) == [300.0, 100.0] and list(t["inst_executed"]) == [0, 0]


def test_a_pc_without_line_information_is_unmapped_and_an_unsampled_launch_has_no_shares():
    """Found by mutation testing: a PC ncu gives no source line (it had crashed the tally) and a launch whose PCs hold
    no sample (shares would divide by zero) were not tried."""
    act = _Action({"smsp__pcsamp_sample_count": _Metric({1: 5.0, 2: 15.0})}, {1: None, 2: ("/x/kernel.cu", 3)},
                  {"/x/kernel.cu": "__global__ void k() {\n  // PHASE: main\n  a();\n}\n"})
    t = ncu.phases(act, "kernel.cu")
    assert list(t.index) == ["<unmapped>", "main"] and list(t["samples"]) == [5, 15]
    assert list(t["share"]) == [0.25, 0.75] and t["est_time_ns"].isna().all()  # no duration in this report
    idle = _Action({"smsp__pcsamp_sample_count": _Metric({1: 0.0})}, {1: ("/x/kernel.cu", 3)}, {})
    t = ncu.phases(idle, "kernel.cu")
    assert t.loc["<unmapped>", "share"] == 0.0 and math.isnan(t.loc["<unmapped>", "est_time_ns"])
    assert t.loc["<unmapped>", "top_stalls"] == ""


def test_a_launch_without_per_pc_samples_is_refused_saying_how_to_profile():
    act = _Action({"gpu__time_duration.sum": _Metric(value=1.0)}, {}, {})
    with pytest.raises(NcuError) as exc:
        ncu.phases(act, "kernel.cu")
    assert str(exc.value) == ("kernel k: no per-PC samples in the report; profile with --section SourceCounters "
                              "--import-source yes")


def test_load_refuses_what_is_no_report_file_naming_it(tmp_path, monkeypatch):
    """Found by mutation testing: none of load's refusals had its text pinned (a FIFO would have hung the reader)."""
    import os

    import ncu_report

    missing, fifo, bogus = tmp_path / "nope.ncu-rep", tmp_path / "fifo.ncu-rep", tmp_path / "x.ncu-rep"
    os.mkfifo(fifo)
    bogus.write_text("not a report")
    for path, said in [(missing, f"{missing}: cannot read the report (No such file or directory)"),
                       (tmp_path, f"{tmp_path}: is a directory; expected an .ncu-rep report file"),
                       (fifo, f"{fifo}: is not a regular file; expected an .ncu-rep report file"),
                       (bogus, f"{bogus}: no profiled range in it (not a Nsight Compute report, or an empty one)")]:
        with pytest.raises(NcuError) as exc:
            ncu.load(path)
        assert str(exc.value) == said

    def bad_magic(path):  # the wheel's own failure (2025.3.1 opens a text file as a report of no range)
        raise RuntimeError("bad magic")

    monkeypatch.setattr(ncu_report, "load_report", bad_magic)
    with pytest.raises(NcuError) as exc:
        ncu.load(bogus)
    assert str(exc.value) == f"{bogus}: not a readable Nsight Compute report (RuntimeError: bad magic)"


def test_rule_titles_and_messages_and_nvtx_paths_outside_labkit(ctx):
    """Found by mutation testing: the rules table's title and message columns, and nvtx_path without labkit's
    domain, were not checked."""
    r = ncu.rules(ctx)
    sol = r[(r["action"] == 0) & (r["rule"] == "SOLBottleneck")].iloc[0]
    assert (sol["section"], sol["title"]) == ("SpeedOfLight", "Small Grid")
    assert sol["message"].startswith("This kernel grid is too small") and len(sol["message"]) <= 160
    assert sol["message"].endswith(" Look at Launch Statistics ...")  # cut at a word, and said to be cut
    act = ctx.actions[0][2]
    assert ncu.nvtx_path(act, "<default domain>") == "bench_default/bench_pydefault"
    assert ncu.nvtx_path(act, "other") == ""
    assert ncu.nvtx_path(type("NoNvtx", (), {"nvtx_state": lambda _: None})()) == ""


def test_cli_rules_read_per_launch_and_a_bare_ncu_lists_its_commands(capsys):
    """Found by mutation testing: the rules' layout and `labkit ncu` with no command were unpinned. A new-user review:
    one row per rule, ncu's message beside it, was 274 characters wide; each launch is a heading, each rule a line,
    its message wrapped under it."""
    assert cli.main(["ncu", "show", str(FIXTURE), "--rules"]) == 0
    rules = capsys.readouterr().out.split("\n\n", 1)[1].splitlines()
    assert rules[:4] == [
        "range 0, action 0: fused_line", "  SpeedOfLight / SOLBottleneck: Small Grid",
        "    This kernel grid is too small to fill the available resources on this device,",
        "      resulting in only 0.5 full waves across all SMs. Look at Launch Statistics ..."]
    assert "  SchedulerStats / IssueSlotUtilization (est. speedup 48.9%)" in rules
    assert sum(ln.startswith("range ") for ln in rules) == 8 and "range 0, action 7: saxpy_probe" in rules
    assert max(map(len, rules)) <= 100
    assert cli.main(["ncu", "show", str(FIXTURE)]) == 0
    assert "SOLBottleneck" not in capsys.readouterr().out  # the rules only when asked for
    assert cli.main(["ncu"]) == 2
    assert capsys.readouterr().err == ("labkit: error: labkit ncu: expected a command: show, phases, run, summary, "
                                       "cases (labkit ncu -h says what each does)\n")


def test_cli_refusals_name_the_sources_the_report_has_and_the_bounds_of_action_and_out(capsys):
    """Found by mutation testing: the list of sources a wrong --source is told, --action's upper bound and `ncu run`
    without --out were unpinned."""
    argvs = [["phases", str(FIXTURE), "--source", "nope.cu"],
             ["phases", str(FIXTURE), "--source", "nope.cu", "--action", "1048577"], ["run", "--", "true"]]
    said = [f"labkit ncu phases: --source nope.cu: no source of that name in {FIXTURE}'s kernels; it has "
            "96ffe19f25638158c01c7c3406b996974e9ca284.cubin.cu, fused_kernel.cu, sm_30_intrinsics.hpp",
            "labkit ncu phases: --action 1048577: expected 0..1048576",
            "labkit ncu run: the following arguments are required: --out"]
    for argv, line in zip(argvs, said):
        assert cli.main(["ncu", *argv]) == 2
        assert capsys.readouterr().err == f"labkit: error: {line}\n"


def test_extra_kernel_metrics_are_columns_and_one_the_report_lacks_is_none(ctx):
    """Found by mutation testing: kernels() with a metric the report did not collect (README: no dram__bytes_*.sum)
    was not tried; it had to be None, not a crash."""
    extra = {"dram_read_bytes": "dram__bytes_read.sum", "limit_regs": "launch__occupancy_limit_registers"}
    df = ncu.kernels(ctx, extra)
    assert list(df["dram_read_bytes"]) == [None] * 8
    assert df.iloc[0]["limit_regs"] == 16  # README: launch__occupancy_limit_registers 16


def test_the_decode_kernels_helpers_are_in_the_phase_of_the_code_that_calls_them():
    """Found by a review: count_in (the split's completion atomic, called in merge_and_store) sat under wait_bar's
    marker and was counted as wait_kv, and tail_unit (setup) under pack_bf16's as pv."""
    import re

    from labkit.ncu.study import _kernel_dir

    def phase_of(name, helper):
        text = (_kernel_dir("decode") / name).read_text()
        body = text.splitlines()
        first = next(n for n, line in enumerate(body, start=1) if re.search(rf"\b{helper}\(", line))
        lines = ncu.phase_map(text)  # the helper's first lines of code (a marker line is no code)
        return {lines.get(n) for n in range(first + 1, first + 5) if "PHASE:" not in body[n - 1]}

    assert phase_of("paged_decode.cuh", "count_in") == {"merge_and_store"}
    assert phase_of("paged_decode_mma.cu", "tail_unit") == {"setup"}
    assert phase_of("paged_decode.cuh", "wait_bar") == {"wait_kv"}
