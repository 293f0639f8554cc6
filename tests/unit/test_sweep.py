"""Sweeps on CPU: one file per point, resume, failures kept and retried, a process pool, a killed driver."""

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from labkit import cli, sweep
from labkit.errors import ArgumentError

from ..conftest import ROOT


def test_grid_axes_and_stable_ids():
    assert sweep.parse_axis("ms=10,2.5,x") == ("ms", [10, 2.5, "x"])
    # a CLI review: kv_len=8k was refused here and taken by --point; a k that is not whole 1024s stays a string
    assert sweep.parse_axis("kv_len=1k,8k,32k") == ("kv_len", [1024, 8192, 32768])
    assert sweep.parse_axis("x=0k,08k,1.5k,k") == ("x", ["0k", "08k", "1.5k", "k"])
    with pytest.raises(ArgumentError, match="expected NAME=V1,V2"):
        sweep.parse_axis("ms")
    pts = sweep.expand({"ms": [1, 2], "tag": ["a", "b"]})
    assert pts[0] == {"ms": 1, "tag": "a"} and len(pts) == 4
    assert sweep.point_id({"tag": "a", "ms": 1}) == sweep.point_id({"ms": 1, "tag": "a"})


def test_run_writes_each_point_and_resumes(tmp_path):
    grid = {"ms": [1, 2, 3], "tag": ["a", "b"]}
    counts = sweep.run(tmp_path / "s", "demo.sleep", grid, progress=None)
    assert counts == {"total": 6, "skipped": 0, "ok": 6, "failed": 0, "kept_failed": 0, "stale": 0}
    files = sorted((tmp_path / "s" / "points").glob("*.json"))
    assert len(files) == 6 and json.loads(files[0].read_text())["status"] == "ok"
    manifest = json.loads((tmp_path / "s" / "sweep.json").read_text())
    assert manifest["grid"] == grid and manifest["provenance"]["git_sha"]
    assert sweep.run(tmp_path / "s", "demo.sleep", grid, progress=None)["skipped"] == 6
    with pytest.raises(ArgumentError, match="holds a sweep of demo.sleep"):
        sweep.run(tmp_path / "s", "demo.sleep", {"ms": [9]}, progress=None)
    df = sweep.collect(tmp_path / "s")
    assert len(df) == 6 and set(df["status"]) == {"ok"} and not df["id"].duplicated().any()


def test_each_point_records_how_long_it_ran(tmp_path):
    """elapsed_s is the point's own wall time: at least what demo.sleep slept, at most the whole run (found by a
    mutation audit: a record without it, or one counting from the epoch, passed every test)."""
    t0 = time.time()
    sweep.run(tmp_path, "demo.sleep", {"ms": [30, 60]}, progress=None)
    wall = time.time() - t0
    df = sweep.collect(tmp_path).set_index("ms")
    for ms in (30, 60):
        assert ms / 1e3 <= df.loc[ms, "elapsed_s"] <= wall, (ms, df.loc[ms, "elapsed_s"], wall)
    rec = json.loads((tmp_path / "points" / f"{sweep.point_id({'ms': 30})}.json").read_text())
    assert t0 <= rec["started"] and rec["started"] + rec["elapsed_s"] <= t0 + wall + 1e-3


def test_a_point_file_is_on_disk_whole_before_it_is_renamed_into_place(tmp_path, monkeypatch):
    """Each file is synced with all its bytes before the rename, so a power cut leaves a point whole or absent (found
    by a mutation audit: dropping the flush or the fsync passed every test)."""
    real, synced = os.fsync, []

    def fsync(fd):
        synced.append(os.fstat(fd).st_size)
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    sweep.run(tmp_path, "demo.sleep", {"ms": [1, 2]}, progress=None)
    written = [tmp_path / "sweep.json", *sorted((tmp_path / "points").glob("*.json"))]
    assert len(written) == 3 and sorted(synced) == sorted(f.stat().st_size for f in written)


def test_a_resume_keeps_the_sweep_json_of_the_first_run(tmp_path):
    """sweep.json says where and when the sweep began: a resume (from another host, a day later) leaves it as it was;
    a new sweep's directory is made with its parents (found by a mutation audit: rewriting sweep.json on every resume,
    or a directory whose parent is missing, passed every test)."""
    grid = {"ms": [1, 2]}
    d = tmp_path / "new" / "parents" / "s"  # created with its parents
    sweep.run(d, "demo.sleep", grid, progress=None)
    manifest = d / "sweep.json"
    first = json.loads(manifest.read_text())
    first["provenance"]["host"] = "the-first-host"  # as if begun elsewhere
    manifest.write_text(json.dumps(first))
    (d / "points" / f"{sweep.point_id({'ms': 2})}.json").unlink()
    assert sweep.run(d, "demo.sleep", grid, progress=None)["ok"] == 1
    assert json.loads(manifest.read_text()) == first


def test_failures_are_kept_and_retried_on_request(tmp_path):
    grid = {"ms": [1], "fail": ["no", "yes"]}
    assert sweep.run(tmp_path, "demo.sleep", grid, progress=None)["failed"] == 1
    s = sweep.status(tmp_path)
    assert (s["ok"], s["failed"], s["missing"]) == (1, 1, 0)
    kept = sweep.run(tmp_path, "demo.sleep", grid, progress=None)
    assert (kept["skipped"], kept["kept_failed"]) == (2, 1)  # kept, not retried
    again = sweep.run(tmp_path, "demo.sleep", grid, retry_failed=True, progress=None)
    assert (again["skipped"], again["failed"], again["kept_failed"]) == (1, 1, 0)
    failed = sweep.collect(tmp_path).query("status == 'failed'")
    assert failed["error"].iloc[0].startswith("RuntimeError: demo.sleep asked to fail")
    # labkit's own error is its sentence, with no class name (a review: "failed (...): NoGPU: demo.sleep ...")
    from labkit.cuda import gpu_available

    if not gpu_available():
        sweep.run(tmp_path / "nogpu", "demo.sleep", {"fail": ["cuda"]}, progress=None)
        error = sweep.collect(tmp_path / "nogpu")["error"].iloc[0]
        assert error.startswith("demo.sleep fail=cuda needs a CUDA GPU: "), error


def test_a_point_that_kills_its_worker_is_failed_and_the_rest_run_in_a_new_pool(tmp_path):
    """Found by a review: with one point per worker, the next submit to the broken pool raised BrokenProcessPool out
    of the sweep (a traceback, no record of the dead point), so every resume died on the same point."""
    grid = {"i": list(range(4)), "fail": ["no", "exit"]}
    counts = sweep.run(tmp_path, "demo.sleep", grid, executor="processes", workers=2, progress=None)
    # a point in flight beside the dead one dies with it: each runs again alone, so only those that kill it fail
    # (found by a second review: they had been failed too, and failed again on every --retry-failed)
    assert (counts["ok"], counts["failed"]) == (4, 4)
    df = sweep.collect(tmp_path)
    assert len(df) == 8 and (df.loc[df["fail"] == "exit", "status"] == "failed").all()
    assert (df.loc[df["fail"] == "no", "status"] == "ok").all()
    assert df.loc[df["fail"] == "exit", "error"].str.startswith("worker died: ").all()


def test_a_result_no_json_file_can_hold_is_a_failed_point_not_an_unreadable_sweep(tmp_path):
    """Found by a review: a point whose result held inf was written as JSON's Infinity, and every later status, collect
    or resume refused the sweep; numpy scalars became strings ("5")."""
    import numpy as np

    from labkit.sweep import workloads

    @workloads.register("test.values")
    def values(x: float = 1.0) -> dict:
        return {"rate": np.float64(x) * np.inf if x > 1 else np.float32(x), "n": np.int64(5)}

    counts = sweep.run(tmp_path, "test.values", {"x": [1.0, 2.0]}, progress=None)
    assert (counts["ok"], counts["failed"]) == (1, 1)
    df = sweep.collect(tmp_path).set_index("x")
    assert df.loc[1.0, "result.rate"] == 1.0 and df.loc[1.0, "result.n"] == 5  # numbers, not "1.0" and "5"
    assert df.loc[2.0, "status"] == "failed"
    assert "result not recorded: " in df.loc[2.0, "error"] and "result.rate = inf: not a finite number" in \
        df.loc[2.0, "error"]
    assert sweep.status(tmp_path)["failed"] == 1


