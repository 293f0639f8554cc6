"""Run directories: ``runs/<UTC stamp>-<notebook>/`` that never collide, ``runs/latest``, ``run.json``."""

import datetime as _dt
import os
from pathlib import Path

from . import _env
from ._write import write_json
from .errors import LabkitError
from .provenance import collect

RUN_JSON_VERSION = 2  # 2: parameters as JSON values (1 kept papermill's source strings)


def runs_root(out_root: Path | None = None) -> Path:
    """Where run directories go: ``out_root``, else ``$LABKIT_OUT``, else ``runs/``; created if missing."""
    root = Path(out_root) if out_root is not None else _env.runs_dir()
    what = "output directory" if out_root is not None else \
        ("LABKIT_OUT" if _env.getenv("LABKIT_OUT") else "runs directory")
    if root.exists() and not root.is_dir():
        raise LabkitError(f"{what} {root} is not a directory; point it at a directory (it is created if missing)")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LabkitError(f"{what} {root}: cannot create it ({exc.strerror})") from None
    return root


def new_run_dir(root: Path, notebook: str) -> Path:
    """A fresh ``<stamp>-<notebook>`` directory; a second run in the same second gets ``<stamp>.002-<notebook>``, then
    ``.003``...: still named for its notebook at the end (a run named ``...-<notebook>-2`` was never found as a record
    of it), and sorted after the first."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    for n in range(1, 1000):
        path = root / (f"{stamp}-{notebook}" if n == 1 else f"{stamp}.{n:03d}-{notebook}")
        try:
            path.mkdir(parents=True)  # atomic: two processes never get the same directory
            return path
        except FileExistsError:
            continue
    raise LabkitError(f"{root}: 999 runs of {notebook} in one second; clean up {root}")


def point_latest(root: Path, run_dir: Path) -> None:
    """``root/latest`` -> ``run_dir`` (relative symlink, replaced atomically)."""
    tmp = root / f".latest-{os.getpid()}"
    try:
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(run_dir.name)
        os.replace(tmp, root / "latest")
    except OSError:  # a file system without symlinks: the run itself is fine
        tmp.unlink(missing_ok=True)


def write_run_json(run_dir: Path, *, notebook: str, parameters: dict, overrides: dict, error: str | None,
                   elapsed_s: float, session: dict | None) -> Path:
    record = {
        "run_json_version": RUN_JSON_VERSION,
        "notebook": notebook,
        "parameters": parameters,
        "overrides": overrides,
        "ok": error is None,
        "error": error,
        "elapsed_s": round(elapsed_s, 3),
        "session": session,
        "provenance": collect(),
    }
    return write_json(run_dir / "run.json", record, default=str)  # whole or not at all; read back strictly
