"""Inside a notebook: live on a GPU, or rendered from the recorded run that answers its parameters.

A notebook calls ``Session.start(name, source=..., out_dir=..., parameters={...})`` in its first
cell after the parameters; every measurement goes through ``session.measure(key, fn, ...)``.
Live, ``fn`` runs and its JSON result is saved under ``out_dir/data/<key>.json``. Recorded, the
same file is read from the newest valid recorded run in ``data/runs/`` measured with the same
parameters (else with more: a choice that covers the one asked for, more values of a sweep's axis), and copied
into ``out_dir``, so either mode leaves the same files behind. No such run: the session refuses and lists the
parameter sets that were recorded.
"""

import dataclasses
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from . import _env
from ._json import load_document, parse_text
from ._text import wrapped
from ._write import dumps
from .cuda import gpu_status
from .errors import LabkitError, NoGPU, ParameterError
from .recorded_runs import RecordedRun, scan_recorded
from .staleness import kernel_paths, stale_note

SOURCES = ("auto", "live", "recorded")


def _canonical(recorded: dict, declared: dict | None) -> dict:
    """Recorded values in the declared types' canonical form (older runs kept ``'1,37810,56,128'``)."""
    out = dict(recorded)
    for k, v in recorded.items():
        if declared is None or k not in declared:
            continue
        for convert in (declared[k].type.check, declared[k].type.parse):
            try:
                out[k] = convert(v)
                break
            except (ParameterError, AttributeError, TypeError):
                continue
    return out


def _show(params: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in params.items()) or "defaults"


OFFERED_RUNS = 3  # recorded runs a refusal names, newest first


def plan_source(notebook: str, values: dict, declared: dict | None, root: Path | None = None
                ) -> tuple[str, RecordedRun | None]:
    """Live or recorded, and which recorded run; refuses what cannot be answered honestly.

    Args:
        values: every parameter's value (defaults plus overrides).
        declared: the notebook's declared parameters (None: every value counts as measured).

    Raises:
        NoGPU: ``source='live'`` without a usable GPU.
        LabkitError: recorded mode and no valid recorded run measured with these parameters.
    """
    source = values.get("source", "auto")
    if source not in SOURCES:
        raise LabkitError(f"source = {source!r}: expected one of {', '.join(SOURCES)}")
    ok, reason = gpu_status()
    if source == "live" and not ok:
        raise NoGPU(f"source='live' but {reason}")
    if source == "live" or (source == "auto" and ok):
        return "live", None
    measured = {k: v for k, v in values.items()
                if k != "source" and (declared is None or (k in declared and declared[k].measured))}
    valid, problems = scan_recorded(notebook, root)
    why = "source='recorded'" if source == "recorded" else "no usable GPU here"
    valid = [dataclasses.replace(r, parameters=_canonical(r.parameters, declared)) for r in valid]

    def same(run) -> dict[str, bool] | None:
        """Each measured parameter: whether ``run`` measured it as asked (None: a parameter the run did not record)."""
        if any(k not in run.parameters for k in measured):
            return None
        return {k: run.parameters[k] == v or (declared is not None and declared[k].type.same_beside(
            run.parameters[k], v, values, run.git_sha)) for k, v in measured.items()}

    compared = [(run, equal) for run in reversed(valid) if (equal := same(run)) is not None]  # each run once
    for exact in (True, False):  # the newest run measured with these values, else the newest that covers them
        for run, equal in compared:
            if all(equal[k] or (not exact and declared is not None and declared[k].type.answers(run.parameters[k], v))
                   for k, v in measured.items()):
                covering = {k: run.parameters[k] for k in measured if not equal[k]}
                return "recorded", dataclasses.replace(run, covering=covering)
    if not valid:
        if root is not None and not Path(root).is_dir():
            what = "not a directory" if Path(root).exists() else "no such directory"
            raise LabkitError(f"recorded mode ({why}): recorded_root {root}: {what}")
        detail = f"; skipped: {' | '.join(problems)}" if problems else ""
        from .notebooks import list_notebooks

        named = [n for n in list_notebooks() if n.startswith(notebook) and n != notebook]  # Session.start("03") (an
        hint = f" (did you mean {' or '.join(named)}?)" if named else ""  # API walk) had been told to run it on a GPU
        raise LabkitError(f"recorded mode ({why}): no valid recorded run of {notebook}{hint} under "
                          f"{root or _env.data_dir() / 'runs'}{detail}; run it once on a GPU with --record")
    newest = valid[::-1][:OFFERED_RUNS]  # the line stays readable when many runs were recorded
    offered = " | ".join(f"{r.path.name}: " + _show({k: r.parameters.get(k, '(not recorded)') for k in measured
                                                      if r.parameters.get(k) != measured[k]}) for r in newest)
    older = f" | and {len(valid) - len(newest)} older" if len(valid) > len(newest) else ""
    differ = {k: v for k, v in measured.items() if any(r.parameters.get(k) != v for r in newest)}
    # what the user chose: defaults that older runs did not record stay in the per-run list, not in what was asked
    defaults = _canonical({k: declared[k].default for k in differ if k in declared}, declared) if declared else {}
    chosen = {k: v for k, v in differ.items() if k not in defaults or defaults[k] != v}
    wanted = _show(chosen or differ)
    axes = [k for k in (chosen or differ) if declared and getattr(declared[k].type, "sweep_axis", False)]
    some = f" (for {', '.join(axes)}, any subset)" if axes else ""
    raise LabkitError(f"recorded mode ({why}): no recorded run of {notebook} was measured with {wanted}; "
                      f"recorded: {offered}{older}. Use the recorded values{some}, or run on a GPU")