def test_a_result_that_is_not_an_object_is_collected_as_one_result_column(tmp_path):
    """A workload may return a bare number or list: collect shows it in a ``result`` column (found by a mutation audit:
    no workload in the tests returned one)."""
    from labkit.sweep import workloads

    @workloads.register("test.scalar")
    def scalar(x: int = 1):
        return [x, x] if x > 2 else x * 2

    assert sweep.run(tmp_path, "test.scalar", {"x": [1, 2, 3]}, progress=None)["ok"] == 3
    df = sweep.collect(tmp_path)
    assert list(df["x"]) == [1, 2, 3] and list(df["result"]) == [2, 4, [3, 3]]
    assert not [c for c in df.columns if c.startswith("result.")]


def test_a_result_or_grid_the_reader_would_refuse_is_refused_when_written(tmp_path, capsys):
    """Found by a review: labkit wrote what its strict reader refuses (an integer of 41 digits, a lone surrogate from
    an undecodable file name, 70 levels of nesting) and numpy keys ended the sweep in a traceback; the sweep was then
    unreadable by status, collect and any resume."""
    import numpy as np

    from labkit.sweep import workloads

    @workloads.register("test.unwritable")
    def unwritable(case: str = "keys"):
        if case == "keys":  # numpy keys are numbers: written as their digits, as int keys are
            return {"by_batch": {b: float(b) for b in np.array([8, 16])}}
        if case == "deep":
            deep = 1
            for _ in range(70):
                deep = [deep]
            return {"deep": deep}
        if case == "digits":
            return {"n": 10**41}
        raise RuntimeError("cannot load " + os.fsdecode(b"kernel-\xff.cubin"))  # the error itself can't be written

    cases = ["keys", "deep", "digits", "surrogate"]
    counts = sweep.run(tmp_path / "s", "test.unwritable", {"case": cases}, progress=None)
    assert (counts["ok"], counts["failed"]) == (1, 3)
    df = sweep.collect(tmp_path / "s").set_index("case")  # readable: every point's file is one its reader takes
    assert df.loc["keys", "result.by_batch"] == {"8": 8.0, "16": 16.0}
    assert "nested 72 levels deep: expected at most 64" in df.loc["deep", "error"]
    assert "an integer of 42 digits: expected at most 40" in df.loc["digits", "error"]
    assert "a lone surrogate" in df.loc["surrogate", "error"]
    assert sweep.status(tmp_path / "s")["failed"] == 3
    assert cli.main(["sweep", "run", "--workload", "demo.sleep", "--grid", "ms=0", "--grid", "i=" + "1" * 41,
                     "--out", str(tmp_path / "a")]) == 2
    assert "grid axis 'i': [0]: an integer of 41 digits: expected at most 40" in capsys.readouterr().err
    assert not (tmp_path / "a").exists()  # refused before the directory
    with pytest.raises(ArgumentError, match="grid axis 'i': no values"):
        sweep.run(tmp_path / "e", "demo.sleep", {"ms": [0], "i": []}, progress=None)
    assert not (tmp_path / "e").exists()


def test_a_resume_with_5_for_5_0_is_another_sweep_and_a_tuple_for_a_list_the_same(tmp_path, capsys):
    """Found by a review: grids compared with ==, where 5 == 5.0 == True, but a point's id hashes its JSON: a resume
    with ms=5.0 ran the ms=5 point again into a second file that status and collect never showed."""
    assert cli.main(["sweep", "run", "--workload", "demo.sleep", "--grid", "ms=5", "--out", str(tmp_path)]) == 0
    assert cli.main(["sweep", "run", "--workload", "demo.sleep", "--grid", "ms=5.0", "--out", str(tmp_path)]) == 2
    assert 'holds a sweep of demo.sleep over {"ms": [5]}, not over {"ms": [5.0]}' in capsys.readouterr().err
    assert sweep.run(tmp_path, "demo.sleep", {"ms": (5,)}, progress=None)["skipped"] == 1
    assert len(list((tmp_path / "points").iterdir())) == 1


def test_collect_keeps_a_bare_result_of_0_or_false(tmp_path):
    """Found by a review: ``result or {}`` dropped a workload's 0, False or empty list."""
    from labkit.sweep import workloads

    @workloads.register("test.falsy")
    def falsy(x: int = 1):
        return [0, False, [], 0.5][x]

    assert sweep.run(tmp_path, "test.falsy", {"x": [0, 1, 2, 3]}, progress=None)["ok"] == 4
    assert list(sweep.collect(tmp_path)["result"]) == [0, False, [], 0.5]


def test_a_write_cut_short_leaves_the_old_file_whole_and_no_temporary_one(tmp_path, monkeypatch):
    """Found by a review: run.json was written in place, so a kill or a full disk mid-write left half a file."""
    from labkit import _json, _write

    path = _write.write_json(tmp_path / "run.json", {"ok": True})
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(28, "No space left on device")))
    with pytest.raises(OSError, match="No space left"):
        _write.write_json(path, {"ok": False, "pad": "x" * 100_000})
    assert _json.read_json(path) == {"ok": True} and [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_process_pool_runs_every_point_once(tmp_path):
    counts = sweep.run(tmp_path, "demo.sleep", {"ms": [50, 60, 70, 80]}, executor="processes", workers=2,
                       progress=None)
    assert counts["ok"] == 4
    df = sweep.collect(tmp_path)
    assert df["pid"].nunique() == 2 and os.getpid() not in set(df["pid"])


def test_pool_workers_take_the_gpus_cuda_visible_devices_names(tmp_path, monkeypatch):
    """Found by a review: the workers took GPUs 0..N-1 of all NVML counts whatever CUDA_VISIBLE_DEVICES the sweep
    was given, so a job given GPUs 2 and 3 ran on 0 and 1."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert sweep.run(tmp_path / "a", "demo.sleep", {"ms": [200], "i": [0, 1, 2, 3]}, executor="processes", workers=2,
                     progress=None)["ok"] == 4
    assert set(sweep.collect(tmp_path / "a")["result.cuda_visible_devices"]) == {"2", "3"}
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # no GPU given: none taken
    assert sweep.run(tmp_path / "b", "demo.sleep", {"ms": [0], "i": [0, 1]}, executor="processes", workers=2,
                     progress=None)["ok"] == 2
    assert set(sweep.collect(tmp_path / "b")["result.cuda_visible_devices"]) == {""}


def test_a_killed_driver_loses_only_points_in_flight(tmp_path):
    out = tmp_path / "s"
    cmd = [sys.executable, "-m", "labkit", "sweep", "run", "--workload", "demo.sleep", "--grid", "ms=150",
           "--grid", "i=0,1,2,3,4,5,6,7,8,9", "--out", str(out)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list((out / "points").glob("*.json"))) < 3:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    written = len(list((out / "points").glob("*.json")))
    assert 3 <= written < 10
    for f in (out / "points").glob("*.json"):
        json.loads(f.read_text())  # every file that exists is whole
    assert subprocess.run(cmd, cwd=ROOT, capture_output=True).returncode == 0
    df = sweep.collect(out)
    assert len(df) == 10 and sorted(df["i"]) == list(range(10)) and set(df["status"]) == {"ok"}


def _marked(mark: str) -> list[int]:
    """The processes whose environment holds ``mark`` (a driver's workers inherit it)."""
    pids = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if mark.encode() in environ.read_bytes():
                pids.append(int(environ.parent.name))
        except OSError:  # gone, or not ours
            pass
    return pids


def _start_pool_sweep(out: Path, mark: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "labkit", "sweep", "run", "--workload", "demo.sleep", "--grid", "ms=400",
           "--grid", "i=" + ",".join(map(str, range(12))), "--out", str(out), "--executor", "processes",
           "--workers", "2"]
    # SIGINT as a terminal leaves it: a test run started in the background (``pytest &`` without job control, as
    # nohup does) ignores it, the sweep inherits that, and Python then installs no KeyboardInterrupt handler, so the
    # Ctrl-C test's sweep had run to its end
    return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "LABKIT_TEST_MARK": mark}, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _points_once(out: Path, at_least: int, proc: subprocess.Popen) -> int:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list((out / "points").glob("*.json"))) < at_least:
        assert proc.poll() is None, "the sweep ended before it was interrupted"
        time.sleep(0.02)
    return len(list((out / "points").glob("*.json")))


