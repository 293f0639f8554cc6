"""The Dask path (``make test-scale`` installs labkit[scale]'s dask and distributed): a LocalCluster of two
workers, one of them killed mid-sweep; every point still finishes exactly once."""

import os
import signal
import threading
import time

import pytest

from labkit import sweep

distributed = pytest.importorskip("distributed")


def test_local_cluster_runs_every_point_once(tmp_path):
    counts = sweep.run(tmp_path, "demo.sleep", {"ms": [50, 60, 70, 80, 90, 100]}, executor="dask", workers=2,
                       progress=None)
    assert counts["ok"] == 6
    df = sweep.collect(tmp_path)
    assert len(df) == 6 and df["pid"].nunique() == 2 and not df["id"].duplicated().any()


def test_a_killed_worker_loses_no_point(tmp_path):
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        pids = list(client.run(os.getpid).values())
        points_dir = tmp_path / "points"

        def kill_one():
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and len(list(points_dir.glob("*.json"))) < 2:
                time.sleep(0.05)
            os.kill(pids[0], signal.SIGKILL)

        killer = threading.Thread(target=kill_one)
        killer.start()
        counts = sweep.run(tmp_path, "demo.sleep", {"ms": [300], "i": list(range(8))}, executor="dask",
                           client=client, progress=None)
        killer.join()
    finally:
        client.close()
        cluster.close()
    df = sweep.collect(tmp_path)
    assert counts["ok"] + counts["failed"] == 8 and len(df) == 8 and sorted(df["i"]) == list(range(8))
    assert set(df["status"]) == {"ok"}  # the point in flight on the killed worker ran again elsewhere


def test_a_point_that_kills_its_worker_fails_after_two_deaths_and_the_rest_finish(tmp_path):
    """sweeps-dask.md: a point that deterministically kills its worker should fail fast; Dask's default let it take
    down four workers before KilledWorker (the own cluster sets allowed-failures to 1)."""
    started = time.monotonic()
    counts = sweep.run(tmp_path, "demo.sleep", {"i": [0, 1], "fail": ["no", "exit"]}, executor="dask", workers=2,
                       progress=None)
    df = sweep.collect(tmp_path)
    assert (counts["ok"], counts["failed"]) == (2, 2), df
    dead = df[df["fail"] == "exit"]
    assert (dead["status"] == "failed").all() and dead["error"].str.startswith("KilledWorker: ").all(), dead["error"]
    assert dead["error"].str.contains("on 2 different workers, but all those workers died").all(), dead["error"]
    assert time.monotonic() - started < 120


def test_the_own_cluster_pins_one_gpu_per_worker_without_dask_cuda(tmp_path, monkeypatch):
    """Without dask-cuda every LocalCluster worker had run on the first visible GPU: worker i now sees GPU i alone, as
    the process pool's do (here two GPUs named by CUDA_VISIBLE_DEVICES; demo.sleep reports what its worker saw)."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    counts = sweep.run(tmp_path, "demo.sleep", {"ms": [200], "i": list(range(6))}, executor="dask", workers=2,
                       progress=None)
    assert counts["ok"] == 6
    df = sweep.collect(tmp_path)
    seen = df.groupby("pid")["result.cuda_visible_devices"].unique()
    assert sorted(v for values in seen for v in values) == ["3", "5"], seen  # one GPU per worker, both used
    assert (df["result.cuda_visible_devices"] == df["result.cuda_visible_devices"].astype(str)).all()


def test_a_worker_whose_cuda_context_is_lost_runs_no_more_points_and_a_resume_finishes_the_sweep(tmp_path):
    """demo.sleep fail=lost fails as a kernel that loses the CUDA context does, and so would every later point of its
    worker's process: that worker refuses its later points (no record: missing, not failed with another's error), the
    sweep says how many, and resumes (new workers each time) finish it."""
    from labkit.sweep.context import SweepStopped

    grid = {"i": [0, 1, 2], "fail": ["no", "lost"]}
    for _ in range(6):  # each run loses at most its two workers
        try:
            sweep.run(tmp_path, "demo.sleep", grid, executor="dask", workers=2, progress=None)
            break
        except SweepStopped as exc:
            assert "points not run: the CUDA context of the workers they were given was lost" in str(exc)
            df = sweep.collect(tmp_path)
            assert (df.loc[df["fail"] == "no", "status"] == "ok").all(), df  # never another point's error
    df = sweep.collect(tmp_path)
    assert len(df) == 6 and (df.loc[df["fail"] == "no", "status"] == "ok").all(), df
    assert df.loc[df["fail"] == "lost", "error"].str.startswith("CUDA context lost (cudaErrorIllegalAddress").all()
