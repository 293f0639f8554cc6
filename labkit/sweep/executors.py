"""Where a sweep's points run, behind one call: ``run(kind, ...)`` yields each point's record as it finishes.

- ``local``: one after the other in this process.
- ``processes``: a spawn-started process pool; worker i sees GPU i alone (``CUDA_VISIBLE_DEVICES``). The pool
  holds one point per worker at a time, so an interrupted driver starts no queued point; a worker exits when its
  driver is gone (even by SIGKILL), so a resume never runs beside the old sweep's workers.
- ``dask``: ``distributed`` futures, one thread per worker; a LocalCUDACluster when dask-cuda and GPUs are
  present, else a LocalCluster of ``workers`` processes, worker i on GPU i where there are GPUs, or the ``client``
  given (any cluster, any host). A point whose worker died is retried once; if it cannot finish (in the own cluster:
  a second worker died under it), the driver records it as failed.
"""

import multiprocessing as mp
import os
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from .. import _deps
from ..errors import ArgumentError
from .engine import MAX_ERROR_CHARS, atomic_write, point_code, run_point

EXECUTORS = ("local", "processes", "dask")


def _failed(sweep_dir: str, workload: str, pid: str, params: dict, error: str) -> dict:
    """A point whose worker died, recorded by the driver (with the driver's code: the worker's had no say)."""
    record = {"id": pid, "params": params, "status": "failed", "result": None, "error": error[:MAX_ERROR_CHARS],
              "code": point_code(workload)}
    atomic_write(Path(sweep_dir) / "points" / f"{pid}.json", record)
    return record


def _exit_with(driver: int) -> None:
    while os.getppid() == driver:  # reparented: the driver is gone, and nobody would read what this point gives
        time.sleep(0.2)
    os._exit(1)


def _start_worker(slots, driver: int) -> None:
    """Pool initializer: take the next GPU index (a worker keeps one GPU for its life) and watch the driver, as a
    killed driver's pool would otherwise go on running its queue beside the sweep's resume."""
    os.environ["CUDA_VISIBLE_DEVICES"] = str(slots.get())
    threading.Thread(target=_exit_with, args=(driver,), daemon=True, name="labkit-driver-watch").start()


def _gpu_count() -> int:
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml.nvmlDeviceGetCount()
    except Exception:  # noqa: BLE001 - no NVML or no driver: no GPU to pin
        return 0