@pytest.mark.skipif(not Path("/proc/self/environ").is_file(), reason="finds the workers through /proc")
def test_a_killed_pool_driver_takes_its_workers_with_it(tmp_path):
    """Found by a review: SIGKILL on the driver of a process-pool sweep left its workers running the queue (5 more
    points written, then idle for good), so a resume would time points beside them."""
    out, mark = tmp_path / "s", f"labkit-sweep-{uuid.uuid4()}"
    proc = _start_pool_sweep(out, mark)
    _points_once(out, 2, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and _marked(mark):
        time.sleep(0.1)
    assert not _marked(mark), "workers outlived their driver"
    written = len(list((out / "points").glob("*.json")))
    assert written < 12


@pytest.mark.skipif(not Path("/proc/self/environ").is_file(), reason="finds the workers through /proc")
def test_ctrl_c_on_a_pool_sweep_starts_no_queued_point(tmp_path):
    """Found by a review: after Ctrl-C the pool went on to start queued points (10 of 12 written, not 4)."""
    out, mark = tmp_path / "s", f"labkit-sweep-{uuid.uuid4()}"
    proc = _start_pool_sweep(out, mark)
    _points_once(out, 2, proc)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the driver and its workers
    # counted after the signal, not before it: a test process descheduled between the two (a loaded machine) had
    # let points finish that the count before missed
    at_signal = len(list((out / "points").glob("*.json")))
    assert proc.wait(timeout=30) == 130
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and _marked(mark):
        time.sleep(0.1)
    assert not _marked(mark)
    assert len(list((out / "points").glob("*.json"))) <= at_signal + 2  # at most the two in flight


def test_a_sweep_with_a_kept_failed_point_still_exits_1(tmp_path, capsys):
    """Found by a review: the second run of a sweep with a failed point printed "0 failed, 2 done before" and exited
    0, so `make` or CI passed on the second try."""
    argv = ["sweep", "run", "--workload", "demo.sleep", "--grid", "fail=yes,no", "--out", str(tmp_path)]
    assert cli.main(argv) == 1
    capsys.readouterr()
    assert cli.main(argv) == 1
    assert "2 done before (1 of them failed: --retry-failed runs them again)" in capsys.readouterr().out
    assert cli.main(["sweep", "run", "--workload", "demo.sleep", "--grid", "fail=no", "--out",
                     str(tmp_path / "ok")]) == 0


def test_a_directory_that_is_not_a_sweep_is_refused_before_anything_is_written(tmp_path, capsys):
    """Found by a CLI review: a directory of other files took sweep.json and points/ beside them (exit 0), one whose
    points was a file read as every point missing, and a resume over reordered values did not show the new grid."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    argv = ["sweep", "run", "--workload", "demo.sleep", "--grid", "ms=1,2", "--out"]
    assert cli.main([*argv, str(other)]) == 2
    assert "holds other files and no sweep.json" in capsys.readouterr().err
    assert sorted(p.name for p in other.iterdir()) == ["notes.txt"]
    cut_short = tmp_path / "cut"  # a start killed before its sweep.json (found by a review: then refused for good)
    (cut_short / "points").mkdir(parents=True)
    (cut_short / ".sweep.json.123.tmp").write_text('{"sweep_ver')
    assert cli.main([*argv, str(cut_short)]) == 0
    d = tmp_path / "s"
    assert cli.main([*argv, str(d)]) == 0
    assert cli.main(["sweep", "run", "--workload", "demo.sleep", "--grid", "ms=2,1", "--out", str(d)]) == 2
    assert 'over {"ms": [1, 2]}, not over {"ms": [2, 1]}' in capsys.readouterr().err
    for f in (d / "points").iterdir():
        f.unlink()
    (d / "points").rmdir()
    (d / "points").write_text("")
    assert cli.main(["sweep", "status", str(d)]) == 2
    assert "points: a file where the sweep's points directory should be" in capsys.readouterr().err


def test_a_resume_with_another_workload_names_both_and_a_directory_it_cannot_write_is_refused(tmp_path):
    """The refusal names the sweep that is there and the workload asked for; a new sweep where no file can be created
    is refused as such, not as an OSError from mkdir (found by a mutation audit: neither was given)."""
    from labkit.sweep import workloads

    @workloads.register("test.other")
    def other(ms: int = 1) -> dict:
        return {"ms": ms}

    sweep.run(tmp_path, "demo.sleep", {"ms": [1, 2]}, progress=None)
    with pytest.raises(ArgumentError, match=re.escape(f'{tmp_path} holds a sweep of demo.sleep over {{"ms": [1, 2]}}, '
                                                      "not of test.other; resume it with the same workload")):
        sweep.run(tmp_path, "test.other", {"ms": [1, 2]}, progress=None)
    if Path("/proc/self").is_dir():
        with pytest.raises(ArgumentError, match="sweep directory '/proc/labkit-sweep': cannot create a file in "
                                                "'/proc'"):
            sweep.run("/proc/labkit-sweep", "demo.sleep", {"ms": [1]}, progress=None)


def test_cli(tmp_path, capsys):
    assert cli.main(["sweep", "run", "--workload", "demo.sleep", "--grid", "ms=1,2", "--out", str(tmp_path)]) == 0
    assert "2 ok, 0 failed" in capsys.readouterr().out
    assert cli.main(["sweep", "collect", str(tmp_path), "--csv"]) == 0
    assert capsys.readouterr().out.startswith("id,ms,status")
    assert cli.main(["sweep", "run", "--workload", "demo.sleep", "--grid", "ms", "--out", str(tmp_path)]) == 2
    assert "grid axis 'ms': expected NAME=V1,V2,..." in capsys.readouterr().err
    assert cli.main(["sweep", "status", str(tmp_path / "nope")]) == 2
    assert capsys.readouterr().err == f"labkit: error: labkit sweep status: {tmp_path / 'nope'}: no such directory\n"
    assert cli.main(["sweep", "status", str(tmp_path)]) == 0
    assert capsys.readouterr().out == f"{tmp_path}: demo.sleep, 2 points: 2 ok, 0 failed, 0 missing\n"
    # a CLI review: a bench's recorded sweep.json (a decode report) and a sweep.json that is a folder
    bench = ROOT / "data" / "runs" / "20261204T185600Z-decode_bench_targets"
    assert cli.main(["sweep", "status", str(bench)]) == 2
    assert capsys.readouterr().err.endswith("missing key 'sweep_version': this is a decode report (labkit report "
                                            "show), not a sweep's sweep.json\n")
    (tmp_path / "folder" / "sweep.json").mkdir(parents=True)
    assert cli.main(["sweep", "status", str(tmp_path / "folder")]) == 2
    assert "sweep.json: a directory where a sweep's sweep.json should be" in capsys.readouterr().err
    # a workload registered at run time (a notebook's own) reads as any other, but `sweep run` here cannot resume it
    manifest = tmp_path / "sweep.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "workload": "mine.own"}))
    assert cli.main(["sweep", "status", str(tmp_path)]) == 0
    assert capsys.readouterr().out == (f"{tmp_path}: mine.own (not a workload of labkit's: resume it where it is "
                                       "registered), 2 points: 2 ok, 0 failed, 0 missing\n")


@pytest.mark.parametrize("damage, message", [
    (lambda d, first: first.write_text("[1, 2]"), r"\$ = \[1, 2\]: expected an object"),
    (lambda d, first: first.write_text('"str"'), r"\$ = 'str': expected an object"),
    (lambda d, first: (d / "points" / "zzz.json").write_text('{"id": "x"}'), r"zzz.json: missing key 'params'"),
    (lambda d, first: first.write_text(json.dumps({**json.loads(first.read_text()), "status": "weird"})),
     r"status = 'weird': expected one of"),
    (lambda d, first: first.write_text(json.dumps({**json.loads(first.read_text()), "id": "0" * 16})),
     r"id = '0000000000000000': expected the file's own point id"),
    # a truncated point file: how to go on (found by a CLI review)
    (lambda d, first: first.write_text(first.read_text()[:20]),
     r"not valid JSON: .*; to run the point again, delete the file and resume the sweep"),
    (lambda d, first: (d / "sweep.json").write_text(json.dumps({**json.loads((d / "sweep.json").read_text()),
                                                                 "sweep_version": 2})), r"sweep_version = 2"),
    (lambda d, first: (d / "sweep.json").write_text(json.dumps({**json.loads((d / "sweep.json").read_text()),
                                                                 "workload": 3})), r"workload = 3: expected a string"),
    (lambda d, first: (d / "sweep.json").write_text(json.dumps({**json.loads((d / "sweep.json").read_text()),
                                                                 "grid": {}})), r"grid = \{\}"),
    # found by a readers review: an edited grid read as points "missing", and a value twice named no file
    (lambda d, first: (d / "sweep.json").write_text(json.dumps({**json.loads((d / "sweep.json").read_text()),
                                                                 "grid": {"ms": [1, 2, 3]}})),
     r"sweep.json: points = 2: expected 3, the number of the grid's points"),
    (lambda d, first: (d / "sweep.json").write_text(json.dumps({**json.loads((d / "sweep.json").read_text()),
                                                                 "grid": {"ms": [1, 1]}})),
     r"sweep.json: grid: grid axis 'ms': 1 given twice"),
    # an axis that is not a list of values, read as one had its characters as points (found by a mutation audit)
    (lambda d, first: (d / "sweep.json").write_text(json.dumps({**json.loads((d / "sweep.json").read_text()),
                                                                 "grid": {"ms": "12"}})),
     r"sweep.json: grid.ms = '12': expected a list"),
    (lambda d, first: (d / "sweep.json").write_text(json.dumps({**json.loads((d / "sweep.json").read_text()),
                                                                 "grid": {"ms": []}})),
     r"sweep.json: grid.ms = \[\]: expected a list of at least 1 entry \(got 0\)"),
])
def test_a_damaged_sweep_file_is_one_line_naming_it_in_status_collect_and_resume(damage, message, tmp_path, capsys):
    """Found by a CLI review: a point file holding a list was an AttributeError in status and a TypeError in collect,
    a stray file without params a KeyError, and resuming counted the damaged point as done."""
    d = tmp_path / "sweep"
    argv = ["sweep", "run", "--workload", "demo.sleep", "--grid", "ms=1,2", "--out", str(d)]
    assert cli.main(argv) == 0
    damage(d, sorted((d / "points").glob("*.json"))[0])
    capsys.readouterr()
    for command in (["sweep", "status", str(d)], ["sweep", "collect", str(d)], argv):
        assert cli.main(command) == 2, command
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("labkit: error: ") and re.search(message, err[0]), (command, err)


def _gpu() -> bool:
    from labkit.cuda import gpu_available

    return gpu_available()


def test_grid_values_in_brackets_are_lists():
    from labkit.sweep.grid import parse_axis

    assert parse_axis("shape=[1,1024,8,128],[1,2048,8,128]") == ("shape", [[1, 1024, 8, 128], [1, 2048, 8, 128]])
    assert parse_axis("shape=[1,1024,8,128]") == ("shape", [[1, 1024, 8, 128]])
    with pytest.raises(ArgumentError, match="list, object and quoted values are JSON"):
        parse_axis("shape=[1,1024,8")
    # a CLI review: tag="a,b" was two points, tagged '"a' and 'b"'
    assert parse_axis('tag="a,b"') == ("tag", ["a,b"]) and parse_axis('tag="a,b","c"') == ("tag", ["a,b", "c"])
    with pytest.raises(ArgumentError, match='each of them, e.g. .* or tag="a,b","c"'):
        parse_axis('tag="a,b",c')
    # found by a CLI review: the schedule error's own example, schedule={"cta_q":128}, had been refused
    assert parse_axis('schedule={"cta_q":128},{"cta_q":64}') == ("schedule", [{"cta_q": 128}, {"cta_q": 64}])


def test_an_empty_grid_value_or_no_axis_is_refused():
    """An empty value between commas ran as the string '' (found by a mutation audit: no test gave one), and an empty
    grid is no sweep."""
    for text in ("ms=1,,2", "ms=1,", "ms= ,2"):
        with pytest.raises(ArgumentError, match=re.escape(f"grid axis {text!r}: an empty value")):
            sweep.parse_axis(text)
    with pytest.raises(ArgumentError, match="a sweep needs at least one grid axis"):
        sweep.expand({})
    # found by a review: numpy values stopped expand with a TypeError; they are the numbers and lists they hold
    import numpy as np

    assert sweep.expand({"batch": [np.int64(1), np.int64(2)], "shape": [np.array([1, 8])]}) == [
        {"batch": 1, "shape": [1, 8]}, {"batch": 2, "shape": [1, 8]}]
    # found by a review: Python's int() read 1_0 as 10, where every other number on labkit's command line refuses it
    with pytest.raises(ArgumentError, match=re.escape("grid axis 'ms=1_0': '1_0': write the number without '_'")):
        sweep.parse_axis("ms=1_0")
    assert sweep.parse_axis("tag=v1_0,a_b") == ("tag", ["v1_0", "a_b"])


def test_an_object_value_given_twice_in_another_key_order_is_one_value():
    """Two objects that differ only in their keys' order are one point (one id, one file): given twice, refused as
    any value given twice (found by a mutation audit: the check compared them as written)."""
    a, b = {"cta_q": 128, "cta_k": 64}, {"cta_k": 64, "cta_q": 128}
    assert sweep.point_id({"schedule": a}) == sweep.point_id({"schedule": b})
    with pytest.raises(ArgumentError, match="given twice: each point runs once"):
        sweep.parse_axis('schedule={"cta_q":128,"cta_k":64},{"cta_k":64,"cta_q":128}')
    with pytest.raises(ArgumentError, match="given twice: each point runs once"):
        sweep.expand({"schedule": [a, b]})
    with pytest.raises(ArgumentError, match="1.0 given twice: each point runs once"):  # a CLI review: two points
        sweep.parse_axis("ms=1,1.0")
    assert sweep.parse_axis("ms=1,1.5") == ("ms", [1, 1.5])


def test_a_sweep_recorded_by_an_earlier_run_keeps_its_points_ids():
    """A committed sweep (written on a GPU by an earlier labkit) reads as whole today: every point file is found as
    its grid's point, none missing, so a resume would run nothing again (found by a mutation audit: a changed id or
    sweep_version passed every test, each sweep being written and read by the same code)."""
    d = ROOT / "data" / "runs" / "20261203T084643Z-03_decode" / "data" / "sweeps" / "splits"
    manifest = json.loads((d / "sweep.json").read_text())
    files = {f.stem for f in (d / "points").glob("*.json")}
    assert len(files) == manifest["points"] > 0
    s = sweep.status(d)
    assert (s["points"], s["ok"] + s["failed"], s["missing"]) == (manifest["points"], len(files), 0)
    df = sweep.collect(d)
    assert set(df["id"]) == files and len(df) == len(files)


@pytest.mark.parametrize("grid, message", [
    (["shape=[1,1024,8,128]", "q_len=1024", "kv_len=2048"], "point shape=[1, 1024, 8, 128] q_len=1024 kv_len=2048: "
                                                            "kv_len 2048: expected 1..1024"),
    (["shape=[1,1024,8,100]", "q_len=1", "kv_len=1"], "head_dim 100"),
    (["shape=[1,2]", "q_len=1", "kv_len=1"], "shape [1, 2]: expected [B, N, H, D]"),
    pytest.param(["shape=[1,1024,8,128]", "q_len=1", "kv_len=1"], "workload sage2.timeline needs a CUDA GPU",
                 marks=pytest.mark.skipif(_gpu(), reason="on a GPU machine this sweep runs")),
])
def test_a_sage2_sweep_takes_shapes_from_the_cli_and_is_checked_whole_before_it_starts(grid, message, tmp_path,
                                                                                      capsys):
    """Found by a CLI review: a shape's commas split it into four points, so sage2.timeline could not run from the
    CLI; and a GPU workload on a machine without one failed every point in a new directory instead of once."""
    out = tmp_path / "sweep"
    argv = ["sweep", "run", "--workload", "sage2.timeline", *[a for g in grid for a in ("--grid", g)],
            "--out", str(out)]
    assert cli.main(argv) == (1 if "needs a CUDA GPU" in message else 2)  # 1: the machine, 2: the input
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not out.exists()


@pytest.mark.parametrize("workload, grid, message", [
    ("demo.sleep", ["ms=abc"], "grid axis ms='abc': workload demo.sleep takes a number there"),
    # found by a new-user review: a negative sleep failed every point in a new directory, 1e11 ms slept for years
    ("demo.sleep", ["ms=-5"], "ms=-5: expected a sleep of 0..60000 milliseconds"),
    ("demo.sleep", ["ms=99999999999"], "ms=99999999999: expected a sleep of 0..60000 milliseconds"),
    ("demo.sleep", ["fail=maybe"], "fail='maybe': expected yes (raise), exit (end the worker), lost (a CUDA context "
                                      "lost, simulated), cuda (a kernel that faults, on a GPU) or no"),
    ("decode.point", ["batch=1"], "workload decode.point needs a grid axis for kv_len"),
    ("decode.point", ["batch=1", "kv_len=1.5k"], "grid axis kv_len='1.5k': workload decode.point takes an integer"),
    ("decode.point", ["batch=1", "kv_len=64", "peers=yes"],
     "grid axis peers='yes': workload decode.point takes 0 or 1"),
    ("decode.point", ["batch=1", "kv_len=64", "peers=True"],
     "grid axis peers='True': workload decode.point takes 0 or 1"),
    ("decode.point", ["batch=1", "kv_len=64", "nope=1"], "grid axis nope: workload decode.point has no such parameter"),
    # each point's Sage2 options as sage2 profile checks them (found by a review: they had failed at every point)
    ("sage2.tail_round", ["shape=[1,1024,8,128]", "round_index=0", "layout=XYZ"], "layout 'XYZ': expected one of"),
    ("sage2.tail_round", ["shape=[1,1024,8,128]", "round_index=0", "dtype=int3"], "dtype 'int3': expected bf16"),
    ("sage2.tail_round", ["shape=[1,1024,8,128]", "round_index=-3"], "round_index -3: expected >= 0"),
    ("sage2.tail_round", ["shape=[1,1024,8,128]", "round_index=0", "schedule=x"],
     "schedule 'x': expected seed, sm90 or CTA_Q/CTA_K/WARP_Q/PV_TERMS"),
    ("sage2.tail_round", ["shape=[1,1024,8,128]", "round_index=0", "schedule=[1]"],
     "schedule [1]: expected seed, sm90, CTA_Q/CTA_K/WARP_Q/PV_TERMS or an object of Sage2 Schedule fields"),
    # a review: q_tails=5 raised a TypeError out of the CLI (a traceback)
    ("sage2.tail_round", ["shape=[1,1024,8,128]", "round_index=0", "q_tails=5"],
     "q_tails 5: expected a list of lengths, e.g. q_tails=[37760,37761]"),
    ("sage2.timeline", ["shape=[1,1024,8,128]", "q_len=10", "kv_len=10", "launches=0"], "launches 0: expected 1..100"),
    # found by a mutation audit: dropping either check passed every test (a point of no batch, a tail given twice)
    ("decode.point", ["batch=0", "kv_len=64"], "point batch=0 kv_len=64: batch 0: expected at least 1"),
    ("sage2.tail_round", ["shape=[1,1024,8,128]", "round_index=0", "kv_tails=[2000]"],
     "kv_tails 2000: expected 1..1024"),
    ("sage2.tail_round", ["shape=[1,1024,8,128]", "round_index=0", "q_tails=[5,5]"], "q_tails: 5 given twice")])
def test_a_grid_the_workload_cannot_take_is_refused_before_the_sweep_exists(workload, grid, message, tmp_path,
                                                                           capsys):
    """Once written, a sweep directory is tied to its grid: a typo found by the first point would have to be deleted
    by hand before a retry."""
    out = tmp_path / "sweep"
    argv = ["sweep", "run", "--workload", workload, *[a for g in grid for a in ("--grid", g)], "--out", str(out)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("labkit: error: ") and message in err, err
    assert not out.exists()


def test_the_bounds_a_refusal_names_are_taken():
    """A refusal's range is inclusive: 60000 ms sleeps and a split per page (16 at 1 x 1024, 64-token pages) is a
    point, as the messages say (found by a mutation audit: refusing either bound passed every test)."""
    from labkit.sweep.workloads import check_grid

    check_grid("demo.sleep", {"ms": [0, 60000]})
    check_grid("decode.point", {"batch": [1], "kv_len": [1024], "splits": [0, 16]})
    with pytest.raises(ArgumentError, match=re.escape("splits 17: expected 0 (the plan's) .. 16 (one per page")):
        check_grid("decode.point", {"batch": [1], "kv_len": [1024], "splits": [17]})
    with pytest.raises(ArgumentError, match=re.escape("ms=60001: expected a sleep of 0..60000 milliseconds")):
        check_grid("demo.sleep", {"ms": [60001]})


def test_a_grid_from_python_takes_booleans_for_a_bool_parameter():
    """Notebook 03 sweeps decode.point with peers=True: a bool parameter takes True / False from Python as well as
    the CLI's 0 / 1, and nothing else (a bool is no integer for an int parameter)."""
    from labkit.errors import ArgumentError
    from labkit.sweep.workloads import check_grid

    check_grid("decode.point", {"batch": [8], "kv_len": [8192], "peers": [True, False, 0, 1]})
    with pytest.raises(ArgumentError, match="grid axis peers=2: workload decode.point takes 0 or 1 there"):
        check_grid("decode.point", {"batch": [8], "kv_len": [8192], "peers": [2]})
    with pytest.raises(ArgumentError, match="grid axis batch=True: workload decode.point takes an integer"):
        check_grid("decode.point", {"batch": [True], "kv_len": [8192]})


