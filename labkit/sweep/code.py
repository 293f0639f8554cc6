"""Which code measured a sweep's point: a digest of labkit's source files as they are on disk (its Python and its
kernels, whose build reads them there) and labkit's version, plus the workload's own module where it lives outside
labkit (a notebook's registered function). Each point's record carries it; a resume runs again the points another
code measured, so one sweep directory never mixes two versions of a kernel."""

import hashlib
import inspect
from collections.abc import Callable
from pathlib import Path

SOURCE_SUFFIXES = (".py", ".cu", ".cuh")  # what decides a result; a plot style does not


def _package_dir() -> Path:
    return Path(__file__).resolve().parents[1]


def _add_file(h, path: Path, name: str) -> None:
    h.update(name.encode() + b"\0")
    h.update(path.read_bytes())
    h.update(b"\0")


def _source_file(fn: Callable) -> Path | None:
    try:
        path = Path(inspect.getsourcefile(fn) or "")
    except TypeError:  # a builtin or a C function
        return None
    return path.resolve() if path.name and path.is_file() else None


def code_digest(workload: Callable | None = None) -> str:
    """16 hex digits of sha256 over labkit's version and source files (sorted by their path in the package) and, for
    a workload defined outside labkit, its module's file. Read from disk each call (milliseconds): a kernel edited
    between two sweeps in one notebook session is seen."""
    from .. import __version__

    root = _package_dir()
    h = hashlib.sha256(f"labkit {__version__}\0".encode())
    for path in sorted(p for p in root.rglob("*") if p.suffix in SOURCE_SUFFIXES and "__pycache__" not in p.parts
                       and p.is_file()):
        _add_file(h, path, path.relative_to(root).as_posix())
    if workload is not None:
        own = _source_file(workload)
        if own is not None and root not in own.parents:
            _add_file(h, own, f"workload {own.name}")
        elif own is None:  # defined in a notebook cell: its own text, as IPython keeps it
            try:
                h.update(f"workload {inspect.getsource(workload)}".encode())
            except (OSError, TypeError):  # no source to read (a builtin, a lambda made at run time): nothing to add
                pass
    return h.hexdigest()[:16]
