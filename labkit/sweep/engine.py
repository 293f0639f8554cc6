"""A sweep on disk: ``sweep.json`` (what is swept, written first) and ``points/<id>.json`` (one file per
point, written by whoever ran the point, atomically: write, then rename). Re-running the same sweep skips
the points already done, so a killed driver or worker loses only the points in flight. Each record names the code that
measured it (``code.code_digest``); a resume runs again the points other code measured, their old records moved to
``points/stale/<code>/``, so one sweep never mixes two versions of a kernel and no measurement is deleted.
"""

import contextlib
import json
import os
import socket
import time
import traceback
from pathlib import Path

from .. import _env
from .._text import counted, wrapped
from ..errors import ArgumentError, FormatError, LabkitError
from ..values import OutputDir
from .grid import expand, point_id, point_label, same_grid

VERSION = 1


def atomic_write(path: Path, doc: dict) -> Path:
    """Write ``doc`` as JSON next to ``path`` and rename it into place: a reader sees the whole file or none."""
    from .._write import write_json

    return write_json(path, doc, indent=1)  # as the strict reader will take it back, or refused now


def _gpu_uuid() -> str | None:
    """The UUID of the first GPU this process sees (None without one): which GPU ran a point."""
    try:
        import pynvml

        pynvml.nvmlInit()
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]
        handle = (pynvml.nvmlDeviceGetHandleByUUID(visible) if visible.startswith("GPU-")
                  else pynvml.nvmlDeviceGetHandleByIndex(int(visible or 0)))
        uuid = pynvml.nvmlDeviceGetUUID(handle)
        return uuid.decode() if isinstance(uuid, bytes) else uuid
    except Exception:  # noqa: BLE001 - no driver, no GPU, no NVML: the point ran without one
        return None


MAX_ERROR_CHARS = 500  # a failed point's error line in its record and the tables; the traceback keeps the rest


def point_code(workload: str) -> str:
    """The code digest a point of ``workload`` records (a name not registered here: labkit's code alone)."""
    from . import workloads
    from .code import code_digest

    return code_digest(workloads.get(workload) if workload in workloads.names() else None)


def run_point(sweep_dir: str, workload: str, pid: str, params: dict) -> dict:
    """Run one point and write its file (called in a worker). A raising workload is a failed point, kept
    with its error; the record is returned too."""
    from . import workloads

    started = time.time()
    running = Path(sweep_dir) / "points" / f"{pid}.running"  # left behind by a point that ends its process
    running.write_text(f"{os.getpid()}\n")  # (a crashing kernel): sweep status names it, where nothing was said
    record = {"id": pid, "params": params, "host": socket.gethostname(), "pid": os.getpid(),
              "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"), "gpu_uuid": _gpu_uuid(),
              "code": point_code(workload), "started": started}
    try:
        record.update(status="ok", result=workloads.get(workload)(**params), error=None)
    except Exception as exc:  # noqa: BLE001 - a point's failure is data: keep it, go on with the others
        from .context import cuda_context_lost

        # labkit's own errors are sentences; another's class says what failed (RuntimeError, CUDARuntimeError)
        error = str(exc) if isinstance(exc, LabkitError) else f"{type(exc).__name__}: {exc}"
        if lost := cuda_context_lost():  # said in the record and first: the executor runs nothing more in here
            record["context_lost"] = lost
            error = f"CUDA context lost ({lost}: this process can run no more GPU work); {error}"
        record.update(status="failed", result=None, error=error[:MAX_ERROR_CHARS],
                      traceback=traceback.format_exc()[-2000:])
    record["elapsed_s"] = round(time.time() - started, 6)
    path = Path(sweep_dir) / "points" / f"{pid}.json"
    try:
        atomic_write(path, record)
    except FormatError as exc:  # a result no file can hold (NaN, an object): a failed point, not an unreadable sweep
        record.update(status="failed", result=None, error=f"result not recorded: {exc}"[:MAX_ERROR_CHARS])
        record.pop("traceback", None)
        atomic_write(path, record)
    running.unlink(missing_ok=True)
    return record