def test_collect_refuses_a_path_without_a_sweep(tmp_path, capsys):
    assert cli.main(["sweep", "collect", str(tmp_path)]) == 2
    assert "not a sweep directory (no sweep.json)" in capsys.readouterr().err


def test_review_fixes_the_per_point_check_skips_what_the_workload_skips_and_resume_needs_no_gpu(tmp_path, monkeypatch,
                                                                                                capsys):
    """A review of the up-front checks: a point over the byte cap is the workload's to skip, not the sweep's to
    refuse; a page_size of 0 is one line, not a ZeroDivisionError; a finished GPU sweep resumes without a GPU."""
    import labkit.cuda
    from labkit.sweep import workloads

    workloads.check_grid("decode.point", {"batch": [1, 4096], "kv_len": [1048576]})  # 4096 x 1M is skipped later
    with pytest.raises(ArgumentError, match=r"point batch=1 kv_len=1024 page_size=0: page_size 0"):
        workloads.check_grid("decode.point", {"batch": [1], "kv_len": [1024], "page_size": [0]})
    with pytest.raises(ArgumentError, match=r"splits 300: expected 0 \(the plan's\) \.\. 256"):
        workloads.check_grid("decode.point", {"batch": [1], "kv_len": [1 << 20], "splits": [300]})

    @workloads.register("test.gpu_echo", gpu=True)
    def gpu_echo(x: int) -> dict:  # a GPU workload that needs none, to run the sweep's bookkeeping here
        return {"x": x}

    argv = ["sweep", "run", "--workload", "test.gpu_echo", "--grid", "x=1,2", "--out", str(tmp_path / "s")]
    if not labkit.cuda.gpu_available():
        assert cli.main(argv) == 1 and "workload test.gpu_echo needs a CUDA GPU" in capsys.readouterr().err
    monkeypatch.setattr(labkit.cuda, "require_gpu", lambda what: None)
    assert cli.main(argv) == 0
    monkeypatch.undo()
    assert cli.main(argv) == 0 and "0 ok, 0 failed, 2 done before" in capsys.readouterr().out  # nothing left to run
    workloads._REGISTRY.pop("test.gpu_echo")
    workloads._NEEDS_GPU.discard("test.gpu_echo")