def _show_every_column() -> None:
    """A notebook's tables show all their columns and whole notes: pandas' default of 20 columns hid two of notebook
    05's 22 counters (the SM and warp speed-of-light ones) behind '...', and its 50 characters cut notebook 03's
    reason why a peer did not run. A table's plain text (what a view without HTML shows: nbconvert to text, a diff of
    the .ipynb) keeps each row on one line; pandas' 80 characters cut notebook 03's spread into six blocks of
    columns, 45 rows each."""
    from ._deps import require

    pd = require("pandas")
    pd.set_option("display.max_columns", 64)
    pd.set_option("display.max_colwidth", 240)
    pd.set_option("display.width", 100_000)


class Session:
    """Where a notebook's numbers come from and where its files go."""

    def __init__(self, notebook: str, mode: str, out_dir: Path, recorded: RecordedRun | None, reason: str,
                 parameters: dict | None = None):
        self.notebook = notebook
        self.mode = mode
        self.out_dir = out_dir
        self.recorded = recorded
        self.reason = reason
        self.parameters = parameters or {}  # what it was started with: which kernels its numbers ran

    @property
    def live(self) -> bool:
        return self.mode == "live"

    @classmethod
    def start(cls, notebook: str, *, source: str = "auto", out_dir: str | Path = "", parameters: dict | None = None,
              runs_root: Path | str | None = None) -> "Session":
        """Check the parameters, decide live vs recorded, print it (the notebook's first output).

        Args:
            parameters: the notebook's other parameter values; each is checked by its declared
                type, and every parameter that changes the measurement must be here.
            runs_root: where recorded runs are found (None or '': ``data/runs``), a notebook's ``recorded_root``;
                relative: from the repo root, as File parameters (JupyterLab's kernel runs in ``notebooks/``).

        Raises:
            ParameterError: a value of the wrong type, or a measured parameter left out.
            NoGPU: ``source='live'`` on a machine without a usable GPU.
            LabkitError: recorded mode with no recorded run that answers these parameters.
        """
        from . import notebooks, rundirs

        values = {"source": source, **(parameters or {})}
        declared = None
        if (notebooks.notebook_dir() / f"{notebook}.py").is_file():
            declared = notebooks.declared_parameters(notebook)
            values = notebooks.check_parameters(notebook, values)
            missing = [k for k, p in declared.items() if p.measured and k not in values]
            if missing:
                raise ParameterError(f"Session.start({notebook!r}): pass the measured parameters {missing} too")
            values = {**{k: p.default for k, p in declared.items() if k != "out_dir"}, **values}
            notebooks.check_together(notebook, values)  # in JupyterLab too: a tail past the shape's N stops here
        mode, recorded = plan_source(notebook, values, declared, _env.repo_path(runs_root) if runs_root else None)
        out = Path(out_dir) if out_dir else rundirs.new_run_dir(rundirs.runs_root(), notebook)
        (out / "data").mkdir(parents=True, exist_ok=True)
        (out / "figs").mkdir(parents=True, exist_ok=True)
        s = cls(notebook, mode, out, recorded, gpu_status()[1], values)
        _show_every_column()
        (out / "data" / "session.json").write_text(dumps(s.describe(), indent=2) + "\n")
        print(wrapped(s.banner()))
        return s

    def describe(self) -> dict:
        return {"notebook": self.notebook, "mode": self.mode, "gpu_status": self.reason,
                "recorded_from": self.recorded.label if self.recorded else None}

    @property
    def device_name(self) -> str:
        if self.recorded:
            return self.recorded.device
        from .device import describe

        return describe().name

    def measured_on(self) -> str:
        """Which GPU measured what follows, for a section's first line: this one (live), or the recorded run's."""
        if self.live:
            return f"live on this GPU, {self.device_name}"
        r = self.recorded
        return f"recorded on {r.device} (run {r.label}, {r.created_utc[:10]}), not on this machine"

    def title(self, what: str) -> str:
        """A figure title: what, on which device, live or recorded."""
        when = "live" if self.live else f"recorded {self.recorded.created_utc[:10]}"
        return f"{what}\n{self.device_name}, {when}"

    def banner(self) -> str:
        if self.live:
            from .device import describe

            d = describe()
            return (f"labkit {self.notebook}: LIVE on {d.name} ({d.arch}, {d.sm_count} SMs); "
                    f"results -> {self.out_dir}")
        r = self.recorded
        same = "with the same parameters"
        if r.covering:  # a run of more than was asked for: the part asked for is shown
            same += " except " + ", ".join(f"{k}={v!r}, which covers the {k} asked for" for k, v in r.covering.items())
        sha = r.git_sha.removesuffix("-dirty")[:12]
        return (f"labkit {self.notebook}: RECORDED mode: {self.reason}. Showing the recorded run {r.label} "
                f"(measured on {r.device}, {r.created_utc}, git {sha}"
                f"{' with uncommitted changes' if r.git_sha.endswith('-dirty') else ''}) {same}; not a new measurement."
                + stale_note(r.git_sha, kernel_paths(self.notebook, self.parameters)))

    def measure(self, key: str, fn, *args, load=None, **kwargs) -> Any:
        """Live: run ``fn`` and save its JSON result as ``data/<key>.json``. Recorded: read that file.

        Args:
            load: turns the JSON value into what the notebook uses (a typed result, a table); in
                recorded mode a failure names the file.
        """
        target = self.out_dir / "data" / f"{key}.json"
        if self.live:
            text = dumps(_jsonable(fn(*args, **kwargs)), source=str(target)) + "\n"  # NaN is refused here, not later
            target.write_text(text)
            # what was written, read as a recorded run will read it: tuples are lists there (notebook 05's live run
            # failed in its strict summary reader, which only its recorded runs had met)
            value = parse_text(text, str(target)).value
            return load(value) if load else value
        src = self.recorded.path / "data" / f"{key}.json"
        if not src.is_file():
            raise LabkitError(f"{src}: missing; recorded run {self.recorded.label} does not hold {key}; "
                              f"re-record it on a GPU")
        value = load_document(src).value
        shutil.copyfile(src, target)
        if load is None:
            return value
        try:
            return load(value)
        except Exception as exc:  # noqa: BLE001 - recorded data from disk; say which file is wrong
            raise LabkitError(f"{src}: does not hold a valid {key} result ({type(exc).__name__}: {exc})") from None

    def sweep(self, key: str, workload: str, grid: dict[str, list], **fixed):
        """A labkit.sweep workload over ``grid`` (``fixed``: one value each), kept in ``data/sweeps/<key>/``.

        Live: each point's file is written as it finishes (progress: points done / total, failures,
        ETA); a re-run into the same ``out_dir`` resumes. Recorded: the recorded run's sweep directory,
        copied here, of which the points of ``grid`` are read (a run may have swept more values of an axis). Either
        way the sweep is read strictly (``labkit.sweep.read_sweep``).

        Returns:
            A DataFrame, one row per point in grid order: its parameters, then its result's fields.

        Raises:
            LabkitError: a point that failed, is missing or whose file is damaged (one line naming the file).
        """
        from .sweep import read_sweep, run

        full = json.loads(json.dumps({**grid, **{k: [v] for k, v in fixed.items()}}))  # as sweep.json keeps it
        target = self.out_dir / "data" / "sweeps" / key
        if self.live:
            print(wrapped(f"sweep {key}: {workload} over {', '.join(f'{k} ({len(v)})' for k, v in full.items())} -> "
                          f"{target}"), flush=True)
            counts = run(target, workload, full, progress=sys.stdout)
            kept = f" ({counts['kept_failed']} of them failed)" if counts["kept_failed"] else ""
            again = f", {counts['stale']} run again (measured by other code)" if counts["stale"] else ""
            print(wrapped(f"sweep {key}: {counts['ok']} ok, {counts['failed']} failed, {counts['skipped']} done before"
                          f"{kept}, {counts['total']} points{again}"), flush=True)
            return read_sweep(target, workload, full)
        src = self.recorded.path / "data" / "sweeps" / key
        if not src.is_dir():
            raise LabkitError(f"{src}: missing; recorded run {self.recorded.label} holds no sweep {key}; "
                              "re-record it on a GPU")
        df = read_sweep(src, workload, full, part=True)  # a recorded sweep over more values: the points asked for
        shutil.copytree(src, target, dirs_exist_ok=True)
        return df

    def save_figure(self, fig, name: str) -> None:
        """Write ``figs/<name>.png`` and ``.svg`` and show that PNG in the notebook (any backend). Returns nothing: as
        a cell's last line, a returned path had been echoed under the figure."""
        from .plot import save

        png = save(fig, self.out_dir / "figs" / name)
        try:
            from IPython import get_ipython
            from IPython.display import Image, display

            if get_ipython() is not None:
                display(Image(data=png.read_bytes(), format="png"))
        except ImportError:
            pass

    def save_table(self, df, name: str) -> Path:
        """``df`` as ``data/<name>.csv``; a plain row number is left out (it read back as 'Unnamed: 0'), a labelled
        index (a phase, a case) is kept as the first column, under its name or 'index'."""
        import pandas as pd

        path = self.out_dir / "data" / f"{name}.csv"
        if df.index.name is None and df.index.nlevels == 1 and pd.api.types.is_integer_dtype(df.index):
            df.to_csv(path, index=False)  # row numbers, also of a filtered or sorted frame
        else:
            df.to_csv(path, index_label=[n if n is not None else "index" for n in df.index.names])
        return path


def each(load):
    """``load`` applied to every element of a recorded list (``measure(..., load=each(Point.from_dict))``)."""
    return lambda values: [load(v) for v in values]


def _jsonable(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if dataclasses.is_dataclass(value):
        return dataclasses.asdict(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value

