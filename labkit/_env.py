"""The few environment knobs labkit reads, all through one function, and progress output."""

import logging
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

# The whole list of knobs: LABKIT_DEBUG (log level), LABKIT_BATCH (plain progress for
# papermill/CI), LABKIT_CACHE (compiled-kernel cache dir), LABKIT_OUT (root of notebook runs),
# LABKIT_GIT_SHA (provenance for a copied tree without .git, e.g. on a GPU host), LABKIT_NCU (the ncu
# executable, when it is not on PATH).
_KNOBS = {"LABKIT_DEBUG": "0", "LABKIT_BATCH": "0", "LABKIT_CACHE": "", "LABKIT_OUT": "", "LABKIT_GIT_SHA": "",
          "LABKIT_NCU": ""}


def getenv(name: str) -> str:
    if name not in _KNOBS:
        raise KeyError(f"unknown labkit knob {name}; known: {', '.join(_KNOBS)}")
    return os.environ.get(name, _KNOBS[name])


SWITCHES = ("LABKIT_DEBUG", "LABKIT_BATCH")  # on or off: "" or 0 is off, 1 on


def check_switches() -> None:
    """Refuse a switch set to another value than 0 or 1 (the CLI asks first: LABKIT_BATCH=maybe had passed as on).

    Raises:
        ArgumentError: naming the variable and its value.
    """
    from .errors import ArgumentError

    for name in SWITCHES:
        if (value := os.environ.get(name, "")) not in ("", "0", "1"):
            raise ArgumentError(f"environment {name}={value!r}: expected 0 or 1 (or unset)")


def repo_root() -> Path:
    """The checkout labkit runs from (the package is installed editable)."""
    return Path(__file__).resolve().parents[1]


def repo_path(path: str | Path) -> Path:
    """``path`` as given when absolute, else relative to the repository root (notebook parameters)."""
    p = Path(path)
    return p if p.is_absolute() else repo_root() / p


def data_dir() -> Path:
    return repo_root() / "data"


def runs_dir() -> Path:
    return Path(getenv("LABKIT_OUT") or repo_root() / "runs")


def batch_mode() -> bool:
    return getenv("LABKIT_BATCH") not in ("", "0")


STDERR = "stderr"  # a ``progress=`` default: sys.stderr as it is when the call runs, not as it was at import


def stream(progress):
    """A ``progress=`` argument as the stream to print to: ``STDERR`` is today's sys.stderr (a default bound at
    import kept a stream that pytest or a notebook had since closed); None stays None (silent)."""
    return sys.stderr if isinstance(progress, str) and progress == STDERR else progress


def progress(iterable: Iterable[T], *, total: int | None = None, desc: str = "") -> Iterator[T]:
    """Progress over ``iterable``: one line per item on stderr in batch mode (papermill, CI,
    where widget bars turn into noise), a single rewritten line interactively."""
    items = list(iterable) if total is None and not hasattr(iterable, "__len__") else iterable
    n = total if total is not None else len(items)  # type: ignore[arg-type]
    batch = batch_mode()
    for i, item in enumerate(items, 1):
        yield item
        if batch:
            print(f"{desc} {i}/{n}", file=sys.stderr, flush=True)
        else:
            end = "\n" if i == n else ""
            print(f"\r{desc} {i}/{n}", end=end, file=sys.stderr, flush=True)


def setup_logging(level: str | int = "INFO") -> None:
    """One logging setup for notebooks and the CLI (ipykernel starts with no root handler)."""
    if getenv("LABKIT_DEBUG") not in ("", "0"):
        level = "DEBUG"
    logging.basicConfig(level=level, format="%(asctime)s %(name)s %(levelname)s %(message)s",
                        stream=sys.stdout, force=True)
