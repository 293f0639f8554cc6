"""A point that loses its process's CUDA context (simulated here: demo.sleep fail=lost fails as such a kernel does, and
so does every later demo point of its process): the point is failed naming the error, and no later point runs in that
process. Before, the local executor and a pool's worker ran the rest there, each failing with the first's error (a
review against sweeps-dask.md, which runs each point in a fresh process for this reason)."""

import pytest

from labkit import cli, sweep
from labkit.sweep import context


@pytest.fixture(autouse=True)
def _clean_context(monkeypatch):
    monkeypatch.setattr(context, "_simulated", None)  # the local executor runs in this process


def test_a_local_sweep_stops_at_the_point_that_lost_the_context_leaving_the_rest_missing(tmp_path, capsys):
    out = tmp_path / "s"
    run = ["sweep", "run", "--workload", "demo.sleep", "--grid", "i=0,1,2,3", "--grid", "ms=1", "--grid",
           "fail=no,lost", "--out", str(out)]
    assert cli.main(run) == 1
    err = capsys.readouterr().err
    assert "i=0 fail=no ok" in err and "i=0 fail=lost failed" in err
    assert "CUDA context lost (cudaErrorIllegalAddress:" in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("labkit: error: labkit sweep run: point ")
    assert "the sweep stops with 6 of its points not run" in last
    s = sweep.status(out)
    assert (s["ok"], s["failed"], s["missing"]) == (1, 1, 6)  # the rest missing, not failed with another's error
    rec = sweep.collect(out).set_index("fail").loc["lost"]
    assert rec["status"] == "failed" and rec["error"].startswith("CUDA context lost (cudaErrorIllegalAddress: this "
                                                                 "process can run no more GPU work); RuntimeError: ")


def test_the_process_pool_runs_the_rest_in_a_new_pool(tmp_path):
    grid = {"i": [0, 1, 2], "fail": ["no", "lost"]}
    counts = sweep.run(tmp_path, "demo.sleep", grid, executor="processes", workers=2, progress=None)
    df = sweep.collect(tmp_path)
    assert (counts["ok"], counts["failed"]) == (3, 3), df[["i", "fail", "status", "error"]]
    assert (df.loc[df["fail"] == "no", "status"] == "ok").all()
    assert df.loc[df["fail"] == "lost", "error"].str.startswith("CUDA context lost (cudaErrorIllegalAddress").all()


def test_a_sweep_stopped_by_a_real_lost_context_ends_the_process_after_its_line(tmp_path):
    """Found on an H100: after the one-line refusal, CuPy's module teardown at exit printed two tracebacks
    (CUDA_ERROR_ILLEGAL_ADDRESS in Module.__dealloc__) under it. A context really lost ends the process at once, exit
    1; exit handlers (here one that would print) do not run."""
    import subprocess
    import sys

    from ..conftest import ROOT

    code = """
import atexit, sys
from labkit import cli, sweep
from labkit.sweep.context import SweepStopped
atexit.register(lambda: print("TEARDOWN", file=sys.stderr))
def stopped(*a, **k):
    raise SweepStopped("point p left this process's CUDA context unusable (cudaErrorIllegalAddress)", ends_process=True)
sweep.run = stopped
sys.exit(cli.main(["sweep", "run", "--workload", "demo.sleep", "--grid", "ms=1", "--out", sys.argv[1]]))
"""
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "s")], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert done.returncode == 1 and "TEARDOWN" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1] == ("labkit: error: labkit sweep run: point p left this process's CUDA "
                                                    "context unusable (cudaErrorIllegalAddress)")
