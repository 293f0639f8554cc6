"""Running under ncu on CPU: fake ncu executables stand in for the real one (the real one runs in tests/gpu),
so each failure's one line, the progress lines and the command lines can be checked here."""

import json
import os
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
    assert target[target.index("-m"):] == ["-m", "labkit", "nb", "run", "02_sage2_phases", "-p", "iterations", "5"]
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
    assert _calls(fake_ncu) == []


def test_cli_forms_that_cannot_run_are_one_line(fake_ncu, tmp_path, capsys):
    out = str(tmp_path / "r")
    assert cli.main(["ncu", "run", "--out", out, "--notebook", "02", "--", "labkit", "device"]) == 2
    assert "either --notebook NAME or a command" in _error(capsys)
    assert cli.main(["ncu", "run", "--out", out, "-p", "iterations", "5", "--", "labkit", "device"]) == 2
    assert "-p KEY VALUE sets a notebook parameter" in _error(capsys)
    assert cli.main(["ncu", "run", "--out", out]) == 2
    assert "give the command to profile" in _error(capsys)
    assert _calls(fake_ncu) == []


@pytest.mark.parametrize("kind, expected", [
    ("old", "is Nsight Compute 2023.1.0; labkit needs 2025.1 or newer"),
    ("perm", "ERR_NVGPUCTRPERM"),
    ("nothing", "profiled no kernel"),
    ("crash", "exited with 1"),
    ("missing", "ncu) not found"),
])
def test_each_failure_is_one_line(kind, expected, tmp_path, monkeypatch, capsys):
    opts = {"old": {"version": "2023.1.0"}, "perm": {"log_line": "==ERROR== ERR_NVGPUCTRPERM - no permission",
                                                     "ok": False},
            "nothing": {"log_line": "==WARNING== No kernels were profiled."}, "crash": {"ok": False, "log_line": ""},
            "missing": {}}[kind]
    exe, _ = _fake(tmp_path, **opts)
    monkeypatch.setenv("LABKIT_NCU", str(exe if kind != "missing" else tmp_path / "nope"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    if kind == "missing" and os.path.isfile("/usr/local/cuda/bin/ncu"):
        pytest.skip("a real ncu is installed here")
    assert cli.main(["ncu", "run", "--out", str(tmp_path / "r"), "--", "labkit", "device"]) == 2
    line = _error(capsys)
    assert line.startswith("labkit: error: ") and expected in line


def test_from_a_shell_no_traceback(tmp_path):
    exe, _ = _fake(tmp_path, log_line="==ERROR== ERR_NVGPUCTRPERM - no permission", ok=False)
    env = {**os.environ, "LABKIT_NCU": str(exe)}
    out = subprocess.run([sys.executable, "-m", "labkit", "ncu", "run", "--out", str(tmp_path / "r"), "--", "true"],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines()[-1].startswith("labkit: error: ncu may not read the GPU's performance")


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
