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
