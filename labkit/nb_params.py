"""The notebooks' sources and their typed parameters: which notebooks there are, the ``parameters`` cell each
declares (``copy_mib: Int(1, 16384) = 1024  # help``, types from ``labkit.params``), and every value checked by its
type and against the others before a cell runs. ``labkit.notebooks`` runs them and re-exports these.
"""

import ast
import io
import shlex
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import _env, params
from .errors import LabkitError, ParameterError

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
        return params.IntDict.shown(value)
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
