"""Run the parameterized notebooks through papermill, with typed parameters checked first.

Sources are jupytext percent files ``notebooks/NN_topic.py``. Their ``parameters`` cell declares each parameter with
a type from ``labkit.params`` (``copy_mib: Int(1, 16384) = 1024  # help``; ``labkit.nb_params`` reads and checks
them). A run parses and checks every override by that type, and in recorded mode finds the recorded run that answers
those parameters, before any cell executes; then it converts the source to ``.ipynb`` inside a fresh run directory,
executes it (figures embedded), and writes ``run.json`` beside the executed notebook, ``figs/`` and ``data/``.
"""

import logging
import os
import shutil
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from . import _deps, _env
from .errors import LabkitError, NoGPU
from .nb_params import (  # noqa: F401 - re-exported: callers check parameters through labkit.notebooks
    RUNNER_PARAMS,
    Parameter,
    check_parameters,
    check_together,
    declared_parameters,
    follow_bounds,
    list_notebooks,
    notebook_dir,
    parameter_pairs,
    parameters,
    parse_parameters,
    resolve,
    shown_default,
)
from .nb_progress import progress_engine
from .rundirs import new_run_dir, point_latest, runs_root, write_run_json


def to_ipynb(source: Path, target: Path) -> Path:
    """Convert a percent source to an output-free ``.ipynb`` (parameters tag kept)."""
    jupytext = _deps.require("jupytext")
    nb = jupytext.read(source)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata.pop("jupytext", None)  # the run's copy is not paired with anything
    target.parent.mkdir(parents=True, exist_ok=True)
    jupytext.write(nb, target, fmt="ipynb")
    return target


@dataclass(frozen=True)
class RunResult:
    run_dir: Path
    notebook: Path
    ok: bool
    error: str | None
    mode: str  # live or recorded
    recorded_from: str | None  # the recorded run shown, in recorded mode
    figures: tuple[str, ...]  # under run_dir
    data: tuple[str, ...]
    recorded_to: Path | None


@contextmanager
def _kernel_environment():
    """The kernel inherits this process's environment: drop a non-inline MPLBACKEND (Agg from a
    test runner or a shell) so figures embed in the executed notebook, and mark batch mode."""
    saved = {k: os.environ.get(k) for k in ("MPLBACKEND", "LABKIT_BATCH")}
    os.environ.pop("MPLBACKEND", None)
    os.environ["LABKIT_BATCH"] = "1"
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _raise_if_kernel_did_not_start(exc: Exception, run_dir: Path) -> None:
    """A LabkitError for a kernel that is not installed or died before its first reply (``exc`` from papermill): the
    run directory, which holds nothing yet, goes. A kernel that dies in a cell is the run's failure, not this."""
    from jupyter_client.kernelspec import NoSuchKernel

    died_at_start = isinstance(exc, RuntimeError) and str(exc) == "Kernel died before replying to kernel_info"
    if not isinstance(exc, NoSuchKernel) and not died_at_start:
        return
    shutil.rmtree(run_dir, ignore_errors=True)
    if isinstance(exc, NoSuchKernel):
        raise LabkitError("the notebooks run on a Jupyter 'python3' kernel and this Python has none (pip install "
                          "ipykernel, or make env)") from None
    raise LabkitError(f"the notebook's Jupyter kernel died before it ran a cell ({exc}); "
                      f"see why with: {sys.executable} -m ipykernel_launcher --version") from None