class SweepDir:
    """The files of one sweep."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.points_dir = self.path / "points"
        self.manifest_path = self.path / "sweep.json"

    def manifest(self) -> dict:
        """The sweep's sweep.json, read strictly (version, a workload's name, a grid of non-empty lists).

        Raises:
            LabkitError: no sweep here; FormatError: a damaged sweep.json, naming its place.
        """
        from .._json import load_document

        if not self.path.exists():
            raise LabkitError(f"{self.path}: no such directory")
        if not self.path.is_dir():  # "no sweep.json" had read as if a sweep.json were missing beside it
            raise LabkitError(f"{self.path}: a file, not a sweep directory (give the directory sweep run --out wrote)")
        if self.manifest_path.is_dir():  # "no sweep.json" read as if there were none
            raise LabkitError(f"{self.manifest_path}: a directory where a sweep's sweep.json should be")
        if not self.manifest_path.is_file():
            raise LabkitError(f"{self.path}: not a sweep directory (no sweep.json)")
        from .._json import refuse_other_kind

        root = load_document(self.manifest_path, what="sweep manifest")
        refuse_other_kind(root, "sweep_version", "a sweep's sweep.json")  # a bench's sweep.json is a decode report
        n = root.obj(("sweep_version", "workload", "grid", "points"), ("provenance",))
        n["sweep_version"].version(VERSION)
        n["workload"].str()  # a name only: a workload registered at run time is not known to a later reader
        for _, axis in n["grid"].items(1):
            axis.list(1)
        try:
            count = len(expand(n["grid"].value))
        except ArgumentError as exc:  # a value twice or not finite: edited by hand
            raise n["grid"].error(str(exc)) from None
        if n["points"].int(1) != count:  # an edited grid would read as points "missing", and collect show fewer
            raise n["points"].fail(f"{count}, the number of the grid's points")
        if self.points_dir.exists() and not self.points_dir.is_dir():
            raise LabkitError(f"{self.points_dir}: a file where the sweep's points directory should be")
        return n.value

    def check_start(self, workload: str, grid: dict[str, list]) -> None:
        """What ``start`` would refuse, found without writing anything (a caller with GPU work before its sweep asks
        first): a file in the way, another sweep there, a directory that cannot take a new one.

        Raises:
            ArgumentError: naming the directory and what is in the way.
        """
        if self.path.exists() and not self.path.is_dir():
            raise ArgumentError(f"sweep directory {self.path} is a file")
        if self.manifest_path.is_file():
            old = self.manifest()
            if old.get("workload") != workload or not same_grid(old.get("grid"), grid):
                # grids as JSON, as sweep.json keeps them and --grid's values read (a review: Python dicts)
                asked = f"of {workload}" if old.get("workload") != workload else f"over {json.dumps(grid)}"
                raise ArgumentError(f"{self.path} holds a sweep of {old.get('workload')} over "
                                    f"{json.dumps(old.get('grid'))}, not "
                                    f"{asked}; resume it with the same workload and grid (values in the same order), "
                                    "or use another directory")
        else:
            OutputDir.parse(self.path, "sweep directory", writes=True)  # a new one: it, or where it goes, is writable
            # its files would mix with the sweep's; an empty points/ or a sweep.json half written is a start cut short
            if self.path.is_dir() and any((p != self.points_dir or not p.is_dir() or any(p.iterdir()))
                                          and not p.name.startswith(".sweep.json.") for p in self.path.iterdir()):
                raise ArgumentError(f"sweep directory {self.path} holds other files and no sweep.json; give an empty "
                                    "or new directory")

    def start(self, workload: str, grid: dict[str, list]) -> list[tuple[str, dict]]:
        """Write the manifest (or check it is the same sweep); return every point as (id, params)."""
        points = [(point_id(p), p) for p in expand(grid)]
        self.check_start(workload, grid)
        if not self.manifest_path.is_file():
            from ..provenance import collect

            provenance = collect()  # first: one that fails (LABKIT_GIT_SHA of no commit) leaves no empty directory
            self.path.mkdir(parents=True, exist_ok=True)
            atomic_write(self.manifest_path, {"sweep_version": VERSION, "workload": workload, "grid": grid,
                                              "points": len(points), "provenance": provenance})
        self.points_dir.mkdir(exist_ok=True)
        return points

    def ended_while_running(self, grid: dict, recs: dict) -> list[dict]:
        """The points of ``grid`` whose process ended while they ran (a kernel that crashed it, a kill): started,
        never recorded. A running sweep's points in flight are among them until they finish."""
        started = {f.stem for f in self.points_dir.glob("*.running")} if self.points_dir.is_dir() else set()
        return [p for p in expand(grid) if (pid := point_id(p)) in started and pid not in recs]

    def records(self) -> dict[str, dict]:
        """Every finished point's record by id (temporary files of points in flight are not records), each read
        strictly: a damaged point file is refused naming it, not counted as done or failed.

        Raises:
            FormatError: a point file that is not the record of the point its name says.
        """
        from .._json import load_document
        from ..errors import FormatError

        out = {}
        for f in sorted(self.points_dir.glob("*.json")):
            try:
                doc = load_document(f, what="sweep point")
            except FormatError as exc:  # written atomically, so damaged after: say how to go on
                raise LabkitError(f"{exc}; to run the point again, delete the file and resume the sweep") from None
            n = doc.obj(("id", "params", "status", "result", "error"), any_keys=True)
            if n["id"].str() != f.stem:
                raise n["id"].error(f"= {n['id'].value!r}: expected the file's own point id {f.stem!r} (a stray or "
                                    "renamed file; move it out of points/)")
            n["params"].obj(any_keys=True)
            if point_id(n["params"].value) != f.stem:  # the id is its parameters' hash: edited params are not its point
                raise n["params"].error(f"= {n['params'].value!r}: not the parameters of point {f.stem} (edited "
                                        "by hand?); run the point again: delete the file and resume the sweep")
            n["status"].str(("ok", "failed"))
            if "code" in n.value:
                n["code"].str()
            out[f.stem] = n.value
        return out

    def set_aside(self, pid: str, code: str | None) -> Path:
        """Move point ``pid``'s record to ``points/stale/<code>/`` (``unknown``: a record from before records named
        their code), where ``records`` does not read it: the point runs again and the old measurement is kept."""
        where = self.points_dir / "stale" / (code or "unknown")
        where.mkdir(parents=True, exist_ok=True)
        return (self.points_dir / f"{pid}.json").replace(where / f"{pid}.json")