def _gpu_slots() -> list[str]:
    """The GPUs the workers take in turn: those CUDA_VISIBLE_DEVICES names where it is set (a job given GPUs 2 and 3
    had run its points on 0 and 1, another user's), else every GPU NVML counts."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [v.strip() for v in visible.split(",") if v.strip()]  # "" hides every GPU: none to hand out
    return [str(i) for i in range(_gpu_count())]


def check(kind: str, workers: int) -> None:
    """Refuse an unknown executor or a worker count below 1 (the sweep's caller does, before its directory exists)."""
    if kind not in EXECUTORS:
        raise ArgumentError(f"executor {kind!r}: expected one of {', '.join(EXECUTORS)}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ArgumentError(f"workers {workers!r}: expected an integer >= 1")


def run(kind: str, sweep_dir: str, workload: str, todo: list[tuple[str, dict]], *, workers: int = 1, client=None):
    """Yield each point's record as it finishes (``kind`` and ``workers`` checked by the caller, ``check``)."""
    if not todo:
        return
    if kind == "local":
        for i, (pid, params) in enumerate(todo):
            record = run_point(sweep_dir, workload, pid, params)
            yield record
            if record.get("context_lost") and i + 1 < len(todo):  # every later point would fail with its error
                from .context import SweepStopped, simulated_lost

                raise SweepStopped(f"point {pid} left this process's CUDA context unusable ({record['context_lost']});"
                                   f" the sweep stops with {len(todo) - i - 1} of its points not run: run it again to"
                                   " resume in a new process, or use --executor processes, where such a point ends "
                                   "only its worker's pool", ends_process=simulated_lost() is None)
    elif kind == "processes":
        ctx = mp.get_context("spawn")  # CUDA cannot be forked
        gpus = _gpu_slots()
        queue = list(todo)
        while queue:  # a point that kills its process breaks the pool: the rest go on in a new one
            with _pool(ctx, workers, gpus) as pool:
                queue, suspects = yield from _one_point_per_worker(pool, workers, sweep_dir, workload, queue)
            for point in suspects:  # in flight when a worker died: each alone, so only the one that kills it fails
                with _pool(ctx, 1, gpus) as pool:
                    yield from _one_point_per_worker(pool, 1, sweep_dir, workload, [point])
    else:
        yield from _dask(sweep_dir, workload, todo, workers=workers, client=client)


def _pool(ctx, workers: int, gpus: list[str]) -> ProcessPoolExecutor:
    slots = ctx.Queue()  # handed to each worker as it starts: no manager process to outlive a killed driver
    for i in range(workers):
        slots.put(gpus[i % len(gpus)] if gpus else "")
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_start_worker,
                               initargs=(slots, os.getpid()))


def _one_point_per_worker(pool, workers: int, sweep_dir: str, workload: str, todo: list):
    """Hand the pool a point only as a worker frees up: what it holds is what runs, so an interrupt (or a caller
    that stops reading) leaves at most the points in flight to end, and starts none of the queue. When a worker
    dies the pool breaks, failing every point in flight: in a pool of one worker that point killed it (a failed
    point); of several, any may have. Returns (the points not handed out, those suspects) for new pools."""
    queue, running, suspects = list(todo), {}, []
    lost = False  # a worker's CUDA context is lost: it must take no more points, so this pool takes none

    def submit_next() -> None:
        if queue and not lost:
            try:
                running[pool.submit(run_point, sweep_dir, workload, *queue[0])] = queue[0]
            except BrokenProcessPool:  # a worker died: the queue waits for a new pool
                return
            queue.pop(0)

    for _ in range(workers):
        submit_next()
    if not running:  # broken before it ran anything (a worker that cannot start): each point fails, none loops
        for pid, params in queue:
            yield _failed(sweep_dir, workload, pid, params,
                          "worker died: the process pool broke before running a point")
        return [], []
    while running:
        for fut in wait(running, return_when=FIRST_COMPLETED).done:
            pid, params = running.pop(fut)
            record = None
            try:
                record = fut.result()
                lost = lost or bool(record.get("context_lost"))  # the rest of the queue goes to a new pool
            except BrokenProcessPool as exc:
                if workers == 1:  # alone in its pool: it took the process down
                    record = _failed(sweep_dir, workload, pid, params, f"worker died: {exc}")
                else:
                    suspects.append((pid, params))
            except Exception as exc:  # noqa: BLE001 - an error the pool returned: the point is failed, the rest go on
                record = _failed(sweep_dir, workload, pid, params, f"worker died: {type(exc).__name__}: {exc}")
            submit_next()  # before the caller prints the record: no worker waits on it
            if record is not None:
                yield record
    return queue, suspects


# Of the own cluster: a point running on a worker that dies twice fails (KilledWorker). One death is retried (a worker
# killed from outside, an OOM), where Dask's default of 3 let a point that crashes its kernel take down four workers.
ALLOWED_FAILURES = 1


def _dask_point(pin: list[str], *args) -> dict:
    """A point on a Dask worker: on GPU ``pin[name % len]`` where the own LocalCluster pins them (no dask-cuda). Where
    an earlier point lost this process's CUDA context it is not run (``PointNotRun``; its retry may go to another
    worker): a point run there had failed with the earlier one's error."""
    import distributed

    from .context import PointNotRun, cuda_context_lost

    if pin:  # set before the point's first CUDA call, and again after a restart (the Nanny keeps the name only)
        os.environ["CUDA_VISIBLE_DEVICES"] = pin[int(distributed.get_worker().name) % len(pin)]
    if (lost := cuda_context_lost()) is not None:
        raise PointNotRun(f"not run: an earlier point left this worker's CUDA context unusable ({lost})")
    return run_point(*args)


def _dask(sweep_dir: str, workload: str, todo, *, workers: int, client=None):
    distributed = _deps.require("distributed")
    own, gpus = client is None, []
    if own:
        import dask

        cuda = _deps.optional("dask_cuda") if _gpu_count() else None
        with dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES}):  # read as it starts
            cluster = (cuda.LocalCUDACluster() if cuda is not None
                       else distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                     dashboard_address=None))
        gpus = _gpu_slots() if cuda is None else []  # without dask-cuda every worker had run on the first GPU
        client = distributed.Client(cluster)
    try:
        futures = {client.submit(_dask_point, gpus, sweep_dir, workload, pid, params, key=f"pt-{pid}", pure=False,
                                 retries=1): (pid, params) for pid, params in todo}
        not_run = []
        for fut in distributed.as_completed(futures):
            pid, params = futures[fut]
            try:
                yield fut.result()
            except Exception as exc:  # noqa: BLE001 - e.g. KilledWorker after the retry: record it and go on
                if type(exc).__name__ == "PointNotRun":  # no record: the point is missing, and a resume runs it
                    not_run.append(pid)
                    continue
                yield _failed(sweep_dir, workload, pid, params, f"{type(exc).__name__}: {exc}")
        if not_run:
            from .context import SweepStopped

            raise SweepStopped(f"{len(not_run)} points not run: the CUDA context of the workers they were given was "
                               "lost by an earlier point (its record says which); run the sweep again to resume in "
                               "new workers")
    finally:
        if own:
            client.close()
            cluster.close()