def run(name: str, params: dict | None = None, *, out_root: Path | None = None, record: bool = False,
        timeout_s: int = 3600, progress=None) -> RunResult:
    """Execute notebook ``name`` with ``params`` into ``runs/<UTC stamp>-<name>/``.

    Args:
        name: notebook stem or unique prefix (``00``).
        params: parameter overrides as Python values (``parse_parameters`` turns CLI strings into
            these); an unknown name, a wrong type or, in recorded mode, parameters no recorded run
            answers stop the run before any cell executes.
        out_root: parent of the run directory (default ``runs/`` or ``$LABKIT_OUT``).
        record: after a successful live run, copy ``run.json`` and ``data/`` into ``data/runs/``.
        timeout_s: per-cell execution timeout.
        progress: a text stream for one line per cell (e.g. ``sys.stderr``); None: quiet.

    Returns:
        RunResult; ``ok`` is False when a cell raised (the executed notebook shows where).
    """
    from traitlets.config import Config

    from .session import plan_source

    pm = _deps.require("papermill")
    source = resolve(name)
    overrides = check_parameters(source.stem, dict(params or {}))
    if overrides.get("recorded_root"):  # the kernel runs in the run's folder: a relative path would move with it
        overrides["recorded_root"] = str(_env.repo_path(overrides["recorded_root"]).resolve())  # from the repo root
    overrides, followed = follow_bounds(source.stem, overrides)
    declared = parameters(source.stem)
    effective = {**{k: p.default for k, p in declared.items()}, **overrides}
    check_together(source.stem, effective)
    recorded_root = Path(effective["recorded_root"]) if effective.get("recorded_root") else None
    if record:  # before a recorded run is looked for: with no GPU, a missing one was said instead (exit 2, not 1)
        if effective.get("source") == "recorded":  # asked for: bad input, not the machine
            raise LabkitError(f"--record keeps real GPU runs only; {source.stem} is given source='recorded'")
        from . import session

        usable, reason = session.gpu_status()  # the check plan_source makes, so the two agree
        if not usable:
            raise NoGPU(f"--record keeps real GPU runs only; {source.stem} cannot run live here: {reason}")
    mode, recorded = plan_source(source.stem, effective, declared, recorded_root)  # refuses before anything runs
    root = runs_root(out_root)  # before the progress line: a LABKIT_OUT that cannot be made is one line too
    if progress is not None:  # after the checks: a refused run prints its one line and nothing else
        for line in followed:
            print(f"{source.stem}: {line}", file=progress, flush=True)
        print(f"running {source.stem} ...", file=progress, flush=True)
    run_dir = new_run_dir(root, source.stem)
    input_nb = to_ipynb(source, run_dir / f"{source.stem}.input.ipynb")
    output_nb = run_dir / f"{source.stem}.ipynb"
    started = time.time()
    engine = None
    if progress is not None:
        engine = progress_engine(source.stem, progress)
    config = Config()
    config.KernelManager.transport = "ipc"  # ipykernel >= 7.3 warns on every TCP start
    # jupyter_client interrupts the kernel (SIGINT) before it asks it to shut down; a kernel still in a message
    # handler then logged "[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel." into the run's output, one run in
    # three. A cell's own errors are in the executed notebook and in RunResult, not in the kernel's log.
    config.NotebookClient.extra_arguments = ["--IPKernelApp.log_level=CRITICAL"]
    error = None
    logging.getLogger("papermill").setLevel(logging.ERROR)  # its parameter warnings: checked above, by type
    with _kernel_environment():
        try:
            pm.execute_notebook(str(input_nb), str(output_nb), parameters={**overrides, "out_dir": str(run_dir)},
                                kernel_name="python3", cwd=str(run_dir), progress_bar=False, log_output=False,
                                request_save_on_cell_execute=False, autosave_cell_every=0,
                                execution_timeout=timeout_s, engine_name=engine, config=config)
        except pm.PapermillExecutionError as exc:
            error = f"cell {exc.exec_count}: {exc.ename}: {exc.evalue}"
        except Exception as exc:
            _raise_if_kernel_did_not_start(exc, run_dir)  # the environment's fault, said in one line
            from nbclient.exceptions import CellTimeoutError, DeadKernelError

            if isinstance(exc, CellTimeoutError):  # a failed run like any other: its run.json says so, run-all goes on
                error = f"a cell ran past the {timeout_s:g} s time limit and was stopped"
            elif not isinstance(exc, DeadKernelError):
                raise
            else:  # in a cell (a segfault, the OOM killer): the run failed; what it wrote so far stays
                error = f"the kernel died in a cell ({exc}); the executed notebook ends where it stopped"
    input_nb.unlink()
    session = run_dir / "data" / "session.json"
    from ._json import load_document

    session_info = load_document(session).value if session.is_file() else None
    write_run_json(run_dir, notebook=source.stem, parameters=effective, overrides=overrides, error=error,
                   elapsed_s=time.time() - started, session=session_info)
    point_latest(root, run_dir)
    recorded_to = None
    if record and error is None:
        if (session_info or {}).get("mode") != "live":
            raise LabkitError("--record keeps real GPU runs only; this run was not live")
        recorded_to = _env.data_dir() / "runs" / run_dir.name
        recorded_to.mkdir(parents=True)
        shutil.copyfile(run_dir / "run.json", recorded_to / "run.json")
        shutil.copytree(run_dir / "data", recorded_to / "data")
    listing = lambda sub: tuple(sorted(str(p.relative_to(run_dir)) for p in (run_dir / sub).glob("*")  # noqa: E731
                                       if p.is_file()))
    return RunResult(run_dir=run_dir, notebook=output_nb, ok=error is None, error=error,
                     mode=(session_info or {}).get("mode", mode),
                     recorded_from=(session_info or {}).get("recorded_from") or (recorded and recorded.label),
                     figures=tuple(f for f in listing("figs") if f.endswith(".png")), data=listing("data"),
                     recorded_to=recorded_to)


def print_result(res: RunResult, stream=None) -> None:
    """What a ``make run`` user needs: status, live or recorded (from which run), files written (to ``stream``, or
    the current ``sys.stdout``)."""
    stream = stream or sys.stdout
    status = "ok" if res.ok else f"FAILED ({res.error})"
    where = "LIVE on this GPU" if res.mode == "live" else f"RECORDED, showing {res.recorded_from}"
    print(f"{res.notebook.stem}: {status}; {where}", file=stream)
    print(f"  notebook: {res.notebook}", file=stream)
    print(f"  figures:  {', '.join(res.figures) or 'none'}", file=stream)
    print(f"  data:     {', '.join(res.data) or 'none'}", file=stream)
    if res.recorded_to:
        print(f"  recorded: {res.recorded_to}", file=stream)