def test_a_grid_value_is_finite_and_given_once(tmp_path, capsys):
    """Found by a review: nan and inf ran and were written to sweep.json, whose strict reader then refused it (status,
    collect and resume all failed); a repeated value ran its point twice and status counted it once."""
    for grid, said in ((["ms=10", "tag=inf,nan"], "inf: expected finite numbers"), (["ms=10,10"], "10 given twice"),
                       (["ms=10", "shape=[1,2],[1,2]"], "[1, 2] given twice")):
        with pytest.raises(ArgumentError, match=re.escape(said)):
            sweep.parse_axis(grid[-1])
        argv = ["sweep", "run", "--workload", "demo.sleep", *[a for g in grid for a in ("--grid", g)]]
        assert cli.main([*argv, "--out", str(tmp_path / "s")]) == 2
        assert said in capsys.readouterr().err and not (tmp_path / "s").exists()
    with pytest.raises(ArgumentError, match="grid axis 'ms': 5 given twice"):
        sweep.expand({"ms": [5, 5]})


def test_a_dask_sweep_without_distributed_is_refused_before_the_sweep_exists(tmp_path, capsys):
    """Found by a review: the refusal was one line, but sweep.json and an empty points/ had been written first,
    tying the directory to the grid. Exit 1: the grid passed; the machine lacks a package."""
    import importlib.util

    if importlib.util.find_spec("distributed") is not None:
        pytest.skip("distributed is installed here: the sweep would run")
    out = tmp_path / "s"
    assert cli.main(["sweep", "run", "--workload", "demo.sleep", "--grid", "ms=1", "--executor", "dask",
                     "--out", str(out)]) == 1
    assert "distributed is not installed" in capsys.readouterr().err and not out.exists()
    # a review: a directory of another grid is bad input (2), said before the missing package (1)
    assert cli.main(["sweep", "run", "--workload", "demo.sleep", "--grid", "ms=1", "--out", str(out)]) == 0
    assert cli.main(["sweep", "run", "--workload", "demo.sleep", "--grid", "ms=2", "--executor", "dask",
                     "--out", str(out)]) == 2
    assert "not over" in capsys.readouterr().err


