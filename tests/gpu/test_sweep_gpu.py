"""A sweep point whose kernel faults on the GPU (demo.sleep fail=cuda: a store 4 TiB past an allocation) loses its
process's CUDA context; the point is failed naming cudaErrorIllegalAddress and no later point runs in that process.
Each sweep runs in its own process (the CLI), as the fault would end every later CUDA call of pytest's."""

import json
import subprocess
import sys

import pytest

from labkit import sweep

from ..conftest import ROOT

pytestmark = pytest.mark.gpu


def _sweep(out, executor: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "labkit", "sweep", "run", "--workload", "demo.sleep", "--grid",
                           "i=0,1", "--grid", "fail=no,cuda", "--grid", "ms=1", "--out", str(out), "--executor",
                           executor],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_a_local_sweep_stops_at_the_point_whose_kernel_faulted(tmp_path):
    done = _sweep(tmp_path / "local", "local")
    assert done.returncode == 1, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert "left this process's CUDA context unusable (cudaErrorIllegalAddress)" in last
    assert "the sweep stops with 2 of its points not run" in last
    df = sweep.collect(tmp_path / "local")
    assert list(zip(df["fail"], df["status"])) == [("no", "ok"), ("cuda", "failed")]
    assert df["error"].iloc[1].startswith("CUDA context lost (cudaErrorIllegalAddress: this process can run no more "
                                          "GPU work); ")


def test_the_process_pool_runs_every_other_point_in_a_new_pool(tmp_path):
    done = _sweep(tmp_path / "pool", "processes")
    assert done.returncode == 1, done.stderr  # a failed point
    df = sweep.collect(tmp_path / "pool")
    assert list(zip(df["i"], df["fail"], df["status"])) == [(0, "no", "ok"), (0, "cuda", "failed"), (1, "no", "ok"),
                                                              (1, "cuda", "failed")]
    lost = [json.loads(p.read_text()) for p in (tmp_path / "pool" / "points").glob("*.json")]
    assert sorted(r.get("context_lost", "") for r in lost) == ["", "", "cudaErrorIllegalAddress",
                                                                "cudaErrorIllegalAddress"]
