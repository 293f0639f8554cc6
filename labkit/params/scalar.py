"""Scalar notebook parameter types (numbers, strings, names, choices, files) and the base ``Param``."""

from __future__ import annotations

import math
import re
from typing import Any

from ..errors import ArgumentError, ParameterError
from ..values import first_repeat


def _shown(value: Any) -> str:
    """A value as an error names it: its repr, cut at 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class Param:
    """Base: ``parse(text)`` for CLI strings, ``check(value)`` for Python values."""

    kind = "value"

    def __init__(self, *, measured: bool = True):
        self.measured = measured

    def describe(self) -> str:
        return self.kind

    def __repr__(self) -> str:
        return self.describe()

    def parse(self, text: str) -> Any:
        return self.check(text)

    def check(self, value: Any) -> Any:
        raise NotImplementedError

    def fail(self, value: Any) -> ParameterError:
        return ParameterError(f"= {_shown(value)}: expected {self.describe()}")

    def check_beside(self, value: Any, values: dict) -> None:
        """Checks against the other parameters' values (``values``: every one, checked), before any cell runs;
        none by default."""

    def answers(self, recorded: Any, wanted: Any) -> bool:
        """Whether a run recorded with ``recorded`` holds what ``wanted`` measures (recorded mode): the same value."""
        return recorded == wanted

    def same_beside(self, recorded: Any, wanted: Any, values: dict, run_sha: str) -> bool:
        """Whether ``recorded`` (a value of a run recorded at commit ``run_sha``) and ``wanted`` measure the same
        thing, given the other parameters' ``values``: equal values by default."""
        return recorded == wanted


def bound_of(ref: str | None, values: dict) -> int | None:
    """The bound ``ref`` names among ``values``: ``"shape[1]"`` (an item of a list parameter) or ``"n"``."""
    if ref is None:
        return None
    name, _, index = ref.partition("[")
    value = values[name]
    return value[int(index.rstrip("]"))] if index else value


class _AtMost:
    """``at_most="shape[1]"``: every integer at most that item of another parameter (a length at most the shape's N):
    checked before any cell runs, where a cell would have failed with the run half done."""

    at_most: str | None = None

    def _bound_text(self) -> str:
        return f", at most {self.at_most}" if self.at_most else ""

    def follow(self, default: Any, bound: int) -> Any:
        """What ``default`` becomes where another parameter moved its bound below it (``-p shape 1,1024,8,128``
        under the seed's tails of 37810); None: it does not follow, and a default past the bound is refused."""
        return None

    def check_beside(self, value: Any, values: dict) -> None:
        bound = bound_of(self.at_most, values)
        items = value if isinstance(value, (list, tuple)) else [value]
        if bound is not None and any(v > bound for v in items):
            raise ParameterError(f"= {_shown(value)}: expected {'values' if items is value else 'a value'} at most "
                                 f"{self.at_most} = {bound}")


def _range(lo, hi) -> str:
    if lo is not None and hi is not None:
        return f" in {lo}..{hi}"
    if lo is not None:
        return f" >= {lo}"
    return f" <= {hi}" if hi is not None else ""


class _Number(Param):
    """A number in ``lo..hi`` (inclusive; None: unbounded); booleans are never numbers."""

    noun = "a number"

    def __init__(self, lo=None, hi=None, **kw):
        super().__init__(**kw)
        self.lo, self.hi = lo, hi

    def describe(self) -> str:
        return self.noun + _range(self.lo, self.hi)

    def parse(self, text: str):
        try:
            return self.check(self._from_text(text))
        except ValueError:
            raise self.fail(text) from None

    def check(self, value: Any):
        if isinstance(value, bool) or not self._accepts(value):
            raise self.fail(value)
        if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
            raise self.fail(value)
        return self._canonical(value)


class Int(_AtMost, _Number):
    """An integer in ``lo..hi`` (and a multiple of ``multiple_of``; at most another parameter's item ``at_most``).
    ``3.5``, ``True`` and ``'abc'`` are refused."""

    noun = "an integer"

    def __init__(self, lo=None, hi=None, *, multiple_of: int = 1, at_most: str | None = None, **kw):
        super().__init__(lo, hi, **kw)
        if isinstance(multiple_of, bool) or not isinstance(multiple_of, int) or multiple_of < 1:
            raise ValueError(f"Int(multiple_of={multiple_of!r}): expected an integer >= 1")
        self.multiple_of, self.at_most = multiple_of, at_most

    def describe(self) -> str:
        return (super().describe() + (f", a multiple of {self.multiple_of}" if self.multiple_of > 1 else "")
                + self._bound_text())

    def check(self, value: Any):
        value = super().check(value)
        if value % self.multiple_of:
            raise self.fail(value)
        return value

    def follow(self, default: Any, bound: int) -> Any:  # the bound itself, where it is a value this type takes
        value = bound - bound % self.multiple_of
        try:
            return self.check(value)
        except ParameterError:
            return None

    def _from_text(self, text: str) -> int:
        return int(text.strip().replace("_", ""), 10)

    def _accepts(self, value: Any) -> bool:
        return isinstance(value, int)

    def _canonical(self, value: Any) -> int:
        return value


