"""Run the parameterized notebooks through papermill, with typed parameters checked first.

Sources are jupytext percent files ``notebooks/NN_topic.py``. Their ``parameters`` cell declares
each parameter with a type from ``labkit.params`` (``copy_mib: Int(1, 16384) = 1024  # help``).
A run parses and checks every override by that type, and in recorded mode finds the recorded run
that answers those parameters, before any cell executes; then it converts the source to
``.ipynb`` inside a fresh run directory, executes it (figures embedded), and writes ``run.json``
beside the executed notebook, ``figs/`` and ``data/``.
"""

import ast
import io
import logging
import os
import shlex
import shutil
import sys
import time
import tokenize
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import _deps, _env, params
from .errors import LabkitError, NoGPU, ParameterError
from .nb_progress import progress_engine
from .rundirs import new_run_dir, point_latest, runs_root, write_run_json

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
    hits = [n for n in names if n == name] or [n for n in names if name and n.startswith(name)]  # '' prefixes all
    if len(hits) != 1:
        if hits:  # its candidates are the list: naming every notebook again after them said it twice
            raise LabkitError(f"notebook {name!r}: ambiguous, the start of {', '.join(hits)}; give more of the name")
        raise LabkitError(f"notebook {name!r}: not found; available: {', '.join(names)}")
    return notebook_dir() / f"{hits[0]}.py"


@dataclass(frozen=True)
class Parameter:
    """One declared notebook parameter."""

    name: str
    type: params.Param
    default: Any
    help: str

    @property
    def measured(self) -> bool:
        return self.type.measured


def _parameters_cell(source: Path) -> tuple[str, int]:
    """The source text of the cell tagged ``parameters`` and its first line number."""
    lines = source.read_text().splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("# %%")]
    for n, i in enumerate(starts):
        if "parameters" in lines[i] and "tags=" in lines[i]:
            end = starts[n + 1] if n + 1 < len(starts) else len(lines)
            return "\n".join(lines[i + 1:end]), i + 2
    raise LabkitError(f"{source}: no cell tagged parameters")


def declared_parameters(name: str) -> dict[str, Parameter]:
    """The notebook's parameters, read from its ``parameters`` cell without running it.

    Raises:
        LabkitError: the cell holds something other than typed assignments (with the line).
    """
    source = resolve(name)
    text, first_line = _parameters_cell(source)
    comments = {tok.start[0]: tok.string.lstrip("# ").strip()
                for tok in tokenize.generate_tokens(io.StringIO(text).readline) if tok.type == tokenize.COMMENT}
    out: dict[str, Parameter] = {}
    for node in ast.parse(text).body:
        where = f"{source.name}:{first_line + node.lineno - 1}"
        if isinstance(node, ast.ImportFrom) and node.module == "labkit.params":
            continue
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None):
            raise LabkitError(f"{where}: a parameters cell holds only `name: Type(...) = value  # help` lines")
        try:
            kind = eval(compile(ast.Expression(node.annotation), where, "eval"), {"__builtins__": {}}, params.TYPES)
            default = ast.literal_eval(node.value)
        except Exception as exc:  # noqa: BLE001 - any failure here is a malformed declaration
            raise LabkitError(f"{where}: cannot read the declaration of {node.target.id}: {exc}") from None
        if not isinstance(kind, params.Param):
            raise LabkitError(f"{where}: {node.target.id}'s annotation is not a labkit.params type")
        try:
            kind.check(default)
        except ParameterError as exc:
            raise LabkitError(f"{where}: default of {node.target.id} {exc}") from None
        out[node.target.id] = Parameter(node.target.id, kind, default, comments.get(node.end_lineno, ""))
        bound = getattr(kind, "at_most", None)  # another parameter's item, declared above this one
        if bound is not None:
            ref, _, index = bound.partition("[")
            try:
                if ref not in out or (index and not isinstance(out[ref].default, list)):
                    raise ValueError
                params.bound_of(bound, {k: p.default for k, p in out.items()})
            except (IndexError, ValueError, TypeError):
                what = "an item of a list parameter" if index else "a parameter"
                raise LabkitError(f"{where}: {node.target.id}'s at_most={bound!r}: expected {what} declared above "
                                  "it") from None
        manifest = getattr(kind, "vars_of", None)  # a File(reads="manifest") parameter declared above this one
        if manifest is not None and not (manifest in out and isinstance(out[manifest].type, params.File)
                                         and out[manifest].type.reads == "manifest"):
            raise LabkitError(f"{where}: {node.target.id}'s vars_of={manifest!r}: expected a File(reads=\"manifest\") "
                              "parameter declared above it")
    return out


def parameters(name: str) -> dict[str, Parameter]:
    """The parameters a user may set (the runner's own, ``out_dir``, left out)."""
    return {k: p for k, p in declared_parameters(name).items() if k not in RUNNER_PARAMS}


def shown_default(value) -> str:
    """A parameter's default as ``-p NAME VALUE`` takes it: ``tokens=2`` and ``1,8,64,256``, not a dict's or a list's
    repr; a string quoted, so that an empty one shows."""
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value))
    return repr(value)