def run(directory: Path | str, workload: str, grid: dict[str, list], *, executor: str = "local", workers: int = 1,
        retry_failed: bool = False, client=None, progress=_env.STDERR) -> dict:
    """Run (or resume) a sweep. Returns counts: total, skipped (done before), ok, failed (this run), kept_failed
    (failed before and not run again: skipped counts them too), stale (measured before by other code: run again).

    Args:
        executor: ``local`` (in this process), ``processes`` (one process per worker; GPU i pinned to
            worker i), or ``dask`` (a LocalCluster, a LocalCUDACluster with dask-cuda and GPUs, or ``client``).
        retry_failed: run the points that failed before again (by default they are kept as failed).
        progress: where the per-point lines go (None: nowhere; by default sys.stderr as it is now).
    """
    from . import executors, workloads

    progress = _env.stream(progress)

    workloads.check_grid(workload, grid)  # an unknown name or a grid it cannot take stops here, before any write
    executors.check(executor, workers)  # as is a typo of an executor: run() below is a generator, started late
    sweep = SweepDir(directory)
    sweep.check_start(workload, grid)  # a directory of another sweep is bad input: said before what the machine lacks

    code = point_code(workload)

    def left(done: dict) -> list[tuple[str, dict]]:  # to run: not done, measured by other code, or failed and retried
        return [(pid, p) for pid, p in ((point_id(p), p) for p in expand(grid))
                if pid not in done or done[pid].get("code") != code or (retry_failed and done[pid]["status"] != "ok")]

    if (workloads.needs_gpu(workload) and executor in ("local", "processes")
            and left(sweep.records() if sweep.manifest_path.is_file() else {})):
        from ..cuda import require_gpu

        require_gpu(f"workload {workload}")  # every point would fail: say so once, before the sweep exists
    if executor == "dask" and client is None:
        from .. import _deps

        _deps.require("distributed")  # a missing extra is said before the sweep directory is tied to the grid
    points = sweep.start(workload, grid)
    done = sweep.records()
    ids = {pid for pid, _ in points}
    stale = {pid: rec.get("code") for pid, rec in done.items() if pid in ids and rec.get("code") != code}
    for pid, old in stale.items():  # before any point runs: a resume cut short leaves them missing, not mixed in
        sweep.set_aside(pid, old)
        del done[pid]
    if stale and progress is not None:
        olds = sorted({old or "unknown" for old in stale.values()})
        print(wrapped(f"{counted(len(stale), 'point')} measured by other code (labkit code {', '.join(olds)}; now "
                      f"{code}) run again; their records move to {sweep.points_dir / 'stale'}"), file=progress,
              flush=True)
    todo = left(done)
    counts = {"total": len(points), "skipped": len(points) - len(todo), "ok": 0, "failed": 0, "stale": len(stale),
              "kept_failed": sum(1 for pid, rec in done.items()
                                 if pid in ids and rec["status"] != "ok" and not retry_failed)}
    if progress is not None:  # the point an earlier run ended on, without a word: named before it runs again
        for point in sweep.ended_while_running(grid, done):
            print(wrapped(f"{point_label(point, grid)} ({point_id(point)}): an earlier run ended while it ran; it "
                          "runs again"), file=progress, flush=True)
    started = time.time()
    # closing: an interrupt stops the executor now, not when the generator is collected (a pool would run its queue)
    with contextlib.closing(executors.run(executor, str(sweep.path), workload, todo, workers=workers,
                                          client=client)) as finished:
        for i, rec in enumerate(finished, start=1):
            counts["ok" if rec.get("status") == "ok" else "failed"] += 1
            if progress is not None:  # done counts the points finished before a resume too
                eta = (time.time() - started) / i * (len(todo) - i)
                # the axes that vary, not every parameter: a line a notebook's pane shows whole (all are in the file)
                print(wrapped(f"[{counts['skipped'] + i}/{counts['total']} done, {counts['failed']} failed, eta "
                              f"{eta:.1f} s] {point_label(rec['params'], grid)} {rec.get('status')} ({rec['id']})"
                              f"{': ' + rec['error'] if rec.get('error') else ''}"), file=progress, flush=True)
    return counts