class Float(_Number):
    """A finite number in ``lo..hi``."""

    noun = "a finite number"

    def _from_text(self, text: str) -> float:
        return float(text)

    def _accepts(self, value: Any) -> bool:
        return isinstance(value, (int, float)) and math.isfinite(value)

    def _canonical(self, value: Any) -> float:
        return float(value)


class Text(Param):
    """Any string, kept as given (``-p shape 1,2,3`` stays the string ``'1,2,3'``)."""

    kind = "a string"

    def check(self, value: Any) -> str:
        if not isinstance(value, str):
            raise self.fail(value)
        return value


class Names(Text):
    """Comma-separated names such as ncu's sections and metrics (``SpeedOfLight,LaunchStats``;
    ``dram__bytes_read.sum``): letters, digits, ``_`` and ``.``, each once; blanks around each name dropped (``A, B``
    is ``A,B``), otherwise kept as given. A free string had let ``-p metrics 'not a metric;rm'`` through to the ncu
    command line, refused only there, mid-run."""

    def __init__(self, *, allow_empty: bool = False, **kw):
        super().__init__(**kw)
        self.allow_empty = allow_empty
        self.kind = "comma-separated names (letters, digits, _ and .)" + (", or empty" if allow_empty else "")

    def check(self, value: Any) -> str:
        text = super().check(value)
        if not text and self.allow_empty:
            return text
        names = [n.strip(" ") for n in text.split(",")]  # "A, B" as written in a sentence
        bad = next((n for n in names if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_.]*", n)), None)
        if bad is not None:
            raise ParameterError(f"= {_shown(value)}: {bad!r} is not a name; expected {self.describe()}")
        twice = first_repeat(names)
        if twice is not None:
            raise ParameterError(f"= {_shown(value)}: {twice} given twice; expected {self.describe()}")
        return ",".join(names)


class Choice(Param):
    """One of a few strings. ``covers``: {option: the options whose measurements a run of it also holds}, so that
    recorded mode can answer ``"sage2"`` from a run of ``"both"``."""

    def __init__(self, *options: str, covers: dict[str, tuple[str, ...]] | None = None, **kw):
        super().__init__(**kw)
        self.options = options
        self.covers = dict(covers or {})
        for option, covered in self.covers.items():
            if option not in options or not set(covered) <= set(options):
                raise ArgumentError(f"Choice{options}: covers {option!r} -> {covered!r} names an option it does not "
                                    "have")

    def answers(self, recorded: Any, wanted: Any) -> bool:
        return recorded == wanted or wanted in self.covers.get(recorded, ())

    def describe(self) -> str:
        return "one of " + ", ".join(self.options)

    def check(self, value: Any) -> str:
        if isinstance(value, int) and not isinstance(value, bool) and str(value) in self.options:
            return str(value)  # plain papermill's -p head_dim 128 (or YAML's 128) gives the int of a numeric option
        if value not in self.options:
            raise self.fail(value)
        return value


# File(reads=...): the format's name and its strict reader, run on the file before any cell
READERS = {"manifest": ("a schema_version 4 launch manifest", "labkit.manifest", "load"),
           "sage2_report": ("a Sage2 report", "labkit.report", "load")}


class File(Text):
    """A path to an existing regular file, absolute or relative to the repository root; ``reads``: a format in
    ``READERS`` the file must parse as (so a wrong file stops the run before any cell, not in the middle). A file under
    the repository is kept as its path from the root, however it was written, so that recorded mode finds the run of
    the same file (``/repo/data/x.json`` and ``./data/x.json`` are ``data/x.json``)."""

    def __init__(self, *, measured: bool = True, reads: str | None = None):
        super().__init__(measured=measured)
        if reads is not None and reads not in READERS:
            raise ValueError(f"File(reads={reads!r}): expected one of {', '.join(READERS)}")
        self.reads = reads

    def describe(self) -> str:
        what = READERS[self.reads][0] if self.reads else "an existing file"
        return f"{what} (absolute or from the repo root)"

    def check(self, value: Any) -> str:
        import importlib

        from .._env import repo_path
        from ..errors import LabkitError

        if not isinstance(value, str) or not value:
            raise self.fail(value)
        path = repo_path(value)
        if not path.is_file():
            what = ("a directory" if path.is_dir() else "not a regular file" if path.exists() else "no such file")
            tried = "" if str(path) == value else f" ({path})"  # a relative path: where it was looked for
            raise ParameterError(f"= {value!r}: {what}{tried}; expected {self.describe()}")  # the whole path
        if self.reads:
            what, module, name = READERS[self.reads]
            try:
                getattr(importlib.import_module(module), name)(repo_path(value))
            except LabkitError as exc:
                raise ParameterError(f"= {value!r}: expected {what}; {exc}") from None
        from .._env import repo_root

        try:
            return path.resolve().relative_to(repo_root().resolve()).as_posix()
        except ValueError:  # outside the repository: as given
            return value
