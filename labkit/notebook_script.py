"""A notebook as a plain Python script with its parameters injected (papermill's prepare-only pass, then jupytext):
what a profiler should run. ncu or a debugger on a script holds one Python process from its first launch; on a
notebook run it holds papermill's Jupyter kernel, a process ncu reaches only by following children."""

import logging
import tempfile
from pathlib import Path
from typing import Any

from . import _deps, _env
from .errors import ArgumentError, ParameterError
from .notebooks import check_parameters, check_together, follow_bounds, parameters, resolve, to_ipynb

FIRST_CELL = "import labkit.errors\n\nlabkit.errors.exit_in_one_line()"  # every script starts with it


def check_script_path(out: Path | str) -> None:
    """``out`` may take a script: a ``.py`` name (jupytext writes by suffix: ``.txt`` had ended in its traceback,
    ``.ipynb`` in a notebook), and no file there but one this wrote before (``--out labkit/cli.py`` had replaced it).

    Raises:
        ArgumentError: another suffix, or an existing file that is not such a script.
    """
    out = Path(out)
    if out.suffix != ".py":
        raise ArgumentError(f"--out {out}: expected a .py file (the script is Python, in py:percent cells)")
    if out.is_dir():
        raise ArgumentError(f"--out {out}: is a directory; expected a .py file")
    if out.exists():
        with open(out, "rb") as f:
            head = f.read(4096).decode("utf-8", "replace")
        if FIRST_CELL not in head:
            raise ArgumentError(f"--out {out}: exists and is not a script labkit nb script wrote; refusing to "
                                "overwrite it (delete it, or name another file)")


def write_script(name: str, params: dict[str, Any] | None, out: Path | str, *, progress=None) -> Path:
    """Notebook ``name``'s cells as a py:percent script, its defaults overridden by ``params`` in papermill's
    injected-parameters cell after the parameters cell (checked by type and against each other first, as
    ``notebooks.run`` does; a default past a bound the overrides moved follows it, ``notebooks.follow_bounds``, with
    a line to ``progress``). Live or recorded is chosen where the script runs, by ``Session.start``.

    Raises:
        ParameterError: an unknown name, a wrong type or a value past another's bound; nothing is written.
        ArgumentError: ``out`` is no place for the script (``check_script_path``), found before any work.
    """
    out = Path(out)
    check_script_path(out)
    pm = _deps.require("papermill")
    jupytext = _deps.require("jupytext")
    source = resolve(name)
    overrides = check_parameters(source.stem, dict(params or {}))
    if overrides.get("recorded_root"):  # the script may run from another directory; relative: from the repo root
        root = _env.repo_path(overrides["recorded_root"]).resolve()
        if not root.is_dir():  # the script would end in this line where it ran (a review): said before it is written
            raise ParameterError(f"recorded_root {root}: {'not a directory' if root.exists() else 'no such directory'}")
        overrides["recorded_root"] = str(root)
    overrides, followed = follow_bounds(source.stem, overrides)
    check_together(source.stem, {**{k: p.default for k, p in parameters(source.stem).items()}, **overrides})
    for line in followed if progress is not None else ():
        print(f"{source.stem}: {line}", file=progress, flush=True)
    logging.getLogger("papermill").setLevel(logging.ERROR)  # its parameter warnings: checked above, by type
    with tempfile.TemporaryDirectory() as tmp:
        blank = to_ipynb(source, Path(tmp) / "in.ipynb")
        prepared = Path(tmp) / "prepared.ipynb"
        pm.execute_notebook(str(blank), str(prepared), parameters=overrides, prepare_only=True,
                            kernel_name="python3", progress_bar=False, log_output=False)
        nb = jupytext.read(prepared)
    nb.metadata.pop("papermill", None)  # papermill's bookkeeping: noise in a script
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
    # a refused value (no recorded run to show, say) ends the script in one line, as `labkit nb run` does
    nb.cells.insert(0, _deps.require("nbformat").v4.new_code_cell(FIRST_CELL))
    out.parent.mkdir(parents=True, exist_ok=True)
    jupytext.write(nb, out, fmt="py:percent")
    return out
