"""Running under ncu on CPU: fake ncu executables stand in for the real one (the real one runs in tests/gpu),
so each failure's one line, the progress lines and the command lines can be checked here."""

import json
import os
import shlex
import stat
import subprocess
import sys
import time

import pytest

from labkit import cli, ncu
from labkit.errors import NcuError
from labkit.ncu import runner

from ..conftest import ROOT, SHARED

FIXTURE = SHARED / "fixtures" / "ncu" / "rep_main.ncu-rep"

FAKE = """#!{python}
import json, shutil, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler\\nVersion {version} (build 1) (public-release)")
    sys.exit(0)
open({calls!r}, "a").write(json.dumps(args) + "\\n")
log = args[args.index("--log-file") + 1]
with open(log, "w") as f:
    f.write("==PROF== Connected to process 1\\n" + {log_line!r} + "\\n")
if {ok}:
    shutil.copyfile({fixture!r}, args[args.index("-o") + 1] + ".ncu-rep")
sys.exit(0 if {ok} else 1)
"""


def _fake(tmp_path, *, version="2025.3.1.0", log_line='==PROF== Profiling "attn_fwd" - 0: 0%....100% - 9 passes',
          ok=True):
    exe = tmp_path / "bin" / "ncu"
    exe.parent.mkdir(exist_ok=True)
    calls = tmp_path / "calls.jsonl"
    exe.write_text(FAKE.format(python=sys.executable, version=version, calls=str(calls), log_line=log_line, ok=ok,
                               fixture=str(FIXTURE)))
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return exe, calls