def test_point_files_are_this_grids_points_and_collect_follows_the_grid(tmp_path, capsys):
    """Found by a review: a point file with hand-edited params was counted ok and collected as edited; a record of
    another grid copied into points/ was collected though status did not count it; rows came in hash order; and an
    empty sweep printed pandas' 'Empty DataFrame'."""
    out = tmp_path / "s"
    sweep.run(out, "demo.sleep", {"ms": [3, 1, 2]}, progress=None)
    assert list(sweep.collect(out)["ms"]) == [3, 1, 2]  # the grid's order
    stray = tmp_path / "t"
    sweep.run(stray, "demo.sleep", {"ms": [7]}, progress=None)
    sweep.run(tmp_path / "u", "demo.sleep", {"ms": [8], "fail": ["yes"]}, progress=None)  # another grid's failure
    for f in [*(stray / "points").glob("*.json"), *(tmp_path / "u" / "points").glob("*.json")]:
        (out / "points" / f.name).write_text(f.read_text())
    assert list(sweep.collect(out)["ms"]) == [3, 1, 2]
    first = out / "points" / f"{sweep.point_id({'ms': 3})}.json"
    kept = first.read_text()
    first.unlink()  # the grid's first point not finished: the rows after it are still collected
    assert list(sweep.collect(out)["ms"]) == [1, 2]
    first.write_text(kept)
    assert {k: v for k, v in sweep.status(out).items() if k != "workload"} == {"points": 3, "ok": 3, "failed": 0,
                                                                                 "missing": 0, "stale": 0,
                                                                                 "ended_while_running": []}
    f = out / "points" / f"{sweep.point_id({'ms': 3})}.json"  # one of this grid's own
    doc = json.loads(f.read_text())
    doc["params"]["ms"] = 999
    f.write_text(json.dumps(doc))
    assert cli.main(["sweep", "status", str(out)]) == 2
    assert "params = {'ms': 999}: not the parameters of point" in capsys.readouterr().err
    sweep.SweepDir(tmp_path / "e").start("demo.sleep", {"ms": [1]})
    assert cli.main(["sweep", "collect", str(tmp_path / "e")]) == 0
    assert "no point has finished yet" in capsys.readouterr().out


def test_a_resumed_sweeps_progress_counts_the_points_done_before_it(tmp_path):
    """The progress line of a resume starts after the points already done ([3/4 ...], not [1/4 ...]), so its count and
    eta read against the whole grid (found by a test audit: a count from 1 passed every test)."""
    import io

    out = tmp_path / "s"
    sweep.run(out, "demo.sleep", {"ms": [1, 2]}, progress=None)
    (out / "points" / f"{sweep.point_id({'ms': 2})}.json").unlink()  # one point to run again on a resume
    lines = io.StringIO()
    counts = sweep.run(out, "demo.sleep", {"ms": [1, 2]}, progress=lines)
    assert counts["skipped"] == 1 and lines.getvalue().startswith("[2/2 done, 0 failed, eta ")


def test_the_progress_eta_is_the_mean_time_per_point_times_the_points_left_and_none_goes_nowhere(tmp_path, capsys):
    """Each line's eta is (time so far / points run) x points left, so it ends at 0.0; progress=None prints nothing
    (found by a mutation audit: any eta formula, and None printing to stdout, passed every test)."""
    import io

    lines = io.StringIO()
    t0 = time.time()
    sweep.run(tmp_path / "a", "demo.sleep", {"ms": [300], "i": [0, 1, 2]}, progress=lines)
    wall = time.time() - t0
    etas = [float(m) for m in re.findall(r"eta ([0-9.]+) s\]", lines.getvalue())]
    assert len(etas) == 3, lines.getvalue()
    for i, eta in enumerate(etas, start=1):  # time so far: at least i x 0.3 s, at most the whole run
        assert 0.3 * (3 - i) - 0.05 <= eta <= wall / i * (3 - i) + 0.05, (i, etas, wall)
    capsys.readouterr()
    sweep.run(tmp_path / "b", "demo.sleep", {"ms": [1, 2]}, progress=None)
    assert capsys.readouterr() == ("", "")


