"""Recorded runs of a notebook (``data/runs/<stamp>-<notebook>/``): each read and checked strictly, as recorded mode
shows them (``labkit.session`` picks the one that answers a notebook's parameters)."""

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import _env
from ._json import load_document
from .errors import LabkitError


@dataclass(frozen=True)
class RecordedRun:
    """A recorded live GPU run of one notebook (``data/runs/<stamp>-<notebook>/``)."""

    path: Path
    parameters: dict
    device: str
    created_utc: str
    git_sha: str
    covering: dict = field(default_factory=dict)  # {parameter: the recorded value that covers the one asked for}

    @property
    def label(self) -> str:
        return _relative(self.path)


def _relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(_env.repo_root()))
    except ValueError:
        return str(path)


def _old_parameter(value: Any) -> Any:
    """run.json version 1 kept papermill's parameter source strings (``'"auto"'``, ``'10'``)."""
    try:
        return ast.literal_eval(value) if isinstance(value, str) else value
    except (ValueError, SyntaxError):
        return value


def read_recorded_run(path: Path | str) -> RecordedRun:
    """Read and check one recorded run.

    Raises:
        LabkitError: naming the file and what is wrong (unreadable, not JSON, ``ok: false``, not a
            live run, a data file that does not parse).
    """
    path = Path(path)  # a str had failed at ``path / "run.json"`` (an API walk)
    run_json = path / "run.json"
    run = load_document(run_json).obj(("notebook", "parameters", "ok", "session", "provenance"),
                                      ("run_json_version", "error", "elapsed_s", "overrides"))
    if run["ok"].bool() is not True:
        raise run["ok"].error(f"the run failed ({run.value.get('error')}); it is not a result")
    if run.value.get("error") is not None:
        raise run["error"].fail("null in a run that is ok (a run with an error failed)")
    if not path.name.endswith("-" + run["notebook"].str()):  # a record copied under another notebook's name
        raise run["notebook"].fail(f"the notebook its directory {path.name!r} names")
    session = run["session"].obj(("mode",), any_keys=True)
    if session["mode"].value != "live":
        raise session["mode"].fail("'live' (only real GPU runs are kept)")
    prov = run["provenance"].obj(("device", "created_utc", "git_sha"), any_keys=True)
    device = prov["device"].obj(("name",), any_keys=True)["name"].str()
    version = run["run_json_version"].version(1, 2) if "run_json_version" in run.value else 1
    recorded = run["parameters"].obj(any_keys=True).value
    params = {k: (v if version >= 2 else _old_parameter(v)) for k, v in recorded.items()}
    data = path / "data"
    if not data.is_dir():
        raise LabkitError(f"{data}: missing; a recorded run keeps its measurements there")
    for f in sorted(data.glob("*.json")):
        load_document(f)  # every measurement file must at least parse
    return RecordedRun(path, params, device, prov["created_utc"].str(), prov["git_sha"].str())


def scan_recorded(notebook: str, root: Path | None = None) -> tuple[list[RecordedRun], list[str]]:
    """(valid runs of ``notebook``, oldest first; one problem line per run that is not valid)."""
    base = root or (_env.data_dir() / "runs")
    valid, problems = [], []
    for p in sorted(base.glob(f"*-{notebook}")):
        try:
            valid.append(read_recorded_run(p))
        except LabkitError as exc:
            problems.append(str(exc))
    return valid, problems


def recorded_runs(notebook: str, root: Path | None = None) -> list[RecordedRun]:
    """The valid recorded runs of ``notebook`` (its name or a unique start, ``03``, as ``labkit nb run`` takes it; an
    unknown one is refused, where it had given an empty list), oldest first."""
    from .notebooks import resolve

    return scan_recorded(resolve(notebook).stem, root)[0]
