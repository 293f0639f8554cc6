"""Run the parameterized notebooks through papermill, with parameters checked first.

Sources are jupytext percent files ``notebooks/NN_topic.py``; each run converts the source
to ``.ipynb`` inside the run directory, checks the requested parameters against its
``parameters`` cell (papermill itself only warns about unknown names), executes it, and
writes ``run.json`` beside the executed notebook, figures and data.
"""

import ast
import datetime as _dt
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from . import _deps, _env
from .errors import LabkitError, ParameterError
from .provenance import collect

RUNNER_PARAMS = ("out_dir",)  # set by the runner, not by the user


def notebook_dir() -> Path:
    return _env.repo_root() / "notebooks"


def list_notebooks() -> list[str]:
    return sorted(p.stem for p in notebook_dir().glob("[0-9][0-9]_*.py"))


def resolve(name: str) -> Path:
    """``00_device_and_timing``, ``00`` or a path to the ``.py`` source."""
    p = Path(name)
    if p.suffix in (".py", ".ipynb") and p.with_suffix(".py").is_file():
        return p.with_suffix(".py").resolve()
    names = list_notebooks()
    hits = [n for n in names if n == name] or [n for n in names if n.startswith(name)]
    if len(hits) != 1:
        raise LabkitError(f"notebook {name!r}: {'ambiguous' if hits else 'not found'}; "
                          f"available: {', '.join(names)}")
    return notebook_dir() / f"{hits[0]}.py"


def to_ipynb(source: Path, target: Path) -> Path:
    """Convert a percent source to an output-free ``.ipynb`` (parameters tag kept)."""
    jupytext = _deps.require("jupytext")
    nb = jupytext.read(source)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    target.parent.mkdir(parents=True, exist_ok=True)
    jupytext.write(nb, target, fmt="ipynb")
    return target


def parameters(name: str) -> dict[str, dict]:
    """The notebook's parameters: name -> {default, type, help} from its ``parameters`` cell."""
    import tempfile

    pm = _deps.require("papermill")
    with tempfile.TemporaryDirectory() as tmp:
        nb = to_ipynb(resolve(name), Path(tmp) / "nb.ipynb")
        info = pm.inspect_notebook(str(nb))
    return {k: {"default": v["default"], "type": v["inferred_type_name"], "help": v["help"]} for k, v in info.items()}


def coerce(value: str):
    """A CLI value as a Python literal when it is one (``3``, ``1e-3``, ``[1, 2]``, ``True``), else str."""
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return value


def check_parameters(name: str, params: dict, known: dict | None = None) -> None:
    """Raise ParameterError before anything runs if ``params`` names an unknown parameter."""
    known = known if known is not None else parameters(name)
    valid = [k for k in known if k not in RUNNER_PARAMS]
    bad = [k for k in params if k not in valid]
    if bad:
        listing = ", ".join(f"{k} (default {known[k]['default']})" for k in valid)
        raise ParameterError(f"notebook {resolve(name).stem} has no parameter {bad[0]!r}; valid parameters: {listing}")


@dataclass(frozen=True)
class RunResult:
    run_dir: Path
    notebook: Path
    ok: bool
    error: str | None
    recorded_to: Path | None


def run(name: str, params: dict | None = None, *, out_root: Path | None = None, record: bool = False,
        timeout_s: int = 3600) -> RunResult:
    """Execute notebook ``name`` with ``params`` into ``runs/<UTC stamp>-<name>/``.

    Args:
        name: notebook stem or unique prefix (``00``).
        params: parameter overrides; unknown names stop the run before any cell executes.
        out_root: parent of the run directory (default ``runs/`` or ``$LABKIT_OUT``).
        record: after a successful run, copy ``run.json`` and ``data/`` into ``data/runs/``.
        timeout_s: per-cell execution timeout.

    Returns:
        RunResult; ``ok`` is False when a cell raised (the executed notebook shows where).
    """
    pm = _deps.require("papermill")
    params = dict(params or {})
    source = resolve(name)
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    run_dir = (out_root or _env.runs_dir()) / f"{stamp}-{source.stem}"
    run_dir.mkdir(parents=True, exist_ok=False)
    input_nb = to_ipynb(source, run_dir / f"{source.stem}.input.ipynb")
    known = {k: {"default": v["default"]} for k, v in pm.inspect_notebook(str(input_nb)).items()}
    try:
        check_parameters(source.stem, params, known)
    except ParameterError:
        shutil.rmtree(run_dir)
        raise
    effective = {**{k: v["default"] for k, v in known.items() if k not in RUNNER_PARAMS}, **params}
    output_nb = run_dir / f"{source.stem}.ipynb"
    started = time.time()
    os.environ["LABKIT_BATCH"] = "1"
    error = None
    try:
        pm.execute_notebook(str(input_nb), str(output_nb), parameters={**params, "out_dir": str(run_dir)},
                            kernel_name="python3", cwd=str(run_dir), progress_bar=False, log_output=False,
                            request_save_on_cell_execute=False, autosave_cell_every=0,
                            execution_timeout=timeout_s)
    except pm.PapermillExecutionError as exc:
        error = f"cell {exc.exec_count}: {exc.ename}: {exc.evalue}"
    input_nb.unlink()
    session = run_dir / "data" / "session.json"
    record_json = {
        "notebook": source.stem,
        "parameters": effective,
        "overrides": params,
        "ok": error is None,
        "error": error,
        "elapsed_s": round(time.time() - started, 3),
        "session": json.loads(session.read_text()) if session.is_file() else None,
        "provenance": collect(),
    }
    (run_dir / "run.json").write_text(json.dumps(record_json, indent=2, default=str) + "\n")
    recorded_to = None
    if record and error is None:
        if (record_json["session"] or {}).get("mode") != "live":
            raise LabkitError("--record keeps real GPU runs only; this run was not live")
        recorded_to = _env.data_dir() / "runs" / run_dir.name
        recorded_to.mkdir(parents=True)
        shutil.copyfile(run_dir / "run.json", recorded_to / "run.json")
        shutil.copytree(run_dir / "data", recorded_to / "data")
    return RunResult(run_dir=run_dir, notebook=output_nb, ok=error is None, error=error, recorded_to=recorded_to)