def test_collect_prints_missing_values_as_a_dash_lists_as_items_and_whole_numbers_whole(tmp_path, capsys):
    """Found by reviews: collect printed None (gpu_uuid, a failed point's result), a shape as a Python list, and a pid
    made float by a failed point's missing one as 28217.0; pandas' na_rep does not reach None in object columns."""
    import re

    import pandas as pd

    from labkit._text import shown_table

    out = tmp_path / "sw"
    assert cli.main(["sweep", "run", "--workload", "demo.sleep", "--grid", "ms=1", "--grid",
                     "tag=[1,1024,8,128]", "--grid", "fail=no,yes", "--out", str(out)]) == 1  # one point failed
    capsys.readouterr()
    assert cli.main(["sweep", "collect", str(out)]) == 0
    text = capsys.readouterr().out
    assert "None" not in text and re.search(r" 1, 1024, 8, 128 +(no|yes) ", text), text  # not [1, 1024, 8, 128]
    assert not re.search(r"\b\d{3,}\.0\b", text), text  # the pid column, whole
    table = shown_table(pd.DataFrame({"uuid": [None, "GPU-1"], "pid": [28217.0, float("nan")], "t": [0.5, None],
                                      "waves": [(132, 10), [1]]}))
    assert [row.split() for row in table.split("\n")[1:]] == [["-", "28217", "0.5", "132,", "10"],
                                                              ["GPU-1", "-", "-", "1"]], table


@pytest.mark.parametrize("executor, workers, message", [
    ("proccesses", 2, "executor 'proccesses': expected one of local, processes, dask"),
    ("processes", 0, "workers 0: expected an integer >= 1"),
    ("local", True, "workers True: expected an integer >= 1")])
def test_an_unknown_executor_or_worker_count_is_refused_by_name_before_the_sweep_exists(executor, workers, message,
                                                                                        tmp_path):
    """From Python (the CLI has choices) a typo of an executor was refused only once the lazy executor started, after
    sweep.json tied the directory to the grid; without the check it ran on Dask or a pool of 0 (found by a mutation
    audit: deleting either refusal passed every test)."""
    with pytest.raises(ArgumentError, match=re.escape(message)):
        sweep.run(tmp_path / "s", "demo.sleep", {"ms": [1]}, executor=executor, workers=workers, progress=None)
    assert not (tmp_path / "s").exists()


def test_a_pool_whose_workers_cannot_start_fails_each_point_once_and_returns(tmp_path, monkeypatch):
    """A worker that dies before running anything (a bad environment, an import that fails) breaks the pool at its
    first submit: every point gets a failed record saying so and the sweep ends, with no new pool per point (found by a
    mutation audit: that path returning nothing raised a TypeError out of the sweep, untested)."""
    from concurrent.futures.process import BrokenProcessPool

    from labkit.sweep import executors

    pools = []

    class Broken:
        def __enter__(self):
            pools.append(self)
            return self

        def __exit__(self, *exc):
            return False

        def submit(self, *args):
            raise BrokenProcessPool("a child process terminated abruptly")

    monkeypatch.setattr(executors, "_pool", lambda ctx, workers, gpus: Broken())
    counts = sweep.run(tmp_path, "demo.sleep", {"ms": [1, 2, 3]}, executor="processes", workers=2, progress=None)
    assert (counts["ok"], counts["failed"], len(pools)) == (0, 3, 1)
    df = sweep.collect(tmp_path)
    assert (df["error"] == "worker died: the process pool broke before running a point").all() and len(df) == 3


def test_the_cli_names_an_axis_given_twice_a_missing_option_and_exits_1_on_new_and_kept_failures(tmp_path, capsys):
    """An axis given in two --grid options is refused naming it alone (not silently the last one's values); each
    required option is named when missing; a resume where one point failed before and another fails now exits 1 and
    says how many were kept (found by a mutation audit: dropping the refusal, the required flags or the kept count, or
    exiting on failed - kept, passed every test)."""
    argv = ["sweep", "run", "--workload", "demo.sleep", "--grid", "ms=1", "--grid", "fail=no", "--grid", "ms=2",
            "--out", str(tmp_path / "twice")]
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == ("labkit: error: labkit sweep run: --grid ms: an axis is given twice (give "
                                       "its values in one "
                                       "--grid)\n")
    assert not (tmp_path / "twice").exists()
    full = {"--workload": "demo.sleep", "--grid": "ms=1", "--out": str(tmp_path / "s")}
    assert cli.main(["sweep", "run", *[a for kv in full.items() for a in kv], "--workers", "1"]) == 0  # the least
    capsys.readouterr()
    for left_out in full:
        assert cli.main(["sweep", "run", *[a for k, v in full.items() if k != left_out for a in (k, v)]]) == 2
        assert f"the following arguments are required: {left_out}" in capsys.readouterr().err
    out = tmp_path / "f"
    run = ["sweep", "run", "--workload", "demo.sleep", "--grid", "ms=1,2", "--grid", "fail=yes", "--out", str(out)]
    assert cli.main(run) == 1
    assert capsys.readouterr().out.endswith(f"{out}: 0 ok, 2 failed, 0 done before, 2 points\n")
    (out / "points" / f"{sweep.point_id({'ms': 2, 'fail': 'yes'})}.json").unlink()
    assert cli.main(run) == 1  # one failed now, one kept from before
    assert capsys.readouterr().out.endswith(f"{out}: 0 ok, 1 failed, 1 done before (1 of them failed: --retry-failed "
                                            "runs them again), 2 points\n")


def test_read_sweep_refuses_a_point_whose_result_is_not_an_object_naming_its_file(tmp_path):
    """A notebook's strict read wants a row of fields per point: a bare result (collect shows it as a column) is one
    line naming the file and the value, not a row missing its fields (found by a mutation audit: untested)."""
    from labkit.errors import LabkitError
    from labkit.sweep import workloads

    @workloads.register("test.bare")
    def bare(x: int = 1):
        return {"twice": 2 * x} if x == 1 else [x, x]

    grid = {"x": [1, 2]}
    sweep.run(tmp_path, "test.bare", grid, progress=None)
    f = tmp_path / "points" / f"{sweep.point_id({'x': 2})}.json"
    with pytest.raises(LabkitError, match=re.escape(f"{f}: result = [2, 2]: expected an object")):
        sweep.read_sweep(tmp_path, "test.bare", grid)


def test_read_sweep_reads_a_part_of_a_larger_sweep_only_when_asked_and_only_its_points(tmp_path):
    """A recorded sweep over more values answers a notebook that asks for some of them (``part=True``, recorded mode):
    the rows are the points asked for, in the order asked; a value the sweep did not run, another axis or another
    fixed value is still refused."""
    from labkit.errors import LabkitError

    sweep.run(tmp_path, "demo.sleep", {"ms": [1, 2, 3], "tag": ["a", "b"], "i": [7]}, progress=None)
    asked = {"ms": [3, 1], "tag": ["b"], "i": [7]}
    rows = sweep.read_sweep(tmp_path, "demo.sleep", asked, part=True)
    assert rows[["ms", "tag", "i"]].to_dict("records") == [{"ms": 3, "tag": "b", "i": 7}, {"ms": 1, "tag": "b", "i": 7}]
    with pytest.raises(LabkitError, match=r"a sweep of demo.sleep over .*, not of demo.sleep over"):
        sweep.read_sweep(tmp_path, "demo.sleep", asked)  # a notebook's live read: the grid it ran, exactly
    for other in ({"ms": [1, 4], "tag": ["b"], "i": [7]}, {"ms": [1], "tag": ["b"], "i": [8]},
                  {"ms": [1], "tag": ["b"]}, {"ms": [1], "tag": ["b"], "i": [7], "fail": [""]}):
        with pytest.raises(LabkitError, match="not of demo.sleep over"):
            sweep.read_sweep(tmp_path, "demo.sleep", other, part=True)