def _calls(path):
    return [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []


@pytest.fixture
def fake_ncu(tmp_path, monkeypatch):
    exe, calls = _fake(tmp_path)
    monkeypatch.setenv("LABKIT_NCU", str(exe))
    return calls


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert "Traceback" not in "\n".join(err)
    return err[-1]


@pytest.mark.skipif(not FIXTURE.is_file(), reason="shared/fixtures/ncu not beside this checkout")
def test_notebook_under_ncu_checks_parameters_then_profiles_with_progress(fake_ncu, tmp_path, capsys):
    out = tmp_path / "rep"
    assert cli.main(["ncu", "run", "--out", str(out), "--range", "bench", "--notebook", "02",
                     "-p", "iterations", "5", "--kernel-name", "regex:attn_fwd"]) == 0
    cap = capsys.readouterr()
    (args,) = _calls(fake_ncu)
    assert args[args.index("--target-processes") + 1] == "all" and args[args.index("--clock-control") + 1] == "none"
    assert args[args.index("--kernel-name") + 1] == "regex:attn_fwd"
    target = args[args.index("--nvtx-include") + 2:]  # after the filter: sections, metrics, then the target
    # a plain script beside the report, not papermill's Jupyter kernel (ncu-automation.md; it had been `nb run`)
    assert target[-2:] == [sys.executable, f"{out}.py"]
    script = (tmp_path / "rep.py").read_text()
    assert "iterations = 5" in script and script.index("iterations = 5") > script.index("# Parameters")
    assert "ncu [" in cap.err and "==PROF== Profiling \"attn_fwd\"" in cap.err  # forwarded from the log as it came
    assert "fused_line" in cap.out and f"report: {out}.ncu-rep" in cap.out


@pytest.mark.skipif(not FIXTURE.is_file(), reason="shared/fixtures/ncu not beside this checkout")
def test_launch_count_caps_a_range_that_loops(fake_ncu, tmp_path, capsys):
    # on the H200 a notebook-00 range held ~1,800 launches of one probe kernel: --launch-count caps them
    assert cli.main(["ncu", "run", "--out", str(tmp_path / "rep"), "--range", "probe/timing_overhead",
                     "--launch-count", "20", "--notebook", "00"]) == 0
    (args,) = _calls(fake_ncu)
    assert args[args.index("--launch-count") + 1] == "20"
    assert args[args.index("--nvtx-include") + 1] == "labkit@probe/timing_overhead/"
    capsys.readouterr()
    assert cli.main(["ncu", "run", "--out", str(tmp_path / "r"), "--launch-count", "0", "--notebook", "00"]) == 2
    assert "--launch-count" in _error(capsys)


def test_notebook_parameters_are_refused_before_ncu_starts(fake_ncu, tmp_path, capsys):
    assert cli.main(["ncu", "run", "--out", str(tmp_path / "r"), "--notebook", "02", "-p", "bogus", "1"]) == 2
    assert "notebook 02_sage2_phases has no parameter 'bogus'" in _error(capsys)
    assert cli.main(["ncu", "run", "--out", str(tmp_path / "r"), "--notebook", "02", "-p", "iterations", "x"]) == 2
    assert "parameter iterations" in _error(capsys)
    assert cli.main(["ncu", "run", "--out", str(tmp_path / "r"), "--notebook", "99"]) == 2
    assert "notebook '99': not found" in _error(capsys)
    # found by a review: checked against each other as nb run checks them, and a parameter given twice refused
    assert cli.main(["ncu", "run", "--out", str(tmp_path / "r"), "--notebook", "05", "-p", "q_tail", "40000"]) == 2
    assert "parameter q_tail = [40000]: expected values at most shape[1] = 37810" in _error(capsys)
    assert cli.main(["ncu", "run", "--out", str(tmp_path / "r"), "--notebook", "02", "-p", "iterations", "5", "-p",
                     "iterations", "7"]) == 2
    assert "-p iterations given twice ('5', then '7')" in _error(capsys)
    assert cli.main(["ncu", "run", "--out", str(tmp_path / "r"), "--notebook", "02", "--kernel-name", ""]) == 2
    assert "kernel name ''" in _error(capsys)  # an option ncu would refuse: refused before the script is written
    # a CLI review: a recorded run launches no kernel, so ncu had profiled a notebook that ran nothing
    assert cli.main(["ncu", "run", "--out", str(tmp_path / "r"), "--notebook", "03", "-p", "source", "recorded"]) == 2
    assert "-p source recorded launches no kernel, so ncu would profile nothing" in _error(capsys)
    assert _calls(fake_ncu) == [] and not list(tmp_path.glob("*.py"))


def test_cli_forms_that_cannot_run_are_one_line(fake_ncu, tmp_path, capsys):
    out = str(tmp_path / "r")
    assert cli.main(["ncu", "run", "--out", out, "--notebook", "02", "--", "labkit", "device"]) == 2
    assert "either --notebook NAME or a command" in _error(capsys)
    assert cli.main(["ncu", "run", "--out", out, "-p", "iterations", "5", "--", "labkit", "device"]) == 2
    assert "-p KEY VALUE sets a notebook parameter" in _error(capsys)
    assert cli.main(["ncu", "run", "--out", out]) == 2
    assert "give the command to profile" in _error(capsys)
    assert _calls(fake_ncu) == []


# exit 1 where the machine's ncu cannot profile (too old, counters kept from this user), 2 where the command or the
# setting is the fault (a review: every one had exited 2, where a missing GPU exits 1)
@pytest.mark.parametrize("kind, expected, status", [
    ("old", "is Nsight Compute 2023.1.0; labkit needs 2025.1 or newer", 1),
    ("perm", "ERR_NVGPUCTRPERM", 1),
    ("taken", "another profiler or DCGM holds them", 1),  # ncu-automation.md 8's two others, both the machine's
    ("lock", "set TMPDIR to a writable directory", 1),
    ("nothing", "profiled no kernel", 2),
    ("crash", "exited with 1", 2),
    ("missing", "ncu) not found", 2),  # LABKIT_NCU names no file: the setting is wrong
])
def test_each_failure_is_one_line(kind, expected, status, tmp_path, monkeypatch, capsys):
    opts = {"old": {"version": "2023.1.0"}, "perm": {"log_line": "==ERROR== ERR_NVGPUCTRPERM - no permission",
                                                     "ok": False},
            "taken": {"log_line": "==ERROR== Profiling failed because a driver resource was unavailable.",
                      "ok": False},
            "lock": {"log_line": "==ERROR== Failed to open/create lock file (/tmp/nvidia/nsight_compute/lock.0)",
                     "ok": False},
            "nothing": {"log_line": "==WARNING== No kernels were profiled."}, "crash": {"ok": False, "log_line": ""},
            "missing": {}}[kind]
    exe, _ = _fake(tmp_path, **opts)
    monkeypatch.setenv("LABKIT_NCU", str(exe if kind != "missing" else tmp_path / "nope"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    if kind == "missing" and os.path.isfile("/usr/local/cuda/bin/ncu"):
        pytest.skip("a real ncu is installed here")
    # a program that exists with PATH emptied (labkit, on no PATH, is now refused before ncu starts)
    assert cli.main(["ncu", "run", "--out", str(tmp_path / "r"), "--", sys.executable, "-c", "pass"]) == status
    line = _error(capsys)
    assert line.startswith("labkit: error: ") and expected in line


def test_from_a_shell_no_traceback(tmp_path):
    exe, _ = _fake(tmp_path, log_line="==ERROR== ERR_NVGPUCTRPERM - no permission", ok=False)
    env = {**os.environ, "LABKIT_NCU": str(exe)}
    out = subprocess.run([sys.executable, "-m", "labkit", "ncu", "run", "--out", str(tmp_path / "r"), "--", "true"],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert out.returncode == 1 and "Traceback" not in out.stderr  # 1: the machine keeps the counters from this user
    assert out.stderr.strip().splitlines()[-1].startswith("labkit: error: labkit ncu run: ncu may not read the "
                                                              "GPU's performance")


def test_available_and_the_counter_permission_preflight(tmp_path, monkeypatch):
    exe, _ = _fake(tmp_path)
    monkeypatch.setenv("LABKIT_NCU", str(exe))
    assert ncu.available() == (True, f"ncu 2025.3.1 at {exe}")
    params = tmp_path / "params"
    params.write_text("ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\n")
    monkeypatch.setattr(runner.os, "geteuid", lambda: 1000)
    assert runner.counters_restricted(params)
    restricted = runner.counters_restricted
    monkeypatch.setattr(runner, "counters_restricted", lambda: restricted(params))
    ok, why = ncu.available()
    assert not ok and "RmProfilingAdminOnly" in why and "\n" not in why
    params.write_text("RmProfilingAdminOnly: 0\n")
    assert ncu.available()[0]
    monkeypatch.setattr(runner.os, "geteuid", lambda: 0)  # root may read them anyway
    params.write_text("RmProfilingAdminOnly: 1\n")
    assert ncu.available()[0]
    monkeypatch.setenv("LABKIT_NCU", str(tmp_path / "nope"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    if not os.path.isfile("/usr/local/cuda/bin/ncu"):
        assert ncu.available()[0] is False


def test_callable_target_and_its_entry_point(tmp_path):
    cmd = runner.call_target("json:dumps", {"obj": [1]})
    assert cmd[1:4] == ["-m", "labkit.ncu.runner", "json:dumps"] and json.loads(cmd[4]) == {"obj": [1]}
    with pytest.raises(NcuError, match="callable 'json.dumps': expected module:function"):
        runner.call_target("json.dumps")
    marker = tmp_path / "called"
    done = subprocess.run(runner.call_target("os:mkdir", {"path": str(marker)}),
                          cwd=ROOT, timeout=60)
    assert done.returncode == 0 and marker.is_dir()


def test_a_time_limit_stops_the_profiled_program_too(tmp_path, monkeypatch):
    """ncu's child (a notebook kernel, say) must not outlive a stopped run: it would keep the GPU busy."""
    pidfile = tmp_path / "child.pid"
    exe = tmp_path / "ncu"
    exe.write_text(f"""#!{sys.executable}
import subprocess, sys, time
if sys.argv[1:] == ["--version"]:
    print("Version 2025.3.1.0 (build 1) (public-release)"); sys.exit(0)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
open({str(pidfile)!r}, "w").write(str(child.pid))
time.sleep(60)
""")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("LABKIT_NCU", str(exe))
    with pytest.raises(NcuError, match="stopped after 2 s"):
        runner.profile(["true"], ncu.NcuOptions(output=tmp_path / "rep"), timeout_s=2)
    pid = int(pidfile.read_text())
    for _ in range(50):  # the kill is asynchronous: reaped by init shortly after
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{pid}/stat") as f:
            if f.read().split()[2] == "Z":
                break
        time.sleep(0.1)
    else:
        pytest.fail(f"the profiled program (pid {pid}) outlived the stopped ncu run")


def test_profile_refuses_an_empty_command_and_a_report_name_ncu_would_misread(tmp_path):
    """Found by mutation testing: neither refusal's text was checked."""
    with pytest.raises(NcuError) as exc:
        runner.profile([], ncu.NcuOptions(output=tmp_path / "rep"))
    assert str(exc.value) == "nothing to profile: give the command to run under ncu"
    with pytest.raises(NcuError) as exc:
        runner.profile(["true"], ncu.NcuOptions(output=tmp_path / "rep.txt"))
    assert str(exc.value) == (f"report path {str(tmp_path / 'rep.txt')!r}: expected NAME or NAME.ncu-rep (ncu writes "
                              "NAME.ncu-rep and NAME.log)")


def test_a_version_line_ncu_does_not_print_is_one_line(tmp_path):
    """Found by mutation testing: an ncu whose --version names no version was not tried (it would have crashed)."""
    exe = tmp_path / "ncu"
    exe.write_text("#!/bin/sh\necho 'some other tool 1.0'\n")
    exe.chmod(0o755)
    with pytest.raises(NcuError) as exc:
        runner.ncu_version(str(exe))
    assert str(exc.value) == f"{exe} --version printed no Nsight Compute version (exit 0)"
    exe.write_text("#!/bin/sh\necho 'Version 2025.3.1.0 (build 1)'\nexit 3\n")  # a version, but a failed run
    with pytest.raises(NcuError) as exc:
        runner.ncu_version(str(exe))
    assert str(exc.value) == f"{exe} --version printed no Nsight Compute version (exit 3)"
    exe.chmod(0o644)  # not executable, even for root
    with pytest.raises(NcuError) as exc:
        runner.ncu_version(str(exe))
    # a CLI review: the line had shown Python's exception name, not what was wrong
    assert str(exc.value) == (f"{exe} is not executable (permission denied): expected the Nsight Compute ncu "
                              "executable (set LABKIT_NCU to one)")


@pytest.mark.skipif(not FIXTURE.is_file(), reason="shared/fixtures/ncu not beside this checkout")
def test_progress_gets_every_ncu_line_from_the_first_and_nothing_without_a_stream(fake_ncu, tmp_path, capsys):
    """Found by mutation testing: the log's first line, and silence when no progress stream is given, were unpinned."""
    import io

    progress = io.StringIO()
    done = runner.profile(["true"], ncu.NcuOptions(output=tmp_path / "a"), progress=progress)
    assert done.report == tmp_path / "a.ncu-rep" and done.report_bytes == FIXTURE.stat().st_size
    lines = progress.getvalue().splitlines()
    command_end = next(i for i, line in enumerate(lines) if not line.endswith(" \\"))  # its last line: no " \\"
    assert lines[0].startswith("running: ") and "==PROF== Connected to process 1" in lines[command_end + 1]
    runner.profile(["true"], ncu.NcuOptions(output=tmp_path / "b"))
    assert capsys.readouterr().out == ""


def test_the_log_is_forwarded_in_whole_lines_and_only_ncu_s_own(tmp_path):
    """Found by mutation testing: a line still being written, and the program's own output in the log, were not
    tried: a byte too far lost the next line's start, and other lines were printed too."""
    import io

    log, out = tmp_path / "r.log", io.StringIO()
    log.write_bytes(b"==PROF== one\nprogram output\n==WARNING== tw")
    seen = runner._forward(log, 0, out, time.monotonic())
    assert seen == len(b"==PROF== one\nprogram output\n")
    with log.open("ab") as f:
        f.write(b"o\n")
    assert runner._forward(log, seen, out, time.monotonic()) == log.stat().st_size
    shown = [line.split("] ", 1)[1] for line in out.getvalue().splitlines()]
    assert shown == ["==PROF== one", "==WARNING== two"]


def _sleeping_ncu(tmp_path):
    """An ncu that answers --version and otherwise runs for a minute, writing nothing."""
    exe = tmp_path / "ncu"
    exe.write_text(f"#!{sys.executable}\nimport sys, time\nif sys.argv[1:] == ['--version']:\n"
                   "    print('Version 2025.3.1.0 (build 1) (public-release)'); sys.exit(0)\ntime.sleep(60)\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return exe


def test_a_time_limit_and_ctrl_c_stop_ncu_at_once(tmp_path, monkeypatch):
    """Found by mutation testing: ncu not started in its own session survived the stop until it ended by itself (the
    old test waited the minute out), and a Ctrl-C was swallowed into an 'exited with -9'."""
    monkeypatch.setenv("LABKIT_NCU", str(_sleeping_ncu(tmp_path)))
    started = time.monotonic()
    with pytest.raises(NcuError, match="stopped after 1 s"):
        runner.profile(["true"], ncu.NcuOptions(output=tmp_path / "rep"), timeout_s=1)
    assert time.monotonic() - started < 30

    def interrupted(_):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner.time, "sleep", interrupted)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        runner.profile(["true"], ncu.NcuOptions(output=tmp_path / "rep"))
    assert time.monotonic() - started < 30


def test_an_ncu_that_exits_0_without_a_report_is_one_line(tmp_path, monkeypatch):
    """Found by mutation testing: a run that succeeded but left no report was not tried."""
    exe = tmp_path / "ncu"
    exe.write_text(f"#!{sys.executable}\nimport sys\nif sys.argv[1:] == ['--version']:\n"
                   "    print('Version 2025.3.1.0 (build 1) (public-release)')\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("LABKIT_NCU", str(exe))
    with pytest.raises(NcuError) as exc:
        runner.profile(["true"], ncu.NcuOptions(output=tmp_path / "rep"))
    assert str(exc.value) == f"ncu wrote no report at {tmp_path / 'rep.ncu-rep'}; see {tmp_path / 'rep.log'}"


def test_a_time_limit_of_0_is_refused_before_ncu_starts(fake_ncu, tmp_path, capsys):
    """Found by mutation testing: --timeout's lower bound was not tried."""
    assert cli.main(["ncu", "run", "--out", str(tmp_path / "r"), "--timeout", "0", "--", "true"]) == 2
    assert _error(capsys) == "labkit: error: labkit ncu run: --timeout 0: expected 1..86400"
    assert _calls(fake_ncu) == []


@pytest.mark.skipif(not FIXTURE.is_file(), reason="shared/fixtures/ncu not beside this checkout")
def test_run_creates_the_folders_of_out(fake_ncu, tmp_path, capsys):
    """Found by mutation testing: an --out in folders not made yet (profile creates them) was not tried."""
    out = tmp_path / "new" / "sub" / "rep"
    assert cli.main(["ncu", "run", "--out", str(out), "--", "true"]) == 0
    assert (tmp_path / "new" / "sub" / "rep.ncu-rep").is_file() and f"report: {out}.ncu-rep" in capsys.readouterr().out


@pytest.mark.parametrize("target, said", [
    (["/nonexist/cmd"], "command to profile '/nonexist/cmd': no executable file there"),
    (["labkit-no-such-command", "x"], "command to profile 'labkit-no-such-command': not found on PATH")])
def test_a_command_that_cannot_start_is_refused_before_ncu_starts(fake_ncu, tmp_path, capsys, target, said):
    """Found by a CLI review: ncu was started, profiled nothing and said "ncu wrote no report", not naming the
    command."""
    out = tmp_path / "sub" / "r"
    assert cli.main(["ncu", "run", "--out", str(out), "--", *target]) == 2
    assert _error(capsys) == (f"labkit: error: labkit ncu run: {said}; give an existing program's path or a command "
                              f"on PATH")
    assert _calls(fake_ncu) == [] and not out.parent.exists()


@pytest.mark.parametrize("name", ["", " ", "regex:"])
def test_an_empty_kernel_name_is_refused_not_dropped(fake_ncu, tmp_path, capsys, name):
    """Found by a CLI review: `if opts.kernel_name:` dropped --kernel-name '' and profiled every kernel (an empty
    --range was refused); a name that matches nothing in particular is refused alike."""
    assert cli.main(["ncu", "run", "--out", str(tmp_path / "r"), "--kernel-name", name, "--", "true"]) == 2
    assert _error(capsys) == (f"labkit: error: labkit ncu run: kernel name {name!r}: expected a kernel's name or "
                              f"regex:PATTERN (ncu "
                              "syntax, e.g. regex:attn_fwd); leave it out to profile every kernel")
    assert _calls(fake_ncu) == []


def test_a_long_ncu_line_is_forwarded_in_lines_a_notebook_pane_shows_whole(tmp_path):
    """Found by a live run of notebook 05: ncu's warnings came through at 138-350 characters."""
    import io

    log, out = tmp_path / "r.log", io.StringIO()
    warning = ("==WARNING== Launching the workload is taking more time than expected. If this continues to hang, "
               "terminate the profile and re-try by profiling the range of all related launches using '--replay-mode "
               "range'.")
    log.write_text(warning + "\n")
    runner._forward(log, 0, out, time.monotonic())
    lines = out.getvalue().splitlines()
    assert len(lines) > 1 and max(map(len, lines)) <= 100
    assert " ".join(line.strip() for line in lines).split("] ", 1)[1] == warning


def test_the_command_is_shown_in_pane_wide_lines_that_paste_back_into_the_same_argv():
    """Found by a live run of notebook 05: "running: " and ncu's whole command on one line of 561-723 characters."""
    cmd = ["/usr/local/cuda/bin/ncu", "--target-processes", "all", "-o", "/work/main/runs/" + "x" * 60 + "/ncu/a b",
           "--log-file", "/work/main/runs/" + "y" * 70 + ".log",  # with its option, over a line: apart
           "--nvtx-include", "labkit/sage2 mainloop/", "python3", "-c", "print('$HOME')", "z" * 120]
    text = runner.shell_lines(cmd, prefix="running:")
    lines = text.splitlines()
    assert lines[0].startswith("running: /usr/local/cuda/bin/ncu") and len(lines) > 2
    assert all(len(line) <= 100 for line in lines if "z" * 120 not in line)  # the one argument longer than a line
    assert shlex.split(text.removeprefix("running:").replace(" \\\n", " ")) == cmd
    assert "    --nvtx-include 'labkit/sage2 mainloop/' python3" in text  # an option beside its value
    # -o beside its path: without the pairing the first line ends in a lone -o, which the line above does not see
    assert "--target-processes all \\\n    -o '/work/main/runs/xxx" in text


def test_a_metric_list_longer_than_a_line_is_broken_after_commas_and_bash_reads_the_same_argv():
    """Found by a live run of notebook 05: ncu's --metrics list printed as one 161-character argument, which JupyterLab
    broke mid-name. It breaks after a comma with a backslash-newline and no indent, which bash removes."""
    metrics = ("gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,"
               "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct")
    cmd = ["/usr/local/cuda/bin/ncu", "--section", "WorkloadDistribution", "--metrics", metrics,
           "--kernel-name", "regex:paged_decode", "python3", "-c", "print('a,b')", "x" * 40 + "," + "y" * 90]
    text = runner.shell_lines(cmd, prefix="running:")
    assert max(map(len, text.splitlines())) <= 100
    assert "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active," in text  # a name stays whole
    assert shlex.quote("print('a,b')") in text  # a quoted word is never broken
    argv = subprocess.run(["bash", "-c", "printf '%s\\0' " + text.removeprefix("running:")],
                          capture_output=True, text=True, check=True).stdout.split("\0")[:-1]
    assert argv == cmd
