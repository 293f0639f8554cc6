"""Inside a notebook: live on a GPU, or rendered from the latest recorded run.

A notebook calls ``Session.start(name, source=..., out_dir=...)`` in its first cell after the
parameters; every measurement goes through ``session.measure(key, fn, ...)``. Live, ``fn``
runs and its JSON result is saved under ``out_dir/data/<key>.json``. Recorded, the same file
is read from ``data/runs/<stamp>-<name>/data/`` (a real GPU run kept in git) and copied into
``out_dir`` so either mode leaves the same files behind.
"""

import dataclasses
import datetime as _dt
import json
import shutil
from pathlib import Path
from typing import Any

from . import _env
from .cuda import gpu_status
from .errors import LabkitError, NoGPU

SOURCES = ("auto", "live", "recorded")


def recorded_runs(notebook: str, root: Path | None = None) -> list[Path]:
    """Recorded runs of ``notebook``, oldest first (directory names start with a UTC stamp)."""
    base = root or (_env.data_dir() / "runs")
    return sorted(p for p in base.glob(f"*-{notebook}") if (p / "run.json").is_file())


def _jsonable(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if dataclasses.is_dataclass(value):
        return dataclasses.asdict(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _relative(path: Path) -> str:
    try:
        return str(path.relative_to(_env.repo_root()))
    except ValueError:
        return str(path)


class Session:
    """Where a notebook's numbers come from and where its files go."""

    def __init__(self, notebook: str, mode: str, out_dir: Path, recorded_dir: Path | None, reason: str):
        self.notebook = notebook
        self.mode = mode
        self.out_dir = out_dir
        self.recorded_dir = recorded_dir
        self.reason = reason

    @property
    def live(self) -> bool:
        return self.mode == "live"

    @classmethod
    def start(cls, notebook: str, *, source: str = "auto", out_dir: str | Path = "",
              runs_root: Path | None = None) -> "Session":
        """Decide live vs recorded, print it (the notebook's first output), prepare ``out_dir``.

        Raises:
            NoGPU: ``source='live'`` on a machine without a usable GPU.
            LabkitError: recorded mode with no recorded run of this notebook.
        """
        if source not in SOURCES:
            raise LabkitError(f"source = {source!r}: expected one of {', '.join(SOURCES)}")
        ok, reason = gpu_status()
        if source == "live" and not ok:
            raise NoGPU(f"source='live' but {reason}")
        mode = "live" if (source == "live" or (source == "auto" and ok)) else "recorded"
        recorded = None
        if mode == "recorded":
            runs = recorded_runs(notebook, runs_root)
            if not runs:
                raise LabkitError(f"recorded mode: no recorded run of {notebook} under "
                                  f"{runs_root or _env.data_dir() / 'runs'}; run it once on a GPU with --record")
            recorded = runs[-1]
        if not out_dir:
            stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
            out_dir = _env.runs_dir() / f"{stamp}-{notebook}"
        out = Path(out_dir)
        (out / "data").mkdir(parents=True, exist_ok=True)
        (out / "figs").mkdir(parents=True, exist_ok=True)
        s = cls(notebook, mode, out, recorded, reason)
        (out / "data" / "session.json").write_text(json.dumps(s.describe(), indent=2) + "\n")
        print(s.banner())
        return s

    def describe(self) -> dict:
        return {"notebook": self.notebook, "mode": self.mode, "gpu_status": self.reason,
                "recorded_from": _relative(self.recorded_dir) if self.recorded_dir else None}

    def banner(self) -> str:
        if self.live:
            from .device import describe

            d = describe()
            return (f"labkit {self.notebook}: LIVE on {d.name} ({d.arch}, {d.sm_count} SMs); "
                    f"results -> {self.out_dir}")
        run = json.loads((self.recorded_dir / "run.json").read_text())
        prov = run.get("provenance") or {}
        dev = (prov.get("device") or {}).get("name", "unknown device")
        return (f"labkit {self.notebook}: RECORDED mode - no GPU here ({self.reason}). "
                f"Showing the recorded run {self.recorded_dir.name} (measured on {dev}, "
                f"{prov.get('created_utc', '?')}, git {prov.get('git_sha', '?')[:12]}), not a new measurement.")

    def measure(self, key: str, fn, *args, **kwargs) -> Any:
        """Live: run ``fn`` and save its JSON result as ``data/<key>.json``. Recorded: load it."""
        target = self.out_dir / "data" / f"{key}.json"
        if self.live:
            value = _jsonable(fn(*args, **kwargs))
            target.write_text(json.dumps(value, indent=2) + "\n")
            return value
        src = self.recorded_dir / "data" / f"{key}.json"
        if not src.is_file():
            raise LabkitError(f"recorded run {self.recorded_dir.name} has no {key}.json; re-record it on a GPU")
        shutil.copyfile(src, target)
        return json.loads(src.read_text())

    def save_figure(self, fig, name: str) -> Path:
        """Show ``fig`` in the notebook, then write ``figs/<name>.png`` and ``.svg``."""
        from .plot import save

        try:
            from IPython import get_ipython
            from IPython.display import display

            if get_ipython() is not None:
                display(fig)
        except ImportError:
            pass
        return save(fig, self.out_dir / "figs" / name)

    def save_table(self, df, name: str) -> Path:
        path = self.out_dir / "data" / f"{name}.csv"
        df.to_csv(path)
        return path