def test_a_long_error_is_cut_to_its_first_500_characters_and_the_traceback_keeps_the_end(tmp_path):
    """A point's error line is bounded (it shows in status and collect's table); the record's traceback keeps the
    last 2000 characters, where the raise is."""
    from labkit.sweep import workloads
    from labkit.sweep.engine import MAX_ERROR_CHARS

    @workloads.register("test.long_error")
    def long_error(n: int = 1) -> dict:
        raise ValueError("x" * 3000 + "END")

    assert MAX_ERROR_CHARS == 500
    assert sweep.run(tmp_path, "test.long_error", {"n": [1]}, progress=None)["failed"] == 1
    record = json.loads(next((tmp_path / "points").glob("*.json")).read_text())
    assert record["error"] == "ValueError: " + "x" * (500 - len("ValueError: "))
    assert len(record["traceback"]) == 2000 and record["traceback"].rstrip().endswith("x" * 100 + "END")


def test_demo_sleep_refuses_an_axis_it_has_no_parameter_for(tmp_path, capsys):
    """Found by a CLI review: demo.sleep (the README's example) took any axis into a **params, so --grid nosuch=1 ran a
    point at the default 10 ms, exit 0, and tied the directory to that grid; every workload now refuses it alike."""
    from labkit.sweep import workloads

    out = tmp_path / "sw3"
    assert cli.main(["sweep", "run", "--workload", "demo.sleep", "--grid", "nosuch=1", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        "labkit: error: labkit sweep run: grid axis nosuch: workload demo.sleep has no such parameter (it takes ms, "
        "fail, tag, i)"), err
    assert not out.exists()
    for name in (n for n in workloads.names() if not n.startswith("test.")):  # the shipped ones, not this suite's
        with pytest.raises(ArgumentError, match=re.escape(f"grid axis nosuch: workload {name} has no such parameter")):
            workloads.check_grid(name, {"nosuch": [1]})
    assert sweep.run(tmp_path / "labels", "demo.sleep", {"ms": [1], "tag": ["a"], "i": [0, 1]},
                     progress=None)["ok"] == 2  # its label axes stay


def test_status_and_collect_of_a_file_say_it_is_a_file(tmp_path, capsys):
    """Found by a CLI review: sweep status data/sage2_report_seed.json said 'not a sweep directory (no sweep.json)',
    as if a sweep.json were missing beside it."""
    f = tmp_path / "report.json"
    f.write_text("{}")
    for sub in ("status", "collect"):
        assert cli.main(["sweep", sub, str(f)]) == 2
        assert capsys.readouterr().err == (f"labkit: error: labkit sweep {sub}: {f}: a file, not a sweep directory "
                                           f"(give "
                                           "the directory sweep run --out wrote)\n")


def test_a_sweep_whose_provenance_fails_leaves_no_directory(tmp_path, monkeypatch):
    """Left open by a CLI review: from Python (not the CLI, which checks first) a LABKIT_GIT_SHA of no commit failed
    only when sweep.json's provenance was collected, after the sweep's directory had been made."""
    monkeypatch.setenv("LABKIT_GIT_SHA", "xyz")
    with pytest.raises(ArgumentError, match="LABKIT_GIT_SHA='xyz'"):
        sweep.run(tmp_path / "s", "demo.sleep", {"ms": [0]})
    assert not (tmp_path / "s").exists()


def test_a_progress_line_names_the_axes_that_vary_and_fits_a_notebook_pane(tmp_path):
    """Found by a live notebook run on an H100: each point's line printed every parameter as a dict (130-336
    characters: 03's decode sweep, 02's Sage2 rounds), which JupyterLab breaks mid-word; the axes of one value are the
    same at every point and in the point's file."""
    import io

    lines = io.StringIO()
    tag = "a-tag-that-is-the-same-at-every-point-" * 4
    sweep.run(tmp_path / "s", "demo.sleep", {"ms": [1, 2], "tag": [tag], "i": [7]}, progress=lines)
    shown = lines.getvalue().splitlines()
    assert [line.split("] ", 1)[1] for line in shown] == [
        f"ms={ms} ok ({sweep.point_id({'ms': ms, 'tag': tag, 'i': 7})})" for ms in (1, 2)]
    assert sweep.grid.point_label({"shape": [1, 2], "layout": "NHD"}, {"shape": [[1, 2]], "layout": ["NHD"]}) == \
        "shape=[1, 2] layout=NHD"  # one point: every axis


def test_a_failed_points_progress_line_keeps_its_error_within_the_pane(tmp_path):
    import io

    lines = io.StringIO()
    sweep.run(tmp_path / "s", "demo.sleep", {"ms": [1], "fail": ["yes"]}, progress=lines)
    text = lines.getvalue()
    assert "failed" in text and max(map(len, text.splitlines())) <= 100


def test_the_cli_counts_one_point_in_the_singular(tmp_path, capsys):
    """Found by a review: `sweep run` and `sweep status` said "1 points"."""
    assert cli.main(["sweep", "run", "--workload", "demo.sleep", "--grid", "ms=1", "--out", str(tmp_path / "s")]) == 0
    assert capsys.readouterr().out.rstrip().endswith("0 done before, 1 point")
    assert cli.main(["sweep", "status", str(tmp_path / "s")]) == 0
    assert "demo.sleep, 1 point: 1 ok" in capsys.readouterr().out


def test_sweep_run_help_lists_each_workload_with_the_parameters_it_takes(capsys):
    """A review: `sweep run -h` named the workloads but not their parameters, which only an error then listed."""
    with pytest.raises(SystemExit) as done:
        cli.main(["sweep", "run", "-h"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "workloads and their parameters (one --grid axis each; one without a default needs one):" in out
    assert "  demo.sleep: ms=10, fail=(empty), tag=(empty), i=0\n" in out
    assert re.search(r"^  decode\.point: batch, kv_len, head_dim=128, ", out, re.M)
    assert all(f"  {name}: " in out for name in sweep.workloads.names())
    # each default as --grid writes it (a review: peers=False and q_tails=None were refused there)
    flat = " ".join(out.split())
    assert "peers=0," in flat and "layout=NHD," in flat and "q_tails=[N,...] (none)," in flat
    assert "schedule=seed|sm90|CTA_Q/CTA_K/WARP_Q/PV_TERMS (seed)" in flat


def test_a_point_that_ends_its_process_is_named_by_status_and_by_the_next_run(tmp_path, capsys):
    """A CLI review: a local sweep whose point ended the process (as a crashing kernel does) stopped with no word of
    which point it ran; its start is now left on disk, and status and the resume name it."""
    d = tmp_path / "s"
    argv = [sys.executable, "-m", "labkit", "sweep", "run", "--workload", "demo.sleep", "--grid", "ms=1", "--grid",
            "fail=no,exit", "--out", str(d)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    first = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    assert first.returncode != 0 and "fail=no ok" in first.stderr  # progress goes to stderr
    # and the process's end is said (a review: a local sweep's exit 3 with no word)
    assert first.stderr.splitlines()[-1].startswith("demo.sleep fail=exit: ending process "), first.stderr
    assert cli.main(["sweep", "status", str(d)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{d}: demo.sleep, 2 points: 1 ok, 0 failed, 1 missing",
        "  started, no record: ms=1 fail=exit (its process ended as it ran, or it runs now)"]
    again = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    assert again.stderr.startswith("fail=exit (")
    assert "): an earlier run ended while it ran; it runs again" in again.stderr
    assert not list((d / "points").glob(f"{sweep.point_id({'ms': 1, 'fail': 'no'})}.running"))  # a finished one: none


def test_a_grid_axis_given_one_value_not_in_a_list_is_refused_before_any_write(tmp_path):
    """An API walk: sweep.run(d, 'demo.sleep', {'ms': 5}) failed with "'int' object is not iterable"."""
    for value in (5, "5"):
        with pytest.raises(ArgumentError, match=re.escape(f"grid axis ms = {value!r}: expected a list of values, e.g. "
                                                          f"[{value!r}]")):
            sweep.run(tmp_path / "s", "demo.sleep", {"ms": value})
        assert not (tmp_path / "s").exists()