def status(directory: Path | str) -> dict:
    """Counts of a sweep on disk: points, ok, failed, missing; stale: those of them measured by code other than this
    labkit's (a resume runs them again; None for a workload not registered here, whose code is not known)."""
    from . import workloads

    sweep = SweepDir(directory)
    m = sweep.manifest()
    recs = sweep.records()
    ids = {point_id(p) for p in expand(m["grid"])}
    ok = sum(1 for k, r in recs.items() if k in ids and r.get("status") == "ok")
    failed = sum(1 for k, r in recs.items() if k in ids and r.get("status") != "ok")
    stale = None
    if m["workload"] in workloads.names():
        code = point_code(m["workload"])
        stale = sum(1 for k, r in recs.items() if k in ids and r.get("code") != code)
    return {"workload": m["workload"], "points": len(ids), "ok": ok, "failed": failed, "stale": stale,
            "missing": len(ids) - ok - failed, "ended_while_running": sweep.ended_while_running(m["grid"], recs)}


def collect(directory: Path | str):
    """One row per finished point of the grid, in the grid's order: its parameters, status, error, the result's
    fields, and where it ran (a record of another grid in points/ is not this sweep's, as status counts it)."""
    import pandas as pd

    sweep = SweepDir(directory)
    grid = sweep.manifest()["grid"]  # a path that holds no sweep is refused, as status refuses it
    recs = sweep.records()
    rows = []
    for pid in (point_id(p) for p in expand(grid)):
        if pid not in recs:
            continue
        r = recs[pid]
        row = {"id": pid, **r["params"], "status": r.get("status"), "error": r.get("error"),
               "elapsed_s": r.get("elapsed_s"), "gpu_uuid": r.get("gpu_uuid"), "pid": r.get("pid"),
               "code": r.get("code")}
        result = r.get("result")  # a dict's fields, or a bare value (0 and False included); a failed point's None
        if isinstance(result, dict):
            row.update({f"result.{k}": v for k, v in result.items() if k not in r["params"]})
        elif result is not None:
            row["result"] = result
        rows.append(row)
    return pd.DataFrame(rows)