def _unknown(stem: str, key: str, known: dict[str, Parameter]) -> ParameterError:
    listing = ", ".join(f"{k} ({p.type.describe()}, default {shown_default(p.default)})" for k, p in known.items())
    return ParameterError(f"notebook {stem} has no parameter {key!r}; valid parameters: {listing}")


def _by_type(name: str, values: dict[str, Any], parse: bool) -> dict[str, Any]:
    known = parameters(name)
    out = {}
    for key, value in values.items():
        if key in RUNNER_PARAMS:  # declared by the notebook, so "has no parameter" had read as a contradiction
            raise ParameterError(f"notebook {resolve(name).stem}: parameter {key} = {value!r} is set by the runner "
                                 "(the run's own directory); to put runs elsewhere, set LABKIT_OUT=DIR")
        if key not in known:
            raise _unknown(resolve(name).stem, key, known)
        kind = known[key].type
        try:
            out[key] = kind.parse(value) if parse else kind.check(value)
        except ParameterError as exc:
            if not parse and isinstance(value, str) and _parses(kind, value):  # plain papermill's -p gives text
                raise ParameterError(
                    f"notebook {resolve(name).stem}: parameter {key} = {value!r} is text, where the notebook's cells "
                    f"need {kind.describe()} as a Python value: papermill's -p passes text, so give it as YAML "
                    f"(papermill -y '{key}: {kind.parse(value)!r}') or run the notebook with labkit nb run "
                    f"{resolve(name).stem[:2]} -p {key} {shlex.quote(value)}") from None  # quoted: copied into a shell
            raise ParameterError(f"notebook {resolve(name).stem}: parameter {key} {exc}") from None
    return out


def _parses(kind, text: str) -> bool:
    try:
        kind.parse(text)
    except ParameterError:
        return False
    return True


def parameter_pairs(name: str, pairs: list[list[str]] | None) -> dict[str, str]:
    """``-p KEY VALUE`` pairs as a dict; a parameter of the notebook given twice is refused (argparse would keep the
    last one silently); an unknown name is left for the parameter check, which lists the notebook's parameters."""
    known, params = parameters(name), {}
    for key, value in pairs or []:
        if key in params and key in known:
            raise ParameterError(f"-p {key} given twice ({params[key]!r}, then {value!r}): give each parameter once")
        params[key] = value
    return params


def parse_parameters(name: str, texts: dict[str, str]) -> dict[str, Any]:
    """Command-line strings parsed by each parameter's declared type (``-p shape 1,2,3,4``)."""
    return _by_type(name, texts, parse=True)


def check_parameters(name: str, values: dict[str, Any]) -> dict[str, Any]:
    """Python values checked by each declared type; returns the canonical values.

    Raises:
        ParameterError: an unknown name, or a value of the wrong type or out of range.
    """
    return _by_type(name, values, parse=False)


def follow_bounds(name: str, overrides: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``overrides`` (checked values) with each default that another override moved its bound below replaced by
    what its type follows the bound with (a review: ``-p shape 1,1024,8,128`` alone was refused for the seed's tails
    of 37810, where ``sage2 profile --shape`` takes the seed's kind for any N); and a line for each. A default that
    does not follow stays, and ``check_together`` names it.
    """
    declared = parameters(name)
    values = {**{k: p.default for k, p in declared.items()}, **overrides}
    out, lines = dict(overrides), []
    for key, p in declared.items():  # in order: a bound is declared above the parameter it bounds
        bound_name = getattr(p.type, "at_most", None)
        if key in overrides or bound_name is None:
            continue
        try:
            p.type.check_beside(p.default, values)
        except ParameterError:
            bound = params.bound_of(bound_name, values)
            value = p.type.follow(p.default, bound)
            if value is not None:
                out[key] = values[key] = value
                lines.append(f"{key} = {shown_default(value)} (its default, {shown_default(p.default)}, lies past "
                             f"{bound_name} = {bound})")
    return out, lines


def check_together(name: str, values: dict[str, Any]) -> None:
    """Each parameter against the others (``values``: every one, defaults and overrides, each checked): a tail
    length past the shape's N fails here, before any cell, not in the cell that would sweep it.

    Raises:
        ParameterError: naming the parameter, its value and the bound.
    """
    problems = []
    for key, p in parameters(name).items():
        try:
            p.type.check_beside(values[key], values)
        except ParameterError as exc:  # a default that no longer fits (a smaller shape) is named as one
            default = " (the default)" if values[key] == p.type.check(p.default) else ""
            followed = p.type.follow(p.default, params.bound_of(p.type.at_most, values)) if default else None
            if followed is not None:  # in JupyterLab (labkit nb run sets it): the value to type
                default = f" (the default; for this {p.type.at_most.partition('[')[0]}: {followed!r})"
            value, _, expected = str(exc).partition(": ")
            problems.append(f"parameter {key} {value}{default}: {expected}")
    if problems:  # all at once: a smaller shape can leave several lengths past its N
        raise ParameterError(f"notebook {resolve(name).stem}: " + "; ".join(problems))


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
